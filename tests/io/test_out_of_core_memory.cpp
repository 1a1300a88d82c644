// Peak memory of an out-of-core transpose: a dataset 16 times the memory limit streams through
// while the process's peak resident set (VmHWM) grows by no more than the limit plus a fixed
// allowance. In a binary of its own, so that no earlier test has raised the peak already.
#include <gtest/gtest.h>
#include <mpi.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/block_distribution.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"
#include "ops/out_of_core.hpp"

namespace tessera::ops {
namespace {

using test::TempDir;

// Peak resident memory of this process, from /proc (kB).
long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

// A dataset 16 times the memory limit streams through: the process's peak resident memory
// grows by no more than the limit plus a fixed allowance for MPI-IO's collective buffers.
TEST(OutOfCoreTransposeLimits, PeakMemoryStaysWithinTheLimit) {
#if defined(__SANITIZE_ADDRESS__)
  // Shadow memory and the freed-memory quarantine make peak RSS say nothing about the limit.
  GTEST_SKIP() << "peak memory is not meaningful under AddressSanitizer";
#endif
  TempDir dir;
  const std::int64_t rows = 2048, cols = 2048; // 32 MiB of f64
  const std::size_t limit = std::size_t{2} << 20;
  const io::DatasetRef in{dir.file("big.h5"), "/A"}, out{dir.file("bigt.h5"), "/AT"};
  const std::uint64_t seed = test::shared_seed();
  {
    // Written a few rows at a time so that writing it does not raise the peak either.
    io::H5File f = io::H5File::create(in.file, MPI_COMM_WORLD);
    io::create_dataset(f, in.path, {rows, cols}, DType::f64);
    const std::int64_t step = 64;
    for (std::int64_t r0 = 0; r0 < rows; r0 += step) {
      const BlockDistribution d({step, cols}, test::size_of());
      const int me = test::rank_of();
      const auto block = test::random_block<double>(seed, r0 + d.begin(me), d.rows(me), 0, cols);
      io::write_block(f, in.path, {r0 + d.begin(me), d.rows(me), 0, cols}, DType::f64,
                      block.data());
    }
    f.commit();
  }
  const long before = peak_rss_kib();
  OutOfCoreOptions o;
  o.memory_limit = limit;
  o.progress = false;
  const auto r = transpose_out_of_core(in, out, o, MPI_COMM_WORLD);
  const long after = peak_rss_kib();
  ASSERT_GT(before, 0);
  const long allowance_kib = 48 * 1024; // MPI-IO collective buffering and HDF5 caches
  EXPECT_LE(after - before, static_cast<long>(limit / 1024) + allowance_kib)
      << "peak RSS grew from " << before << " kB to " << after << " kB with a limit of "
      << limit / 1024 << " kB";
  EXPECT_GE(r.chunks, 16);

  // Spot-check a few rows of the output against the generator.
  const BlockDistribution dout({cols, rows}, test::size_of());
  io::H5File f = io::H5File::open_read(out.file, MPI_COMM_WORLD);
  const int me = test::rank_of();
  const std::int64_t n = std::min<std::int64_t>(dout.rows(me), 3);
  std::vector<double> got(static_cast<std::size_t>(n * rows));
  io::read_block(f, out.path, {dout.begin(me), n, 0, rows}, DType::f64, got.data());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < rows; ++j)
      ASSERT_EQ(got[i * rows + j], test::random_element<double>(seed, j, dout.begin(me) + i))
          << "output row " << dout.begin(me) + i << ", column " << j << ", seed " << seed;
}

} // namespace
} // namespace tessera::ops
