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

// How much page cache the process's files may take: the machine's
// MemAvailable and, in a memory cgroup with a limit, that limit less what
// the cgroup uses other than file pages (its usage less its active and
// inactive file pages).  Address-space limits do not bound it.  Cached for
// `max_age_ms` like memory_headroom_bytes(); ~0 when nothing can be read.
uint64_t page_cache_room_bytes(uint32_t max_age_ms = 100);

// Whether RLIMIT_AS or RLIMIT_DATA is finite now (two getrlimit calls, no
// caching: a program may set either at any time).  While one is, the
// headroom above is also at most what that limit leaves (VmSize, VmData of
// /proc/self/status), and the library keeps no buffer between calls
// (buffer_pool.h, release_calling_thread_buffers in uring_engine.h and
// File::release_thread_staging).
bool address_space_limited();

}  // namespace hybridio
