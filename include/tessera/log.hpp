// Logging. tessera prints nothing until the application asks: set a level (messages then go to
// stderr) or a sink of its own. Configure it before other tessera calls run on other threads.
//
//   tessera::set_log_level(tessera::LogLevel::Info);
//   tessera::set_log_sink([](tessera::LogLevel l, std::string_view m) { my_log(l, m); });
#pragma once

#include <functional>
#include <string_view>

#include <tessera/export.h>

namespace tessera {

enum class LogLevel { Off, Error, Warn, Info, Debug };

// Messages at `level` or more severe are passed on (default: Off). With no sink set they go to
// stderr as "tessera: LEVEL: message", from every rank that logs.
TESSERA_API void set_log_level(LogLevel level);
// Where messages go; an empty function restores stderr. The sink is called on the thread that
// logs (the caller's, or the I/O thread of an out-of-core operation), one message at a time.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;
TESSERA_API void set_log_sink(LogSink sink);

// The version of the library, "MAJOR.MINOR.PATCH".
TESSERA_API const char* version() noexcept;

} // namespace tessera
