// cache_probe.h - how much of a file range is in the page cache, and dirty.
//
// cachestat(2) (Linux 6.5+) answers both in one cheap system call; where it
// is missing, mmap + mincore(2) answers "cached" (not "dirty") at the cost
// of a temporary mapping.  Both are advisory snapshots: the cache can
// change right after.  Thread-safe.
#pragma once

#include <cstdint>

namespace hybridio {

enum class ProbeMethod { kNone, kCachestat, kMincore };

struct CacheState {
  int64_t cached_pages = -1;  // -1 = unknown
  int64_t dirty_pages = -1;   // -1 = unknown
  ProbeMethod method = ProbeMethod::kNone;
};

// Probes [offset, offset + length) of `fd`.  `allow` limits the methods
// tried (for tests and benchmarks); by default the cheapest that works.
CacheState probe_cache(int fd, uint64_t offset, uint64_t length,
                       ProbeMethod allow = ProbeMethod::kNone);

// Single-method probes, used by probe_cache and measured by the benchmarks.
bool probe_cachestat(int fd, uint64_t offset, uint64_t length, CacheState* out);
bool probe_mincore(int fd, uint64_t offset, uint64_t length, CacheState* out);

// How many bytes from `offset` on are in the cache without a gap (at most
// `length`), found by bisecting with cachestat(2): about log2(pages) calls.
// 0 when nothing is cached at `offset` or cachestat is unavailable.
uint64_t cached_prefix_bytes(int fd, uint64_t offset, uint64_t length);

// The same for the end of the range: how many bytes before
// `offset + length` are in the cache without a gap (at most `length`).
uint64_t cached_suffix_bytes(int fd, uint64_t offset, uint64_t length);

// True while cachestat(2) has not been found missing (ENOSYS) in this process.
bool cachestat_available();

}  // namespace hybridio
