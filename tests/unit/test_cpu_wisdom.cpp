// The transpose's plan-time tuning and its wisdom file: a trial on first use of a large shape,
// its choice reused from memory and from the file by later runs, and files that are damaged,
// from another version or from another kind of processor ignored with a warning and left as
// they are. Every result still matches the reference.
#include <gtest/gtest.h>
#include <omp.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/log.hpp"
#include "cpu/reference.hpp"
#include "cpu/transpose.hpp"
#include "cpu/transpose_tuner.hpp"
#include "cpu/wisdom.hpp"

using namespace tessera;
namespace fs = std::filesystem;

namespace {

// Above the trial threshold (4 MiB of input), with odd sides.
constexpr std::int64_t kRows = 1031, kCols = 613;

class Wisdom : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera-wisdom-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    path_ = (dir_ / "wisdom.txt").string();
    log_ = std::make_shared<std::ostringstream>();
    // tessera logs through its own logger (core/log.hpp), silent until one is set.
    auto captured = std::make_shared<spdlog::logger>(
        "wisdom-test", std::make_shared<spdlog::sinks::ostream_sink_mt>(*log_));
    captured->set_level(spdlog::level::warn);
    set_logger(captured);
    cpu::set_tuning(cpu::Tuning::Measure);
    cpu::set_wisdom_file(path_);
    cpu::detail::forget_choices();
    std::mt19937_64 rng(std::random_device{}());
    std::uniform_real_distribution<double> d(-1, 1);
    in_.resize(kRows * kCols);
    for (auto& x : in_)
      x = d(rng);
    expect_.resize(in_.size());
    reference::transpose(in_.data(), expect_.data(), kRows, kCols);
  }
  void TearDown() override {
    cpu::set_wisdom_file("");
    cpu::detail::forget_choices();
    set_logger(nullptr);
    fs::remove_all(dir_);
  }
  void transpose_and_check() {
    std::vector<double> out(in_.size(), -5.0);
    cpu::transpose(in_.data(), out.data(), kRows, kCols);
    EXPECT_EQ(std::memcmp(out.data(), expect_.data(), out.size() * sizeof(double)), 0);
  }
  std::string file_text() const {
    std::ifstream f(path_);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }
  void write_file(const std::string& text) const { std::ofstream(path_) << text; }
  std::string header() const {
    return std::string("tessera-wisdom 1\ntessera ") + TESSERA_VERSION + "\ncpu " +
           cpu::detail::processor_fingerprint() + "\n";
  }
  void expect_ignored(const std::string& text, const char* why) {
    write_file(text);
    transpose_and_check();
    EXPECT_EQ(cpu::detail::trials_run(), 1u) << "an ignored file must not spare the trial";
    EXPECT_EQ(file_text(), text) << "an ignored file must be left as it is";
    EXPECT_NE(log_->str().find("is ignored"), std::string::npos) << log_->str();
    EXPECT_NE(log_->str().find(why), std::string::npos) << log_->str();
  }

  fs::path dir_;
  std::string path_;
  std::shared_ptr<std::ostringstream> log_;
  std::vector<double> in_, expect_;
};

TEST_F(Wisdom, ATrialOnFirstUseIsSavedAndReusedByALaterRun) {
  transpose_and_check();
  EXPECT_EQ(cpu::detail::trials_run(), 1u);
  transpose_and_check(); // the same process remembers
  EXPECT_EQ(cpu::detail::trials_run(), 1u);
  const std::string text = file_text();
  ASSERT_EQ(text.rfind(header(), 0), 0u) << text;
  const int threads = omp_get_max_threads();
  const std::string entry = "transpose 8 " + std::to_string(threads) + " 1031 613 613 1031 ";
  EXPECT_NE(text.find(entry), std::string::npos) << text;

  cpu::detail::forget_choices(); // as a new process would start: only the file remembers
  transpose_and_check();
  EXPECT_EQ(cpu::detail::trials_run(), 0u);
  EXPECT_EQ(file_text(), text);
  EXPECT_EQ(log_->str().find("ignored"), std::string::npos) << log_->str();
}

TEST_F(Wisdom, EachThreadCountHasItsOwnTrial) {
  const int saved = omp_get_max_threads();
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    transpose_and_check();
  }
  omp_set_num_threads(saved);
  EXPECT_EQ(cpu::detail::trials_run(), 2u);
  EXPECT_NE(file_text().find("transpose 8 1 1031"), std::string::npos) << file_text();
  EXPECT_NE(file_text().find("transpose 8 3 1031"), std::string::npos) << file_text();
}

TEST_F(Wisdom, AChoiceReadFromTheFileIsTheOneUsed) {
  // A valid entry naming the portable kernel: no trial, and the result is still right.
  const int threads = omp_get_max_threads();
  write_file(header() + "transpose 8 " + std::to_string(threads) +
             " 1031 613 613 1031 portable-r32\n");
  transpose_and_check();
  EXPECT_EQ(cpu::detail::trials_run(), 0u);
}

TEST_F(Wisdom, ADamagedFileIsIgnored) {
  expect_ignored("not wisdom at all\n", "not a tessera wisdom file");
}

TEST_F(Wisdom, AFileOfAnotherVersionIsIgnored) {
  std::string text = header();
  text.replace(text.find(TESSERA_VERSION), std::strlen(TESSERA_VERSION), "0.0.1-other");
  expect_ignored(text, "another tessera version");
}

