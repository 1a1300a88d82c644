// core/settings: every TESSERA_* setting through one parser — named values, numbers, the kernel
// overrides validated against the operations' tables, the test-hook gate, and the problems
// `tessera` reports before it starts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/settings.hpp"

namespace {

using tessera::settings::KernelOp;
using tessera::settings::Setting;
namespace settings = tessera::settings;

// Sets variables for one test and restores the environment after it.
class Env {
public:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.push_back({name, old != nullptr, old ? old : ""});
    ::setenv(name, value, 1);
  }
  ~Env() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
      it->had ? (void)::setenv(it->name.c_str(), it->value.c_str(), 1)
              : (void)::unsetenv(it->name.c_str());
  }

private:
  struct Saved {
    std::string name;
    bool had;
    std::string value;
  };
  std::vector<Saved> saved_;
};

bool mentions(const std::vector<std::string>& problems, const std::string& text) {
  for (const std::string& p : problems)
    if (p.find(text) != std::string::npos)
      return true;
  return false;
}

TEST(Settings, ChoicesTakeTheirPositionAndFallBackOnUnsetOrUnknownValues) {
  Env env;
  ::unsetenv("TESSERA_TUNING");
  EXPECT_EQ(settings::choice(Setting::Tuning, 7), 7);
  env.set("TESSERA_TUNING", "estimate");
  EXPECT_EQ(settings::choice(Setting::Tuning, 7), 1);
  env.set("TESSERA_TUNING", "measure");
  EXPECT_EQ(settings::choice(Setting::Tuning, 7), 0);
  env.set("TESSERA_TUNING", "fast");
  EXPECT_EQ(settings::choice(Setting::Tuning, 7), 7);
  EXPECT_TRUE(mentions(settings::environment_problems(),
                       "TESSERA_TUNING='fast' is not one of measure, estimate"));
  env.set("TESSERA_TUNING", "");
  EXPECT_EQ(settings::choice(Setting::Tuning, 7), 7);
  EXPECT_TRUE(settings::present(Setting::Tuning));
  EXPECT_FALSE(settings::raw(Setting::Tuning).has_value());
}

TEST(Settings, NumbersAreCheckedAgainstTheirRange) {
  Env env;
  env.set("TESSERA_COLLECTIVE_TIMEOUT", "2.5");
  EXPECT_EQ(settings::number(Setting::CollectiveTimeout, 60), 2.5);
  EXPECT_FALSE(mentions(settings::environment_problems(), "TESSERA_COLLECTIVE_TIMEOUT"));
  for (const char* bad : {"0", "-1", "10s", "x"}) {
    env.set("TESSERA_COLLECTIVE_TIMEOUT", bad);
    EXPECT_EQ(settings::number(Setting::CollectiveTimeout, 60), 60) << bad;
    EXPECT_TRUE(mentions(settings::environment_problems(),
                         std::string("TESSERA_COLLECTIVE_TIMEOUT='") + bad + "'"))
        << bad;
  }
}

TEST(Settings, KernelOverridesPickFromTheOperationsTables) {
  Env env;
  ::unsetenv("TESSERA_KERNEL");
  EXPECT_FALSE(settings::kernel(KernelOp::CudaReduceRows).has_value());
  env.set("TESSERA_KERNEL", "cuda-reduce-rows:strided,heat2d-reduced:thread");
  EXPECT_EQ(settings::kernel(KernelOp::CudaReduceRows), 3);
  EXPECT_EQ(settings::kernel(KernelOp::Heat2dReduced), 1);
  EXPECT_FALSE(settings::kernel(KernelOp::Heat2dTiles).has_value());
  EXPECT_TRUE(settings::environment_problems().empty());
  // The tables: the kernels each operation's choice table compiles, in its order.
  std::vector<std::string> tables;
  for (const settings::KernelTable& t : settings::kernel_tables()) {
    std::string line(t.name);
    for (std::string_view k : t.kernels)
      line += " " + std::string(k);
    tables.push_back(line);
  }
  EXPECT_EQ(tables,
            (std::vector<std::string>{"cuda-reduce-rows warp staged short strided tree narrow",
                                      "heat2d-tiles shared", "heat2d-reduced warp thread"}));
  // Every table's kernels are reachable by name.
  for (const settings::KernelTable& t : settings::kernel_tables())
    for (std::size_t k = 0; k < t.kernels.size(); ++k) {
      const std::string pick = std::string(t.name) + ":" + std::string(t.kernels[k]);
      env.set("TESSERA_KERNEL", pick.c_str());
      EXPECT_EQ(settings::kernel(t.op), static_cast<int>(k)) << pick;
    }
}

TEST(Settings, UnknownKernelsAndOperationsAreNamedWithTheChoices) {
  Env env;
  env.set("TESSERA_KERNEL", "cuda-reduce-rows:fastest");
  EXPECT_FALSE(settings::kernel(KernelOp::CudaReduceRows).has_value());
  EXPECT_TRUE(mentions(settings::environment_problems(),
                       "'cuda-reduce-rows' has no kernel 'fastest' (kernels: warp, staged, "
                       "short, strided, tree, narrow)"));
  // The tile kernels that moved to the benchmark (bench/cuda/heat2d_tile_variants.hpp) are no
  // longer the library's to force.
  for (const char* gone : {"shared20", "constant", "first"}) {
    env.set("TESSERA_KERNEL", (std::string("heat2d-tiles:") + gone).c_str());
    EXPECT_FALSE(settings::kernel(KernelOp::Heat2dTiles).has_value()) << gone;
    EXPECT_TRUE(
        mentions(settings::environment_problems(),
                 std::string("'heat2d-tiles' has no kernel '") + gone + "' (kernels: shared)"))
        << gone;
  }
  env.set("TESSERA_KERNEL", "transpose-gpu:lean");
  EXPECT_TRUE(mentions(settings::environment_problems(),
                       "TESSERA_KERNEL='transpose-gpu:lean': no operation 'transpose-gpu'"));
  env.set("TESSERA_KERNEL", "warp");
  EXPECT_TRUE(mentions(settings::environment_problems(), "'warp' is not op:kernel"));
}

TEST(Settings, TestHooksActOnlyBehindTheGate) {
  Env env;
  env.set("TESSERA_IO_DELAY_MS", "5");
  env.set("TESSERA_TEST_HOOKS", "0");
  EXPECT_FALSE(settings::raw(Setting::IoDelayMs).has_value());
  env.set("TESSERA_TEST_HOOKS", "1");
  EXPECT_EQ(settings::raw(Setting::IoDelayMs), "5");
  env.set("TESSERA_IO_DELAY_MS", "soon");
  EXPECT_TRUE(mentions(settings::environment_problems(), "TESSERA_IO_DELAY_MS='soon'"));
}

TEST(Settings, VariablesOfEarlierVersionsNameTheirReplacement) {
  Env env;
  env.set("TESSERA_CUDA_ROWS_KERNEL", "warp");
  EXPECT_TRUE(mentions(settings::environment_problems(),
                       "TESSERA_CUDA_ROWS_KERNEL no longer acts: set "
                       "TESSERA_KERNEL=cuda-reduce-rows:NAME"));
}

} // namespace
