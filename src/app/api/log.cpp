// The public logging switches (tessera/log.hpp) over tessera's own spdlog logger.
#include <tessera/log.hpp>

#include <spdlog/sinks/base_sink.h>

#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "core/log.hpp"

namespace tessera {

namespace {

LogLevel from_spdlog(spdlog::level::level_enum l) noexcept {
  switch (l) {
  case spdlog::level::trace:
  case spdlog::level::debug:
    return LogLevel::Debug;
  case spdlog::level::info:
    return LogLevel::Info;
  case spdlog::level::warn:
    return LogLevel::Warn;
  default:
    return LogLevel::Error;
  }
}

spdlog::level::level_enum to_spdlog(LogLevel l) noexcept {
  switch (l) {
  case LogLevel::Off:
    return spdlog::level::off;
  case LogLevel::Error:
    return spdlog::level::err;
  case LogLevel::Warn:
    return spdlog::level::warn;
  case LogLevel::Info:
    return spdlog::level::info;
  case LogLevel::Debug:
    break;
  }
  return spdlog::level::debug;
}

const char* level_name(LogLevel l) noexcept {
  switch (l) {
  case LogLevel::Error:
    return "error";
  case LogLevel::Warn:
    return "warning";
  case LogLevel::Info:
    return "info";
  default:
    return "debug";
  }
}

// Passes each message to the application's sink, or writes it to stderr.
class ApplicationSink final : public spdlog::sinks::base_sink<std::mutex> {
public:
  explicit ApplicationSink(LogSink to) : sink_(std::move(to)) {}

protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const std::string_view text(msg.payload.data(), msg.payload.size());
    const LogLevel level = from_spdlog(msg.level);
    if (sink_) {
      sink_(level, text);
      return;
    }
    std::fprintf(stderr, "tessera: %s: %.*s\n", level_name(level), static_cast<int>(text.size()),
                 text.data());
  }
  void flush_() override { std::fflush(stderr); }

private:
  LogSink sink_;
};

std::mutex g_mutex;
LogLevel g_level = LogLevel::Off;
LogSink g_sink;

void install() {
  auto l = std::make_shared<spdlog::logger>("tessera", std::make_shared<ApplicationSink>(g_sink));
  l->set_level(to_spdlog(g_level));
  set_logger(std::move(l));
}

} // namespace

void set_log_level(LogLevel level) {
  std::lock_guard lock(g_mutex);
  g_level = level;
  install();
}

void set_log_sink(LogSink sink) {
  std::lock_guard lock(g_mutex);
  g_sink = std::move(sink);
  install();
}

const char* version() noexcept {
  return TESSERA_VERSION;
}

} // namespace tessera
