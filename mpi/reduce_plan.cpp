// ReducePlan: the Sum family through the canonical chain (mpi/reduce_chain.hpp), Min / Max /
// NormInf through an allreduce (their combine is order-free), Axis::Rows through an allgather of
// whole rows' values. Each distinct kernel pass is made once: Mean shares Sum's pass. f64 norms
// that overflowed or underflowed are then recomputed by the Norm2 rescue (core/reduction.hpp):
// M from NormInf (this execute's, or one more pass), the scaled sums through the same chain
// with the rescue engine (mpi/norm2_rescue.hpp). Missing values (ReduceOptions::missing) and
// Count go through the masking engine (mpi/reduce_masked.hpp); Mean, Min and Max then take a
// Count pass beside them, to divide by the number of valid elements. A plan over a layout
// reduces the row blocks its staging (mpi/row_block_staging.hpp) redistributes the matrix to.
#include "mpi/reduce_plan.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>

#include "core/check.hpp"
#include "core/throw.hpp"
#include "cpu/reduce.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "mpi/communicator.hpp"
#include "mpi/norm2_rescue.hpp"
#include "mpi/reduce_chain.hpp"
#include "mpi/reduce_engine.hpp"
#include "mpi/reduce_masked.hpp"
#include "mpi/row_block_staging.hpp"

namespace tessera {

namespace {

// Mean is Sum divided at the end: one kernel pass serves both.
Op kernel_op(Op op) noexcept {
  return op == Op::Mean ? Op::Sum : op;
}

// MPI_MIN / MPI_MAX may drop a NaN depending on the order of operands; these propagate it as
// the local kernels do, so every rank count gives the same answer.
void nan_min(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const double*>(in);
  auto* b = static_cast<double*>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = combine(Op::Min, b[i], a[i]);
}
void nan_max(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const double*>(in);
  auto* b = static_cast<double*>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = combine(Op::Max, b[i], a[i]);
}

struct OpTraits {
  using type = MPI_Op;
  static MPI_Op null() noexcept { return MPI_OP_NULL; }
  static void destroy(MPI_Op op) noexcept {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Op_free(&op);
  }
};
using unique_op = unique_handle<OpTraits>;

unique_op make_op(MPI_User_function* f) {
  MPI_Op op = MPI_OP_NULL;
  CHECK_MPI(MPI_Op_create(f, 1, &op));
  return unique_op(op);
}

} // namespace

struct ReducePlan::Impl {
  mpi::Communicator comm;
  BlockDistribution dist;
  DType dtype;
  Backend backend = Backend::Cpu;
  std::vector<Op> ops;
  Axis axis;
  ReduceOptions options;
  std::unique_ptr<ReduceEngine> engine;
  std::vector<Op> sum_kernels;   // distinct kernel ops of the Sum family
  std::vector<Op> order_kernels; // distinct Min, Max, NormInf
  mpi::CanonicalChain chain;
  unique_op min_op, max_op;
  std::vector<int> row_counts, row_displs;     // Axis::Rows allgather
  std::optional<mpi::RowBlockStaging> staging; // plans over a layout

  Impl(MPI_Comm c, const BlockDistribution& d, DType t, std::vector<Op> o, Axis a,
       ReduceOptions opt)
      : comm(c), dist(d), dtype(t), ops(std::move(o)), axis(a), options(opt) {}

  std::int64_t local_rows() const { return dist.rows(comm.rank()); }
  std::int64_t cols() const { return dist.global().cols; }

  void build() {
    TESSERA_REQUIRE(dist.nranks() == comm.size(), InputError,
                    "reduce plan: the distribution is over {} ranks but the communicator has {}",
                    dist.nranks(), comm.size());
    TESSERA_REQUIRE(!ops.empty(), InputError, "reduce plan: no reduction given");
    TESSERA_REQUIRE(dtype_is_real(dtype), InputError, "reductions take f32 or f64 data, not {}",
                    dtype_name(dtype));
    engine = make_reduce_engine(backend, {dtype, options.memory});
    if (needs_masking(ops, options.missing)) {
      TESSERA_REQUIRE(options.memory == Memory::Host, InputError,
                      "reduce plan: skipping missing values needs the block in host memory");
      engine = std::make_unique<MaskedReduceEngine>(std::move(engine), dtype, options.missing,
                                                    backend == Backend::Cpu);
    }
    for (Op op : with_counts(ops, options.missing)) {
      const Op k = kernel_op(op);
      auto& list = is_sum_family(k) ? sum_kernels : order_kernels;
      if (std::find(list.begin(), list.end(), k) == list.end())
        list.push_back(k);
    }
    if (axis == Axis::Rows) {
      TESSERA_REQUIRE(dist.global().rows <= INT_MAX, InputError,
                      "reductions along rows return one value per row; {} rows is more than "
                      "this build can gather ({})",
                      dist.global().rows, INT_MAX);
      for (int r = 0; r < comm.size(); ++r) {
        row_counts.push_back(static_cast<int>(dist.rows(r)));
        row_displs.push_back(static_cast<int>(dist.begin(r)));
      }
    } else {
      TESSERA_REQUIRE(axis == Axis::All || cols() <= INT_MAX, InputError,
                      "reductions along columns return one value per column; {} columns is "
                      "more than this build can combine ({})",
                      cols(), INT_MAX);
      chain = mpi::CanonicalChain(comm.get(), dist, axis, dtype_size(dtype));
      min_op = make_op(&nan_min);
      max_op = make_op(&nan_max);
    }
  }

