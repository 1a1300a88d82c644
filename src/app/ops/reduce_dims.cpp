// Reductions over a set of dimensions (reduce_dims.hpp): per piece, one collective read of the
// input box, the permutation that puts the reduced dimensions innermost (cpu/permute.hpp), the
// row values of every op from one pass (the reduction engines of mpi/), one collective write per
// op of the kept box.
#include "ops/reduce_dims.hpp"

#include <algorithm>

#include "core/aligned_buffer.hpp"
#include "core/permute_layout.hpp"
#include "core/throw.hpp"
#include "cpu/permute.hpp"
#include "io/h5_attribute.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"
#include "mpi/reduce_engine.hpp"
#include "mpi/reduce_masked.hpp"
#include "ops/permute_metadata.hpp"
#include "ops/permute_pieces.hpp"

namespace tessera::ops {

namespace {

constexpr std::size_t default_reduce_dims_limit = std::size_t{256} << 20;

// Mean is Sum divided at the end: one kernel pass serves both.
Op dims_kernel_op(Op op) noexcept {
  return op == Op::Mean ? Op::Sum : op;
}

// The element type the data is reduced in: f32 and f64 as stored, packed data decoded in f64.
DType reduced_dtype(DType stored, const MissingValues& missing, const std::string& what) {
  if (missing.packed() && (dtype_is_real(stored) || dtype_is_integer(stored)))
    return DType::f64;
  TESSERA_REQUIRE(dtype_is_real(stored), InputError,
                  "reductions take f32 or f64 data (or packed integers), not {} ({})",
                  dtype_name(stored), what);
  return stored;
}

void check_reduce_dims(const ReduceDimsOptions& o, std::size_t rank, const std::string& what) {
  for (const Op op : o.ops)
    TESSERA_REQUIRE(
        op == Op::Sum || op == Op::Mean || op == Op::Min || op == Op::Max || op == Op::Count,
        InputError, "--dims: the ops are sum, mean, min, max and count, not {}", op_name(op));
  TESSERA_REQUIRE(!o.reduced.empty(), InputError, "--dims names no dimension of {}", what);
  TESSERA_REQUIRE(o.reduced.size() < rank, InputError,
                  "--dims names every dimension of {}; keep at least one", what);
}

} // namespace

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
  std::int64_t cols = 1; // reduced elements per row
  for (const int d : o.reduced)
    cols *= shape[static_cast<std::size_t>(d)];
  const std::size_t esize = dtype_size(dtype);
  // With one kept dimension, a piece cut along the next would split rows: a row always fits.
  std::size_t limit = o.memory_limit ? o.memory_limit : default_reduce_dims_limit;
  const std::int64_t outer_row = cols * [&] {
    std::int64_t n = 1;
    for (std::size_t k = 1; k < kept; ++k)
      n *= shape[static_cast<std::size_t>(axes[k])];
    return n;
  }();
  if (kept == 1)
    limit = std::max(limit, 2 * esize * static_cast<std::size_t>(outer_row));
  const int rank = mpi::comm_rank(comm);
  const PermutePieces pieces(shape, axes, esize, rank, mpi::comm_size(comm), limit);
  const std::vector<int> kept_axes(axes.begin(), axes.begin() + static_cast<std::ptrdiff_t>(kept));
  const std::shared_ptr<const ops::PermuteMetadata> carried =
      ops::PermuteMetadata::read(*in.file, in.ref, kept_axes, rank);

  // The kernels' ops: Mean as Sum, Count beside Mean, Min and Max when values may be skipped.
  const std::vector<Op> all_ops = with_counts(o.ops, o.missing);
  std::vector<Op> kernel_ops;
  for (const Op op : all_ops)
    if (std::find(kernel_ops.begin(), kernel_ops.end(), dims_kernel_op(op)) == kernel_ops.end())
      kernel_ops.push_back(dims_kernel_op(op));
  std::unique_ptr<ReduceEngine> engine = make_cpu_reduce_engine({dtype, Memory::Host});
  if (needs_masking(kernel_ops, o.missing))
    engine = std::make_unique<MaskedReduceEngine>(std::move(engine), dtype, o.missing);

