// clock.h - the clocks the measuring code times with: monotonic time and
// the process's CPU time.
#pragma once

#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <cstdint>

namespace hybridio::bench {

// Seconds on the steady clock (differences only).
inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Nanoseconds on CLOCK_MONOTONIC (differences only).
inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// User and system CPU seconds of this process (its threads), and with
// `children` those of its child processes that have been waited for.
inline void cpu_times(double* usr, double* sys, bool children) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  *usr = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
  *sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
  if (!children) return;
  getrusage(RUSAGE_CHILDREN, &ru);
  *usr += ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
  *sys += ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

}  // namespace hybridio::bench
