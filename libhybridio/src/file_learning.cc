// file_learning.cc - File's part in learned thresholds (path_costs.h,
// docs/policy.md "Learned thresholds"): which requests are decided with
// measured thresholds, which explore, which are measured, and where the
// time of a flush is charged.  The policy core stays as it is: measured
// thresholds and the HIO_FILE_PREFER_DONTCACHE / LEARNED / EXPLORE flags
// are its inputs.
#include <sys/stat.h>

#include <cstdio>
#include <mutex>
#include <new>

#include "cache_probe.h"
#include "config.h"
#include "file.h"
#include "runtime.h"
#include "syscall_table.h"
#include "uring_engine.h"

namespace hybridio {
namespace {

constexpr uint32_t kLearnFlags = HIO_FILE_PREFER_DONTCACHE | HIO_FILE_LEARNED | HIO_FILE_EXPLORE;
constexpr uint32_t kNotLearned =
    HIO_FILE_CALLER_DIRECT | HIO_FILE_SYNC | HIO_FILE_APPEND | HIO_FILE_MAPPED | HIO_FILE_NO_DIRECT;
// How far ahead of an uncached read run's start to look for what the
// kernel's readahead cached for the stream before it (read_ahead_kb is
// 128 KiB by default, 8 MiB on the development VM's virtio disk).
constexpr uint64_t kReadaheadProbeBytes = 64 << 20;

// Decisions made by a size threshold: the ones measurements may move, and
// the only ones whose cost says something about their path at that size.
bool by_size(hio_rule rule) {
  switch (rule) {
    case HIO_RULE_SMALL:
    case HIO_RULE_WRITE_SIZE:
    case HIO_RULE_READ_SIZE:
    case HIO_RULE_SEQUENTIAL:
    case HIO_RULE_PRESSURE:
    case HIO_RULE_CONTENDED:
    case HIO_RULE_LEARNED:
    case HIO_RULE_EXPLORED:
      return true;
    default:
      return false;
  }
}

}  // namespace

LearnedFs* File::learning_for(const hio_policy_config& base, const hio_request& req) const {
  if (!learned_fs_ || base.mode != HIO_MODE_HYBRID || (req.file_flags & kNotLearned)) return nullptr;
  return size_class(req.length) < 0 ? nullptr : learned_fs_;
}

const hio_policy_config& File::steer(LearnedFs& fs, const hio_policy_config& base, hio_request& req,
                                     hio_policy_config* learned, bool at_random) {
  req.file_flags &= ~kLearnFlags;  // a cached-first rest arrives with its first part's
  const PackedVerdicts v = fs.verdicts_for(req.op, at_random);
  const LearnTuning& tuning = rt_.learned()->tuning();
  const bool uncached_first = req.op == HIO_OP_WRITE && tuning.uncached_writes_first;
  const bool random_uncached =
      at_random && tuning.uncached_random_reads_first && (req.file_flags & HIO_FILE_DONTCACHE_OK);
  if (v == 0 && !uncached_first && !random_uncached) return base;
  *learned = base;
  if (req.op == HIO_OP_WRITE) {
    learned->write_threshold = learned_threshold(v, base.write_threshold);
    learned->stream_threshold = learned_threshold(v, base.stream_threshold);
  } else {
    learned->read_threshold = learned_threshold(v, base.read_threshold);
  }
  const int c = size_class(req.length);
  bool uncached = req.op == HIO_OP_WRITE ? stream_prefers_dontcache(v, c, uncached_first) : prefers_dontcache(v, c);
  if (at_random) {
    // A read at random has no stream to keep on one path: it goes as its
    // own class was measured (as a read at random), uncached until then.
    if (!measured_off_cache(v, c)) uncached = random_uncached;
  } else if (req.op == HIO_OP_READ) {
    // One off-cache path per read stream, the one its first learned
    // request's class prefers: a restore of records of many sizes whose
    // classes went different ways switched between direct reads and the
    // kernel's readahead at every record, and read at 1.3-1.4 GB/s where
    // either path alone read 2.2-2.5 (main job, 8 ranks).
    const StreamPath judged = uncached ? StreamPath::kUncached : StreamPath::kDirect;
    const StreamPath current = read_stream_path_.load(std::memory_order_relaxed);
    if (current == StreamPath::kUnjudged)
      read_stream_path_.store(judged, std::memory_order_relaxed);
    else
      uncached = current == StreamPath::kUncached;
  }
  if (uncached) req.file_flags |= HIO_FILE_PREFER_DONTCACHE;
  const bool moved = learned->write_threshold != base.write_threshold ||
                     learned->stream_threshold != base.stream_threshold ||
                     learned->read_threshold != base.read_threshold;
  return moved || (req.file_flags & HIO_FILE_PREFER_DONTCACHE) ? *learned : base;
}

bool File::reads_at_random(const hio_request& req) const {
  return req.op == HIO_OP_READ && req.seq_run < rt_.policy().stream_min_run &&
         random_stream_.load(std::memory_order_relaxed);
}

void File::judge_random_stream(const hio_request& req, uint32_t stream_min_run) {
  // The stream before this one: describe() extended the stream with a
  // request before it is decided, a plan (the shim's) only once it has
  // been executed.
  const uint64_t end = stream_end_.load(std::memory_order_relaxed);
  const uint32_t before = end == req.offset + req.length ? stream_before_run_.load(std::memory_order_relaxed)
                          : end == ~0ULL                 ? kNoStream
                                                         : stream_run_.load(std::memory_order_relaxed);
  // Read at random: not from the file's beginning, where a restore's (or
  // a copy's) stream starts, and the stream before was one request, or
  // began at random and ended before stream_min_run requests (a
  // shuffle of blocks puts some side by side), or there was none.
  const bool random =
      req.offset != 0 &&
      (before == kNoStream || before == 0 ||
       (before < stream_min_run && random_stream_.load(std::memory_order_relaxed)));
  random_stream_.store(random, std::memory_order_relaxed);
}

hio_decision File::settle(LearnedFs& fs, const hio_policy_config& base, const hio_policy_config& cfg,
                          hio_request& req, hio_decision d, bool& probed, bool may_explore, bool at_random) {
  if (&cfg != &base && by_size(d.rule)) {
    // What the configured thresholds say, with the facts they would have
    // gathered (a probe if they send it direct): if the path differs, the
    // measurements moved this decision, and it says so.
    hio_request configured_req = req;
    configured_req.file_flags &= ~kLearnFlags;
    const hio_decision configured = decide_with(base, configured_req, probed);
    req.file_size = configured_req.file_size;
    req.cached_pages = configured_req.cached_pages;
    req.dirty_pages = configured_req.dirty_pages;
    req.pressure = configured_req.pressure;
    d = decide_with(cfg, req, probed);
    if (configured.path != d.path && by_size(d.rule)) {
      req.file_flags |= HIO_FILE_LEARNED;
      hio_policy_decide(&cfg, &req, &d);
    }
  }
  if (!may_explore) return d;
  // The path the policy chose for this request as a member of its stream.
  // A read the cache decided (read_cached) still belongs to a stream that
  // goes off the cache when only part of it is cached (kernel readahead
  // behind a small read before it), or when the cached part is what the
  // exploration run's own stream read ahead: the run goes on over it.
  hio_path decided = by_size(d.rule) ? d.path : HIO_PATH_COUNT;
  if (req.op == HIO_OP_READ && d.rule == HIO_RULE_READ_CACHED) {
    hio_rule cold_rule;
    {
      std::lock_guard<std::mutex> run_lock(run_mu_);
      const ExploreRun& run = runs_[HIO_OP_READ];
      if (run.continues(req.offset, req.length, run.decided, at_random)) decided = run.decided;
    }
    if (decided == HIO_PATH_COUNT && direct_if_uncached(req, &cold_rule)) decided = HIO_PATH_DIRECT;
  }
  if (decided == HIO_PATH_COUNT) return d;

  // Exploration: when the byte credit covers a run of requests, this one
  // and those that follow it in the stream go down the least measured
  // other path (ExploreRun), each decided by the core with thresholds that
  // send it there (so every rule that keeps a request in the cache or out
  // of direct I/O still holds).  Credit is spent only if it went there.
  const hio_op op = req.op;
  const uint64_t len = req.length;
  const bool dontcache_ok = (req.file_flags & HIO_FILE_DONTCACHE_OK) != 0;
  hio_path target = HIO_PATH_COUNT;
  bool starts_run = false;
  uint64_t run_len = 0;
  uint64_t ramp = 0;
  FsCosts& costs = fs.costs.of(at_random);
  {
    std::unique_lock<std::mutex> lock(fs.mu, std::try_to_lock);
    if (!lock.owns_lock()) return d;  // busy: this request neither earns nor spends
    costs.account(op, len, decided, dontcache_ok);
    std::lock_guard<std::mutex> run_lock(run_mu_);
    ExploreRun& run = runs_[op];
    if (run.continues(req.offset, len, decided, at_random)) {
      target = run.path;
    } else {
      fs.costs.of(run.at_random).end_run(&run, op);
      target = costs.explore_target(op, len, decided, dontcache_ok);
      starts_run = target != HIO_PATH_COUNT;
      if (starts_run) {
        run_len = costs.run_bytes(op, len, target, decided);
        // A run through the cache in a direct stream starts the kernel's
        // readahead cold, which a stream of that path pays once: its first
        // requests are not measured (skip_ramp() below), and the run is
        // that much longer (FsCosts::ramp_bytes).  A lone 64 MiB uncached
        // read took 35-87 ms where the same reads in a stream took 24-25
        // (docs/performance.md, nineteenth session), and the second still
        // 25 % more than the stream's later ones.
        ramp = costs.ramp_bytes(op, len, target, decided);
        run_len += ramp;
      }
    }
  }
  if (target == HIO_PATH_COUNT) return d;
  hio_policy_config explore = base;
  const uint64_t threshold = target == HIO_PATH_BUFFERED ? ~0ULL : 1;
  explore.write_threshold = explore.read_threshold = explore.stream_threshold = threshold;
  hio_request explore_req = req;
  explore_req.file_flags = (req.file_flags & ~kLearnFlags) | HIO_FILE_EXPLORE;
  if (target == HIO_PATH_DONTCACHE) explore_req.file_flags |= HIO_FILE_PREFER_DONTCACHE;
  bool explore_probed = probed;
  bool explorable = true;
  if (op == HIO_OP_READ && target != HIO_PATH_BUFFERED) {
    // A read stream kept in the cache has its next range cached by
    // readahead, which would keep every exploration buffered (read_cached):
    // an explored read goes to the device whatever clean pages are cached,
    // as a cold read of that path would.  Not over dirty pages: a direct
    // read writes them back first, and that is not the path's cost.
    if (!explore_probed) {
      CacheState cache = probe_cache_sampled(req.offset, len, base.page_size);
      count_probe(cache.method);
      explore_req.dirty_pages = cache.dirty_pages;
      explore_probed = true;
    }
    explorable = explore_req.dirty_pages == 0;  // else dirty, or unknown
    explore_req.cached_pages = 0;
  }
  const hio_decision explored = explorable ? decide_with(explore, explore_req, explore_probed) : d;
  // An uncached read run that starts where the stream's own readahead has
  // been (ExploreRun::unmeasured_until): how far that reaches.
  const uint64_t cached_ahead = starts_run && op == HIO_OP_READ && target == HIO_PATH_DONTCACHE &&
                                        decided == HIO_PATH_BUFFERED && explored.path == target
                                    ? cached_prefix_bytes(fd_, req.offset, kReadaheadProbeBytes)
                                    : 0;
  {
    std::lock_guard<std::mutex> lock(fs.mu);
    std::lock_guard<std::mutex> run_lock(run_mu_);
    if (explored.path != target) {
      if (!starts_run) fs.costs.of(runs_[op].at_random).end_run(&runs_[op], op);
      return d;
    }
    ExploreRun& run = runs_[op];
    if (starts_run) {
      costs.start_run(&run, op, req.offset, len, target, decided);
      run.at_random = at_random;
      // A read run's start is not measured (ExploreRun::unmeasured_until):
      // an uncached one's over what the stream's readahead cached, a direct
      // one's first request (unless it is the whole run), and the first
      // requests of one through the cache in a direct stream (its ramp).
      const bool direct_read = op == HIO_OP_READ && target == HIO_PATH_DIRECT;
      if (ramp)
        run.skip_ramp(target, req.offset, len, ramp);
      else
        run.skip_start(req.offset, len, direct_read ? len : cached_ahead);
    } else {
      run.advance(req.offset, len);
    }
    // Those requests go down the run's path all the same (through the
    // cache, an uncached run's stream would carry its readahead further
    // ahead of it), paid for with the class's credit: the bytes it
    // explores stay within their share.
    if (!run.measures(req.offset)) costs.charge_credit(op, len);
  }
  Stats& s = rt_.stats();
  s.add(target == HIO_PATH_BUFFERED ? s.learn_explored_buffered
        : target == HIO_PATH_DIRECT ? s.learn_explored_direct
                                    : s.learn_explored_dontcache,
        len);
  req = explore_req;
  return explored;
}

bool File::worth_measuring(const hio_request& req, const hio_decision& d) {
  if (!by_size(d.rule)) return false;  // the cache, alignment, or a forced path decided
  // The first request on a path after another path's, in a stream, pays
  // for the switch (readahead starting over, the other path's writeback).
  const hio_path previous = static_cast<hio_path>(last_path_[req.op].exchange(d.path, std::memory_order_relaxed));
  if (learned_fs_ &&
      !steady_in_stream(req.op, req.seq_run > 0, previous, d.path, req.length, rt_.learned()->tuning().explore_run_bytes))
    return false;
  if (req.file_flags & HIO_FILE_EXPLORE) {
    // A read run's start (ExploreRun::unmeasured_until).
    std::lock_guard<std::mutex> run_lock(run_mu_);
    if (!runs_[req.op].measures(req.offset)) return false;
  }
  if (req.op == HIO_OP_WRITE) return d.path != HIO_PATH_DIRECT || !engine_settings().write_behind;  // queued: not timed
  if (req.cached_pages != HIO_PAGES_UNKNOWN) return req.cached_pages == 0;
  if (d.path != HIO_PATH_BUFFERED || req.seq_run > 0) return true;  // a stream's readahead is its path's own doing
  // A buffered read nobody probed: data cached before (written or read
  // earlier) would make the page cache look like a fast device.
  CacheState window;
  if (!probe_cachestat(fd_, req.offset, kSmallestClassBytes, &window)) return false;
  return window.cached_pages == 0;
}

void File::learn_from(const hio_request& req, const hio_decision& d, uint64_t done, uint64_t ns, bool measure) {
  LearnedFs* fs = learned_fs_;
  if (!fs) return;
  const int c = size_class(req.length);
  if (req.op == HIO_OP_WRITE && done) {
    const int at = measure && c >= 0 ? c : kSizeClasses;
    unsynced_[flush_index(d.path)][at].fetch_add(done, std::memory_order_relaxed);
  }
  if (req.op == HIO_OP_WRITE && (req.file_flags & HIO_FILE_EXPLORE) && done) {
    // Measured or not (a switch of path), an explored write's time beyond
    // its price is the exploration's (FsCosts::charge_overrun).
    std::lock_guard<std::mutex> lock(fs->mu);
    std::lock_guard<std::mutex> run_lock(run_mu_);
    fs->costs.streams.charge_overrun(req.op, req.length, d.path, runs_[HIO_OP_WRITE].decided, ns);
  }
  if (!measure || done != req.length) return;  // short: EOF, an error, a full disk
  // An explored read run is held to the time of its measured requests (the
  // first one after another path's pays for the switch, and is not); when
  // it is over, its batch is folded (FsCosts::spend).
  // An explored write run through the cache has its batch folded when it
  // ends (FsCosts::end_write_run).
  const bool explored = (req.file_flags & HIO_FILE_EXPLORE) != 0;
  const bool explored_read = explored && req.op == HIO_OP_READ;
  const bool explored_cached_write = explored && req.op == HIO_OP_WRITE && d.path != HIO_PATH_DIRECT;
  const bool at_random = reads_at_random(req);
  FsCosts& costs = fs->costs.of(at_random);
  bool moved = false;
  {
    std::unique_lock<std::mutex> lock(fs->mu, std::defer_lock);
    if (explored_read || explored_cached_write)
      lock.lock();
    else if (!lock.try_lock())
      return;  // another thread is recording: one sample fewer
    moved = costs.add_sample(req.op, d.path, req.length, ns);
    if (explored_read) {
      std::lock_guard<std::mutex> run_lock(run_mu_);
      ExploreRun& run = runs_[HIO_OP_READ];
      // A run of the other set (another thread began a stream in between) is not this sample's.
      moved |= run.at_random == at_random ? costs.spend(&run, HIO_OP_READ, d.path, ns)
                                          : costs.finish_batch(HIO_OP_READ, d.path);
    } else if (explored_cached_write) {
      std::lock_guard<std::mutex> run_lock(run_mu_);
      moved |= costs.end_write_run(runs_[HIO_OP_WRITE], d.path);
    }
    if (moved) fs->publish();
  }
  Stats& s = rt_.stats();
  s.add(s.learn_samples);
  if (moved) s.add(s.learn_moves);
}

void File::charge_flush(uint64_t ns) {
  LearnedFs* fs = learned_fs_;
  if (!fs) return;
  uint64_t written[kFlushPaths][kSizeClasses + 1];
  uint64_t total = 0;
  for (int p = 0; p < kFlushPaths; ++p)
    for (int c = 0; c <= kSizeClasses; ++c) total += written[p][c] = unsynced_[p][c].exchange(0, std::memory_order_relaxed);
  if (total == 0) return;
  bool moved;
  {
    std::lock_guard<std::mutex> lock(fs->mu);
    moved = fs->costs.streams.charge_flush(written, ns);
    if (moved) fs->publish();
  }
  Stats& s = rt_.stats();
  s.add(s.learn_deferred);
  if (moved) s.add(s.learn_moves);
}

std::string File::estimate_note(const hio_request& req) {
  LearnedFs* fs = learned_fs_;
  const hio_op op = req.op;
  const int c = size_class(req.length);
  if (!fs || c < 0) return "";
  try {
    const bool at_random = reads_at_random(req);
    std::string note = (at_random ? "randread:" : "") + format_size(class_floor(c));
    std::lock_guard<std::mutex> lock(fs->mu);
    const FsCosts& costs = fs->costs.of(at_random);
    for (int p = 0; p < HIO_PATH_COUNT; ++p) {
      const hio_path path = static_cast<hio_path>(p);
      char rate[48] = "-";
      if (costs.known(op, c, path)) snprintf(rate, sizeof rate, "%.2fGB/s", costs.rate(op, c, path) / 1e9);
      note += std::string(",") + hio_path_name(path) + "=" + rate;
    }
    return note;
  } catch (const std::bad_alloc&) {
    return "";
  }
}

}  // namespace hybridio
