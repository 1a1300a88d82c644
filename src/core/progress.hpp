// Progress of a long phase on rank 0: done/total, rate and ETA, at most about once a second.
// On a terminal the line is rewritten in place; otherwise (Slurm output files, pipes) each
// update is a new log line, so a batch job's output shows where it is.
//
//   Progress p("transpose", total_bytes, Progress::Unit::Bytes);
//   for (…) { …; p.update(done_bytes); }
//   p.finish();
//
// Only rank 0 prints (log_rank() == 0) and only at the normal log level or above; elsewhere
// every call is a cheap no-op. Not thread-safe: update from one thread.
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

class Progress {
public:
  enum class Unit { Items, Bytes };

  // `interval`: the least number of seconds between two printed lines.
  Progress(std::string what, double total, Unit unit = Unit::Items, double interval = 1.0);
  ~Progress(); // finishes a line left open on a terminal
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` out of total (monotone). Prints when `interval` has passed since the last line.
  void update(double done);
  // The final line (done = total) when anything was printed before, or when `always`.
  void finish(bool always = false);

  // The text of one line, for tests: "transpose: 40/100 (40%), 12.5/s, ETA 4.8 s".
  static std::string format_line(const std::string& what, double done, double total, Unit unit,
                                 double elapsed);

private:
  void print(double done, bool final);

  std::string what_;
  double total_;
  Unit unit_;
  double interval_;
  double start_;
  double last_print_;
  double done_ = 0.0;
  double last_printed_done_ = -1.0;
  bool enabled_;
  bool tty_;
  bool printed_ = false;
  bool open_line_ = false;
  bool finished_ = false;
};

} // namespace tessera
