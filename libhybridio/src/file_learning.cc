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
// A first look through the cache waits for the file's end only when that
// is this close: estimates settle within the first GiB of a stream.
constexpr uint64_t kFirstLookReach = 1ULL << 30;

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
  const bool pipelined_first = req.op == HIO_OP_READ && long_read_stream(req);
  const bool random_uncached =
      at_random && tuning.uncached_random_reads_first && (req.file_flags & HIO_FILE_DONTCACHE_OK);
  if (v == 0 && !uncached_first && !pipelined_first && !random_uncached) return base;
  *learned = base;
  if (req.op == HIO_OP_WRITE) {
    learned->write_threshold = learned_threshold(v, base.write_threshold);
    learned->stream_threshold = learned_threshold(v, base.stream_threshold);
  } else {
    learned->read_threshold = learned_threshold(v, base.read_threshold);
    // A read stream with a pipeline goes direct from the stream threshold
    // (policy.h, `sequential`): it moves with the verdicts too, and starts
    // at the smallest learned size in a long stream (pipelined_reads_first).
    const uint64_t stream = pipelined_first ? std::min(base.stream_threshold, class_floor(0)) : base.stream_threshold;
    learned->stream_threshold = learned_threshold(v, stream);
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
    // classes went different ways switched between the direct read-ahead
    // window and the kernel's readahead at every record, and read at 1.3-1.4
    // GB/s where either path alone read 2.2-2.5 (main job, 8 ranks).
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
  // began at random and ended before a read-ahead window could serve it (a
  // shuffle of blocks puts some side by side), or there was none.
  const bool random =
      req.offset != 0 &&
      (before == kNoStream || before == 0 ||
       (before < stream_min_run && random_stream_.load(std::memory_order_relaxed)));
  random_stream_.store(random, std::memory_order_relaxed);
}

bool File::long_read_stream(const hio_request& req) {
  const PathCosts& learned = *rt_.learned();
  if (!learned.pipelined_reads_first()) return false;
  StreamLength length = read_stream_length_.load(std::memory_order_relaxed);
  if (length == StreamLength::kUnjudged) {
    // Judged at the stream's first request, so that a stream judged long
    // has its start judged cold or cached (decide_with()) before the
    // kernel's readahead behind its first buffered calls caches what
    // follows.  Not in a file read at random (the stream before was one
    // request): an fstat there would add 0.4 us to every 64 KiB read, a
    // sixth of one from the cache.
    length = StreamLength::kShort;
    struct stat st;
    if (req.seq_run == 0 && stream_before_run_.load(std::memory_order_relaxed) != 0 && sys().fstat(fd_, &st) == 0 &&
        static_cast<uint64_t>(st.st_size) >= req.offset + learned.tuning().pipelined_reads_min_left)
      length = StreamLength::kLong;
    read_stream_length_.store(length, std::memory_order_relaxed);
  }
  return length == StreamLength::kLong;
}

