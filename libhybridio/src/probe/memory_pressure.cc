// memory_pressure.cc - see memory_pressure.h.
#include "probe/memory_pressure.h"

#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hybridio/policy.h"
#include "platform/proc_files.h"

namespace hybridio {
namespace {

uint64_t field_kb(const char* text, const char* name) {
  uint64_t kb = 0;
  line_number(text, name, &kb);
  return kb;
}

uint64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

uint32_t sample_now() {
  char text[8192];
  MeminfoSample m;
  if (read_small_file("/proc/meminfo", text, sizeof text)) {
    m.total_kb = field_kb(text, "MemTotal:");
    m.available_kb = field_kb(text, "MemAvailable:");
    m.dirty_kb = field_kb(text, "Dirty:");
    m.writeback_kb = field_kb(text, "Writeback:");
  }
  uint32_t dirty_ratio = 20;
  char small[64];
  if (read_small_file("/proc/sys/vm/dirty_ratio", small, sizeof small)) {
    long v = strtol(small, nullptr, 10);
    if (v > 0 && v <= 100) dirty_ratio = static_cast<uint32_t>(v);
  }
  // vm.dirty_bytes, when set, is the limit (and vm.dirty_ratio reads 0).
  if (read_small_file("/proc/sys/vm/dirty_bytes", small, sizeof small)) m.dirty_limit_kb = strtoull(small, nullptr, 10) / 1024;
  double psi = -1;
  char pressure[512];
  if (read_small_file("/proc/pressure/memory", pressure, sizeof pressure)) {
    const char* p = strstr(pressure, "some avg10=");
    if (p) psi = strtod(p + strlen("some avg10="), nullptr);
  }
  return pressure_from(m, dirty_ratio, psi);
}

std::atomic<uint64_t> g_sampled_at{0};
std::atomic<uint32_t> g_pressure{0};

}  // namespace

uint32_t pressure_from(const MeminfoSample& m, uint32_t dirty_ratio, double psi_some10) {
  const uint64_t dirty_limit = m.dirty_limit_kb ? m.dirty_limit_kb : m.available_kb * dirty_ratio / 100;
  const unsigned stall = psi_some10 > 0 ? static_cast<unsigned>(psi_some10 < 100 ? psi_some10 : 100) : 0;
  return hio_policy_pressure(m.total_kb, m.available_kb, m.dirty_kb + m.writeback_kb, dirty_limit, stall);
}

uint32_t memory_pressure(uint32_t max_age_ms) {
  uint64_t now = now_ms();
  uint64_t at = g_sampled_at.load(std::memory_order_relaxed);
  // One thread re-samples; concurrent callers use the previous value meanwhile.
  if ((at == 0 || now - at >= max_age_ms) &&
      g_sampled_at.compare_exchange_strong(at, now ? now : 1, std::memory_order_relaxed))
    g_pressure.store(sample_now(), std::memory_order_relaxed);
  return g_pressure.load(std::memory_order_relaxed);
}

}  // namespace hybridio
