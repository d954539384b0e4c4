// cache_probe.cc - see cache_probe.h.
#include "cache_probe.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <memory>

#ifndef __NR_cachestat
#define __NR_cachestat 451  // same number on every architecture (generic syscall table)
#endif

namespace hybridio {
namespace {

// The kernel's struct cachestat_range and struct cachestat (uapi/linux/mman.h, 6.5+).
struct CachestatRange {
  uint64_t off;
  uint64_t len;
};
struct Cachestat {
  uint64_t nr_cache;
  uint64_t nr_dirty;
  uint64_t nr_writeback;
  uint64_t nr_evicted;
  uint64_t nr_recently_evicted;
};

std::atomic<bool> g_cachestat_missing{false};

long page_size() {
  static const long size = sysconf(_SC_PAGESIZE);
  return size;
}

}  // namespace

bool cachestat_available() { return !g_cachestat_missing.load(std::memory_order_relaxed); }

bool probe_cachestat(int fd, uint64_t offset, uint64_t length, CacheState* out) {
  if (g_cachestat_missing.load(std::memory_order_relaxed)) return false;
  CachestatRange range{offset, length};
  Cachestat cs{};
  if (syscall(__NR_cachestat, fd, &range, &cs, 0) != 0) {
    if (errno == ENOSYS) g_cachestat_missing.store(true, std::memory_order_relaxed);
    return false;
  }
  out->cached_pages = static_cast<int64_t>(cs.nr_cache);
  // Pages under writeback are still in flight to disk; a direct write over
  // them waits just like one over dirty pages.
  out->dirty_pages = static_cast<int64_t>(cs.nr_dirty + cs.nr_writeback);
  out->method = ProbeMethod::kCachestat;
  return true;
}

bool probe_mincore(int fd, uint64_t offset, uint64_t length, CacheState* out) {
  const uint64_t page = static_cast<uint64_t>(page_size());
  const uint64_t start = offset & ~(page - 1);
  const uint64_t span = offset + length - start;
  if (length == 0) return false;
  const uint64_t pages = (span + page - 1) / page;
  // PROT_READ on a shared file mapping needs a readable descriptor; a
  // write-only one gets EACCES and the state stays unknown.
  void* map = mmap(nullptr, span, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(start));
  if (map == MAP_FAILED) return false;
  // One byte per page; probes of large ranges are done in bounded pieces.
  constexpr uint64_t kChunkPages = 4096;
  unsigned char vec[kChunkPages];
  int64_t cached = 0;
  bool ok = true;
  for (uint64_t done = 0; done < pages && ok; done += kChunkPages) {
    uint64_t n = pages - done < kChunkPages ? pages - done : kChunkPages;
    uint64_t bytes = (done + n) * page > span ? span - done * page : n * page;
    if (mincore(static_cast<char*>(map) + done * page, bytes, vec) != 0) {
      ok = false;
      break;
    }
    for (uint64_t i = 0; i < n; ++i) cached += vec[i] & 1;
  }
  munmap(map, span);
  if (!ok) return false;
  out->cached_pages = cached;
  out->dirty_pages = -1;
  out->method = ProbeMethod::kMincore;
  return true;
}

CacheState probe_cache(int fd, uint64_t offset, uint64_t length, ProbeMethod allow) {
  CacheState state;
  if ((allow == ProbeMethod::kNone || allow == ProbeMethod::kCachestat) &&
      probe_cachestat(fd, offset, length, &state))
    return state;
  if ((allow == ProbeMethod::kNone || allow == ProbeMethod::kMincore) &&
      probe_mincore(fd, offset, length, &state))
    return state;
  return CacheState{};
}

}  // namespace hybridio
