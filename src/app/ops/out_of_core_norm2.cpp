// The Norm2 rescue (core/reduction.hpp) of an out-of-core reduction. The first pass's results
// are the same on every rank, so every rank decides alike whether to read the dataset again:
// once for M along the axis (NormInf; not when it was asked for alongside), once with the rescue
// engine for the scaled sums. Both passes stream through the same bounded buffers as the first.
#include <algorithm>
#include <cstddef>

#include "core/log.hpp"
#include "mpi/communicator.hpp"
#include "ops/out_of_core_reduce_pass.hpp"

namespace tessera::ops::detail {

namespace {

void add(OutOfCoreReport& into, const OutOfCoreReport& more) {
  into.seconds += more.seconds;
  into.bytes_read += more.bytes_read;
  into.bytes_written += more.bytes_written;
  into.io_seconds += more.io_seconds;
  into.compute_seconds += more.compute_seconds;
  into.compute_waited_io += more.compute_waited_io;
  into.io_waited_compute += more.io_waited_compute;
}

std::vector<double>* values_of(ReduceResult& r, Op op) {
  const auto it = std::find(r.ops.begin(), r.ops.end(), op);
  return it == r.ops.end() ? nullptr : &r.values[static_cast<std::size_t>(it - r.ops.begin())];
}

} // namespace

void rescue_norm2(const io::DatasetRef& in, Axis axis, const OutOfCoreOptions& options,
                  MPI_Comm comm, ReducePass& done) {
  ReduceResult& r = done.result;
  const std::vector<double>* norms = values_of(r, Op::Norm2);
  if (done.dtype != DType::f64 || !norms ||
      std::none_of(norms->begin(), norms->end(), norm2_needs_rescue))
    return;
  const std::vector<double> v = *norms;

  OutOfCoreOptions o = options;
  o.backend = done.report.backend; // resolved by the first pass
  std::vector<double> max_abs;
  if (const std::vector<double>* m = values_of(r, Op::NormInf)) {
    max_abs = *m;
  } else {
    if (mpi::comm_rank(comm) == 0)
      log::debug("norm2: reading {} again for the largest |x| of norms to rescue", in.str());
    ReducePass p = reduce_pass(in, {Op::NormInf}, axis, o, comm, nullptr, true);
    add(done.report, p.report);
    max_abs = std::move(p.result.values.at(0));
  }

  Norm2Exponents e;
  std::vector<int>* per_value = axis == Axis::Rows   ? &e.rows
                                : axis == Axis::Cols ? &e.cols
                                                     : nullptr;
  if (per_value)
    per_value->assign(v.size(), 0);
  std::vector<std::size_t> fix;
  for (std::size_t k = 0; k < v.size(); ++k)
    if (const auto x = norm2_rescue_exponent(max_abs[k]); x && norm2_needs_rescue(v[k])) {
      (per_value ? (*per_value)[k] : e.all) = *x;
      fix.push_back(k);
    }
  if (fix.empty())
    return;
  if (mpi::comm_rank(comm) == 0)
    log::info("norm2: {} of {} values overflowed or underflowed in the sum of squares; "
              "recomputing them with power-of-two scaling (one more pass over {})",
              fix.size(), v.size(), in.str());
  ReducePass p = reduce_pass(in, {Op::Norm2}, axis, o, comm, &e);
  add(done.report, p.report);
  const std::vector<double>& scaled = p.result.values.at(0);
  for (std::size_t q = 0; q < r.ops.size(); ++q)
    if (r.ops[q] == Op::Norm2)
      for (std::size_t k : fix)
        r.values[q][k] = norm2_unscale(scaled[k], per_value ? (*per_value)[k] : e.all);
}

} // namespace tessera::ops::detail
