// Progress lines: done/total, percent, rate and ETA; byte sizes on the command line.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdio>
#include <memory>
#include <random>
#include <sstream>

#include "cli/commands/byte_size.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/progress.hpp"

namespace tessera {
namespace {

TEST(Progress, LineShowsDoneTotalRateAndEta) {
  std::mt19937 rng(std::random_device{}());
  const int total = 10 + static_cast<int>(rng() % 1000);
  const int done = total / 4;
  SCOPED_TRACE(total);
  const auto line = Progress::format_line("transpose", done, total, Progress::Unit::Items, 2.0);
  EXPECT_NE(line.find(fmt::format("transpose: {}/{}", done, total)), std::string::npos) << line;
  EXPECT_NE(line.find("/s"), std::string::npos) << line;
  EXPECT_NE(line.find("ETA"), std::string::npos) << line;
  const auto end = Progress::format_line("x", total, total, Progress::Unit::Items, 2.0);
  EXPECT_NE(end.find("(100%)"), std::string::npos) << end;
  EXPECT_EQ(end.find("ETA"), std::string::npos) << end;
  const auto bytes = Progress::format_line("read", 1.5e9, 3e9, Progress::Unit::Bytes, 1.0);
  EXPECT_NE(bytes.find("1.50 GB/3.00 GB (50%), 1.50 GB/s, ETA 1.0 s"), std::string::npos) << bytes;
}

TEST(Progress, SilentObjectIsHarmless) {
  Progress p("quiet", 0); // total 0: no division by zero, nothing printed by default
  p.update(0);
  p.finish();
}

// Counts occurrences of `needle` in `text`.
int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++n;
  return n;
}

TEST(Progress, TheFinalLineIsPrintedOnce) {
  if (isatty(fileno(stderr)) == 1)
    GTEST_SKIP() << "stderr is a terminal: there progress rewrites one line instead of logging";
  std::ostringstream captured;
  const auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(captured);
  // tessera logs through its own logger (core/log.hpp), silent until one is set.
  const auto test_logger = std::make_shared<spdlog::logger>("progress-test", sink);
  test_logger->set_level(spdlog::level::info);
  set_logger(test_logger);
  {
    std::mt19937 rng(std::random_device{}());
    const int total = 2 + static_cast<int>(rng() % 100);
    Progress p("copy", total, Progress::Unit::Items, 0.0); // every update prints
    p.update(total / 2);
    p.update(total); // the end, already printed here
    p.finish();
    const std::string end = fmt::format("copy: {}/{}", total, total);
    EXPECT_EQ(count_of(captured.str(), end), 1) << captured.str();
  }
  {
    Progress p("move", 8, Progress::Unit::Items, 0.0);
    p.update(4);
    p.finish(); // the end not printed yet: finish() prints it
    EXPECT_EQ(count_of(captured.str(), "move: 8/8"), 1) << captured.str();
  }
  set_logger(nullptr);
}

TEST(ByteSize, UnitsAndErrors) {
  using app::parse_byte_size;
  EXPECT_EQ(parse_byte_size("4096", "--x"), 4096u);
  EXPECT_EQ(parse_byte_size("2GiB", "--x"), 2ull << 30);
  EXPECT_EQ(parse_byte_size("512MiB", "--x"), 512ull << 20);
  EXPECT_EQ(parse_byte_size("1.5GB", "--x"), 1500000000u);
  EXPECT_EQ(parse_byte_size("3k", "--x"), 3000u);
  EXPECT_THROW(parse_byte_size("lots", "--x"), InputError);
  EXPECT_THROW(parse_byte_size("2 parsecs", "--x"), InputError);
  EXPECT_THROW(parse_byte_size("0", "--x"), InputError);
  EXPECT_EQ(app::format_bytes(1536.0), "1.50 KiB");
}

} // namespace
} // namespace tessera
