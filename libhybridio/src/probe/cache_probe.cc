// cache_probe.cc - see cache_probe.h.
#include "probe/cache_probe.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
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

uint64_t cached_prefix_bytes(int fd, uint64_t offset, uint64_t length) {
  const uint64_t page = static_cast<uint64_t>(page_size());
  const uint64_t start = offset & ~(page - 1);
  const uint64_t pages = (offset + length - start + page - 1) / page;
  auto fully_cached = [&](uint64_t n) {
    CacheState s;
    return probe_cachestat(fd, start, n * page, &s) && s.cached_pages == static_cast<int64_t>(n);
  };
  if (length == 0 || !fully_cached(1)) return 0;
  uint64_t lo = 1, hi = pages;  // [start, lo pages) is cached; beyond hi pages is not known
  if (fully_cached(hi)) {
    lo = hi;
  } else {
    while (hi - lo > 1) {  // invariant: lo pages cached, hi pages not all cached
      uint64_t mid = lo + (hi - lo) / 2;
      (fully_cached(mid) ? lo : hi) = mid;
    }
  }
  uint64_t end = start + lo * page;
  return std::min(end - offset, length);
}

uint64_t cached_suffix_bytes(int fd, uint64_t offset, uint64_t length) {
  const uint64_t page = static_cast<uint64_t>(page_size());
  if (length == 0) return 0;
  const uint64_t end = offset + length;
  const uint64_t end_page = (end + page - 1) & ~(page - 1);  // past the last page touched
  const uint64_t pages = (end_page - (offset & ~(page - 1))) / page;
  auto fully_cached = [&](uint64_t n) {  // the last n pages
    CacheState s;
    return probe_cachestat(fd, end_page - n * page, n * page, &s) && s.cached_pages == static_cast<int64_t>(n);
  };
  if (!fully_cached(1)) return 0;
  uint64_t lo = 1, hi = pages;  // the last lo pages are cached; the last hi pages are not known to be
  if (fully_cached(hi)) {
    lo = hi;
  } else {
    while (hi - lo > 1) {
      uint64_t mid = lo + (hi - lo) / 2;
      (fully_cached(mid) ? lo : hi) = mid;
    }
  }
  const uint64_t start = end_page - lo * page;
  return start <= offset ? length : end - start;
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
