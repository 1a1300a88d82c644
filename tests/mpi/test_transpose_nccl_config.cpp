// Exchange::Nccl where it cannot run: the CPU backend (or a build without NCCL) must give one
// clear error on every rank, never a hang; the name parses; Auto on the CPU never picks it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "cuda/device.hpp"
#include "mpi/nccl_comm.hpp"
#include "mpi/transpose_plan.hpp"

namespace {

using tessera::Backend;
using tessera::BlockDistribution;
using tessera::DType;
using tessera::Exchange;
using tessera::TransposePlan;

int world_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

bool any_rank_has_gpu() {
  int have = tessera::cuda::device_count() > 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&have, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return any != 0;
}

TEST(NcclExchange, NameRoundTrips) {
  EXPECT_EQ(tessera::exchange_name(Exchange::Nccl), "nccl");
  EXPECT_EQ(tessera::parse_exchange("nccl"), Exchange::Nccl);
  try {
    tessera::parse_exchange("nccl2");
    ADD_FAILURE() << "no error";
  } catch (const tessera::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nccl"), std::string::npos) << e.what();
  }
}

TEST(NcclExchange, CpuBackendFailsOnEveryRank) {
  const BlockDistribution dist({10, 7}, world_size());
  try {
    TransposePlan plan(dist, DType::f64, MPI_COMM_WORLD, Backend::Cpu,
                       {.algorithm = Exchange::Nccl});
    ADD_FAILURE() << "no error";
  } catch (const tessera::InputError& e) {
    EXPECT_TRUE(e.collective());
    const std::string what = e.what();
    EXPECT_NE(what.find("nccl"), std::string::npos) << what;
    EXPECT_NE(what.find("CUDA backend"), std::string::npos) << what;
  }
  // Nothing is left waiting: the ranks go on together.
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

// Without a GPU, Auto resolves to the CPU, so nccl is refused the same way.
TEST(NcclExchange, AutoBackendWithoutGpuFailsOnEveryRank) {
  if (any_rank_has_gpu())
    GTEST_SKIP() << "a GPU is present";
  const BlockDistribution dist({5, 9}, world_size());
  EXPECT_THROW(
      TransposePlan(dist, DType::f32, MPI_COMM_WORLD, Backend::Auto, {.algorithm = Exchange::Nccl}),
      tessera::InputError);
}

TEST(NcclExchange, CpuAutoNeverPicksNccl) {
  const BlockDistribution dist({33, 31}, world_size());
  TransposePlan plan(dist, DType::f64, MPI_COMM_WORLD, Backend::Cpu);
  const int rank = [] {
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
  }();
  std::vector<double> in(static_cast<std::size_t>(dist.local_size(rank)), 1.0);
  std::vector<double> out(static_cast<std::size_t>(plan.output_distribution().local_size(rank)));
  plan.execute(in.data(), out.data());
  EXPECT_NE(plan.algorithm(), Exchange::Nccl);
}

TEST(NcclExchange, UnavailableReasonWithoutNccl) {
  if (tessera::mpi::nccl_compiled())
    GTEST_SKIP() << "this build has NCCL";
  EXPECT_NE(tessera::mpi::nccl_unavailable(MPI_COMM_WORLD).find("NCCL"), std::string::npos);
  EXPECT_THROW(tessera::mpi::NcclComm(MPI_COMM_WORLD), tessera::NotCompiled);
}

} // namespace