  // This rank's row values of each kernel op (un-finalized), all ops in one read of the block.
  std::vector<std::vector<double>> local_row_values(const std::vector<Op>& kernels,
                                                    const void* block) {
    std::vector<std::vector<double>> v(kernels.size());
    std::vector<double*> out;
    for (auto& r : v) {
      r.resize(static_cast<std::size_t>(local_rows()));
      out.push_back(r.data());
    }
    if (local_rows() > 0 && !kernels.empty())
      engine->reduce_rows_multi(kernels, block, local_rows(), cols(), out.data());
    return v;
  }

  // Un-finalized values along Rows: this rank's row values, gathered in row order.
  std::vector<double> gather_rows(const std::vector<double>& mine) {
    std::vector<double> all(static_cast<std::size_t>(dist.global().rows));
    CHECK_MPI(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
                             row_counts.data(), row_displs.data(), MPI_DOUBLE, comm.get()));
    return all;
  }

  // Min, Max or NormInf along All or Cols: a local fold (for All, of this rank's row values of
  // k: `row_values` where the caller has them), then an allreduce.
  std::vector<double> order_values(Op k, const void* block,
                                   const std::vector<double>* row_values = nullptr) {
    const std::int64_t m = local_rows(), n = cols();
    std::vector<double> v;
    if (axis == Axis::All) {
      const std::vector<double> own =
          row_values ? std::vector<double>{} : std::move(local_row_values({k}, block)[0]);
      // Block folds in parallel first: one combine call per row was a serial pass over
      // millions of row values for a tall matrix. Min, Max and NormInf take any order.
      const std::vector<double>& r = row_values ? *row_values : own;
      std::vector<double> p(
          static_cast<std::size_t>((m + kReduceBlockRows - 1) / kReduceBlockRows));
      cpu::fold_row_blocks(k, r.data(), m, p.data());
      double acc = identity(k);
      for (double x : p)
        acc = combine(k, acc, x);
      v.assign(1, acc);
    } else {
      v.assign(static_cast<std::size_t>(n), identity(k));
      if (m > 0)
        engine->fold_rows(k, block, m, n, v.data());
    }
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE,
                            k == Op::Min ? min_op.get() : max_op.get(), comm.get()));
    return v;
  }

  // The Norm2 rescue (core/reduction.hpp) of the finalized norms v, the same on every rank, so
  // the ranks agree on whether it is needed. `max_abs`: this execute's NormInf values along the
  // axis, when it computed them. Collective.
  void rescue_norm2(std::vector<double>& v, const std::vector<double>* max_abs, const void* block) {
    if (dtype != DType::f64 || std::none_of(v.begin(), v.end(), norm2_needs_rescue))
      return;
    if (axis == Axis::Rows) {
      rescue_rows(v, max_abs, block);
      return;
    }
    const std::vector<double> m = max_abs ? *max_abs : order_values(Op::NormInf, block);
    Norm2Exponents e;
    std::vector<std::size_t> fix;
    if (axis == Axis::Cols)
      e.cols.assign(v.size(), 0);
    for (std::size_t k = 0; k < v.size(); ++k)
      if (const auto x = norm2_rescue_exponent(m[k]); x && norm2_needs_rescue(v[k])) {
        (axis == Axis::All ? e.all : e.cols[k]) = *x;
        fix.push_back(k);
      }
    if (fix.empty())
      return;
    const std::unique_ptr<ReduceEngine> scaled = rescue_engine(e);
    const std::vector<double> s = chain.run(*scaled, {Op::Norm2}, block).at(0);
    for (std::size_t k : fix)
      v[k] = norm2_unscale(std::sqrt(s[k]), axis == Axis::All ? e.all : e.cols[k]);
  }

  // Rows: each rank rescues its own rows (M is local), then the ranks share them.
  void rescue_rows(std::vector<double>& v, const std::vector<double>* max_abs, const void* block) {
    const std::int64_t m = local_rows(), n = cols(), first = dist.begin(comm.rank());
    std::vector<double> mine(v.begin() + first, v.begin() + first + m);
    mpi::collectively(comm.get(), [&] {
      if (std::none_of(mine.begin(), mine.end(), norm2_needs_rescue))
        return;
      std::vector<double> local_max(static_cast<std::size_t>(m));
      if (max_abs)
        std::copy_n(max_abs->begin() + first, m, local_max.begin());
      else
        engine->reduce_rows(Op::NormInf, block, m, n, local_max.data());
      Norm2Exponents e;
      e.rows.assign(static_cast<std::size_t>(m), 0);
      std::vector<bool> fix(static_cast<std::size_t>(m), false);
      for (std::int64_t i = 0; i < m; ++i)
        if (const auto x = norm2_rescue_exponent(local_max[i]); x && norm2_needs_rescue(mine[i])) {
          e.rows[i] = *x;
          fix[i] = true;
        }
      const std::vector<int> exps = e.rows;
      ScaledNorm2Engine* inner = nullptr;
      const std::unique_ptr<ReduceEngine> scaled = rescue_engine(std::move(e), &inner);
      std::vector<double> s(static_cast<std::size_t>(m));
      const std::size_t row_bytes = static_cast<std::size_t>(n) * dtype_size(dtype);
      for (std::int64_t i = 0; i < m;) { // runs of consecutive rows to rescue, one call each
        std::int64_t j = i;
        while (j < m && fix[j])
          ++j;
        if (j > i) {
          inner->set_first_row(i);
          scaled->reduce_rows(Op::Norm2, static_cast<const char*>(block) + i * row_bytes, j - i, n,
                              s.data() + i);
        }
        i = j + 1;
      }
      for (std::int64_t i = 0; i < m; ++i)
        if (fix[i])
          mine[i] = norm2_unscale(std::sqrt(s[i]), exps[i]);
    });
    CHECK_MPI(MPI_Allgatherv(mine.data(), static_cast<int>(m), MPI_DOUBLE, v.data(),
                             row_counts.data(), row_displs.data(), MPI_DOUBLE, comm.get()));
  }

  // The rescue's engine, masked like `engine`; `inner`, when set, receives the scaled engine.
  std::unique_ptr<ReduceEngine> rescue_engine(Norm2Exponents e,
                                              ScaledNorm2Engine** inner = nullptr) const {
    auto scaled = std::make_unique<ScaledNorm2Engine>(options.memory, std::move(e));
    if (inner)
      *inner = scaled.get();
    if (!options.missing.any())
      return scaled;
    return std::make_unique<MaskedReduceEngine>(std::move(scaled), dtype, options.missing);
  }

  double count() const {
    const auto& g = dist.global();
    switch (axis) {
    case Axis::All:
      return static_cast<double>(g.rows) * static_cast<double>(g.cols);
    case Axis::Rows:
      return static_cast<double>(g.cols);
    case Axis::Cols:
      break;
    }
    return static_cast<double>(g.rows);
  }
};

