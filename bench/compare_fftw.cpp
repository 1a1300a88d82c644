// compare_fftw: FFTW's MPI transpose and tessera's TransposePlan on the same row-distributed f64
// matrices, in the same run, interleaved repeat by repeat so that both see the same machine.
//
//   mpirun -np 2 build/release/bench/compare_fftw [--shape 8192x8192] [--shape 8191x12289]
//       [--repeat 10] [--warmup 2] [--fftw measure|estimate] [--algorithm auto] [--json]
//
// GB/s = (bytes read + written: 2 * M * N * 8) / median time of one transpose, where each
// repeat starts after a barrier and lasts until the slowest rank finishes.
#include <fftw3-mpi.h>
#include <fmt/format.h>
#include <mpi.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cli/bench/bench.hpp"
#include "core/block_distribution.hpp"
#include "core/timers.hpp"
#include "mpi/transpose_plan.hpp"

namespace {

using tessera::BlockDistribution;

struct Options {
  std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
  int repeat = 10;
  int warmup = 2;
  unsigned fftw_flags = FFTW_MEASURE;
  std::string algorithm = "auto";
  bool json = false;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "compare_fftw: %s\nusage: compare_fftw [--shape MxN]... [--repeat K] [--warmup W] "
               "[--fftw measure|estimate] [--algorithm auto|alltoallv|pairwise|pipelined] "
               "[--json]\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--shape") {
      const std::string v = next();
      long long m = 0, n = 0;
      if (std::sscanf(v.c_str(), "%lldx%lld", &m, &n) != 2 || m <= 0 || n <= 0)
        usage(("bad --shape '" + v + "' (expected MxN, e.g. 8192x8192)").c_str());
      o.shapes.emplace_back(m, n);
    } else if (a == "--repeat") {
      o.repeat = std::max(1, std::atoi(next().c_str()));
    } else if (a == "--warmup") {
      o.warmup = std::max(0, std::atoi(next().c_str()));
    } else if (a == "--fftw") {
      const std::string v = next();
      if (v != "measure" && v != "estimate")
        usage("--fftw takes measure or estimate");
      o.fftw_flags = v == "measure" ? FFTW_MEASURE : FFTW_ESTIMATE;
    } else if (a == "--algorithm") {
      o.algorithm = next();
    } else if (a == "--json") {
      o.json = true;
    } else {
      usage(("unknown argument '" + a + "'").c_str());
    }
  }
  if (o.shapes.empty())
    o.shapes = {{8192, 8192}, {8191, 12289}};
  return o;
}

double value(std::int64_t i, std::int64_t j) {
  return static_cast<double>(
      (static_cast<std::uint64_t>(i) * 1000003u + static_cast<std::uint64_t>(j) * 7919u) % 65521u);
}

