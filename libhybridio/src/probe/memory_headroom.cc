// memory_headroom.cc - see memory_headroom.h.
#include "probe/memory_headroom.h"

#include <sys/resource.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "platform/proc_files.h"

namespace hybridio {
namespace {

uint64_t number_in(const char* path) {
  char buf[64];
  if (!read_small_file(path, buf, sizeof buf) || strncmp(buf, "max", 3) == 0) return ~0ULL;
  return strtoull(buf, nullptr, 10);
}

// Limit less usage plus reclaimable file pages (inactive ones, or with
// `all_file` active ones too), for the cgroup directory `dir`.
uint64_t cgroup_headroom(const char* dir, bool v2, bool all_file) {
  char path[640], stat[4096];  // `dir` is at most 511 bytes
  snprintf(path, sizeof path, "%s/%s", dir, v2 ? "memory.max" : "memory.limit_in_bytes");
  const uint64_t limit = number_in(path);
  if (limit >= (1ULL << 60)) return ~0ULL;  // no limit (v1 reports one near 2^63)
  snprintf(path, sizeof path, "%s/%s", dir, v2 ? "memory.current" : "memory.usage_in_bytes");
  const uint64_t usage = number_in(path);
  if (usage == ~0ULL) return ~0ULL;
  uint64_t inactive_file = 0, active_file = 0;
  snprintf(path, sizeof path, "%s/memory.stat", dir);
  if (read_small_file(path, stat, sizeof stat)) {
    line_number(stat, v2 ? "inactive_file " : "total_inactive_file ", &inactive_file);
    if (all_file) line_number(stat, v2 ? "active_file " : "total_active_file ", &active_file);
  }
  const uint64_t file = inactive_file + active_file;
  return limit > usage ? limit - usage + file : file;
}

// What RLIMIT_AS and RLIMIT_DATA leave: ~0 when both are infinite.
uint64_t rlimit_headroom(char* text, size_t size) {
  struct rlimit as {}, data {};
  if (getrlimit(RLIMIT_AS, &as) != 0) as.rlim_cur = RLIM_INFINITY;
  if (getrlimit(RLIMIT_DATA, &data) != 0) data.rlim_cur = RLIM_INFINITY;
  if (as.rlim_cur == RLIM_INFINITY && data.rlim_cur == RLIM_INFINITY) return ~0ULL;
  uint64_t vm_kb = 0, data_kb = 0;
  if (!read_small_file("/proc/self/status", text, size) || !line_number(text, "VmSize:", &vm_kb) ||
      !line_number(text, "VmData:", &data_kb))
    return 0;  // limited, and how far from it unknown: nothing to spare
  uint64_t room = ~0ULL;
  if (as.rlim_cur != RLIM_INFINITY) room = as.rlim_cur > vm_kb * 1024 ? as.rlim_cur - vm_kb * 1024 : 0;
  if (data.rlim_cur != RLIM_INFINITY)
    room = std::min<uint64_t>(room, data.rlim_cur > data_kb * 1024 ? data.rlim_cur - data_kb * 1024 : 0);
  return room;
}

// The process's headroom (memory_headroom_bytes), or with `page_cache` the
// room for page cache (page_cache_room_bytes).
uint64_t sample(bool page_cache) {
  char text[8192];
  uint64_t room = ~0ULL, available_kb;
  if (read_small_file("/proc/meminfo", text, sizeof text) && line_number(text, "MemAvailable:", &available_kb))
    room = available_kb * 1024;
  if (!page_cache) room = std::min(room, rlimit_headroom(text, sizeof text));
  if (!read_small_file("/proc/self/cgroup", text, sizeof text)) return room;
  // "0::/path" (v2) and "N:memory:/path" (v1); the v2 tree is mounted at
  // /sys/fs/cgroup or, beside v1, at /sys/fs/cgroup/unified.
  char* save = nullptr;  // strtok_r: samplers on two threads must not share strtok's state
  for (char* line = strtok_r(text, "\n", &save); line; line = strtok_r(nullptr, "\n", &save)) {
    const char* rel = nullptr;
    bool v2 = false;
    if (strncmp(line, "0::", 3) == 0) {
      rel = line + 3;
      v2 = true;
    } else if (const char* m = strstr(line, ":memory:")) {
      rel = m + 8;
    }
    if (!rel) continue;
    char dir[512];
    const char* roots[2] = {v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory", v2 ? "/sys/fs/cgroup/unified" : nullptr};
    for (const char* root : roots) {
      if (!root) continue;
      snprintf(dir, sizeof dir, "%s%s", root, rel);
      room = std::min(room, cgroup_headroom(dir, v2, page_cache));
    }
  }
  return room;
}

// One sample of each kind, and when it was taken.
struct Sampled {
  std::atomic<uint64_t> value{~0ULL};
  std::atomic<int64_t> at_ns{0};
};
Sampled g_headroom, g_page_cache_room;

int64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace

bool address_space_limited() {
  struct rlimit r {};
  if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) return true;
  return getrlimit(RLIMIT_DATA, &r) == 0 && r.rlim_cur != RLIM_INFINITY;
}

namespace {

uint64_t sampled(Sampled& s, bool page_cache, uint32_t max_age_ms) {
  const int64_t now = now_ns();
  const int64_t at = s.at_ns.load(std::memory_order_acquire);
  if (at != 0 && now - at < static_cast<int64_t>(max_age_ms) * 1000000LL) return s.value.load(std::memory_order_relaxed);
  const uint64_t v = sample(page_cache);
  s.value.store(v, std::memory_order_relaxed);
  s.at_ns.store(now, std::memory_order_release);
  return v;
}

}  // namespace

uint64_t memory_headroom_bytes(uint32_t max_age_ms) { return sampled(g_headroom, false, max_age_ms); }

uint64_t page_cache_room_bytes(uint32_t max_age_ms) { return sampled(g_page_cache_room, true, max_age_ms); }

}  // namespace hybridio