ReducePlan::ReducePlan(const BlockDistribution& dist, DType dtype, MPI_Comm comm, Backend backend,
                       std::vector<Op> ops, Axis axis, ReduceOptions options)
    : impl_(std::make_unique<Impl>(comm, dist, dtype, std::move(ops), axis, options)) {
  auto& I = *impl_;
  I.backend = mpi::resolve_backend(backend, I.comm.get());
  mpi::collectively(I.comm.get(), [&] { I.build(); });
}

ReducePlan::ReducePlan(const Layout& layout, DType dtype, MPI_Comm comm, Backend backend,
                       std::vector<Op> ops, Axis axis, ReduceOptions options)
    : impl_(std::make_unique<Impl>(comm, BlockDistribution(layout.global(), layout.nranks()), dtype,
                                   std::move(ops), axis, options)) {
  auto& I = *impl_;
  I.backend = mpi::resolve_backend(backend, I.comm.get());
  // The row-block plan's checks first: they cover the layout's rank count and the dtype.
  mpi::collectively(I.comm.get(), [&] { I.build(); });
  I.staging.emplace(layout, dtype, I.comm.get());
  mpi::collectively(I.comm.get(), [&] {
    TESSERA_REQUIRE(!I.staging->moves() || options.memory == Memory::Host, InputError,
                    "reduce plan: a matrix in a layout other than row blocks with tight "
                    "row-major local blocks is redistributed in host memory; pass its local "
                    "block in host memory (Memory::Host), which the CUDA backend reduces too");
  });
}

