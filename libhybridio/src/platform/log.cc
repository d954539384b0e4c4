// log.cc - see log.h.
#include "platform/log.h"

#include <unistd.h>

#include <strings.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hybridio {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};
const char* const kNames[] = {"error", "warn", "info", "debug"};
}  // namespace

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }

LogLevel log_level() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }

bool parse_log_level(const char* text, LogLevel* out) {
  for (int i = 0; i < 4; ++i) {
    if (strcasecmp(text, kNames[i]) == 0 || (text[0] == '0' + i && text[1] == '\0')) {
      *out = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

const char* log_level_name(LogLevel level) { return kNames[static_cast<int>(level)]; }

void log_message(LogLevel level, const char* format, ...) {
  // One write(2) per line so lines from threads and processes do not interleave.
  char line[1024];
  int saved_errno = errno;
  int n = snprintf(line, sizeof line, "hybridio: %s: ", kNames[static_cast<int>(level)]);
  va_list args;
  va_start(args, format);
  int m = vsnprintf(line + n, sizeof line - n - 1, format, args);
  va_end(args);
  size_t len = static_cast<size_t>(n) + (m < 0 ? 0 : std::min<size_t>(m, sizeof line - n - 2));
  line[len++] = '\n';
  ssize_t ignored = ::write(STDERR_FILENO, line, len);
  (void)ignored;
  errno = saved_errno;
}

}  // namespace hybridio
