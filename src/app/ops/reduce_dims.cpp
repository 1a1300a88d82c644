// Reductions over a set of dimensions (reduce_dims.hpp): per piece, one collective read of the
// input box, the permutation that puts the reduced dimensions innermost (cpu/permute.hpp), the
// row values of every op of the 2-D reduce from one pass (the reduction engines of mpi/), the
// second pass of var and std and the search of argmin and argmax over the same rows, one
// collective write per output of the kept box.
#include "ops/reduce_dims.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "core/aligned_buffer.hpp"
#include "core/permute_layout.hpp"
#include "core/throw.hpp"
#include "cpu/permute.hpp"
#include "io/h5_attribute.hpp"
#include "mpi/agreement.hpp"
#include "mpi/collectives.hpp"
#include "mpi/communicator.hpp"
#include "mpi/norm2_rescue.hpp"
#include "mpi/reduce_engine.hpp"
#include "mpi/reduce_masked.hpp"
#include "ops/permute_metadata.hpp"
#include "ops/permute_pieces.hpp"

namespace tessera::ops {

namespace {

constexpr std::size_t default_reduce_dims_limit = std::size_t{256} << 20;
constexpr std::int64_t no_index = -1; // argmin and argmax of a row without valid elements

constexpr std::array<std::pair<DimsOp, std::string_view>, 12> dims_ops{{
    {DimsOp::Sum, "sum"},
    {DimsOp::Mean, "mean"},
    {DimsOp::Min, "min"},
    {DimsOp::Max, "max"},
    {DimsOp::Norm1, "norm1"},
    {DimsOp::Norm2, "norm2"},
    {DimsOp::NormInf, "norminf"},
    {DimsOp::Count, "count"},
    {DimsOp::Var, "var"},
    {DimsOp::Std, "std"},
    {DimsOp::ArgMin, "argmin"},
    {DimsOp::ArgMax, "argmax"},
}};

bool is_arg(DimsOp op) noexcept {
  return op == DimsOp::ArgMin || op == DimsOp::ArgMax;
}
bool is_spread(DimsOp op) noexcept {
  return op == DimsOp::Var || op == DimsOp::Std;
}

// The op of the 2-D reduce that gives a DimsOp's values (var, std and the indices have none).
Op base_op(DimsOp op) noexcept {
  switch (op) {
  case DimsOp::Sum:
    return Op::Sum;
  case DimsOp::Min:
    return Op::Min;
  case DimsOp::Max:
    return Op::Max;
  case DimsOp::Norm1:
    return Op::Norm1;
  case DimsOp::Norm2:
    return Op::Norm2;
  case DimsOp::NormInf:
    return Op::NormInf;
  case DimsOp::Count:
    return Op::Count;
  default:
    return Op::Mean; // Mean itself, and what var and std start from
  }
}

// Mean is Sum divided at the end: one kernel pass serves both.
Op dims_kernel_op(Op op) noexcept {
  return op == Op::Mean ? Op::Sum : op;
}

// The element type the data is reduced in: f32 and f64 as stored, integers (plain or packed) and
// packed data in f64.
DType reduced_dtype(DType stored, const MissingValues& missing, const std::string& what) {
  if (dtype_is_integer(stored) || (missing.packed() && dtype_is_real(stored)))
    return DType::f64;
  TESSERA_REQUIRE(dtype_is_real(stored), InputError,
                  "reductions take real or integer data, not {} ({})", dtype_name(stored), what);
  return stored;
}

void check_reduce_dims(const ReduceDimsOptions& o, std::size_t rank, const std::string& what) {
  TESSERA_REQUIRE(!o.ops.empty(), InputError, "--op: no operation given (e.g. --op mean,std)");
  TESSERA_REQUIRE(o.ddof >= 0, InputError, "--ddof must be 0 or more, not {}", o.ddof);
  TESSERA_REQUIRE(!o.reduced.empty(), InputError, "--dims names no dimension of {}", what);
  TESSERA_REQUIRE(o.reduced.size() < rank, InputError,
                  "--dims names every dimension of {}; keep at least one", what);
}

std::string dim_label(const std::vector<std::string>& names, int d) {
  const std::string& n = names.at(static_cast<std::size_t>(d));
  return n.empty() ? fmt::format("dim{}", d) : n;
}

// The Norm2 rescue of core/reduction.hpp for f64 row values v (finalized: sqrt taken) of the
// rows at `a`, as ReducePlan does along Rows: rows whose norm overflowed or underflowed are
// summed again with their elements scaled by a power of two. `max_abs`: NormInf of each row,
// or null when it has not been computed.
void rescue_rows(std::vector<double>& v, const std::vector<double>* max_abs, const void* a,
                 std::int64_t rows, std::int64_t cols, ReduceEngine& engine,
                 const MissingValues& missing) {
  if (std::none_of(v.begin(), v.end(), norm2_needs_rescue))
    return;
  std::vector<double> m(static_cast<std::size_t>(rows));
  if (max_abs)
    m = *max_abs;
  else
    engine.reduce_rows(Op::NormInf, a, rows, cols, m.data());
  Norm2Exponents e;
  e.rows.assign(static_cast<std::size_t>(rows), 0);
  std::vector<bool> fix(static_cast<std::size_t>(rows), false);
  for (std::size_t i = 0; i < v.size(); ++i)
    if (const auto x = norm2_rescue_exponent(m[i]); x && norm2_needs_rescue(v[i])) {
      e.rows[i] = *x;
      fix[i] = true;
    }
  const std::vector<int> exps = e.rows;
  auto scaled_owner = std::make_unique<ScaledNorm2Engine>(Memory::Host, std::move(e));
  ScaledNorm2Engine* scaled = scaled_owner.get();
  std::unique_ptr<ReduceEngine> rescue = std::move(scaled_owner);
  if (missing.any())
    rescue = std::make_unique<MaskedReduceEngine>(std::move(rescue), DType::f64, missing);
  std::vector<double> s(static_cast<std::size_t>(rows));
  const std::size_t row_bytes = static_cast<std::size_t>(cols) * sizeof(double);
  for (std::int64_t i = 0; i < rows;) { // runs of consecutive rows to rescue, one call each
    std::int64_t j = i;
    while (j < rows && fix[static_cast<std::size_t>(j)])
      ++j;
    if (j > i) {
      scaled->set_first_row(i);
      rescue->reduce_rows(Op::Norm2, static_cast<const char*>(a) + i * row_bytes, j - i, cols,
                          s.data() + i);
    }
    i = j + 1;
  }
  for (std::size_t i = 0; i < v.size(); ++i)
    if (fix[i])
      v[i] = norm2_unscale(std::sqrt(s[i]), exps[i]);
}

// The elements of a piece's rows as the statistics see them: missing or not, decoded.
template <class T>
struct RowView {
  const T* x;
  std::int64_t cols;
  const MissingTest& missing;
  bool packed;
  double scale, offset;
  // False for a missing element; else y is its value.
  bool get(std::int64_t i, std::int64_t j, double& y) const noexcept {
    const double v = static_cast<double>(x[i * cols + j]);
    if (missing(v))
      return false;
    y = packed ? v * scale + offset : v; // no FMA: -ffp-contract=off
    return true;
  }
};

template <class Fn>
void with_rows(DType dtype, const void* a, std::int64_t cols, const MissingValues& m, Fn&& fn) {
  const MissingTest test(m);
  dispatch_real_dtype(dtype, [&](auto tag) {
    using T = decltype(tag);
    fn(RowView<T>{static_cast<const T*>(a), cols, test, m.packed(), m.scale_factor, m.add_offset});
  });
}

// Squared deviations from each row's mean, 0 where an element is missing, into `dev` (f64, the
// rows' layout): the terms of var's canonical row sums.
void squared_deviations(DType dtype, const void* a, std::int64_t rows, std::int64_t cols,
                        const MissingValues& m, const std::vector<double>& mean, double* dev) {
  with_rows(dtype, a, cols, m, [&](const auto& view) {
#pragma omp parallel for schedule(static) if (rows * cols > 65536)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j) {
        double y = 0;
        double d = 0;
        if (view.get(i, j, y)) {
          const double e = y - mean[static_cast<std::size_t>(i)];
          d = e * e;
        }
        dev[i * cols + j] = d;
      }
  });
}

// The flat index within each row of its first smallest (largest: `max`) valid element; a NaN
// that is not missing is taken at once (numpy's argmin and argmax); no_index for no valid one.
std::vector<std::int64_t> arg_rows(DType dtype, const void* a, std::int64_t rows, std::int64_t cols,
                                   const MissingValues& m, bool max) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(rows), no_index);
  with_rows(dtype, a, cols, m, [&](const auto& view) {
#pragma omp parallel for schedule(static) if (rows * cols > 65536)
    for (std::int64_t i = 0; i < rows; ++i) {
      std::int64_t best = no_index;
      double bv = 0;
      for (std::int64_t j = 0; j < cols; ++j) {
        double y = 0;
        if (!view.get(i, j, y))
          continue;
        if (std::isnan(y)) {
          best = j;
          break;
        }
        if (best == no_index || (max ? y > bv : y < bv)) {
          best = j;
          bv = y;
        }
      }
      out[static_cast<std::size_t>(i)] = best;
    }
  });
  return out;
}

} // namespace

