// memory_headroom.h - how much more memory this process may take before it
// is throttled or OOM-killed: the smaller of the machine's MemAvailable and,
// when the process is in a memory cgroup with a limit (v2 memory.max or v1
// memory.limit_in_bytes), that limit less the cgroup's usage plus its
// reclaimable inactive file pages.  Staging buffers of the library's own
// (buffer_pool.h) are only taken from that headroom: a restore in a
// memory-limited container must not be killed for memory it did not ask for.
//
// Sampling reads procfs and cgroupfs, so the answer is cached for
// `max_age_ms`; thread-safe.  ~0 when nothing can be read.
#pragma once

#include <cstdint>

namespace hybridio {

uint64_t memory_headroom_bytes(uint32_t max_age_ms = 100);

}  // namespace hybridio
