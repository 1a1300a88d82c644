// Chunk buffers, progress lines, the two-sided run and the report of the out-of-core pipelines.
#include "ops/out_of_core_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/log.hpp"
#include "core/settings.hpp"
#include "core/throw.hpp"
#include "mpi/agreement.hpp"

namespace tessera::ops::detail {

void BufferRing::allocate(std::size_t bytes) {
  for (int i = 0; i < count_; ++i) {
    buffers_.push_back(std::make_unique<AlignedBuffer>(bytes, "a chunk buffer"));
    free.push(Slot{-1, buffers_.back().get()});
  }
}

std::size_t BufferRing::allocated_bytes() const noexcept {
  std::size_t n = 0;
  for (const auto& b : buffers_)
    n += b->size();
  return n;
}

Slot pop_chunk(io::StagingQueue<Slot>& q, std::int64_t expected_chunk, const char* what) {
  auto s = q.pop();
  if (!s)
    TESSERA_THROW(InternalError, "the {} queue ended before chunk {}", what, expected_chunk);
  if (expected_chunk >= 0 && s->chunk != expected_chunk)
    TESSERA_THROW(InternalError, "the {} queue delivered chunk {} where chunk {} was due", what,
                  s->chunk, expected_chunk);
  return *s;
}

std::int64_t lines_in(std::size_t bytes, std::int64_t line_elements, std::size_t es,
                      std::int64_t lines) {
  const auto line_bytes = static_cast<std::size_t>(std::max<std::int64_t>(line_elements, 1)) * es;
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(bytes / line_bytes), 1,
                                  std::max<std::int64_t>(lines, 1));
}

std::int64_t largest_fitting(std::int64_t most, const std::function<bool(std::int64_t)>& fits) {
  std::int64_t lo = 1, hi = std::max<std::int64_t>(most, 1); // fits(lo)
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid))
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

ProgressMeter::ProgressMeter(std::string what, double total_bytes, bool enabled,
                             double interval_seconds) {
  if (enabled)
    progress_.emplace(std::move(what), total_bytes, Progress::Unit::Bytes, interval_seconds);
}

void ProgressMeter::add(double bytes) {
  done_ += bytes;
  if (progress_)
    progress_->update(done_);
}

void ProgressMeter::finish() {
  // Like every phase: a line at the end only where progress was shown (a second or more).
  if (progress_)
    progress_->finish();
  progress_.reset();
}

namespace {

// The option when set, else the test hook (read only with TESSERA_TEST_HOOKS=1).
double resolve_delay(double option, settings::Setting hook) {
  if (option >= 0.0)
    return option;
  const std::optional<std::string> v = settings::raw(hook);
  if (!v)
    return 0.0;
  char* end = nullptr;
  const double ms = std::strtod(v->c_str(), &end);
  TESSERA_REQUIRE(end && *end == '\0' && ms >= 0.0, InputError,
                  "{}='{}' is not a delay in milliseconds (a number >= 0)",
                  settings::variable(hook), *v);
  return ms;
}

} // namespace

PipelineContext::PipelineContext(MPI_Comm comm, const OutOfCoreOptions& o)
    : options(o), memory_limit(o.memory_limit ? o.memory_limit : kDefaultMemoryLimit),
      depth(o.staging_depth), compute(comm), start(wall_seconds()) {
  // Options are the same on every rank, and the environment normally is: agree anyway, so a
  // rank with a bad TESSERA_FAULT cannot leave the others waiting.
  mpi::collectively(compute.get(), [&] {
    TESSERA_REQUIRE(depth >= 1, InputError, "staging depth must be at least 1, got {}", depth);
    fault = fault_from(o.fault);
    io_delay_ms = resolve_delay(o.io_delay_ms, settings::Setting::IoDelayMs);
    compute_delay_ms = resolve_delay(o.compute_delay_ms, settings::Setting::ComputeDelayMs);
  });
  // The thread's duplicate communicator is made before anything can fail locally (see
  // IoThread), so a pinning failure on one rank is agreed on here.
  mpi::collectively(compute.get(), [&] {
    io = std::make_unique<io::IoThread>(comm, io::IoThreadOptions{o.io_cpu});
  });
}

