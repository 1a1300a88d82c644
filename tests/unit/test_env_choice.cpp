// env_choice: the setting's position among the names, the fallback when the variable is unset,
// empty or holds an unknown value.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/env_choice.hpp"

namespace tessera {
namespace {

constexpr const char* kVar = "TESSERA_TEST_ENV_CHOICE";

TEST(EnvChoice, GivesThePositionOfTheValueOrTheFallback) {
  ::unsetenv(kVar);
  EXPECT_EQ(env_choice(kVar, {"warp", "thread"}, 7), 7);
  ::setenv(kVar, "", 1);
  EXPECT_EQ(env_choice(kVar, {"warp", "thread"}, 7), 7);
  ::setenv(kVar, "warp", 1);
  EXPECT_EQ(env_choice(kVar, {"warp", "thread"}, 7), 0);
  ::setenv(kVar, "thread", 1);
  EXPECT_EQ(env_choice(kVar, {"warp", "thread"}, 7), 1);
  EXPECT_EQ(env_choice(kVar, {"new", "new20", "const", "thread"}, -1), 3);
  // Names match whole and by case: anything else is the fallback (with a warning).
  for (const char* other : {"threads", "Thread", "thr", "warp "}) {
    ::setenv(kVar, other, 1);
    EXPECT_EQ(env_choice(kVar, {"warp", "thread"}, -1), -1) << other;
  }
  ::unsetenv(kVar);
}

} // namespace
} // namespace tessera
