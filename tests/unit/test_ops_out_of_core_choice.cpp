// The in-memory or out-of-core rule of `tessera transpose`, `tessera reduce` and pipeline decks.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "ops/out_of_core_choice.hpp"

namespace tessera::ops {
namespace {

// 10 x 6 f64 on 3 ranks: rank 0 holds 4 x 6 (192 B), its transpose block 2 x 10 (160 B).
const WorkingSet kMatrix{{10, 6}, DType::f64, false};
const WorkingSet kWithTranspose{{10, 6}, DType::f64, true};

TEST(OutOfCoreChoice, InMemoryBytesAreTheLargestRanksBlocks) {
  EXPECT_EQ(in_memory_bytes(kMatrix, 3), 192.0);
  EXPECT_EQ(in_memory_bytes(kWithTranspose, 3), 352.0);
  EXPECT_EQ(in_memory_bytes({{10, 6}, DType::c64, false}, 1), 480.0);
}

TEST(OutOfCoreChoice, NoLimitAndNotForcedStaysInMemory) {
  EXPECT_FALSE(StagingChoice{}.may_stream());
  EXPECT_FALSE(stream_out_of_core({}, kWithTranspose, 3, true, "in.h5:/A"));
  EXPECT_FALSE(stream_out_of_core({}, kWithTranspose, 3, false, "generated"));
}

TEST(OutOfCoreChoice, AFileStreamsOnlyWhenItDoesNotFit) {
  EXPECT_FALSE(stream_out_of_core({352}, kWithTranspose, 3, true, "in.h5:/A"));
  EXPECT_TRUE(stream_out_of_core({351}, kWithTranspose, 3, true, "in.h5:/A"));
  EXPECT_FALSE(stream_out_of_core({192}, kMatrix, 3, true, "in.h5:/A"));
  EXPECT_TRUE(stream_out_of_core({0, true}, kMatrix, 3, true, "in.h5:/A"));
  EXPECT_TRUE(stream_out_of_core({1 << 30, true}, kMatrix, 3, true, "in.h5:/A"));
}

TEST(OutOfCoreChoice, AGeneratedMatrixThatFitsNeverStreams) {
  EXPECT_FALSE(stream_out_of_core({352}, kWithTranspose, 3, false, "generated"));
  EXPECT_FALSE(stream_out_of_core({std::size_t{1} << 30}, kWithTranspose, 1, false, "generated"));
}

TEST(OutOfCoreChoice, AGeneratedMatrixThatWouldStreamIsAResourceError) {
  try {
    stream_out_of_core({351, false, "staging.memory_limit"}, kWithTranspose, 3, false, "gen");
    FAIL() << "no error";
  } catch (const ResourceError& e) {
    {
      const std::string what = e.what();
      EXPECT_NE(what.find("the generated 10x6 f64 matrix needs 352 B per rank, more than "
                          "staging.memory_limit 351 B"),
                std::string::npos)
          << what;
    }
  }
  EXPECT_THROW(stream_out_of_core({0, true}, kMatrix, 3, false, "gen"), ResourceError);
}

// Without --memory-limit, what the process may use decides (before, nothing did: a dataset larger
// than memory was allocated and the process killed).
TEST(OutOfCoreChoice, WithoutALimitTheRoomDecides) {
  const StagingChoice room{0, false, "--memory-limit", 351.0, "MemAvailable in /proc/meminfo"};
  EXPECT_TRUE(stream_out_of_core(room, kWithTranspose, 3, true, "in.h5:/A"));
  EXPECT_FALSE(stream_out_of_core(room, kMatrix, 3, true, "in.h5:/A"));
  // An explicit limit above the room does not make the room any larger.
  StagingChoice generous = room;
  generous.memory_limit = std::size_t{1} << 30;
  EXPECT_TRUE(stream_out_of_core(generous, kWithTranspose, 3, true, "in.h5:/A"));
}

TEST(OutOfCoreChoice, AGeneratedMatrixBeyondTheRoomNamesTheLimitOption) {
  const StagingChoice room{0, false, "staging.memory_limit", 351.0, "RLIMIT_AS"};
  try {
    stream_out_of_core(room, kWithTranspose, 3, false, "gen");
    FAIL() << "no error";
  } catch (const ResourceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("needs 352 B per rank, more than the 351 B this process may use "
                        "(RLIMIT_AS)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("staging.memory_limit"), std::string::npos) << what;
  }
}

} // namespace
} // namespace tessera::ops
