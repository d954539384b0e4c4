// log.h - leveled diagnostics on stderr, prefixed "hybridio:".
//
// The level is process-wide (HYBRIDIO_LOG); logging never allocates more
// than one line's buffer on the stack and never aborts, so it is safe from
// any thread of a host program.
#pragma once

namespace hybridio {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

void set_log_level(LogLevel level);
LogLevel log_level();
// Parses "error|warn|info|debug" (or 0-3); false on anything else.
bool parse_log_level(const char* text, LogLevel* out);
// "error", "warn", "info" or "debug".
const char* log_level_name(LogLevel level);

void log_message(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

}  // namespace hybridio

#define HIO_LOG(level, ...)                                          \
  do {                                                               \
    if (static_cast<int>(level) <= static_cast<int>(::hybridio::log_level())) \
      ::hybridio::log_message(level, __VA_ARGS__);                   \
  } while (0)
#define HIO_WARN(...) HIO_LOG(::hybridio::LogLevel::kWarn, __VA_ARGS__)
#define HIO_INFO(...) HIO_LOG(::hybridio::LogLevel::kInfo, __VA_ARGS__)
#define HIO_DEBUG(...) HIO_LOG(::hybridio::LogLevel::kDebug, __VA_ARGS__)