TEST_F(Wisdom, AFileFromAnotherKindOfProcessorIsIgnored) {
  expect_ignored("tessera-wisdom 1\ntessera " + std::string(TESSERA_VERSION) +
                     "\ncpu Imaginary CPU 9000 | avx2 avx512f\n",
                 "another kind of processor");
}

TEST_F(Wisdom, AnUnknownKernelOrAShortLineIsADamagedFile) {
  expect_ignored(header() + "transpose 8 2 1031 613 613 1031 avx9-r64-b32\n", "line 4");
  cpu::set_wisdom_file(path_); // as a new process would start
  cpu::detail::forget_choices();
  log_->str("");
  expect_ignored(header() + "transpose 8 2 1031\n", "line 4");
}

TEST_F(Wisdom, EstimateModeNeverTimesNorWrites) {
  cpu::set_tuning(cpu::Tuning::Estimate);
  transpose_and_check();
  EXPECT_EQ(cpu::detail::trials_run(), 0u);
  EXPECT_FALSE(fs::exists(path_));
  cpu::set_tuning(cpu::Tuning::Measure);
}

TEST_F(Wisdom, SmallTransposesAreNeverTimed) {
  std::vector<double> a(64 * 48, 1.5), b(a.size());
  cpu::transpose(a.data(), b.data(), 64, 48);
  EXPECT_EQ(cpu::detail::trials_run(), 0u);
  EXPECT_FALSE(fs::exists(path_));
}

} // namespace

// The per-user cache the command line keeps by default: created with its folder on the first
// trial, started anew when it cannot be used, and never a warning when it cannot be written.
namespace {

class WisdomCache : public Wisdom {
protected:
  void SetUp() override {
    Wisdom::SetUp();
    path_ = (dir_ / "cache" / "tessera" / "wisdom").string();
    cpu::detail::use_wisdom_cache_at(path_);
  }
};

TEST_F(WisdomCache, IsCreatedWithItsFolderOnTheFirstTrialAndReused) {
  ASSERT_FALSE(fs::exists(fs::path(path_).parent_path()));
  transpose_and_check();
  EXPECT_EQ(cpu::detail::trials_run(), 1u);
  const std::string text = file_text();
  EXPECT_EQ(text.rfind(header(), 0), 0u) << text;
  EXPECT_NE(text.find("transpose 8 "), std::string::npos) << text;
  cpu::detail::forget_choices(); // a later run
  transpose_and_check();
  EXPECT_EQ(cpu::detail::trials_run(), 0u);
  EXPECT_EQ(log_->str(), "");
}

TEST_F(WisdomCache, ADamagedOrForeignCacheIsStartedAnewWithoutAWarning) {
  std::string foreign = header();
  foreign.replace(foreign.find(TESSERA_VERSION), std::strlen(TESSERA_VERSION), "0.0.1-other");
  for (const std::string& text : {std::string("not wisdom at all\n"), foreign}) {
    fs::create_directories(fs::path(path_).parent_path());
    write_file(text + "transpose 8 2 7777 613 613 7777 portable-r32\n");
    cpu::detail::use_wisdom_cache_at(path_); // as a new process would start
    cpu::detail::forget_choices();
    transpose_and_check();
    EXPECT_EQ(cpu::detail::trials_run(), 1u) << "a cache it cannot use must not spare the trial";
    const std::string now = file_text();
    EXPECT_EQ(now.rfind(header(), 0), 0u) << now;
    EXPECT_EQ(now.find(" 7777 "), std::string::npos) << "an old entry survived: " << now;
  }
  EXPECT_EQ(log_->str(), "");
}

TEST_F(WisdomCache, ACacheThatCannotBeWrittenCostsOnlyTheTrial) {
  // The cache's folder cannot be made: where it should be is a regular file.
  std::ofstream(dir_ / "cache") << "a file, not a folder\n";
  transpose_and_check();
  EXPECT_EQ(cpu::detail::trials_run(), 1u);
  EXPECT_FALSE(fs::exists(path_));
  EXPECT_EQ(log_->str(), "");
  transpose_and_check(); // the process still remembers its choice
  EXPECT_EQ(cpu::detail::trials_run(), 1u);
}

TEST(WisdomCacheLocation, FollowsXdgCacheHomeElseHome) {
  const auto saved = [](const char* name) {
    const char* v = std::getenv(name);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto restore = [](const char* name, const std::optional<std::string>& v) {
    if (v)
      ::setenv(name, v->c_str(), 1);
    else
      ::unsetenv(name);
  };
  const auto xdg = saved("XDG_CACHE_HOME"), home = saved("HOME");
  ::setenv("XDG_CACHE_HOME", "/scratch/me/cache", 1);
  ::setenv("HOME", "/home/me", 1);
  EXPECT_EQ(cpu::detail::default_wisdom_cache(), "/scratch/me/cache/tessera/wisdom");
  ::setenv("XDG_CACHE_HOME", "relative/not/used", 1); // the XDG spec: absolute paths only
  EXPECT_EQ(cpu::detail::default_wisdom_cache(), "/home/me/.cache/tessera/wisdom");
  ::unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(cpu::detail::default_wisdom_cache(), "/home/me/.cache/tessera/wisdom");
  ::unsetenv("HOME");
  EXPECT_EQ(cpu::detail::default_wisdom_cache(), "");
  restore("XDG_CACHE_HOME", xdg);
  restore("HOME", home);
}

} // namespace