void merge_timers(PhaseTimers& into, const PhaseTimers& from) {
  for (const auto& [name, s] : from.phases()) {
    const auto calls = std::max<std::int64_t>(s.calls, 1);
    for (std::int64_t k = 0; k < calls; ++k)
      into.add(name, s.seconds / static_cast<double>(calls), s.bytes / static_cast<double>(calls));
  }
}

void delay_ms(double ms) {
  if (ms > 0.0)
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

void with_context(const std::string& what, const std::function<void()>& io) {
  try {
    io();
  } catch (const IoError& e) {
    TESSERA_THROW(IoError, "{}: {}", what, e.what());
  }
}

void run_sides(io::IoThread& io, const std::function<void()>& io_side,
               const std::function<void()>& compute_side,
               const std::function<void(std::exception_ptr)>& abort_all) {
  auto io_done = io.submit([&] {
    try {
      io_side();
    } catch (...) {
      abort_all(std::current_exception());
      throw;
    }
  });
  try {
    compute_side();
  } catch (...) {
    abort_all(std::current_exception());
    io_done.wait(); // woken by the abort: never leave the I/O thread using our buffers
    throw;
  }
  io_done.get();
}

namespace {

double phase_seconds(const PhaseTimers& t, const char* name) {
  const auto it = t.phases().find(name);
  return it == t.phases().end() ? 0.0 : it->second.seconds;
}
double phase_bytes(const PhaseTimers& t, const char* name) {
  const auto it = t.phases().find(name);
  return it == t.phases().end() ? 0.0 : it->second.bytes;
}

} // namespace

WatchedInput open_watched_input(PipelineContext& ctx, const io::DatasetRef& in,
                                bool integers_as_f64) {
  const MPI_Comm comm = ctx.io->comm();
  const double t0 = wall_seconds();
  std::optional<io::detail::InputWatch> watch;
  mpi::collectively(comm, [&] { watch.emplace(in.file); });
  io::H5File file = io::H5File::open_read(in.file, comm);
  // Packed data is decoded in double, and so read as f64 (reductions: OutOfCoreOptions::missing).
  const bool packed = ctx.options.missing.packed();
  io::DatasetInfo info = inspect_dataset(file, in.path, integers_as_f64 || packed);
  if (packed && dtype_is_real(info.dtype))
    info.dtype = DType::f64;
  ctx.io_timers.add("open", wall_seconds() - t0);
  return {std::move(watch), std::move(file), info};
}

void finish_report(PipelineContext& ctx, OutOfCoreReport& report, const BufferRing& reads,
                   const BufferRing* results) {
  report.seconds = wall_seconds() - ctx.start;
  report.bytes_read = phase_bytes(ctx.io_timers, "read");
  report.bytes_written = phase_bytes(ctx.io_timers, "write");
  report.io_seconds = phase_seconds(ctx.io_timers, "read") + phase_seconds(ctx.io_timers, "write");
  report.compute_seconds =
      phase_seconds(ctx.compute_timers, "compute") + phase_seconds(ctx.compute_timers, "exchange");
  // Compute consumes read chunks and fills result buffers that the I/O thread frees.
  report.compute_waited_io = reads.full.stats().pop_wait_seconds;
  report.io_waited_compute = reads.free.stats().pop_wait_seconds;
  if (results) {
    report.compute_waited_io += results->free.stats().pop_wait_seconds;
    report.io_waited_compute += results->full.stats().pop_wait_seconds;
  }
  if (!ctx.options.timers)
    return;
  PhaseTimers& t = *ctx.options.timers;
  merge_timers(t, ctx.io_timers);
  merge_timers(t, ctx.compute_timers);
  t.add("wait: compute on I/O", report.compute_waited_io);
  t.add("wait: I/O on compute", report.io_waited_compute);
  t.add("total", report.seconds, report.bytes_read + report.bytes_written);
}

} // namespace tessera::ops::detail
