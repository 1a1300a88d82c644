// The input of `tessera transpose`, `tessera reduce` and the pipeline job, opened once: the
// decision in memory or streamed and the in-memory read share the open file.
#include <gtest/gtest.h>
#include <mpi.h>

#include <vector>

#include "core/error.hpp"
#include "io/h5_file.hpp"
#include "io/h5_matrix.hpp"
#include "io_test_support.hpp"
#include "ops/host_matrix.hpp"
#include "ops/matrix_input.hpp"
#include "ops/out_of_core_choice.hpp"

namespace tessera::ops {
namespace {

using test::rank_of;
using test::size_of;

// A 7 x 5 f64 dataset of random values at `ref`.
void write_input(const io::DatasetRef& ref, std::uint64_t seed) {
  const Shape shape{7, 5};
  const BlockDistribution dist(shape, size_of());
  const auto mine =
      test::random_block<double>(seed, dist.begin(rank_of()), dist.rows(rank_of()), 0, shape.cols);
  io::H5File f = io::H5File::create(ref.file, MPI_COMM_WORLD);
  io::write_rows(f, ref.path, dist, rank_of(), DType::f64, mine.data());
  f.commit();
}

TEST(MatrixInput, OneOpenServesTheDecisionAndTheRead) {
  const test::TempDir dir("matrix-input");
  const io::DatasetRef ref{dir.file("in.h5"), "/A"};
  const std::uint64_t seed = test::shared_seed();
  write_input(ref, seed);

  MatrixInput in = MatrixInput::open(ref, MPI_COMM_WORLD);
  ASSERT_TRUE(in.file.has_value());
  EXPECT_TRUE(in.from_file());
  EXPECT_EQ(in.name(), ref.str());
  EXPECT_EQ(in.info.shape, (Shape{7, 5}));
  EXPECT_EQ(in.info.dtype, DType::f64);
  // Rank 0 holds ceil(7 / P) rows of 5 doubles, plus its rows of the 5 x 7 transpose.
  const double need = in_memory_bytes({in.info.shape, in.info.dtype, true}, size_of());
  EXPECT_FALSE(stream_out_of_core({}, in, true, MPI_COMM_WORLD));
  EXPECT_FALSE(stream_out_of_core({static_cast<std::size_t>(need)}, in, true, MPI_COMM_WORLD));
  EXPECT_TRUE(stream_out_of_core({static_cast<std::size_t>(need) - 1}, in, true, MPI_COMM_WORLD));
  EXPECT_TRUE(stream_out_of_core({0, true}, in, false, MPI_COMM_WORLD));

  // The in-memory read uses the file the decision saw, then closes it.
  PhaseTimers timers;
  const HostMatrix a = read_matrix(in, MPI_COMM_WORLD, timers);
  EXPECT_FALSE(in.file.has_value());
  ASSERT_EQ(a.shape(), (Shape{7, 5}));
  const BlockDistribution& d = a.dist();
  const auto expected =
      test::random_block<double>(seed, d.begin(rank_of()), d.rows(rank_of()), 0, 5);
  const auto* got = static_cast<const double*>(a.data());
  for (std::size_t k = 0; k < expected.size(); ++k)
    ASSERT_EQ(got[k], expected[k]) << "element " << k << " on rank " << rank_of();
}

TEST(MatrixInput, AGeneratedMatrixThatWouldStreamFailsOnEveryRank) {
  const MatrixInput in = MatrixInput::generated({1000, 1000}, DType::f64);
  EXPECT_FALSE(in.from_file());
  EXPECT_FALSE(in.file.has_value());
  EXPECT_FALSE(stream_out_of_core({}, in, false, MPI_COMM_WORLD));
  test::expect_error<ResourceError>(
      [&] {
        stream_out_of_core({1024, false, "staging.memory_limit"}, in, false, MPI_COMM_WORLD);
      },
      {"the generated 1000x1000 f64 matrix", "staging.memory_limit"});
}

TEST(MatrixInput, AMissingDatasetFailsOnEveryRankNamingIt) {
  const test::TempDir dir("matrix-input");
  const io::DatasetRef ref{dir.file("in.h5"), "/A"};
  write_input(ref, 1);
  test::expect_error<InputError>(
      [&] {
        (void)MatrixInput::open({ref.file, "/B"}, MPI_COMM_WORLD);
      },
      {"/B"});
}

} // namespace
} // namespace tessera::ops