// Rows [row0, row0 + nrows) of the transposed matrix (cols = M) hold A(c, row0 + r)?
bool sample_ok(const double* out, std::int64_t row0, std::int64_t nrows, std::int64_t cols,
               MPI_Comm comm) {
  int ok = 1;
  for (std::int64_t s = 0; s < 2048 && nrows > 0; ++s) {
    const std::int64_t r = (s * 7919) % nrows, c = (s * 104729) % cols;
    if (out[r * cols + c] != value(c, row0 + r))
      ok = 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
  return ok == 1;
}

struct Result {
  std::int64_t rows, cols;
  double fftw_gbps, tessera_gbps;
  double fftw_median, tessera_median;
  std::string algorithm;
  bool same_distribution, fftw_ok, tessera_ok;
};

Result compare(std::int64_t M, std::int64_t N, const Options& o, MPI_Comm comm) {
  int rank = 0, nranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nranks);
  const BlockDistribution dist({M, N}, nranks);
  const BlockDistribution tdist = dist.transposed();

  // FFTW: its default blocks are ceil(M/P) rows, which is tessera's split whenever that split is
  // "ceil, ceil, …, remainder" (always at 2 ranks); the report says when it is not.
  const ptrdiff_t n[2] = {M, N};
  ptrdiff_t ln0 = 0, l0 = 0, ln1 = 0, l1 = 0;
  const ptrdiff_t alloc = fftw_mpi_local_size_many_transposed(
      2, n, 1, FFTW_MPI_DEFAULT_BLOCK, FFTW_MPI_DEFAULT_BLOCK, comm, &ln0, &l0, &ln1, &l1);
  double* fin = fftw_alloc_real(static_cast<std::size_t>(std::max<ptrdiff_t>(alloc, 1)));
  double* fout = fftw_alloc_real(static_cast<std::size_t>(std::max<ptrdiff_t>(alloc, 1)));
  fftw_plan fp = fftw_mpi_plan_many_transpose(
      M, N, 1, FFTW_MPI_DEFAULT_BLOCK, FFTW_MPI_DEFAULT_BLOCK, fin, fout, comm, o.fftw_flags);
  int same = (l0 == dist.begin(rank) && ln0 == dist.rows(rank) && l1 == tdist.begin(rank) &&
              ln1 == tdist.rows(rank))
                 ? 1
                 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, comm);
  // Planning with FFTW_MEASURE overwrites the arrays: fill afterwards.
  for (std::int64_t i = 0; i < ln0; ++i)
    for (std::int64_t j = 0; j < N; ++j)
      fin[i * N + j] = value(l0 + i, j);

  // tessera, on its own buffers (first touched by the OpenMP threads that will use them).
  tessera::TransposeOptions topt;
  topt.algorithm = tessera::parse_exchange(o.algorithm);
  tessera::TransposePlan plan(dist, tessera::DType::f64, comm, tessera::Backend::Cpu, topt);
  std::vector<double> tin(
      static_cast<std::size_t>(std::max<std::int64_t>(dist.local_size(rank), 1)));
  std::vector<double> tout(
      static_cast<std::size_t>(std::max<std::int64_t>(tdist.local_size(rank), 1)));
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < dist.rows(rank); ++i)
    for (std::int64_t j = 0; j < N; ++j)
      tin[static_cast<std::size_t>(i * N + j)] = value(dist.begin(rank) + i, j);

  const auto timed = [&](const auto& f) {
    MPI_Barrier(comm);
    const double t0 = tessera::wall_seconds();
    f();
    double dt = tessera::wall_seconds() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, comm);
    return dt;
  };
  const auto run_fftw = [&] { fftw_execute(fp); };
  const auto run_tessera = [&] { plan.execute(tin.data(), tout.data()); };
  for (int w = 0; w < std::max(1, o.warmup); ++w) { // the first tessera run may autotune
    run_fftw();
    run_tessera();
  }
  std::vector<double> tf, tt;
  for (int r = 0; r < o.repeat; ++r) {
    tf.push_back(timed(run_fftw));
    tt.push_back(timed(run_tessera));
  }
  Result res{};
  res.rows = M;
  res.cols = N;
  res.fftw_median = tessera::app::summarize(tf).median;
  res.tessera_median = tessera::app::summarize(tt).median;
  const double bytes = 2.0 * static_cast<double>(M) * static_cast<double>(N) * sizeof(double);
  res.fftw_gbps = bytes / res.fftw_median * 1e-9;
  res.tessera_gbps = bytes / res.tessera_median * 1e-9;
  res.algorithm = std::string(tessera::exchange_name(plan.algorithm()));
  res.same_distribution = same == 1;
  res.fftw_ok = sample_ok(fout, l1, ln1, M, comm);
  res.tessera_ok = sample_ok(tout.data(), tdist.begin(rank), tdist.rows(rank), M, comm);
  fftw_destroy_plan(fp);
  fftw_free(fin);
  fftw_free(fout);
  return res;
}

} // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  fftw_mpi_init();
  int rank = 0, nranks = 1, code = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  try {
    const Options o = parse(argc, argv);
    std::vector<Result> results;
    for (const auto& [m, n] : o.shapes)
      results.push_back(compare(m, n, o, MPI_COMM_WORLD));
    if (rank == 0) {
      std::string out;
      if (o.json) {
        out = "[";
        for (const auto& r : results)
          out += fmt::format(
              "{}{{\"rows\":{},\"cols\":{},\"ranks\":{},\"threads\":{},\"fftw_gbps\":{:.4g},"
              "\"tessera_gbps\":{:.4g},\"speedup\":{:.4g},\"algorithm\":\"{}\","
              "\"same_distribution\":{},\"fftw_ok\":{},\"tessera_ok\":{}}}",
              out.size() > 1 ? "," : "", r.rows, r.cols, nranks, omp_get_max_threads(), r.fftw_gbps,
              r.tessera_gbps, r.tessera_gbps / r.fftw_gbps, r.algorithm, r.same_distribution,
              r.fftw_ok, r.tessera_ok);
        out += "]\n";
      } else {
        out = fmt::format("compare_fftw: {} rank{} x {} OpenMP thread{}, f64, FFTW {}, {} "
                          "repeats (median)\n",
                          nranks, nranks == 1 ? "" : "s", omp_get_max_threads(),
                          omp_get_max_threads() == 1 ? "" : "s",
                          o.fftw_flags == FFTW_MEASURE ? "MEASURE" : "ESTIMATE", o.repeat);
        out += fmt::format("{:>14} {:>10} {:>12} {:>10} {:>12} {:>8}  {}\n", "shape", "FFTW s",
                           "FFTW GB/s", "tessera s", "tessera GB/s", "speedup", "checks");
        for (const auto& r : results)
          out += fmt::format("{:>14} {:>10.4f} {:>12.2f} {:>10.4f} {:>12.2f} {:>7.2f}x  {}{}{}\n",
                             fmt::format("{}x{}", r.rows, r.cols), r.fftw_median, r.fftw_gbps,
                             r.tessera_median, r.tessera_gbps, r.tessera_gbps / r.fftw_gbps,
                             r.fftw_ok && r.tessera_ok ? "ok" : "MISMATCH",
                             ", tessera exchange: " + r.algorithm,
                             r.same_distribution ? "" : ", FFTW row blocks differ from tessera's");
      }
      std::fputs(out.c_str(), stdout);
    }
    for (const auto& r : results)
      if (!r.fftw_ok || !r.tessera_ok)
        code = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "[rank %d] compare_fftw: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  fftw_mpi_cleanup();
  MPI_Finalize();
  return code;
}
