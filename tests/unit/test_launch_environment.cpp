// What tessera learns from its launcher before MPI starts, and the transport defaults it sets
// for jobs on one node: only where every rank is on this node, never over a user's choice.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "mpi/launch_environment.hpp"

namespace {

// The variables these tests touch, saved and cleared at the start and restored at the end.
class LaunchEnvironment : public ::testing::Test {
protected:
  static constexpr const char* kNames[] = {"OMPI_COMM_WORLD_RANK",
                                           "OMPI_COMM_WORLD_SIZE",
                                           "OMPI_COMM_WORLD_LOCAL_SIZE",
                                           "PMIX_RANK",
                                           "PMI_RANK",
                                           "PMI_SIZE",
                                           "MPI_LOCALRANKID",
                                           "MPI_LOCALNRANKS",
                                           "SLURM_PROCID",
                                           "SLURM_STEP_ID",
                                           "SLURM_STEP_NUM_NODES",
                                           "OMPI_MCA_pml",
                                           "OMPI_MCA_mtl",
                                           "OMPI_MCA_btl",
                                           "OMPI_MCA_ess_singleton_isolated",
                                           "HWLOC_COMPONENTS",
                                           "OMPI_MCA_sharedfp"};
  void SetUp() override {
    for (const char* n : kNames) {
      if (const char* v = std::getenv(n))
        saved_[n] = v;
      ::unsetenv(n);
    }
  }
  void TearDown() override {
    for (const char* n : kNames) {
      ::unsetenv(n);
      if (const auto it = saved_.find(n); it != saved_.end())
        ::setenv(n, it->second.c_str(), 1);
    }
  }
  static std::optional<std::string> get(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  }
  std::map<std::string, std::string> saved_;
};

TEST_F(LaunchEnvironment, WithoutALauncherASingletonStartsIsolatedOnSharedMemory) {
  EXPECT_TRUE(tessera::mpi::started_without_launcher());
  EXPECT_EQ(tessera::mpi::launcher_rank(), 0);
  tessera::mpi::prefer_node_local_transports();
  EXPECT_EQ(get("OMPI_MCA_ess_singleton_isolated"), "1");
  EXPECT_EQ(get("OMPI_MCA_pml"), "ob1");
  EXPECT_EQ(get("OMPI_MCA_btl"), "self,vader");
}

TEST_F(LaunchEnvironment, RanksOfOneNodeUseSharedMemory) {
  ::setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
  EXPECT_FALSE(tessera::mpi::started_without_launcher());
  EXPECT_EQ(tessera::mpi::launcher_rank(), 2);
  tessera::mpi::prefer_node_local_transports();
  EXPECT_EQ(get("OMPI_MCA_ess_singleton_isolated"), std::nullopt);
  EXPECT_EQ(get("OMPI_MCA_pml"), "ob1");
  EXPECT_EQ(get("OMPI_MCA_btl"), "self,vader");
}

TEST_F(LaunchEnvironment, RanksOnSeveralNodesKeepTheLibrarysChoice) {
  ::setenv("OMPI_COMM_WORLD_RANK", "5", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
  tessera::mpi::prefer_node_local_transports();
  EXPECT_EQ(get("OMPI_MCA_pml"), std::nullopt);
  EXPECT_EQ(get("OMPI_MCA_btl"), std::nullopt);
  EXPECT_EQ(tessera::mpi::launcher_rank(), 5);
}

TEST_F(LaunchEnvironment, SrunRanksAreLaunchedAndOneNodeStepsUseSharedMemory) {
  ::setenv("PMIX_RANK", "1", 1);
  ::setenv("SLURM_PROCID", "1", 1);
  ::setenv("SLURM_STEP_ID", "0", 1);
  ::setenv("SLURM_STEP_NUM_NODES", "1", 1);
  EXPECT_FALSE(tessera::mpi::started_without_launcher());
  EXPECT_EQ(tessera::mpi::launcher_rank(), 1);
  tessera::mpi::prefer_node_local_transports();
  EXPECT_EQ(get("OMPI_MCA_pml"), "ob1");
  ::unsetenv("OMPI_MCA_pml");
  ::unsetenv("OMPI_MCA_btl");
  ::setenv("SLURM_STEP_NUM_NODES", "3", 1);
  tessera::mpi::prefer_node_local_transports();
  EXPECT_EQ(get("OMPI_MCA_pml"), std::nullopt);
}

TEST_F(LaunchEnvironment, TheUsersTransportsWin) {
  ::setenv("OMPI_MCA_pml", "ucx", 1);
  tessera::mpi::prefer_node_local_transports();
  EXPECT_EQ(get("OMPI_MCA_pml"), "ucx");
  EXPECT_EQ(get("OMPI_MCA_btl"), std::nullopt) << "btl set beside a pml the user chose";
  ::unsetenv("OMPI_MCA_pml");
  ::setenv("OMPI_MCA_btl", "self,tcp", 1);
  tessera::mpi::prefer_node_local_transports();
  EXPECT_EQ(get("OMPI_MCA_btl"), "self,tcp");
  ::setenv("OMPI_MCA_ess_singleton_isolated", "0", 1);
  tessera::mpi::prefer_node_local_transports();
  EXPECT_EQ(get("OMPI_MCA_ess_singleton_isolated"), "0");
}

TEST_F(LaunchEnvironment, HwlocLeavesOutItsGpuPluginsUnlessTheUserChose) {
  ::setenv("OMPI_COMM_WORLD_RANK", "5", 1); // several nodes: the transports stay the library's
  ::setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "4", 1);
  tessera::mpi::prefer_node_local_transports();
  const std::optional<std::string> c = get("HWLOC_COMPONENTS");
  ASSERT_TRUE(c.has_value());
  EXPECT_NE(c->find("-cuda"), std::string::npos) << *c;
  EXPECT_NE(c->find("-nvml"), std::string::npos) << *c;
  ::setenv("HWLOC_COMPONENTS", "linux", 1);
  tessera::mpi::prefer_node_local_transports();
  EXPECT_EQ(get("HWLOC_COMPONENTS"), "linux");
}

TEST_F(LaunchEnvironment, SharedFilePointersLeaveOutTheSessionDirectoryUnlessTheUserChose) {
  ASSERT_FALSE(get("OMPI_MCA_sharedfp").has_value());
  tessera::mpi::prefer_node_local_transports(); // a singleton: no launcher variables
  EXPECT_EQ(get("OMPI_MCA_sharedfp"), "^sm");
  ::setenv("OMPI_MCA_sharedfp", "sm", 1);
  tessera::mpi::prefer_node_local_transports();
  EXPECT_EQ(get("OMPI_MCA_sharedfp"), "sm");
}

TEST_F(LaunchEnvironment, ABatchScriptsOwnShellIsNoLaunchedRank) {
  ::setenv("SLURM_PROCID", "0", 1); // set in an sbatch script, where no launcher started us
  EXPECT_TRUE(tessera::mpi::started_without_launcher());
  EXPECT_EQ(tessera::mpi::launcher_rank(), 0);
}

} // namespace