bool File::explores_at_file_end(const hio_request& req, uint64_t run_len, bool first_look) {
  // Started in the middle of the stream, the run costs the stream about
  // twice its share: the window drains for it, and after it starts over
  // (its first blocks arrive together, its staging is touched afresh), with
  // the kernel's readahead starting cold for the run in between.  At the
  // file's end the window stops anyway: the run costs what it reads.  A
  // stream that ends before the file does explores nothing through the
  // cache, and its credit waits for the next one.
  // So does a run due at the first request of a stream (not one read at
  // random), before its window starts: there the run would take the
  // window's start away from it (a read at the file's beginning starts one
  // at once, ReadAhead::begin()), and the kernel's readahead behind the
  // run's read caches the start of the next, which then goes through the
  // cache in part (read_cached).  In 64 MiB read streams of a 7 GiB file,
  // two of five passes began with such a run.
  // Once it waits, it waits (the time credit was granted then, as for a
  // window that drains: the price moves with every new direct sample).
  const uint64_t end = req.offset + req.length;
  uint64_t at = ra_explore_at_.load(std::memory_order_relaxed);
  if (at == ~0ULL) {
    const bool window_ahead = ra_.busy() || (req.seq_run == 0 && !reads_at_random(req));
    if (req.file_size == ~0ULL || run_len >= req.file_size || !window_ahead) return false;
    at = req.file_size - run_len;
    if (end > at || (first_look && at - req.offset > kFirstLookReach)) return false;
    ra_explore_at_.store(at, std::memory_order_relaxed);
  }
  if (end > at) return false;  // the run starts with the request that ends past `at`
  limit_read_ahead(at - end);
  return true;
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
  // Not (yet) a request of an explored direct read run: the window reads as
  // far ahead as it likes, up to a run through the cache that waits for
  // the file's end.
  if (req.op == HIO_OP_READ) {
    const uint64_t at = ra_explore_at_.load(std::memory_order_relaxed), end = req.offset + req.length;
    limit_read_ahead(at != ~0ULL && end <= at ? at - end : ~0ULL);
  }
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
  bool first_look = false;
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
      // A run through the cache that the stream's window is draining for
      // (the hold below) had its time granted when the hold began: the
      // price moves with every new sample of the path in use, and a hold
      // given up half way let the window grow again, for good - a 64 KiB
      // stream drains 32 MiB in 500 calls, over 8 new direct samples, and
      // explored nothing through the cache in 1.15 GiB.
      const bool draining = op == HIO_OP_READ && decided == HIO_PATH_DIRECT &&
                            (ra_hold_.load(std::memory_order_relaxed) ||
                             ra_explore_at_.load(std::memory_order_relaxed) != ~0ULL);
      target = costs.explore_target(op, len, decided, dontcache_ok, draining);
      starts_run = target != HIO_PATH_COUNT;
      if (starts_run) {
        run_len = costs.run_bytes(op, len, target, decided);
        first_look = !costs.known(op, size_class(len), target);
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
  if (op == HIO_OP_READ) {
    // Direct reads of this stream are in flight ahead of it (read_ahead.h):
    // a run through the cache now would compete with them for the device
    // and read their range again.  The run waits for the file's last bytes
    // where it can (explores_at_file_end()); then, or else now, the window
    // stops growing, the stream uses what it holds, and the run starts.
    // Any other request lets the window grow again.
    const bool cached_run = starts_run && target != HIO_PATH_DIRECT && decided == HIO_PATH_DIRECT;
    // Nor while other streams of the process read ahead: the run's reads
    // queue behind their windows (HYBRIDIO_READ_AHEAD each: 32 MiB when
    // this was measured, 16 MiB by default now), so it measures that
    // queue, and its stream falls behind the others.  In a restore of 8
    // ranks, 1 % of the bytes explored that way left the slowest rank 8 %
    // behind the direct policy (0.91x; with learning off 0.99x); one
    // stream alone, 0.97x with 1.5 % explored.  And never again in a
    // process that has read several streams at once: its runs then start
    // where the others' windows are not in flight yet or any more - a
    // rank's first records, the last rank - and that rank's time is the
    // restore's (main job, 2026-11-24: 1.4-2 % explored there, 0.93x).
    const bool contended = cached_run && (ReadAhead::windows_overlapped() ||
                                          ReadAhead::windows_in_flight() > (ra_.in_flight() ? 1 : 0));
    const bool waits = cached_run && !contended && explores_at_file_end(req, run_len, first_look);
    const bool hold = cached_run && !contended && !waits && ra_.busy();
    if (hold != ra_hold_.load(std::memory_order_relaxed)) ra_hold_.store(hold, std::memory_order_relaxed);
    if (hold || contended || waits) return d;
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
      // A direct read run's window started at its second request: what it
      // put in flight then is not measured either.
      if (op == HIO_OP_READ && target == HIO_PATH_DIRECT && ra_.priming(req.offset)) run.skip_until(ra_.primed_end());
      run.advance(req.offset, len);
    }
    // Those requests go down the run's path all the same (through the
    // cache, an uncached run's stream would carry its readahead further
    // ahead of it), paid for with the class's credit: the bytes it
    // explores stay within their share.
    if (!run.measures(req.offset)) costs.charge_credit(op, len);
    if (op == HIO_OP_READ && target == HIO_PATH_DIRECT) limit_read_ahead(run.active() ? run.bytes_left : 0);
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
