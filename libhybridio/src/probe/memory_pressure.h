// memory_pressure.h - one number, 0 (idle) to 100 (writers throttled), for
// how close the page cache is to hurting buffered I/O.
//
// It is the largest of: dirty + writeback memory as a share of the kernel's
// dirty limit (vm.dirty_bytes, or vm.dirty_ratio of available memory), the share of memory
// that is not available, and the PSI "some avg10" memory stall percentage
// where /proc/pressure/memory exists.  Sampling reads procfs, so results
// are cached for `max_age_ms`; thread-safe.
#pragma once

#include <cstdint>

namespace hybridio {

struct MeminfoSample {
  uint64_t total_kb = 0;
  uint64_t available_kb = 0;
  uint64_t dirty_kb = 0;
  uint64_t writeback_kb = 0;
  uint64_t dirty_limit_kb = 0;  // vm.dirty_bytes when set (it replaces vm.dirty_ratio), else 0
};

// The pressure of a sample (hio_policy_pressure()); `dirty_ratio` in
// percent, psi_some10 in percent or < 0 when unknown.
uint32_t pressure_from(const MeminfoSample& m, uint32_t dirty_ratio, double psi_some10);

// The current pressure, re-sampled at most every `max_age_ms` milliseconds.
uint32_t memory_pressure(uint32_t max_age_ms = 100);

}  // namespace hybridio
