// clock.h - the monotonic clock the measuring code times with.
#pragma once

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

}  // namespace hybridio::bench
