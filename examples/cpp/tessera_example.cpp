// tessera from C++: transpose and reduce a distributed matrix, write it to HDF5, transpose the
// file out of core, permute the dimensions of a 3-D array, and run the heat2d solver. Checks every
// result; exit code 0 when all hold.
//   mpirun -np 3 ./tessera_example [WORKDIR]
#include <mpi.h>

#include <tessera/tessera.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int failures = 0;
void check(bool ok, const char* what, int rank) {
  if (!ok) {
    std::fprintf(stderr, "[rank %d] FAILED: %s\n", rank, what);
    ++failures;
  }
}

int run(int rank, int nranks, const std::string& dir) {
  const std::int64_t M = 37, N = 23;
  tessera::BlockDistribution dist({M, N}, nranks);
  const std::int64_t b = dist.begin(rank), e = dist.end(rank);

  // This rank's rows of A, a[i][j] = i * N + j.
  std::vector<double> a(static_cast<std::size_t>(dist.local_size(rank)));
  for (std::int64_t i = b; i < e; ++i)
    for (std::int64_t j = 0; j < N; ++j)
      a[static_cast<std::size_t>((i - b) * N + j)] = static_cast<double>(i * N + j);

  // Distributed transpose: this rank's rows of A^T.
  tessera::TransposePlan plan(dist, tessera::DType::f64, MPI_COMM_WORLD, tessera::Backend::Cpu);
  const tessera::BlockDistribution& out = plan.output_distribution();
  std::vector<double> at(static_cast<std::size_t>(out.local_size(rank)));
  plan.execute(a.data(), at.data());
  bool same = true;
  for (std::int64_t r = out.begin(rank); r < out.end(rank); ++r)
    for (std::int64_t c = 0; c < M; ++c)
      same = same && at[static_cast<std::size_t>((r - out.begin(rank)) * M + c)] ==
                         static_cast<double>(c * N + r);
  check(same, "transpose", rank);

  // Reductions: the sum of 0 … MN-1 and the largest element, the same on every rank.
  tessera::ReducePlan rp(dist, tessera::DType::f64, MPI_COMM_WORLD, tessera::Backend::Cpu,
                         {tessera::Op::Sum, tessera::Op::Norm2, tessera::Op::Max},
                         tessera::Axis::All);
  const tessera::ReduceResult r = rp.execute(a.data());
  const double n = static_cast<double>(M * N);
  check(r.scalar(tessera::Op::Sum) == n * (n - 1) / 2, "sum", rank);
  check(r.scalar(tessera::Op::Max) == n - 1, "max", rank);
  const double norm2 = std::sqrt((n - 1) * n * (2 * n - 1) / 6);
  check(std::abs(r.scalar(tessera::Op::Norm2) - norm2) <= 1e-12 * norm2, "norm2", rank);

  // HDF5: write the blocks, read them back, transpose the file out of core.
  const std::string file = dir + "/a.h5", file_t = dir + "/at.h5";
  tessera::h5::write_rows(file, "/A", dist, a.data(), MPI_COMM_WORLD);
  const tessera::h5::DatasetInfo info = tessera::h5::inspect(file, "/A", MPI_COMM_WORLD);
  check(info.shape == tessera::Shape{M, N} && info.dtype == tessera::DType::f64, "inspect", rank);
  std::vector<double> back(a.size());
  tessera::h5::read_rows(file, "/A", dist, back.data(), MPI_COMM_WORLD);
  check(back == a, "HDF5 round trip", rank);
  tessera::transpose_out_of_core(file, "/A", file_t, "/AT", MPI_COMM_WORLD);
  std::vector<double> at_file(at.size());
  tessera::h5::read_rows(file_t, "/AT", out, at_file.data(), MPI_COMM_WORLD);
  check(at_file == at, "out-of-core transpose", rank);
  const tessera::ReduceResult rf = tessera::reduce_out_of_core(
      file, "/A", {tessera::Op::Sum, tessera::Op::Norm2}, tessera::Axis::All, MPI_COMM_WORLD);
  check(rf.scalar(tessera::Op::Sum) == r.scalar(tessera::Op::Sum) &&
            rf.scalar(tessera::Op::Norm2) == r.scalar(tessera::Op::Norm2),
        "out-of-core reduction: the same bits as the plan", rank);

  // Permutation of dimensions of a 3-D array x[i][j][k] = (i * J + j) * K + k, split along i:
  // this rank's block of y = x.transpose(2, 0, 1), y[k][i][j], split along k.
  const std::int64_t I = 7, J = 5, K = 4;
  tessera::PermutePlan pp({I, J, K}, {2, 0, 1}, tessera::DType::i32, MPI_COMM_WORLD,
                          tessera::Backend::Cpu);
  const tessera::PermuteBlock& xb = pp.input_block();
  const tessera::PermuteBlock& yb = pp.output_block();
  std::vector<std::int32_t> x(static_cast<std::size_t>(xb.elements));
  for (std::size_t q = 0; q < x.size(); ++q)
    x[q] = static_cast<std::int32_t>(xb.begin * J * K + static_cast<std::int64_t>(q));
  std::vector<std::int32_t> y(static_cast<std::size_t>(yb.elements));
  pp.execute(x.data(), y.data());
  bool permuted = pp.output_shape() == std::vector<std::int64_t>{K, I, J};
  for (std::int64_t k = 0; k < yb.length; ++k)
    for (std::int64_t i = 0; i < I; ++i)
      for (std::int64_t j = 0; j < J; ++j)
        permuted = permuted && y[static_cast<std::size_t>((k * I + i) * J + j)] ==
                                   (i * J + j) * K + yb.begin + k;
  check(permuted, "permutation of dimensions", rank);

  // heat2d: the sine mode decays as the exact solution does.
  tessera::Heat2dSettings s;
  s.nx = 32;
  s.ny = 24;
  s.dt = 1e-4;
  tessera::Heat2dSolver solver(s, MPI_COMM_WORLD);
  solver.step(20);
  const tessera::Heat2dDiagnostics d = solver.diagnostics();
  check(solver.steps_done() == 20 && d.linf_error < 1e-3 && d.max < 1.0, "heat2d", rank);
  std::vector<double> u(static_cast<std::size_t>(solver.layout().local_size(rank)));
  solver.read_field(u.data());
  bool positive = true;
  for (double v : u)
    positive = positive && v > 0.0 && v <= d.max;
  check(positive, "heat2d field", rank);

  // Errors are exceptions with a message, of the kinds in tessera/error.hpp: thrown inside
  // libtessera.so, caught here by their type.
  try {
    tessera::h5::read_rows(dir + "/missing.h5", "/A", dist, back.data(), MPI_COMM_WORLD);
    check(false, "reading a missing file throws", rank);
  } catch (const tessera::IoError& err) {
    check(std::string(err.what()).find("missing.h5") != std::string::npos, "error message", rank);
  } catch (const tessera::Error& err) {
    check(false, (std::string("a missing file is an I/O error, not a ") + err.kind()).c_str(),
          rank);
  }
  try {
    (void)tessera::parse_dtype("f16");
    check(false, "parsing a bad dtype throws", rank);
  } catch (const tessera::InputError&) {
  }
  return failures;
}

} // namespace

int main(int argc, char** argv) {
  // The out-of-core operations need MPI_THREAD_MULTIPLE; the plans, HDF5 block I/O and the
  // solver work at any level.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int local = 0;
  try {
    local = run(rank, nranks, argc > 1 ? argv[1] : ".");
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "[rank %d] tessera: %s: %s\n", rank, e.kind(), e.what());
    local = 1;
  }
  int total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("C++ example (tessera %s, %d ranks): %s\n", tessera::version(), nranks,
                total == 0 ? "ok" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
