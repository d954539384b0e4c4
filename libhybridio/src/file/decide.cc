// decide.cc - see file.h: how a File decides a request.  It describes the
// request (describe), asks the policy core with the facts it needs and the
// learner's steer (decide, decide_with), plans it for the shim (plan),
// routes it to execution (route), and serves a partly cached read from the
// cache and the rest direct (read_partly_cached).
#include "file/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdint>

#include "file/buffered_io.h"
#include "file/reuse_admission.h"
#include "io/uring_engine.h"
#include "platform/monotonic_clock.h"
#include "platform/syscall_table.h"
#include "probe/memory_pressure.h"

namespace hybridio {

uint32_t File::file_flags() const {
  uint32_t flags = 0;
  if (open_flags_ & O_APPEND) flags |= HIO_FILE_APPEND;
  if (open_flags_ & (O_SYNC | O_DSYNC)) flags |= HIO_FILE_SYNC;
  if (open_flags_ & O_DIRECT) flags |= HIO_FILE_CALLER_DIRECT;
  if (mapped_.load(std::memory_order_relaxed)) flags |= HIO_FILE_MAPPED;
  if (no_direct_.load(std::memory_order_relaxed)) flags |= HIO_FILE_NO_DIRECT;
  if (ctx_.file_settings().dontcache && !dontcache_refused_.load(std::memory_order_relaxed))
    flags |= HIO_FILE_DONTCACHE_OK;
  return flags;
}

hio_request File::describe(hio_op op, const char* buf, size_t len, uint64_t offset, bool advance_stream) {
  hio_request req{};
  req.op = op;
  req.offset = offset;
  req.length = len;
  req.buf_addr = reinterpret_cast<hio_uptr>(buf);
  // Direct bodies in memory that is aligned for the device (STATX_DIOALIGN,
  // 512 B on virtio-blk) but not to a page are staged through page-aligned
  // bounce slots: every page of such a transfer straddles two pages of
  // memory, and the device's page-sized segments (NVMe's PRP entries,
  // virtio-blk's) split it at each; the copy costs far less than that.
  req.mem_align = align_.mem_align ? std::max<uint32_t>(align_.mem_align, page_bytes()) : 0;
  req.offset_align = align_.offset_align;
  // Under the shim a direct body covers whole pages: a page that is partly
  // written direct and partly through the cache is where direct I/O and
  // another process's shared mapping of the file can lose each other's
  // stores; the head and tail take the page cache instead.
  if (transparent_mode() && req.offset_align) req.offset_align = std::max<uint32_t>(req.offset_align, page_bytes());
  req.file_size = ~0ULL;  // not needed unless the request may go direct
  req.cached_pages = HIO_PAGES_UNKNOWN;
  req.dirty_pages = HIO_PAGES_UNKNOWN;
  req.file_flags = file_flags();
  // A plan looks at the sequential stream without moving it on.
  req.seq_run = advance_stream ? stream_.extend(offset, len) : stream_.peek(offset);
  return req;
}

hio_decision File::decide(hio_request& req, bool probed, bool may_explore) {
  const hio_policy_config& base = ctx_.policy();
  hio_policy_config steered;
  const hio_policy_config& cfg =
      learn_.learns(base, req) ? learn_.steer(base, req, may_explore, &steered, &probed) : base;
  hio_decision d = decide_with(cfg, req, probed);
  // A read sent off the cache, or found cached, is shown to the re-use
  // history, which may admit it to the cache (the reuse rule) and notes it.
  consult_reuse(ctx_, fd_, cfg, req, d);
  if (req.op == HIO_OP_READ) stream_uncached_.store(d.path == HIO_PATH_DONTCACHE, std::memory_order_relaxed);
  return d;
}

hio_decision File::decide_with(const hio_policy_config& cfg, hio_request& req, bool& probed) {
  const hio_op op = req.op;
  const uint64_t len = req.length, offset = req.offset;
  hio_decision d;

  // Memory pressure only matters for requests it could push over a threshold.
  if (cfg.mode == HIO_MODE_HYBRID) {
    if (len >= hio_policy_smallest_offcache(&cfg, op) && len < std::max(cfg.write_threshold, cfg.read_threshold))
      req.pressure = memory_pressure();
  }
  hio_policy_decide(&cfg, &req, &d);

  // Only a request headed direct (or, measured best, uncached) is worth
  // probing: the probe can only keep it buffered.
  const bool off_cache = d.path == HIO_PATH_DIRECT ||
                         (d.path == HIO_PATH_DONTCACHE && (req.file_flags & HIO_FILE_PREFER_DONTCACHE));
  if (off_cache && d.rule != HIO_RULE_CALLER_DIRECT) {
    if (op == HIO_OP_READ && req.file_size == ~0ULL) {
      struct stat st;
      if (sys().fstat(fd_, &st) == 0) req.file_size = static_cast<uint64_t>(st.st_size);
    }
    // A read that continues a stream whose last read went uncached finds
    // that read's readahead cached, not data anyone read: it goes on
    // uncached (coherent with whatever is cached) instead of taking the
    // cache, whose own readahead would then keep every later read there.
    const bool own_readahead = op == HIO_OP_READ && d.path == HIO_PATH_DONTCACHE && req.seq_run > 0 &&
                               stream_uncached_.load(std::memory_order_relaxed);
    if (cfg.mode == HIO_MODE_HYBRID && !probed && !own_readahead) {
      CacheState cache = probe_cache_sampled(offset, len, cfg.page_size);
      count_probe(cache.method);
      req.cached_pages = cache.cached_pages;
      req.dirty_pages = cache.dirty_pages;
      probed = true;
    }
    hio_policy_decide(&cfg, &req, &d);
  }
  return d;
}

File::Plan File::plan(hio_op op, const char* buf, size_t len, uint64_t offset, bool explore) {
  Plan p;
  p.req = describe(op, buf, len, offset, false);
  if (op == HIO_OP_WRITE) p.req.writers = writers_.load(std::memory_order_relaxed) + 1;
  p.explores = explore;
  p.decision = decide(p.req, false, explore);
  if (learn_.learns(ctx_.policy(), p.req)) p.started_ns = monotonic_ns();
  return p;
}

void File::trace(const hio_request& req, const hio_decision& d) {
  if (!ctx_.trace().enabled()) return;
  const bool measured = d.rule == HIO_RULE_LEARNED || d.rule == HIO_RULE_EXPLORED;
  ctx_.trace().record(fd_, req, d, measured ? learn_.estimate_note(req) : "");
}

ssize_t File::route(hio_request req, char* buf, bool cached_first, const Plan* plan) {
  // The remainder of a cached-first read arrives already probed.
  const bool probed = !cached_first && req.cached_pages != HIO_PAGES_UNKNOWN;
  const hio_op op = req.op;
  const uint64_t len = req.length;
  // A planned request is executed as planned: deciding it again would probe
  // the cache twice, and an exploration the plan paid for must be followed.
  const bool as_planned = plan && plan->req.op == op && plan->req.offset == req.offset && plan->req.length == len;
  hio_decision d;
  if (as_planned) {
    const uint32_t writers = req.writers;
    req = plan->req;
    req.writers = writers;
    d = plan->decision;
  } else {
    d = decide(req, probed, !(plan && plan->explores));
  }

  // A read of a partly cached range that would go direct if nothing were
  // cached: what is cached comes from the cache, the rest is decided again
  // (Lustre's cached-first read).  Also when most of it is cached: kernel
  // readahead behind a small header read caches the start of the next
  // record, which must not send the whole record through the cache.
  hio_rule cold_rule = d.rule;
  if (cached_first && op == HIO_OP_READ && d.rule != HIO_RULE_CALLER_DIRECT && req.cached_pages > 0 &&
      (d.path == HIO_PATH_DIRECT || (d.rule == HIO_RULE_READ_CACHED && direct_if_uncached(req, &cold_rule)))) {
    ssize_t n;
    if (read_partly_cached(req, buf, cold_rule, &n)) return n;
  }

  trace(req, d);
  ctx_.stats().count_rule(d.rule, len);
  ctx_.stats().count_request(op, d.path);
  return execute_measured(req, d, buf);
}

ssize_t File::execute_measured(const hio_request& req, const hio_decision& d, char* buf) {
  if (!learn_.learns(ctx_.policy(), req)) return execute(req, d, buf);
  const uint64_t started = monotonic_ns();
  const ssize_t n = execute(req, d, buf);
  // A direct write queued behind the call (write-behind) is not timed.
  const bool timed = !(req.op == HIO_OP_WRITE && d.path == HIO_PATH_DIRECT && engine_settings().write_behind);
  learn_.observe(req, d, n > 0 ? static_cast<uint64_t>(n) : 0, monotonic_ns() - started, timed);
  return n;
}

bool File::direct_if_uncached(const hio_request& req, hio_rule* rule) const {
  const uint64_t pages = hio_range_pages(req.offset, req.length, ctx_.policy().page_size);
  if (static_cast<uint64_t>(req.cached_pages) >= pages) return false;  // all of it is cached
  hio_request cold = req;
  cold.cached_pages = 0;
  hio_decision d;
  if (hio_policy_decide(&ctx_.policy(), &cold, &d) != HIO_PATH_DIRECT) return false;
  *rule = d.rule;
  return true;
}

ssize_t File::read_uncached(hio_request r, char* buf, hio_rule rule) {
  // The part of a request that the policy sent direct as a whole and that
  // the probe found uncached: direct, whatever its own size, cut as the
  // core cuts a direct body.
  const hio_policy_config& cfg = ctx_.policy();
  r.cached_pages = 0;
  uint64_t len = r.length;
  if (r.file_size != ~0ULL) len = r.offset >= r.file_size ? 0 : std::min(len, r.file_size - r.offset);
  hio_decision d;
  if (len == 0 || !hio_plan_direct(&cfg, &r, len, false, &d)) return route(r, buf, false);
  d.rule = rule;
  if (ctx_.trace().enabled()) ctx_.trace().record(fd_, r, d);
  ctx_.stats().count_rule(d.rule, r.length);
  ctx_.stats().count_request(HIO_OP_READ, d.path);
  // A direct read of the uncached part is a sample of direct reads of its size.
  return execute_measured(r, d, buf);
}

bool File::read_partly_cached(const hio_request& req, char* buf, hio_rule rule, ssize_t* out) {
  const uint32_t page = ctx_.policy().page_size;
  // Everything is judged by the cache as it was before any of it was read:
  // a buffered read that crosses a readahead marker starts readahead into
  // what follows, which must not talk that out of going direct.
  uint64_t done = read_cached_prefix(buf, req.length, req.offset);
  auto part = [&](uint64_t from, uint64_t len) {
    hio_request r = req;
    r.offset += from;
    r.buf_addr += from;
    r.length = len;
    return r;
  };
  auto finish = [&](ssize_t n) {  // bytes so far plus a part's result
    *out = n < 0 ? (done ? static_cast<ssize_t>(done) : n) : static_cast<ssize_t>(done + static_cast<uint64_t>(n));
    return true;
  };
  if (done == req.length) return finish(0);
  const int64_t prefix_pages = done ? static_cast<int64_t>(hio_range_pages(req.offset, done, page)) : 0;
  if (req.cached_pages > prefix_pages) {
    // Cached at the end as well: the part before the end is read direct,
    // then the end comes from the cache.
    const uint64_t rest = req.length - done;
    const uint64_t suffix = cached_suffix_bytes(fd_, req.offset + done, rest);
    if (suffix > 0 && suffix < rest) {
      const uint64_t middle = rest - suffix;
      const ssize_t m = read_uncached(part(done, middle), buf + done, rule);
      if (m < 0 || static_cast<uint64_t>(m) < middle) return finish(m);  // an error, or EOF moved
      done += middle;
      const uint64_t from_cache = read_cached_prefix(buf + done, suffix, req.offset + done);
      done += from_cache;
      if (from_cache == suffix) return finish(0);
      hio_request tail = part(done, req.length - done);  // evicted meanwhile: as any read
      tail.cached_pages = HIO_PAGES_UNKNOWN;
      return finish(route(tail, buf + done, false));
    }
  }
  if (done == 0) return false;  // neither end cached: the caller executes its decision
  return finish(read_uncached(part(done, req.length - done), buf + done, rule));
}

CacheState File::probe_cache_sampled(uint64_t offset, uint64_t len, uint32_t page_size) {
  // cachestat(2) walks every cached page of the range (about 34 ns each):
  // on a fully cached 4 MiB read that is 10 % of the copy it decides.  Two
  // 64 KiB windows (the start and the end) answer the common cases - all
  // cached, nothing cached - for 32 pages; only a mixed answer pays for the
  // whole range.  The answer only steers the policy, never correctness.
  constexpr uint64_t kWindow = 64 << 10;
  if (len < 16 * kWindow || !cachestat_available()) return probe_cache(fd_, offset, len);
  const uint64_t starts[2] = {offset, offset + len - kWindow};
  int64_t cached = 0, dirty = 0, pages = 0;
  for (uint64_t at : starts) {
    CacheState w;
    if (!probe_cachestat(fd_, at, kWindow, &w)) return probe_cache(fd_, offset, len);
    cached += w.cached_pages;
    dirty += w.dirty_pages;
    pages += static_cast<int64_t>(hio_range_pages(at, kWindow, page_size));
  }
  const bool uniform = (cached == 0 || cached == pages) && (dirty == 0 || dirty == pages);
  if (!uniform) return probe_cache(fd_, offset, len);
  CacheState all;
  const int64_t range = static_cast<int64_t>(hio_range_pages(offset, len, page_size));
  all.cached_pages = cached ? range : 0;
  all.dirty_pages = dirty ? range : 0;
  all.method = ProbeMethod::kCachestat;
  return all;
}

void File::count_probe(ProbeMethod method) {
  Stats& s = ctx_.stats();
  switch (method) {
    case ProbeMethod::kCachestat: s.add(s.probe_cachestat); break;
    case ProbeMethod::kMincore: s.add(s.probe_mincore); break;
    case ProbeMethod::kNone: s.add(s.probe_failed); break;
  }
}

uint64_t File::read_cached_prefix(char* buf, uint64_t len, uint64_t offset) {
  // Read exactly the cached prefix: a buffered read that reaches an uncached
  // page would start readahead into the range meant to go direct (even with
  // RWF_NOWAIT), and RWF_NOWAIT keeps a page evicted meanwhile from blocking.
  uint64_t prefix = cached_prefix_bytes(fd_, offset, len);
  count_probe(prefix ? ProbeMethod::kCachestat : ProbeMethod::kNone);
  if (prefix == 0) return 0;
  ssize_t n = buffered_read(fd_, buf, static_cast<size_t>(prefix), offset, RWF_NOWAIT);
  if (n <= 0) return 0;
  Stats& s = ctx_.stats();
  s.count_bytes(HIO_OP_READ, HIO_PATH_BUFFERED, static_cast<uint64_t>(n));
  s.add(s.cached_first_reads);
  s.add(s.cached_first_bytes, static_cast<uint64_t>(n));
  s.count_rule(HIO_RULE_READ_CACHED, static_cast<uint64_t>(n));
  if (ctx_.trace().enabled()) {
    hio_request served{};
    served.op = HIO_OP_READ;
    served.offset = offset;
    served.length = static_cast<uint64_t>(n);
    served.cached_pages = served.dirty_pages = HIO_PAGES_UNKNOWN;
    hio_decision d{};
    d.path = HIO_PATH_BUFFERED;
    d.rule = HIO_RULE_READ_CACHED;
    d.body_len = static_cast<uint64_t>(n);
    ctx_.trace().record(fd_, served, d);
  }
  return static_cast<uint64_t>(n);
}

}  // namespace hybridio
