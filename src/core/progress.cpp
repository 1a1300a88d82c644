#include "core/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/log.hpp"
#include "core/timers.hpp"

namespace tessera {

namespace {

std::string amount(double v, Progress::Unit unit) {
  if (unit == Progress::Unit::Items)
    return fmt::format("{:.0f}", v);
  if (v >= 1e9)
    return fmt::format("{:.2f} GB", v / 1e9);
  if (v >= 1e6)
    return fmt::format("{:.1f} MB", v / 1e6);
  return fmt::format("{:.0f} kB", v / 1e3);
}

std::string rate(double per_s, Progress::Unit unit) {
  if (unit == Progress::Unit::Items)
    return fmt::format("{:.3g}/s", per_s);
  return fmt::format("{:.2f} GB/s", per_s / 1e9);
}

std::string duration(double s) {
  if (s < 60)
    return fmt::format("{:.1f} s", s);
  if (s < 3600)
    return fmt::format("{}m{:02}s", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
}

} // namespace

Progress::Progress(std::string what, double total, Unit unit, double interval)
    : what_(std::move(what)), total_(total), unit_(unit), interval_(interval),
      start_(wall_seconds()), last_print_(start_),
      enabled_(log_rank() == 0 && logger().should_log(spdlog::level::info)),
      tty_(isatty(fileno(stderr)) == 1) {}

Progress::~Progress() {
  if (open_line_) {
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
}

std::string Progress::format_line(const std::string& what, double done, double total, Unit unit,
                                  double elapsed) {
  std::string line = fmt::format("{}: {}/{}", what, amount(done, unit), amount(total, unit));
  if (total > 0)
    line += fmt::format(" ({:.0f}%)", 100.0 * done / total);
  if (elapsed > 0 && done > 0) {
    const double per_s = done / elapsed;
    line += ", " + rate(per_s, unit);
    if (done < total)
      line += ", ETA " + duration((total - done) / per_s);
    else
      line += ", " + duration(elapsed);
  }
  return line;
}

void Progress::print(double done, bool final) {
  const double now = wall_seconds();
  const std::string line = format_line(what_, done, total_, unit_, now - start_);
  if (tty_) {
    // \x1b[K clears what a longer previous line left behind.
    std::fprintf(stderr, "\r%s\x1b[K%s", line.c_str(), final ? "\n" : "");
    std::fflush(stderr);
    open_line_ = !final;
  } else {
    log::info("{}", line);
  }
  last_print_ = now;
  last_printed_done_ = done;
  printed_ = true;
}

void Progress::update(double done) {
  done_ = done;
  if (!enabled_ || finished_)
    return;
  if (wall_seconds() - last_print_ >= interval_)
    print(done, false);
}

void Progress::finish(bool always) {
  if (!enabled_ || finished_)
    return;
  finished_ = true;
  const double done = std::max(done_, total_);
  // A log line already showing the end is not repeated; on a terminal the open line still
  // needs its final rewrite.
  if (printed_ && !tty_ && last_printed_done_ >= done)
    return;
  if (printed_ || always)
    print(done, true);
}

} // namespace tessera
