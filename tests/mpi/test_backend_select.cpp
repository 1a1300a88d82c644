// Backend resolution is the same on every rank: Auto falls back to the CPU when any rank lacks a
// GPU, and an explicit CUDA request without a GPU is an input error on every rank.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>

#include "core/throw.hpp"
#include "cuda/device.hpp"
#include "mpi/backend_select.hpp"
#include "mpi/reduce_plan.hpp"

namespace {

using tessera::Backend;

bool gpu_anywhere() {
  int have = tessera::cuda::device_count() > 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return have != 0;
}

bool gpu_everywhere() {
  int have = tessera::cuda::compiled() && tessera::cuda::device_count() > 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return have != 0;
}

TEST(BackendSelect, CpuStaysCpu) {
  EXPECT_EQ(tessera::mpi::resolve_backend(Backend::Cpu, MPI_COMM_WORLD), Backend::Cpu);
}

TEST(BackendSelect, AutoAgreesWithTheDevicesOfEveryRank) {
  const Backend b = tessera::mpi::resolve_backend(Backend::Auto, MPI_COMM_WORLD);
  EXPECT_EQ(b, gpu_everywhere() ? Backend::Cuda : Backend::Cpu);
  int mine = static_cast<int>(b), lo = 0, hi = 0;
  MPI_Allreduce(&mine, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_EQ(lo, hi);
}

TEST(BackendSelect, CudaWithoutAGpuIsAnInputErrorOnEveryRank) {
  if (gpu_anywhere())
    GTEST_SKIP() << "a GPU is present";
  try {
    tessera::mpi::resolve_backend(Backend::Cuda, MPI_COMM_WORLD);
    ADD_FAILURE() << "no error";
  } catch (const tessera::InputError& e) {
    EXPECT_TRUE(e.collective());
    EXPECT_NE(std::string(e.what()).find("no usable GPU"), std::string::npos) << e.what();
  }
  // Plans report it the same way.
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const tessera::BlockDistribution dist({4, 4}, size);
  EXPECT_THROW(tessera::ReducePlan(dist, tessera::DType::f64, MPI_COMM_WORLD, Backend::Cuda,
                                   {tessera::Op::Sum}, tessera::Axis::All),
               tessera::InputError);
}

} // namespace
