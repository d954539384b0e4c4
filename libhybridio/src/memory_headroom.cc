// memory_headroom.cc - see memory_headroom.h.
#include "memory_headroom.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hybridio {
namespace {

// Reads a small file into `buf` (NUL-terminated); false if it cannot.
bool read_small(const char* path, char* buf, size_t size) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::read(fd, buf, size - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

// The number after `key` (at a line start) in `text`, times `scale`; false if absent.
bool field(const char* text, const char* key, uint64_t scale, uint64_t* out) {
  const size_t klen = strlen(key);
  for (const char* line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : nullptr) {
    if (strncmp(line, key, klen) == 0) {
      *out = strtoull(line + klen, nullptr, 10) * scale;
      return true;
    }
  }
  return false;
}

uint64_t number_in(const char* path) {
  char buf[64];
  if (!read_small(path, buf, sizeof buf) || strncmp(buf, "max", 3) == 0) return ~0ULL;
  return strtoull(buf, nullptr, 10);
}

// Limit less usage plus reclaimable file pages, for the cgroup directory `dir`.
uint64_t cgroup_headroom(const char* dir, bool v2) {
  char path[640], stat[4096];  // `dir` is at most 511 bytes
  snprintf(path, sizeof path, "%s/%s", dir, v2 ? "memory.max" : "memory.limit_in_bytes");
  const uint64_t limit = number_in(path);
  if (limit >= (1ULL << 60)) return ~0ULL;  // no limit (v1 reports one near 2^63)
  snprintf(path, sizeof path, "%s/%s", dir, v2 ? "memory.current" : "memory.usage_in_bytes");
  const uint64_t usage = number_in(path);
  if (usage == ~0ULL) return ~0ULL;
  uint64_t inactive_file = 0;
  snprintf(path, sizeof path, "%s/memory.stat", dir);
  if (read_small(path, stat, sizeof stat)) field(stat, v2 ? "inactive_file " : "total_inactive_file ", 1, &inactive_file);
  return limit > usage ? limit - usage + inactive_file : inactive_file;
}

uint64_t sample() {
  char text[4096];
  uint64_t room = ~0ULL, available;
  if (read_small("/proc/meminfo", text, sizeof text) && field(text, "MemAvailable:", 1024, &available))
    room = available;
  if (!read_small("/proc/self/cgroup", text, sizeof text)) return room;
  // "0::/path" (v2) and "N:memory:/path" (v1); the v2 tree is mounted at
  // /sys/fs/cgroup or, beside v1, at /sys/fs/cgroup/unified.
  for (char* line = strtok(text, "\n"); line; line = strtok(nullptr, "\n")) {
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
      room = std::min(room, cgroup_headroom(dir, v2));
    }
  }
  return room;
}

std::atomic<uint64_t> g_value{~0ULL};
std::atomic<int64_t> g_sampled_ns{0};

int64_t now_ns() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

}  // namespace

uint64_t memory_headroom_bytes(uint32_t max_age_ms) {
  const int64_t now = now_ns();
  const int64_t at = g_sampled_ns.load(std::memory_order_acquire);
  if (at != 0 && now - at < static_cast<int64_t>(max_age_ms) * 1000000LL) return g_value.load(std::memory_order_relaxed);
  const uint64_t v = sample();
  g_value.store(v, std::memory_order_relaxed);
  g_sampled_ns.store(now, std::memory_order_release);
  return v;
}

}  // namespace hybridio
