// tessera selftest: every backend this build and machine offer (cpu; cuda when a GPU is usable)
// against the serial reference, at the current rank count, on awkward shapes: transposes of
// all element types with every exchange algorithm, and every reduction along every axis for
// f32/f64. All comparisons are bit-exact (the Sum family follows the canonical order).
#include <CLI/CLI.hpp>
#include <complex>
#include <cstdio>
#include <cstring>

#include "cli/commands.hpp"
#include "cli/jobs/run_info.hpp"
#include "core/log.hpp"
#include "core/progress.hpp"
#include "core/throw.hpp"
#include "cpu/reference.hpp"
#include "cuda/device.hpp"
#include "mpi/agreement.hpp"
#include "mpi/backend_select.hpp"
#include "mpi/reduce_plan.hpp"
#include "mpi/transpose_plan.hpp"
#include "ops/random_fill.hpp"

namespace tessera::app {

namespace {

const Shape kShapes[] = {{1, 1}, {1, 7}, {7, 1}, {2, 5}, {17, 31}, {64, 65}, {1000, 999}};
const Exchange kExchanges[] = {Exchange::Alltoallv, Exchange::PairwiseP2P, Exchange::Pipelined};
const Op kOps[] = {Op::Sum, Op::Min, Op::Max, Op::Mean, Op::Norm1, Op::Norm2, Op::NormInf};
const Axis kAxes[] = {Axis::All, Axis::Rows, Axis::Cols};

struct Row {
  std::string backend, test, dtype;
  int cases = 0;
  int failed = 0;
  double seconds = 0.0;
  std::vector<std::string> failures;
};

// Every rank holds the whole (small) matrix: the reference needs it, and the rank's block is
// a slice of it.
template <class T>
std::vector<T> full_matrix(Shape s, std::uint64_t seed) {
  std::vector<T> a(static_cast<std::size_t>(std::max<std::int64_t>(s.size(), 1)));
  ops::random_fill_rows(dtype_of<T>, 0, s.rows, s.cols, seed, a.data());
  return a;
}

// Runs `check` on every rank; a failure on any rank becomes one line, the same on every rank.
bool agreed(const Context& ctx, Row& row, const std::string& label,
            const std::function<void()>& check) {
  ++row.cases;
  try {
    mpi::collectively(ctx.comm, check);
    return true;
  } catch (const Error& e) {
    ++row.failed;
    row.failures.push_back(label + ": " + e.what());
    return false;
  }
}

template <class T>
void transpose_cases(Backend backend, const Context& ctx, std::uint64_t seed, Row& row,
                     Progress& progress, double& done, PhaseTimers& timers) {
  for (const Shape s : kShapes) {
    const auto a = full_matrix<T>(s, seed);
    std::vector<T> ref(a.size());
    reference::transpose(a.data(), ref.data(), s.rows, s.cols);
    const BlockDistribution dist(s, ctx.nranks);
    const BlockDistribution tdist = dist.transposed();
    for (const Exchange ex : kExchanges) {
      const std::string label =
          fmt::format("{} {} {}", s.str(), exchange_name(ex), dtype_name(dtype_of<T>));
      std::vector<T> out(
          static_cast<std::size_t>(std::max<std::int64_t>(tdist.local_size(ctx.rank), 1)));
      agreed(ctx, row, label, [&] {
        TransposeOptions o;
        o.algorithm = ex;
        TransposePlan plan(dist, dtype_of<T>, ctx.comm, backend, o);
        const double t0 = wall_seconds();
        plan.execute(a.data() + dist.begin(ctx.rank) * s.cols, out.data());
        timers.add("selftest transpose", wall_seconds() - t0, plan.bytes_moved());
        const T* want = ref.data() + tdist.begin(ctx.rank) * s.rows;
        for (std::int64_t k = 0; k < tdist.local_size(ctx.rank); ++k)
          if (std::memcmp(&out[k], &want[k], sizeof(T)) != 0)
            TESSERA_THROW(InternalError, "transpose element ({}, {}) differs from the reference",
                          tdist.begin(ctx.rank) + k / s.rows, k % s.rows);
      });
      progress.update(++done);
    }
  }
}

template <class T>
void reduce_cases(Backend backend, const Context& ctx, std::uint64_t seed, Row& row,
                  Progress& progress, double& done, PhaseTimers& timers) {
  const std::vector<Op> ops(std::begin(kOps), std::end(kOps));
  for (const Shape s : kShapes) {
    const auto a = full_matrix<T>(s, seed);
    const BlockDistribution dist(s, ctx.nranks);
    for (const Axis axis : kAxes) {
      const std::string label =
          fmt::format("{} axis {} {}", s.str(), axis_name(axis), dtype_name(dtype_of<T>));
      agreed(ctx, row, label, [&] {
        ReducePlan plan(dist, dtype_of<T>, ctx.comm, backend, ops, axis);
        const double t0 = wall_seconds();
        const ReduceResult r = plan.execute(a.data() + dist.begin(ctx.rank) * s.cols);
        timers.add("selftest reduce", wall_seconds() - t0, plan.bytes_read());
        for (const Op op : ops) {
          const auto want = reference::reduce(op, axis, a.data(), s.rows, s.cols);
          const auto& got = r[op];
          if (got.size() != want.size())
            TESSERA_THROW(InternalError, "{}: {} values, expected {}", op_name(op), got.size(),
                          want.size());
          for (std::size_t i = 0; i < want.size(); ++i)
            if (std::memcmp(&got[i], &want[i], sizeof(double)) != 0)
              TESSERA_THROW(InternalError, "{}[{}] = {:.17g}, reference {:.17g}", op_name(op), i,
                            got[i], want[i]);
        }
      });
      progress.update(++done);
    }
  }
}

} // namespace

Command add_selftest(CLI::App& app, const Context& ctx) {
  struct Args {
    std::uint64_t seed = 20250131;
    std::string backend = "all";
  };
  auto args = std::make_shared<Args>();
  Command c;
  c.sub = app.add_subcommand("selftest",
                             "Check every backend against the serial reference at this rank count");
  c.sub->add_option("--seed", args->seed, "Seed of the test matrices")->capture_default_str();
  c.sub->add_option("--backend", args->backend, "all, cpu or cuda")->capture_default_str();
  c.run = [args, &ctx]() -> int {
    // Every rank builds the same matrices from the seed, so it must not come from a clock.
    const std::uint64_t seed = args->seed;
    std::vector<Backend> backends;
    if (args->backend == "all" || args->backend == "cpu")
      backends.push_back(Backend::Cpu);
    if (args->backend == "all" || args->backend == "cuda") {
      try {
        mpi::collectively(ctx.comm, [] {
          if (cuda::device_count() == 0)
            TESSERA_THROW(NotCompiled, "{}", cuda::unavailable_reason());
        });
        backends.push_back(mpi::resolve_backend(Backend::Cuda, ctx.comm));
      } catch (const Error& e) {
        if (args->backend == "cuda")
          throw;
        log::info("selftest: skipping the cuda backend: {}", e.what());
      }
    }
    if (backends.empty())
      TESSERA_THROW(InputError, "--backend '{}': expected all, cpu or cuda", args->backend);
    log::info("selftest: {} rank{} x {} thread{}, seed {}", ctx.nranks, ctx.nranks == 1 ? "" : "s",
              omp_threads(), omp_threads() == 1 ? "" : "s", seed);

    const double per_backend =
        std::size(kShapes) * (4.0 * std::size(kExchanges) + 2.0 * std::size(kAxes));
    Progress progress("selftest", per_backend * double(backends.size()));
    double done = 0;
    PhaseTimers timers;
    std::vector<Row> rows;
    // One row of the table: `cases` runs the checks of one test, backend and element type.
    const auto run_row = [&](Backend b, const char* test, DType t, const auto& cases) {
      Row row;
      row.backend = std::string(backend_name(b));
      row.test = test;
      row.dtype = std::string(dtype_name(t));
      const double t0 = wall_seconds();
      cases(row);
      row.seconds = wall_seconds() - t0;
      rows.push_back(std::move(row));
    };
    for (const Backend b : backends) {
      for (const DType t : {DType::f32, DType::f64, DType::c64, DType::c128})
        run_row(b, "transpose", t, [&](Row& row) {
          dispatch_dtype(t, [&](auto tag) {
            transpose_cases<decltype(tag)>(b, ctx, seed, row, progress, done, timers);
          });
        });
      for (const DType t : {DType::f32, DType::f64})
        run_row(b, "reduce", t, [&](Row& row) {
          dispatch_real_dtype(t, [&](auto tag) {
            reduce_cases<decltype(tag)>(b, ctx, seed, row, progress, done, timers);
          });
        });
    }
    progress.finish();

    int failed = 0;
    for (const auto& r : rows)
      failed += r.failed;
    if (ctx.rank == 0) {
      std::string table = fmt::format("\nselftest at {} rank{} ({} shapes from 1x1 to 1000x999; "
                                      "bit-exact against the serial reference)\n",
                                      ctx.nranks, ctx.nranks == 1 ? "" : "s", std::size(kShapes));
      table += fmt::format("{:<8} {:<10} {:<6} {:>6} {:>7} {:>9}  {}\n", "backend", "test", "dtype",
                           "cases", "failed", "time [s]", "result");
      for (const auto& r : rows)
        table += fmt::format("{:<8} {:<10} {:<6} {:>6} {:>7} {:>9.3f}  {}\n", r.backend, r.test,
                             r.dtype, r.cases, r.failed, r.seconds, r.failed ? "FAIL" : "ok");
      for (const auto& r : rows)
        for (const auto& f : r.failures)
          table += fmt::format("FAIL {} {}: {}\n", r.backend, r.test, f);
      table += failed ? fmt::format("selftest: {} case(s) FAILED\n", failed)
                      : std::string("selftest: all cases passed\n");
      std::fputs(table.c_str(), stdout);
      std::fflush(stdout);
    }
    print_timing_table(timers, ctx);
    return failed ? 1 : 0;
  };
  return c;
}

} // namespace tessera::app
