// `tessera bench redistribute --from LAYOUT --to LAYOUT`: the RedistributePlan between two
// layouts of the benchmark matrix (CPU backend), beside memcpy of the same bytes, with the bytes
// each rank sends against the least it must send. Layouts: rows, cols, 2d:PRxPC and
// bc:MBxNB:PRxPC (ScaLAPACK's block-cyclic, column-major local blocks).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <tessera/layout.hpp>
#include <tessera/redistribute_plan.hpp>

#include "cli/bench/bench_common.hpp"
#include "cli/bench/bench_drivers.hpp"
#include "core/throw.hpp"
#include "cpu/transpose.hpp"
#include "mpi/agreement.hpp"
#include "mpi/communicator.hpp"

namespace tessera::app::bench {

namespace {

Layout redistribute_layout(const std::string& spec, Shape global, int nranks) {
  if (spec == "rows")
    return Layout::row_blocks(global, nranks);
  if (spec == "cols")
    return Layout::col_blocks(global, nranks);
  long long mb = 0, nb = 0;
  int pr = 0, pc = 0;
  char end = 0;
  if (std::sscanf(spec.c_str(), "2d:%dx%d%c", &pr, &pc, &end) == 2 && pr > 0 && pc > 0 &&
      pr * pc <= nranks)
    return Layout::blocks_2d(global, pr, pc, GridOrder::RowMajor, StorageOrder::RowMajor, nranks);
  if (std::sscanf(spec.c_str(), "bc:%lldx%lld:%dx%d%c", &mb, &nb, &pr, &pc, &end) == 4 && mb > 0 &&
      nb > 0 && pr > 0 && pc > 0 && pr * pc <= nranks) {
    BlockCyclicSpec s;
    s.global = global;
    s.mb = mb;
    s.nb = nb;
    s.pr = pr;
    s.pc = pc;
    s.nranks = nranks;
    return Layout::block_cyclic(s);
  }
  TESSERA_THROW(InputError,
                "bench redistribute: layout '{}' is not rows, cols, 2d:PRxPC or bc:MBxNB:PRxPC "
                "(with PR·PC at most {} ranks)",
                spec, nranks);
}

// The benchmark matrix's part of `l` on this rank: element (i, j) of the global matrix, or of
// its transpose (value(j, i)), at its local position.
template <class T>
void redistribute_fill(const Layout& l, int rank, T* local, bool transposed) {
  for (std::int64_t bi = 0; bi < l.block_rows(); ++bi)
    for (std::int64_t bj = 0; bj < l.block_cols(); ++bj) {
      if (l.block_owner(bi, bj) != rank)
        continue;
      const auto r0 = l.row_splits()[static_cast<std::size_t>(bi)];
      const auto r1 = l.row_splits()[static_cast<std::size_t>(bi) + 1];
      const auto c0 = l.col_splits()[static_cast<std::size_t>(bj)];
      const auto c1 = l.col_splits()[static_cast<std::size_t>(bj) + 1];
      for (std::int64_t i = r0; i < r1; ++i)
        for (std::int64_t j = c0; j < c1; ++j)
          local[l.local_offset(rank, l.block_local_row(bi, bj) + i - r0,
                               l.block_local_col(bi, bj) + j - c0)] =
              transposed ? value<T>(j, i) : value<T>(i, j);
    }
}

} // namespace

BenchReport distributed_redistribute(const BenchArgs& args) {
  TESSERA_REQUIRE(args.backend == Backend::Cpu, NotCompiled,
                  "bench redistribute: the CPU backend only (--backend cpu)");
  const int rank = mpi::comm_rank(args.comm);
  const int nranks = mpi::comm_size(args.comm);
  BenchReport r = base_report(args, nranks);
  const Shape global{args.rows, args.cols};
  Layout from, to;
  mpi::collectively(args.comm, [&] {
    from = redistribute_layout(args.from, global, nranks);
    to = redistribute_layout(args.to, args.transpose ? global.transposed() : global, nranks);
  });
  RedistributeOptions options;
  options.op = args.transpose ? MatrixOp::Transpose : MatrixOp::None;
  // A one-off call pays the plan and a first execute (fresh buffers, first messages): timed
  // apart from the steady executes, as COSTA's miniapps report their first repetition.
  MPI_Barrier(args.comm);
  const auto plan_start = std::chrono::steady_clock::now();
  RedistributePlan plan(from, to, args.dtype, args.comm, options);
  const double plan_seconds = max_over_ranks(
      args.comm,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - plan_start).count());
  const std::size_t es = dtype_size(args.dtype);
  const auto in_bytes = static_cast<std::size_t>(from.local_extent(rank)) * es;
  const auto out_bytes = static_cast<std::size_t>(to.local_extent(rank)) * es;
  Block in, out, copy_dst;
  mpi::collectively(args.comm, [&] {
    in = allocate(args, in_bytes);
    out = allocate(args, out_bytes);
    copy_dst = allocate(args, in_bytes);
  });
  dispatch_dtype(args.dtype, [&](auto tag) {
    using T = decltype(tag);
    redistribute_fill(from, rank, static_cast<T*>(in.data()), false);
  });
  zero_parallel(out.data(), out_bytes);
  zero_parallel(copy_dst.data(), in_bytes);
  r.bytes_per_rank = max_over_ranks(args.comm, static_cast<double>(in_bytes + out_bytes));
  r.bytes_total = 2.0 * static_cast<double>(global.size()) * static_cast<double>(es);
  const auto execute = [&] { plan.execute(static_cast<const void*>(in.data()), out.data()); };
  MPI_Barrier(args.comm);
  const auto first_start = std::chrono::steady_clock::now();
  execute();
  const double first_seconds = max_over_ranks(
      args.comm,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - first_start).count());
  r.extras.emplace_back("plan_seconds", plan_seconds);
  r.extras.emplace_back("first_execute_seconds", first_seconds);
  r.notes.push_back(fmt::format("plan {:.2f} ms, first execute {:.2f} ms (slowest rank)",
                                plan_seconds * 1e3, first_seconds * 1e3));
  const auto t = time_pair(
      args, std::max(1, args.warmup), execute,
      [&] { cpu::parallel_copy(in.data(), copy_dst.data(), in_bytes); }, [] {});
  r.what = fmt::format("redistribute {} -> {}{}", args.from, args.to,
                       args.transpose ? " (transposed)" : "");
  r.reference = "memcpy";
  finish_rates(r, t.kernel, t.reference,
               sum_over_ranks(args.comm, 2.0 * static_cast<double>(in_bytes)));
  const RedistributeTraffic& traffic = plan.traffic();
  const double sent = max_over_ranks(args.comm, static_cast<double>(traffic.sent));
  const double bound = max_over_ranks(args.comm, static_cast<double>(traffic.sent_lower_bound));
  r.extras.emplace_back("sent_bytes_max_rank", sent);
  r.extras.emplace_back("sent_lower_bound_max_rank", bound);
  r.notes.push_back(
      fmt::format("bytes sent by the busiest rank: {:.0f} (lower bound {:.0f})", sent, bound));
  // The buffer bound (one local block) splits all-to-all exchanges into rounds: say so beside
  // the rate it shapes.
  const double buffer = max_over_ranks(args.comm, static_cast<double>(traffic.buffer_bytes));
  r.extras.emplace_back("buffer_bytes_max_rank", buffer);
  r.extras.emplace_back("rounds", static_cast<double>(traffic.rounds));
  r.notes.push_back(fmt::format("send + receive buffers of the largest rank: {:.0f} bytes, {} "
                                "round(s)",
                                buffer, traffic.rounds));
  if (!args.check) {
    r.checked = "no (skipped)";
  } else {
    const bool ok = dispatch_dtype(args.dtype, [&](auto tag) {
      using T = decltype(tag);
      const std::vector<T> got(static_cast<const T*>(out.data()),
                               static_cast<const T*>(out.data()) + out_bytes / es);
      std::vector<T> expected(got.size());
      redistribute_fill(to, rank, expected.data(), args.transpose);
      return got == expected;
    });
    r.checked = all_ranks(args.comm, ok) ? "yes (every element)" : "MISMATCH";
  }
  return r;
}

} // namespace tessera::app::bench
