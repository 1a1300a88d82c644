// DistMatrix: local block geometry, element access, and a round trip through the distributed
// transpose (Aᵀᵀ = A) on a matrix that fills its block from global indices.
#include <gtest/gtest.h>
#include <mpi.h>

#include <complex>
#include <random>

#include "core/dist_matrix.hpp"
#include "mpi/transpose_plan.hpp"

namespace {

using tessera::BlockDistribution;
using tessera::DistMatrix;
using tessera::Shape;

int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

TEST(DistMatrix, LocalBlockMatchesTheDistribution) {
  for (Shape s : {Shape{1, 1}, Shape{3, 7}, Shape{17, 31}, Shape{0, 4}}) {
    const BlockDistribution dist(s, world_size());
    DistMatrix<float> a(dist, MPI_COMM_WORLD);
    EXPECT_EQ(a.global_shape(), s);
    EXPECT_EQ(a.local_shape(), dist.local_shape(a.rank()));
    EXPECT_EQ(a.row_begin(), dist.begin(a.rank()));
    EXPECT_EQ(a.row_end(), dist.end(a.rank()));
    EXPECT_EQ(a.local_size(), dist.local_size(a.rank()));
    EXPECT_EQ(a.memory(), tessera::Memory::Host);
    EXPECT_EQ(DistMatrix<float>::dtype(), tessera::DType::f32);
  }
}

TEST(DistMatrix, TransposeTwiceIsTheIdentity) {
  unsigned seed = std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  const Shape s{37, 23};
  const BlockDistribution dist(s, world_size());
  DistMatrix<std::complex<double>> a(dist, MPI_COMM_WORLD), back(dist, MPI_COMM_WORLD);
  DistMatrix<std::complex<double>> at(dist.transposed(), MPI_COMM_WORLD);
  std::mt19937_64 gen(seed + static_cast<unsigned>(a.rank()));
  for (std::int64_t i = 0; i < a.local_rows(); ++i)
    for (std::int64_t j = 0; j < a.cols(); ++j)
      a(i, j) = {static_cast<double>(gen()), static_cast<double>(a.row_begin() + i)};
  tessera::TransposePlan forward(dist, a.dtype(), MPI_COMM_WORLD, tessera::Backend::Cpu);
  tessera::TransposePlan reverse(dist.transposed(), a.dtype(), MPI_COMM_WORLD,
                                 tessera::Backend::Cpu);
  forward.execute(a.data(), at.data());
  reverse.execute(at.data(), back.data());
  for (std::int64_t i = 0; i < a.local_rows(); ++i)
    for (std::int64_t j = 0; j < a.cols(); ++j)
      ASSERT_EQ(back(i, j), a(i, j)) << "local row " << i << ", column " << j << ", seed " << seed;
}

TEST(DistMatrix, WrongRankCountAndDeviceMemoryAreErrors) {
  EXPECT_THROW(DistMatrix<double>(BlockDistribution({4, 4}, world_size() + 1), MPI_COMM_WORLD),
               tessera::InputError);
  EXPECT_THROW(DistMatrix<double>(BlockDistribution({4, 4}, world_size()), MPI_COMM_WORLD,
                                  tessera::Memory::Device),
               tessera::NotCompiled);
}

} // namespace
