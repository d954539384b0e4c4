// monotonic_clock.h - the clock the library times things with.
#pragma once

#include <time.h>

#include <cstdint>

namespace hybridio {

// CLOCK_MONOTONIC in nanoseconds.
inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace hybridio