ReducePlan::~ReducePlan() = default;
ReducePlan::ReducePlan(ReducePlan&&) noexcept = default;
ReducePlan& ReducePlan::operator=(ReducePlan&&) noexcept = default;

ReduceResult ReducePlan::execute(const void* block) {
  auto& I = *impl_;
  const std::int64_t held = I.staging ? I.staging->local_elements() : I.local_rows() * I.cols();
  // Agreed before any collective step: a rank whose block is missing would never enter it.
  mpi::collectively(I.comm.get(), [&] {
    TESSERA_REQUIRE(block != nullptr || held == 0, InputError,
                    "reduce plan: execute() got a null block");
  });
  if (I.staging)
    block = I.staging->rows(block);
  const double start = wall_seconds();
  std::vector<std::pair<Op, std::vector<double>>> raw;
  // Along Rows and All every kernel op needs this rank's row values: one read for all of them.
  std::vector<Op> kernels = I.sum_kernels;
  kernels.insert(kernels.end(), I.order_kernels.begin(), I.order_kernels.end());
  std::vector<std::vector<double>> rows;
  if (I.axis != Axis::Cols)
    rows = I.local_row_values(kernels, block);
  const std::size_t nsum = I.sum_kernels.size();
  if (I.axis == Axis::Rows) {
    for (std::size_t k = 0; k < kernels.size(); ++k)
      raw.emplace_back(kernels[k], I.gather_rows(rows[k]));
  } else if (I.axis == Axis::Cols) { // every kernel op through the chain: one read of the block
    auto values = I.chain.run(*I.engine, kernels, block);
    for (std::size_t k = 0; k < kernels.size(); ++k)
      raw.emplace_back(kernels[k], std::move(values[k]));
  } else {
    if (nsum > 0) {
      std::vector<std::vector<double>> sum_rows;
      if (I.axis == Axis::All)
        sum_rows.assign(std::make_move_iterator(rows.begin()),
                        std::make_move_iterator(rows.begin() + static_cast<std::ptrdiff_t>(nsum)));
      auto values =
          I.chain.run(*I.engine, I.sum_kernels, block, I.axis == Axis::All ? &sum_rows : nullptr);
      for (std::size_t i = 0; i < values.size(); ++i)
        raw.emplace_back(I.sum_kernels[i], std::move(values[i]));
    }
    for (std::size_t k = nsum; k < kernels.size(); ++k)
      raw.emplace_back(kernels[k],
                       I.order_values(kernels[k], block, I.axis == Axis::All ? &rows[k] : nullptr));
  }

  ReduceResult result;
  result.axis = I.axis;
  result.ops = I.ops;
  const double count = I.count();
  // The number of valid elements along the axis, where something may be skipped.
  std::vector<double> counts;
  if (I.options.missing.any())
    for (const auto& [k, v] : raw)
      if (k == Op::Count)
        counts = v;
  const auto norminf = std::find_if(raw.begin(), raw.end(),
                                    [](const auto& entry) { return entry.first == Op::NormInf; });
  for (auto o = I.ops.begin(); o != I.ops.end(); ++o) {
    const Op op = *o;
    const Op k = kernel_op(op);
    const auto it =
        std::find_if(raw.begin(), raw.end(), [&](const auto& entry) { return entry.first == k; });
    // The last op that needs these values takes them (along Rows they are one per global row);
    // an earlier one (Sum before Mean, NormInf before a Norm2's rescue) takes a copy.
    const bool needed_later = std::any_of(o + 1, I.ops.end(), [&](Op later) {
      return kernel_op(later) == k || (k == Op::NormInf && later == Op::Norm2);
    });
    std::vector<double> v = needed_later ? it->second : std::move(it->second);
    finalize_counted(op, v, counts.empty() ? nullptr : &counts, count);
    if (op == Op::Norm2)
      I.rescue_norm2(v, norminf == raw.end() ? nullptr : &norminf->second, block);
    result.values.push_back(std::move(v));
  }
  if (I.options.timers)
    I.options.timers->add("reduce.execute", wall_seconds() - start, bytes_read());
  return result;
}

Backend ReducePlan::backend() const noexcept {
  return impl_->backend;
}

double ReducePlan::bytes_read() const noexcept {
  const auto& I = *impl_;
  // Both engines compute every op from one read of the block (row values or column partials of
  // all ops at once). The Norm2 rescue's extra passes, when needed, are not counted.
  return static_cast<double>(I.local_rows() * I.cols()) * static_cast<double>(dtype_size(I.dtype));
}

} // namespace tessera