std::string_view dims_op_name(DimsOp op) noexcept {
  for (const auto& [o, name] : dims_ops)
    if (o == op)
      return name;
  return "?";
}

bool dims_only(std::string_view op_name) noexcept {
  return op_name == "var" || op_name == "std" || op_name == "argmin" || op_name == "argmax";
}

std::vector<DimsOp> parse_dims_ops(std::string_view list) {
  std::vector<DimsOp> ops;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string_view name = list.substr(at, comma - at);
    at = comma + 1;
    if (name.empty())
      continue;
    const auto it = std::find_if(dims_ops.begin(), dims_ops.end(),
                                 [&](const auto& p) { return p.second == name; });
    if (it == dims_ops.end())
      TESSERA_THROW(InputError,
                    "--op: unknown operation '{}' over --dims (expected sum, mean, min, max, "
                    "norm1, norm2, norminf, count, var, std, argmin or argmax)",
                    name);
    if (std::find(ops.begin(), ops.end(), it->first) == ops.end())
      ops.push_back(it->first);
  }
  return ops;
}

ReduceDimsReport reduce_dims(ArrayInput& in, const ReduceDimsOptions& o, MPI_Comm comm) {
  const double t0 = wall_seconds();
  const std::vector<std::int64_t> shape = in.shape();
  const std::string what = in.ref.str();
  DType dtype{};
  std::vector<int> axes; // kept dimensions, then reduced ones, each in the input's order
  mpi::collectively(comm, [&] {
    check_reduce_dims(o, shape.size(), what);
    dtype = reduced_dtype(in.info.dtype, o.missing, what);
    for (int d = 0; d < static_cast<int>(shape.size()); ++d)
      if (std::find(o.reduced.begin(), o.reduced.end(), d) == o.reduced.end())
        axes.push_back(d);
    for (int d = 0; d < static_cast<int>(shape.size()); ++d)
      if (std::find(o.reduced.begin(), o.reduced.end(), d) != o.reduced.end())
        axes.push_back(d);
  });
  const std::size_t kept = shape.size() - o.reduced.size();
  const std::vector<int> kept_axes(axes.begin(), axes.begin() + static_cast<std::ptrdiff_t>(kept));
  const std::vector<int> reduced_axes(axes.begin() + static_cast<std::ptrdiff_t>(kept), axes.end());
  std::int64_t cols = 1; // reduced elements per row
  for (const int d : reduced_axes)
    cols *= shape[static_cast<std::size_t>(d)];
  const bool spread = std::any_of(o.ops.begin(), o.ops.end(), is_spread);
  // var and std keep a row's squared deviations (f64) in the input piece's buffer.
  const std::size_t esize = dtype_size(dtype);
  const std::size_t piece_esize = spread ? std::max<std::size_t>(esize, 8) : esize;
  // With one kept dimension, a piece cut along the next would split rows: a row always fits.
  std::size_t limit = o.memory_limit ? o.memory_limit : default_reduce_dims_limit;
  std::int64_t row_elements = cols; // elements of one output row of the permuted piece
  for (std::size_t k = 1; k < kept; ++k)
    row_elements *= shape[static_cast<std::size_t>(axes[k])];
  if (kept == 1)
    limit = std::max(limit, 2 * piece_esize * static_cast<std::size_t>(row_elements));
  const int rank = mpi::comm_rank(comm);
  const int nranks = mpi::comm_size(comm);
  const PermutePieces pieces(shape, axes, piece_esize, rank, nranks, limit);
  const std::shared_ptr<const ops::PermuteMetadata> carried =
      ops::PermuteMetadata::read(*in.file, in.ref, kept_axes, rank);

  // The values of the 2-D reduce's ops (Mean for var and std), and Count where something may be
  // skipped; the kernels compute Mean as Sum.
  std::vector<Op> value_ops;
  for (const DimsOp op : o.ops)
    if (!is_arg(op) &&
        std::find(value_ops.begin(), value_ops.end(), base_op(op)) == value_ops.end())
      value_ops.push_back(base_op(op));
  std::vector<Op> kernel_ops;
  for (const Op op : with_counts(value_ops, o.missing))
    if (std::find(kernel_ops.begin(), kernel_ops.end(), dims_kernel_op(op)) == kernel_ops.end())
      kernel_ops.push_back(dims_kernel_op(op));
  std::unique_ptr<ReduceEngine> engine = make_cpu_reduce_engine({dtype, Memory::Host});
  if (needs_masking(kernel_ops, o.missing))
    engine = std::make_unique<MaskedReduceEngine>(std::move(engine), dtype, o.missing);
  const std::unique_ptr<ReduceEngine> plain = make_cpu_reduce_engine({DType::f64, Memory::Host});

  AlignedBuffer in_buf, perm_buf;
  mpi::collectively(comm, [&] {
    in_buf = AlignedBuffer(pieces.buffer_bytes(), "the input pieces of " + what);
    perm_buf = AlignedBuffer(pieces.buffer_bytes(), "the permuted pieces of " + what);
  });

  ReduceDimsReport report;
  report.shape = permuted_shape(shape, kept_axes);
  for (const int d : kept_axes)
    report.kept_names.push_back(dim_label(in.dim_names, d));
  for (const int d : reduced_axes)
    report.reduced_names.push_back(dim_label(in.dim_names, d));
  for (const DimsOp op : o.ops) {
    const std::string base = in.ref.path + "_" + std::string(dims_op_name(op));
    if (is_arg(op)) {
      for (const std::string& dim : report.reduced_names)
        report.outputs.push_back({op, dim, base + "_" + dim, DType::i64, {}});
    } else {
      report.outputs.push_back({op, {}, base, DType::f64, {}});
    }
  }
  std::optional<io::H5File> f;
  if (!o.output.empty()) {
    f.emplace(io::H5File::create(o.output, comm, o.mode));
    for (const ReduceDimsReport::Output& out : report.outputs) {
      io::WriteOptions w = o.write;
      if (out.dtype == DType::i64) {
        w.fill_value.resize(sizeof(std::int64_t));
        std::memcpy(w.fill_value.data(), &no_index, sizeof no_index);
      }
      io::nd::create_array(*f, out.path, out.dtype, {report.shape.begin(), report.shape.end()}, w);
    }
  }
  PhaseTimers scratch;
  PhaseTimers& timers = o.timers ? *o.timers : scratch;
  std::vector<std::vector<double>> raw(kernel_ops.size());
  std::vector<std::vector<double>> mine(report.outputs.size()); // gathered values of this rank
  // The strides of the reduced dimensions in a row's flat index.
  std::vector<std::int64_t> strides(reduced_axes.size(), 1);
  for (std::size_t k = reduced_axes.size(); k-- > 1;)
    strides[k - 1] = strides[k] * shape[static_cast<std::size_t>(reduced_axes[k])];
  for (std::int64_t p = 0; p < pieces.count(); ++p) {
    const PermutePieces::Piece piece = pieces.piece(p);
    const std::int64_t rows = static_cast<std::int64_t>(piece.elements()) / cols;
    {
      ScopedPhase phase(timers, "read", double(piece.elements()) * double(esize));
      io::nd::read_array(*in.file, in.ref.path, dtype, piece.in, in_buf.data());
    }
    std::vector<double*> outs;
    for (auto& v : raw) {
      v.assign(static_cast<std::size_t>(rows), 0.0);
      outs.push_back(v.data());
    }
    if (rows > 0) {
      ScopedPhase phase(timers, "reduce", double(piece.elements()) * double(esize));
      cpu::permute(in_buf.data(), perm_buf.data(), esize, piece.shape, axes);
      if (!kernel_ops.empty())
        engine->reduce_rows_multi(kernel_ops, perm_buf.data(), rows, cols, outs.data());
    }
    const auto raw_of = [&](Op op) -> const std::vector<double>* {
      const auto at = std::find(kernel_ops.begin(), kernel_ops.end(), op);
      return at == kernel_ops.end() ? nullptr
                                    : &raw[static_cast<std::size_t>(at - kernel_ops.begin())];
    };
    const std::vector<double>* counts = o.missing.any() ? raw_of(Op::Count) : nullptr;
    // The finished values of an op of the 2-D reduce.
    const auto value_of = [&](Op op) {
      std::vector<double> v = *raw_of(dims_kernel_op(op));
      finalize_counted(op, v, counts, double(cols));
      if (op == Op::Norm2 && dtype == DType::f64 && rows > 0)
        rescue_rows(v, raw_of(Op::NormInf), perm_buf.data(), rows, cols, *engine, o.missing);
      return v;
    };
    std::vector<double> variance;
    if (spread && rows > 0) {
      ScopedPhase phase(timers, "reduce", double(piece.elements()) * double(esize));
      const std::vector<double> mean = value_of(Op::Mean);
      auto* dev = static_cast<double*>(in_buf.data()); // the input piece is permuted already
      squared_deviations(dtype, perm_buf.data(), rows, cols, o.missing, mean, dev);
      variance.assign(static_cast<std::size_t>(rows), 0.0);
      plain->reduce_rows(Op::Sum, dev, rows, cols, variance.data());
      for (std::size_t i = 0; i < variance.size(); ++i) {
        const double n = counts ? (*counts)[i] : double(cols);
        variance[i] =
            n - o.ddof > 0 ? variance[i] / (n - o.ddof) : std::numeric_limits<double>::quiet_NaN();
      }
    }
    io::Box box;
    box.start.assign(piece.out.start.begin(), piece.out.start.begin() + static_cast<long>(kept));
    box.count.assign(piece.out.count.begin(), piece.out.count.begin() + static_cast<long>(kept));
    ScopedPhase phase(timers, "write", double(rows) * 8.0 * double(report.outputs.size()));
    std::vector<std::int64_t> flat;
    DimsOp flat_op{};
    for (std::size_t k = 0; k < report.outputs.size(); ++k) {
      const ReduceDimsReport::Output& out = report.outputs[k];
      std::vector<double> v;
      std::vector<std::int64_t> index;
      if (is_arg(out.op)) {
        if (flat.empty() || flat_op != out.op) {
          flat = rows > 0 ? arg_rows(dtype, perm_buf.data(), rows, cols, o.missing,
                                     out.op == DimsOp::ArgMax)
                          : std::vector<std::int64_t>{};
          flat_op = out.op;
        }
        const auto d = static_cast<std::size_t>(
            std::find(report.reduced_names.begin(), report.reduced_names.end(), out.dim) -
            report.reduced_names.begin());
        const std::int64_t extent = shape[static_cast<std::size_t>(reduced_axes[d])];
        index.resize(flat.size());
        for (std::size_t i = 0; i < flat.size(); ++i)
          index[i] = flat[i] == no_index ? no_index : flat[i] / strides[d] % extent;
        if (o.gather)
          v.assign(index.begin(), index.end());
      } else if (is_spread(out.op)) {
        v = variance;
        if (out.op == DimsOp::Std)
          for (double& x : v)
            x = std::sqrt(x);
      } else {
        v = rows > 0 ? value_of(base_op(out.op)) : std::vector<double>{};
      }
      if (f) {
        if (is_arg(out.op))
          io::nd::write_array(*f, out.path, DType::i64, box, index.data());
        else
          io::nd::write_array(*f, out.path, DType::f64, box, v.data());
      }
      if (o.gather)
        mine[k].insert(mine[k].end(), v.begin(), v.end());
    }
  }
  in.file->close();
  in.file.reset();
  if (o.gather) {
    // Each rank holds a block of the outermost kept dimension, in order.
    std::int64_t inner = 1;
    for (std::size_t k = 1; k < kept; ++k)
      inner *= report.shape[k];
    std::vector<int> counts(static_cast<std::size_t>(nranks));
    mpi::collectively(comm, [&] {
      for (int r = 0; r < nranks; ++r) {
        const std::int64_t n = (PermutePieces::block_begin(report.shape[0], r + 1, nranks) -
                                PermutePieces::block_begin(report.shape[0], r, nranks)) *
                               inner;
        TESSERA_REQUIRE(n <= std::numeric_limits<int>::max(), InputError,
                        "--json: {} values of {} are too many to print", n, what);
        counts[static_cast<std::size_t>(r)] = static_cast<int>(n);
      }
    });
    for (std::size_t k = 0; k < report.outputs.size(); ++k)
      report.outputs[k].values = mpi::allgatherv(comm, mine[k], counts);
  }
  if (!f) {
    report.seconds = wall_seconds() - t0;
    return report;
  }
  std::string reduced_names;
  for (const std::string& n : report.reduced_names)
    reduced_names += (reduced_names.empty() ? "" : ",") + n;
  // The variable's description (units, long_name, …) goes along; what described its stored
  // numbers (missing values, packing, valid ranges) does not fit the f64 results. Count, var
  // (whose unit is the square) and the indices have no units.
  const std::vector<std::string> undescriptive{"_FillValue",  "missing_value", "scale_factor",
                                               "add_offset",  "valid_min",     "valid_max",
                                               "valid_range", "_Unsigned",     "transpose_of"};
  for (const ReduceDimsReport::Output& out : report.outputs) {
    std::vector<std::string> except = undescriptive;
    if (out.op == DimsOp::Count || out.op == DimsOp::Var || is_arg(out.op))
      except.push_back("units");
    carried->attributes.write(*f, out.path, except);
    io::write_attribute(*f, out.path, "reduction_of", what);
    io::write_attribute(*f, out.path, "reduction_op", std::string(dims_op_name(out.op)));
    io::write_attribute(*f, out.path, "reduced_dims", reduced_names);
    if (is_spread(out.op))
      io::write_attribute(*f, out.path, "ddof", static_cast<long long>(o.ddof));
    if (is_arg(out.op)) {
      io::write_attribute(*f, out.path, "_FillValue", static_cast<long long>(no_index));
      io::write_attribute(*f, out.path, "index_of_dim", out.dim);
    }
    carried->write_scales(*f, out.path);
  }
  if (o.provenance)
    io::write_provenance(*f, *o.provenance);
  f->commit();
  report.seconds = wall_seconds() - t0;
  return report;
}

} // namespace tessera::ops