  AlignedBuffer in_buf, perm_buf;
  mpi::collectively(comm, [&] {
    in_buf = AlignedBuffer(pieces.buffer_bytes(), "the input pieces of " + what);
    perm_buf = AlignedBuffer(pieces.buffer_bytes(), "the permuted pieces of " + what);
  });
  ReduceDimsReport report;
  report.shape = permuted_shape(shape, kept_axes);
  io::H5File f = io::H5File::create(o.output, comm);
  for (const Op op : o.ops) {
    report.outputs.push_back(in.ref.path + "_" + std::string(op_name(op)));
    io::nd::create_array(f, report.outputs.back(), DType::f64,
                         {report.shape.begin(), report.shape.end()});
  }
  PhaseTimers scratch;
  PhaseTimers& timers = o.timers ? *o.timers : scratch;
  std::vector<std::vector<double>> raw(kernel_ops.size());
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
      engine->reduce_rows_multi(kernel_ops, perm_buf.data(), rows, cols, outs.data());
    }
    const auto counted = std::find(kernel_ops.begin(), kernel_ops.end(), Op::Count);
    const std::vector<double>* counts =
        o.missing.any() && counted != kernel_ops.end()
            ? &raw[static_cast<std::size_t>(counted - kernel_ops.begin())]
            : nullptr;
    io::Box box;
    box.start.assign(piece.out.start.begin(), piece.out.start.begin() + static_cast<long>(kept));
    box.count.assign(piece.out.count.begin(), piece.out.count.begin() + static_cast<long>(kept));
    ScopedPhase phase(timers, "write", double(rows) * 8.0 * double(o.ops.size()));
    for (std::size_t k = 0; k < o.ops.size(); ++k) {
      const auto at = std::find(kernel_ops.begin(), kernel_ops.end(), dims_kernel_op(o.ops[k]));
      std::vector<double> v = raw[static_cast<std::size_t>(at - kernel_ops.begin())];
      finalize_counted(o.ops[k], v, counts, double(cols));
      io::nd::write_array(f, report.outputs[k], DType::f64, box, v.data());
    }
  }
  in.file->close();
  in.file.reset();
  std::string reduced_names;
  for (const int d : o.reduced)
    reduced_names +=
        (reduced_names.empty() ? "" : ",") + (in.dim_names[static_cast<std::size_t>(d)].empty()
                                                  ? std::to_string(d)
                                                  : in.dim_names[static_cast<std::size_t>(d)]);
  // The variable's description (units, long_name, …) goes along; what described its stored
  // numbers (missing values, packing, valid ranges) does not fit the f64 results. Count has no
  // units.
  std::vector<std::string> undescriptive{"_FillValue",  "missing_value", "scale_factor",
                                         "add_offset",  "valid_min",     "valid_max",
                                         "valid_range", "_Unsigned",     "transpose_of"};
  for (std::size_t k = 0; k < o.ops.size(); ++k) {
    std::vector<std::string> except = undescriptive;
    if (o.ops[k] == Op::Count)
      except.push_back("units");
    carried->attributes.write(f, report.outputs[k], except);
    io::write_attribute(f, report.outputs[k], "reduction_of", what);
    io::write_attribute(f, report.outputs[k], "reduction_op", std::string(op_name(o.ops[k])));
    io::write_attribute(f, report.outputs[k], "reduced_dims", reduced_names);
    carried->write_scales(f, report.outputs[k]);
  }
  if (o.provenance)
    io::write_provenance(f, *o.provenance);
  f.commit();
  report.seconds = wall_seconds() - t0;
  return report;
}

} // namespace tessera::ops
