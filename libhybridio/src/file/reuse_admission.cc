// reuse_admission.cc - see reuse_admission.h.
#include "file/reuse_admission.h"

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <atomic>

#include "file/file_context.h"
#include "file/reuse_history.h"
#include "platform/syscall_table.h"
#include "probe/memory_headroom.h"

namespace hybridio {
namespace {

// 0: not tried, 1: being attached, 2: attached (g_history may be null).
// The process's history lives in static storage: attaching allocates nothing.
std::atomic<int> g_state{0};
std::atomic<ReuseHistory*> g_history{nullptr};
ReuseHistory g_storage;

// The bytes read off the cache within the window (ReuseTotals::read_bytes),
// summed at most once per clock tick per process (a scan of the whole
// table: 256 KiB of shared memory).
std::atomic<uint32_t> g_read_bytes_at{0};
std::atomic<uint64_t> g_read_bytes{0};

uint64_t recent_read_bytes(const ReuseHistory& h, uint32_t now, uint32_t window) {
  if (g_read_bytes_at.load(std::memory_order_acquire) == now) return g_read_bytes.load(std::memory_order_relaxed);
  const uint64_t bytes = h.totals(now, window).read_bytes;
  g_read_bytes.store(bytes, std::memory_order_relaxed);
  g_read_bytes_at.store(now, std::memory_order_release);
  return bytes;
}

}  // namespace

uint64_t reuse_budget(uint64_t setting, uint64_t page_cache_room) {
  if (setting != kReuseBudgetAuto) return setting;
  if (page_cache_room == ~0ULL) return ~0ULL;  // nothing could be read: no limit known
  return hio_reuse_budget_auto(page_cache_room);
}

uint32_t reuse_clock() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<uint32_t>(ts.tv_sec) + 1;
}

ReuseHistory* process_reuse_history(FileContext& ctx) {
  int state = g_state.load(std::memory_order_acquire);
  if (state == 2) return g_history.load(std::memory_order_acquire);
  if (state != 0 || !g_state.compare_exchange_strong(state, 1)) return nullptr;
  const FileSettings& c = ctx.file_settings();
  ReuseHistory* h = nullptr;
  if (c.reuse_budget != 0 && c.configured_mode == HIO_MODE_HYBRID &&
      ReuseHistory::attach(c.reuse_dir.empty() ? "/dev/shm" : c.reuse_dir.c_str(), &g_storage))
    h = &g_storage;
  g_history.store(h, std::memory_order_release);
  g_state.store(2, std::memory_order_release);
  return h;
}

void consult_reuse(FileContext& ctx, int fd, const hio_policy_config& cfg, hio_request& req, hio_decision& d) {
  if (req.op != HIO_OP_READ || cfg.mode != HIO_MODE_HYBRID || d.rule == HIO_RULE_CALLER_DIRECT) return;
  const bool off_cache = d.path == HIO_PATH_DIRECT || d.path == HIO_PATH_DONTCACHE;
  if (!off_cache && d.rule != HIO_RULE_READ_CACHED) return;
  ReuseHistory* h = process_reuse_history(ctx);
  if (!h) return;
  struct stat st;
  if (sys().fstat(fd, &st) != 0) return;
  const FileIdentity id = file_identity(st);
  const uint64_t offset = req.offset, len = req.length;
  const uint32_t now = reuse_clock(), window = ctx.file_settings().reuse_window;
  const ReuseVerdict v = h->lookup(id, offset, len, now, window);
  bool admit = false;
  if (v.reread) {
    const uint64_t setting = ctx.file_settings().reuse_budget;
    const uint64_t budget = reuse_budget(setting, setting == kReuseBudgetAuto ? page_cache_room_bytes(1000) : 0);
    admit = reuse_admits(id.key, v.first_extent, budget, recent_read_bytes(*h, now, window));
  }
  // Set on a cached read too: should the cached-first read find part of
  // the range evicted, the rest is decided with it and re-admitted whole.
  if (admit) req.file_flags |= HIO_FILE_REUSE;
  Stats& s = ctx.stats();
  if (!off_cache) {  // read_cached: a hit when the rule admitted the range
    if (v.admitted_before) {
      h->record(id, offset, len, now, ReuseHistory::Outcome::kHit);
      s.add(s.reuse_hit_reads);
      s.add(s.reuse_hit_bytes, offset < id.size ? std::min<uint64_t>(len, id.size - offset) : 0);
    }
    return;
  }
  if (admit) hio_policy_decide(&cfg, &req, &d);
  if (d.rule == HIO_RULE_REUSE) {
    h->record(id, offset, len, now, ReuseHistory::Outcome::kAdmitted);
    s.add(s.reuse_admitted_reads);
    s.add(s.reuse_admitted_bytes, offset < id.size ? std::min<uint64_t>(len, id.size - offset) : 0);
  } else {
    h->record(id, offset, len, now, ReuseHistory::Outcome::kOffCache);
  }
}

}  // namespace hybridio
