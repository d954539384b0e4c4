// path_costs.h - what each I/O path really delivers on one filesystem,
// measured from the program's own requests, and the size thresholds that
// follow from it (docs/policy.md, "Learned thresholds").
//
// FsCosts holds, for one filesystem, per direction (read/write), size class
// (powers of two, 64 KiB .. 64 MiB and larger) and path (buffered, direct,
// uncached), an exponentially weighted average of the wall time per byte.
// Buffered and uncached writes also carry their deferred cost: the time of
// the fsync/fdatasync and close that flushed them, spread over the bytes
// they wrote since the previous one.  From the estimates it derives, per
// direction and class, a verdict with hysteresis (the page cache or off it,
// and off it: direct or uncached), and from the verdicts the threshold that
// replaces a configured one.  It also keeps the exploration schedule: a
// byte credit that sends at most `explore_percent` of the bytes down a path
// the policy did not choose, so that every estimate stays fresh.
//
// FsCosts is a plain value, deterministic given its inputs (no clock, no
// I/O, no randomness) and not thread-safe; PathCosts (below) is the
// process-wide, thread-safe table of filesystems the engine uses.  Nothing
// here throws except std::bad_alloc from PathCosts::filesystem(), which
// catches it.
#pragma once

#include <sys/types.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "hybridio/policy.h"

namespace hybridio {

constexpr int kSizeClasses = 11;                     // 64K, 128K, ..., 32M, 64M and larger
// The paths of the bytes a flush is charged to (FsCosts::charge_flush).
constexpr int kFlushBuffered = 0, kFlushUncached = 1, kFlushDirect = 2, kFlushPaths = 3;
constexpr int flush_index(hio_path path) {
  return path == HIO_PATH_DIRECT      ? kFlushDirect
         : path == HIO_PATH_DONTCACHE ? kFlushUncached
                                      : kFlushBuffered;
}
constexpr uint64_t kSmallestClassBytes = 64 << 10;

// CLOCK_MONOTONIC in nanoseconds (vDSO): the clock requests are timed with.
inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// The size class of a request of `len` bytes; -1 below 64 KiB (not learned).
int size_class(uint64_t len);
// The smallest request of class `c`.
inline uint64_t class_floor(int c) { return kSmallestClassBytes << c; }

struct LearnTuning {
  uint32_t explore_percent = 3;  // at most this share of bytes explores another path (0-3)
  uint32_t damping = 10;         // an estimate is the mean of its first N samples, then an EWMA of weight 1/N
  uint32_t min_samples = 3;      // samples each side needs before it can move a verdict
  uint32_t margin_percent = 10;  // how much cheaper the other side must be to move a verdict ...
  double noise_sigmas = 3;       // ... plus this many standard errors of the difference
  // A write class's first verdict, from nothing measured, goes off the
  // cache with only this many standard errors beyond the margin.  What a
  // buffered write costs shows late and partly (its flush, the throttling
  // of other writers, memory), so leaving the cache on the point estimates
  // risks less than staying; a first verdict for the cache, and any move
  // of a verdict once made, still takes noise_sigmas (and
  // move_confirm_bytes).  64 KiB writes of a new 1152 MiB file, one fsync
  // at its end, on the development VM: uncached 0.51 ns/byte (5 samples
  // of 16 MiB runs, standard deviation 0.14 each), buffered 0.21 plus a
  // flush of 0.46.  At 3 sigmas the class needed some 19 samples, 10 GiB
  // of writes at a 3 % share, to leave the cache (hybrid 0.80-0.97x of the
  // uncached policy in the regret matrix).  Not reads: a read batch
  // through the cache is bimodal (it waits for the next readahead window
  // or it does not), and a verdict formed on a few of them would stick.
  double first_write_verdict_sigmas = 1;
  // Calls are folded into one sample (their summed time over their summed
  // bytes) per batch: writes through the cache until there are at least
  // cached_write_batch calls of cached_batch_bytes, reads on every path
  // until there are read_batch_bytes (or their explored run ends).  Most
  // calls return at copy speed, and now and then one pays for many: a read
  // through the cache waits for the next readahead window, a write for the
  // dirty pages of many (throttling, writeback).  So one call says little and a batch
  // says what the path costs: sampled one by one, the average sat far
  // below the mean (1 MiB direct reads at 0.12 ns/byte, three times the
  // device's rate).  A batch through the cache gathers calls of every size
  // class (readahead and writeback set the pace of such a stream, not the
  // size of a call), and each class with calls in it takes the batch's
  // cost as one sample; direct reads are batched per class.
  uint64_t cached_batch_bytes = 16 << 20;
  uint32_t cached_write_batch = 8;
  uint64_t read_batch_bytes = 4 << 20;
  // An exploration is a run of consecutive requests of a sequential stream
  // this long (or one request, if larger): a stream path's cost (kernel
  // readahead, writeback) shows in a stream of it, not in one request in
  // the middle of another path's stream.
  uint64_t explore_run_bytes = 16 << 20;
  // A run through the cache in a direct read stream (FsCosts::ramp_bytes)
  // leaves this many of its requests unmeasured, and once the path has a
  // sample there, measures at least as many after them (a run of 64 MiB
  // requests: six, three measured): such a run starts the kernel's
  // readahead of the file cold, and an uncached stream takes a few hundred
  // MiB to reach its pace.
  // 64 MiB uncached calls of a 7 GiB file on the development VM, median
  // of 3 cold starts: 46.7, 27.5, 25.3, 24.3, 23.5, 22.6 ms, then 22.0;
  // 16 MiB calls 18.8, 9.0, 8.2, 6.6 ... 6.0 from the ninth.  Measured at
  // its second call, the uncached path of a 64 MiB class was priced at
  // 0.42-0.44 ns/byte where an uncached stream read at 0.33, and the class
  // read direct at 0.79x of uncached (regret matrix, 2026-11-29).
  uint32_t cold_read_ramp_requests = 3;
  // Off the page cache, a write class starts uncached (where the kernel
  // has RWF_DONTCACHE) and goes direct once direct is measured clearly
  // cheaper in it (or in the nearest smaller class measured both ways);
  // false: the other way round.  Uncached was the best fixed write policy
  // in all 10 write cells of the regret matrix, 64 KiB-64 MiB, below and
  // above the dirty limit (3-45 % over direct from 1 MiB up), and one
  // explored uncached call says little about an uncached stream: its
  // writeback overlaps the next calls' copies, and alone it does not
  // (0.4-4.8 GB/s per call after direct writes, 2.1 GB/s as a stream).
  bool uncached_writes_first = true;
  // The reads of a stream that began at random (File::judge_random_stream:
  // not at offset 0, after a stream of one request, or none, or a short one
  // that began at random), until the stream is stream_min_run requests long, go
  // uncached when the size rules send them off the cache, while their class
  // has no uncached/direct preference measured both ways as reads at random
  // (FsCostSet::random_reads); false: direct, as configured.  Such reads come one at a time and large (torch.load reads
  // each record of a checkpoint with one call, in key order, not file
  // order), too few to explore: a 2 GiB state dict is 14 calls of 64-256
  // MiB, whose 3 % share never pays for one look.  Uncached beat direct in
  // every such case measured on the development VM: isolated 128 MiB reads
  // into a reused buffer 2.3-2.7 GB/s against 1.1-2.6, and a cold torch.load
  // into fresh memory 1.69-1.83 against 1.14-1.41 (a bounced direct body is
  // copied into the caller's new pages one page at a time; the kernel's
  // copy lands in the pages uncached reads free) - docs/performance.md,
  // seventeenth session.
  bool uncached_random_reads_first = true;
  // A measured verdict (or a measured uncached/direct preference) moves
  // only once the other side has been clearly cheaper for this many bytes
  // of the class's samples more than the side in use was cheaper.  The
  // uncached write path stalls now and then for a few hundred MiB
  // (0.8-1.2 GB/s windows of 256 MiB in a 2.2 GB/s stream, while direct
  // holds 1.6 GB/s): the path in use is sampled every 32 MiB, the other
  // only when explored, so such a stall alone moved a 4 MiB class direct
  // for good (0.75x of uncached in the regret matrix).
  // A first verdict, from nothing measured, is not held back.
  uint64_t move_confirm_bytes = 1ULL << 30;
};

struct PathEstimate {
  uint64_t samples = 0;           // requests measured
  double ns_per_byte = 0;         // wall time of the call: average ...
  double ns_var = 0;              // ... and variance of a sample, averaged alike
  uint64_t deferred_samples = 0;  // writes: syncs/closes that charged this path
  double deferred_ns_per_byte = 0;
  double deferred_var = 0;
  // Reads off the cache, a path sampled while the other one is in use
  // (FsCosts::paired_cost): its samples since, what the path in use cost
  // (its estimate) at those moments, averaged alike, and the variance of
  // the difference of the two.
  uint64_t paired_samples = 0;
  double paired_own_ns_per_byte = 0;
  double paired_ns_per_byte = 0;
  double paired_var = 0;
};

// Where a size class belongs, as measured.  kUnknown: not measured well
// enough, or too close to call; the configured threshold decides.  A
// verdict moves only when the other side is cheaper by margin_percent plus
// noise_sigmas standard errors of the difference (hysteresis).
enum class Verdict : uint8_t { kUnknown = 0, kBuffered = 1, kOffcache = 2 };

// The verdicts of one direction packed in 64 bits, so the decision path
// reads them with one atomic load: 2 bits per class, bit 32 + c set when
// class c prefers the uncached path to direct, and bit 48 + c set when
// both were measured in class c (that preference is its own).
using PackedVerdicts = uint64_t;
Verdict verdict_of(PackedVerdicts v, int c);
bool prefers_dontcache(PackedVerdicts v, int c);
// Whether class `c` was measured both ways off the cache, so that its
// uncached preference is its own.
bool measured_off_cache(PackedVerdicts v, int c);
// Off the cache, whether requests of class `c` go uncached: the class's own
// preference once both paths are measured in it, else that of the nearest
// smaller class where they are, else `otherwise`.  A stream through the cache goes at the
// pace of the kernel's writeback and readahead, not of its call size, and
// the largest classes get the fewest requests and explorations (a 1 GiB
// file is 16 calls of 64 MiB): without this they stayed direct at
// 0.67-0.77x of uncached writes while 1-4 MiB calls of the same run
// learned uncached (regret matrix, 2026-11-24).  Exploration goes on in
// the class, and its own measurements take over once there are enough.
bool stream_prefers_dontcache(PackedVerdicts v, int c, bool otherwise = false);

// The threshold that replaces `configured` under verdicts `v`: the
// configured one exactly when no measured verdict disagrees with it, else
// the floor of the class above the largest class that belongs in the page
// cache (~0 when the largest does; at most `configured` when none does).
// A class not measured takes the side of the nearest smaller measured
// class when that one went off the cache (what beats the cache at some
// size beats it at larger ones: the cache's cost per byte does not fall
// with the call size, the device's does), else its configured side.
// Before, a class measured off the cache below the configured threshold
// moved nothing while the classes between them were not measured: 64 KiB
// writes measured cheaper uncached stayed buffered up to the 2 MiB
// threshold.
uint64_t learned_threshold(PackedVerdicts v, uint64_t configured);

// A run of exploration on one stream (a file, one direction): the requests
// that follow the first one go down the same path until the run's bytes
// are used, so the path is measured as a stream of it, not as one request
// in the middle of another path's.  A request follows when it starts at
// most kRunGapBytes after the previous one ended: calls too small to be
// learned (a checkpoint's record headers, its small tensors) lie between
// the large ones of one stream, and they take no part in the run.  A
// request that does not follow, does not fit in what is left, or was
// decided differently, ends the run.  FsCosts::start_run and end_run pay
// for it and refund what it did not use.  A plain value; File keeps one
// per direction under a lock.
constexpr uint64_t kRunGapBytes = 1 << 20;

struct ExploreRun {
  hio_path path = HIO_PATH_COUNT;  // HIO_PATH_COUNT: no run
  hio_path decided = HIO_PATH_COUNT;
  int start_class = -1;            // whose credit paid for it
  bool at_random = false;          // ... in FsCostSet::random_reads, not streams
  uint64_t next_offset = 0;
  uint64_t bytes_left = 0;
  double ns_left = 0;              // the time it was given (FsCosts::spend)
  // Requests that start before this offset are neither measured nor
  // counted in the run's bytes (FsCosts::charge_credit pays for them): a
  // read run's start, which says nothing of what the path costs in a
  // stream.  An uncached read run that starts in a stream kept in the
  // cache begins over what the kernel's readahead put there for that
  // stream (up to read_ahead_kb, 8 MiB on the development VM): copies from
  // the cache (measured, 0.08-0.17 ns/byte where uncached 64 KiB reads
  // stream at 1.3-1.7).  A direct read run's first request queues behind
  // that readahead (2.4 ms for 64 KiB, 0.15 alone).
  uint64_t unmeasured_until = 0;

  bool measures(uint64_t offset) const { return offset >= unmeasured_until; }

  bool active() const { return path != HIO_PATH_COUNT; }
  // Whether [offset, offset + len), which the policy sent down
  // `decided_path` (learned as a read at random or not), goes on with the run.
  bool continues(uint64_t offset, uint64_t len, hio_path decided_path, bool random = false) const {
    return active() && offset >= next_offset && offset - next_offset <= kRunGapBytes && len <= bytes_left &&
           decided == decided_path && at_random == random;
  }
  void start(hio_path explored, hio_path decided_path, uint64_t offset, uint64_t len, uint64_t run_bytes) {
    path = explored;
    decided = decided_path;
    start_class = size_class(len);
    next_offset = offset + len;
    bytes_left = run_bytes - len;
    if (bytes_left == 0) path = HIO_PATH_COUNT;  // one request: done
  }
  void advance(uint64_t offset, uint64_t len) {
    next_offset = offset + len;
    if (!measures(offset)) return;
    bytes_left -= len;
    if (bytes_left == 0) path = HIO_PATH_COUNT;
  }
  // The run's first `bytes` from its first request's offset are not
  // measured (unmeasured_until); its first request, counted by start(), is
  // given back if it lies in them.
  void skip_start(uint64_t first_offset, uint64_t first_len, uint64_t bytes) {
    if (!active() || bytes == 0) return;
    unmeasured_until = first_offset + bytes;
    bytes_left += first_len;
  }
  // Right after start(): the requests that start in its first `ramp`
  // bytes from its first request (`first_len` bytes at `first_offset`) are
  // not measured, and the run goes on for the bytes start() gave it after
  // them - a run of one request as well (FsCosts::ramp_bytes).
  void skip_ramp(hio_path explored, uint64_t first_offset, uint64_t first_len, uint64_t ramp) {
    if (start_class < 0 || ramp == 0) return;  // start() did not run, or nothing to skip
    path = explored;
    unmeasured_until = first_offset + ramp;
    bytes_left += first_len;
  }
  // Requests that start before `end` are not measured either.
  void skip_until(uint64_t end) {
    if (active()) unmeasured_until = std::max(unmeasured_until, end);
  }
  // Takes `ns` of the run's time; false once it has used more than it was given.
  bool spend(double ns) {
    ns_left -= ns;
    return ns_left >= 0;
  }
  // Ends the run; returns the bytes it did not use.
  uint64_t end() {
    const uint64_t left = active() ? bytes_left : 0;
    *this = ExploreRun();
    return left;
  }
};

class FsCosts {
 public:
  // `reads_at_random`: these are the costs of reads at random
  // (FsCostSet::random_reads), each request its own start on every path.
  explicit FsCosts(const LearnTuning& tuning = LearnTuning(), bool reads_at_random = false)
      : tuning_(tuning), reads_at_random_(reads_at_random) {}

  // One request of `len` bytes that took `ns` on `path`.  True when a
  // verdict moved.
  bool add_sample(hio_op op, hio_path path, uint64_t len, uint64_t ns);
  // A sync/close that took `ns`, charged to `bytes` written on `path` in
  // class `c` since the previous one.
  bool add_deferred(hio_path path, int c, uint64_t bytes, uint64_t ns);
  // A sync/close that took `ns` after `written` bytes since the previous
  // one: [kFlushBuffered], [kFlushUncached] and [kFlushDirect], per class,
  // and at kSizeClasses the bytes of requests not learned from (they take
  // their share of the time, which is charged to nobody).  No write is
  // durable before its flush: it writes back what is still dirty or in
  // flight, commits what the writes allocated and empties the device's
  // volatile cache (on the development VM the fsync after 1.2 GB written
  // direct or uncached took 0.54-0.67 s, longer than the calls, and after
  // 7.4 GB written uncached in 64 KiB calls 0.6 s).  So the flush is
  // charged to the path most of its bytes took, the stream's; the runs
  // explored off it keep what their estimates say they owe (byte for byte
  // a share of the time while they have none), and the stream's path gets
  // the rest.  Charged to buffered whenever it had bytes there, the flush
  // after an uncached stream went to its explored buffered runs, and
  // uncached was never charged one.  Charged whole to a run, the flush
  // after a stream made that path 20-84 ns/byte, a hundred times its
  // calls.  A buffered run keeps its share as its first flush, as it cannot
  // be compared without one: at most what its bytes, dirty until the
  // flush, owed, so the path is taken and then measured by its own
  // streams.  True when a verdict moved.
  bool charge_flush(const uint64_t (&written)[kFlushPaths][kSizeClasses + 1], uint64_t ns);

  const PathEstimate& estimate(hio_op op, int c, hio_path path) const { return est_[op][c][path]; }
  // Replaces an estimate (persistence, calibration); verdicts follow.
  void set_estimate(hio_op op, int c, hio_path path, const PathEstimate& e);
  // Measured well enough to be compared (writes through the cache: their
  // flush measured too).
  bool known(hio_op op, int c, hio_path path) const;
  // Nanoseconds per byte, deferred cost included; bytes per second.
  double cost(hio_op op, int c, hio_path path) const;
  double rate(hio_op op, int c, hio_path path) const;

  Verdict verdict(hio_op op, int c) const { return verdict_of(packed_[op], c); }
  PackedVerdicts packed(hio_op op) const { return packed_[op]; }

  // Exploration.  Each class earns credit with every request, in bytes
  // (explore_percent of its bytes) and in time (explore_percent of the
  // time the path in use is measured to take).  explore_target() names the
  // path to explore with a request of `len` bytes the policy sent down
  // `decided` (HIO_PATH_COUNT: none now) when both credits cover it: its
  // bytes, and the time that path is measured to take (a path measured 100
  // times slower waits 100 times longer), so exploring costs at most about
  // explore_percent of the bytes and of the time.  The other paths take
  // turns.  An exploration is a run (ExploreRun, below) of run_bytes(len):
  // the credit must cover all of it, start_run() takes its price once its
  // first request (at `offset`) went there, and end_run() gives back what
  // a run ended early did not use (its time too, unless `refund_time` is
  // false: the run ended because it had used its time up).
  // `time_granted`: the time credit was checked earlier for this run (a
  // read run that waits for a read-ahead window to drain, File::settle()),
  // and only the byte credit, which only grows until spent, is checked now.
  void account(hio_op op, uint64_t len, hio_path decided, bool dontcache_ok);
  hio_path explore_target(hio_op op, uint64_t len, hio_path decided, bool dontcache_ok,
                          bool time_granted = false) const;
  void start_run(ExploreRun* run, hio_op op, uint64_t offset, uint64_t len, hio_path explored, hio_path decided);
  void end_run(ExploreRun* run, hio_op op, bool refund_time = true);
  // Takes `len` bytes from the credit of that size's class - what it lacks
  // becomes a debt that account() repays before the class earns credit
  // again: a run's calls that do not count in its bytes
  // (ExploreRun::unmeasured_until) but went down the explored path.
  void charge_credit(hio_op op, uint64_t len);
  // A measured request of a read run took `ns` (the first one after
  // another path's pays for the switch: not measured, not counted).  A run
  // is given four times the time its bytes were priced at; one that has
  // used it up ends here (the bytes it did not use are given back, the
  // time is spent).  When the run is over (ended here, or by its last
  // request), its batch of samples is folded (finish_batch).  True when a
  // verdict moved.
  bool spend(ExploreRun* run, hio_op op, hio_path path, uint64_t ns);
  // A measured request of an explored write run through the cache (its
  // sample already added) was executed: once the run is over, its batch is
  // folded however small.  A first look is min_samples + 1 calls, which
  // never made a batch's cached_write_batch calls and cached_batch_bytes
  // at 64 KiB (4 calls, 256 KiB), so that such a path stayed unmeasured
  // and every look at it a first look: uncached 64 KiB writes, 1.86 GB/s
  // against buffered's 1.59 on the development VM, were never measured in
  // 10 GiB of them.  True when a verdict moved.
  bool end_write_run(const ExploreRun& run, hio_path path);
  // An explored write of `len` bytes on `path`, in a run that `decided`
  // sent there, took `ns`: what it took beyond its price becomes a debt of
  // its class's time credit.  A run pays its price when it starts; a
  // direct write run among writes through the cache then pays more than
  // that.  Its first call queues behind the writeback of the cached writes
  // before it (a 64 KiB call: up to 110 ms, where the next ones take 0.09),
  // which is not measured (steady_in_stream()), and one call in a few
  // hundred waits 20-90 ms for the dirty-page throttle's writeback, which
  // an average of calls one by one seldom holds (direct 64 KiB writes
  // priced at 0.6-0.9 GB/s streamed at 0.13-0.58 in a 7 GiB buffered stream
  // above the dirty limit, costing it 3-20 % of its time where the budget
  // is 3 %).  Read runs are held to their time by spend().
  void charge_overrun(hio_op op, uint64_t len, hio_path path, hio_path decided, uint64_t ns);
  // Folds what `path` has gathered of a batch of `op` (add_sample), however
  // small.  True when a verdict moved.
  bool finish_batch(hio_op op, hio_path path);
  // The bytes of a run exploring `path` that starts with a request of
  // `len` in a stream sent down `decided`: explore_run_bytes, or the
  // request if larger.  While the path has no sample in that class (its
  // price is a guess until then), at most min_samples + 1 requests, but at
  // least one batch where the path is measured in batches: a read path
  // (read_batch_bytes) is measured on a stream of it, and a few calls of a
  // direct window measure only its start; an explored write run through
  // the cache is one sample, and as a first look of 4 calls at 64 KiB (3
  // measured, the first pays for the switch) it was the noisiest sample
  // the class had.  A direct write run in a stream whose path is measured
  // clearly cheaper takes the time a run of that path would (every call is
  // a sample; at least min_samples + 1 of them): 64 KiB direct writes cost
  // 1.3-3.5 ns/byte against buffered's 0.6 with its flush, and their 16 MiB
  // runs took 60 % of the class's explored time, which left the uncached
  // path, whose verdict could still move, 6 runs in 10 GiB.  A read run is
  // also held to its price in time (spend()).
  // A read run with an unmeasured start (ramp_bytes) measures at least
  // cold_read_ramp_requests requests after it, unless it is a first look
  // (one sample at the cheapest).
  uint64_t run_bytes(hio_op op, uint64_t len, hio_path path, hio_path decided = HIO_PATH_COUNT) const;
  // The unmeasured start of a run exploring `path` with requests of `len`
  // in a read stream sent down `decided`, beyond the bytes run_bytes()
  // measures:
  //  - through the cache in a direct stream, cold_read_ramp_requests
  //    requests: the run's readahead starts cold;
  //  - direct in a stream that is not, kWindowStartRequests requests: the
  //    run's first requests start cold.  Measured whole, a direct
  //    run of one 16 MiB request read at 1.0 GB/s where the class's direct
  //    stream read at 3.2: a class that had left the direct path in a slow
  //    spell of the host never came back to it (docs/performance.md,
  //    twenty-seventh session);
  //  - else 0.
  // Its requests are paid for with the class's credit as they come
  // (charge_credit).
  uint64_t ramp_bytes(hio_op op, uint64_t len, hio_path path, hio_path decided) const;
  static constexpr uint64_t kWindowStartRequests = 2;
  const LearnTuning& tuning() const { return tuning_; }
  // Where nothing is measured both ways, whether `op` goes uncached off the
  // cache (LearnTuning::uncached_writes_first).
  bool uncached_first(hio_op op) const { return op == HIO_OP_WRITE && tuning_.uncached_writes_first; }

  // Any sample since construction or the last clear_dirty()?
  bool dirty() const { return dirty_; }
  void clear_dirty() { dirty_ = false; }

 private:
  // Whose turn it is to be explored in (op, c) next; HIO_PATH_COUNT: none.
  // A path measured clearly dearer than the one in use gets every fourth
  // turn only, while another is still worth a look.
  hio_path next_turn(hio_op op, int c, hio_path decided, bool dontcache_ok) const;
  // Both measured in (op, c), and `path` clearly dearer than `than` (the
  // test of a verdict): a turn at it is taken less often (next_turn), a
  // direct write run at it is shortened (run_bytes).
  bool measured_dearer(hio_op op, int c, hio_path path, hio_path than) const;
  // Folds one sample (a call, or a batch of cached writes) into an estimate.
  bool fold_sample(hio_op op, int c, hio_path path, uint64_t len, double ns);
  // The nanoseconds `len` bytes on `path` are measured to take.
  double time_of(hio_op op, int c, hio_path path, hio_path decided, uint64_t len) const;
  // Re-derives the verdicts of (op, c) after `sampled` more bytes of it
  // were measured; true when one moved.  confirm: a move away from a
  // measured verdict - or, for reads, from the configured path of a class
  // judged too close to call (read_judged_) - waits for move_confirm_bytes
  // (false: estimates set outright).
  bool reconsider(hio_op op, int c, uint64_t sampled = 0, bool confirm = true);
  // Whether a move of `kind` in (op, c) from path `kept` to `other` may
  // happen now (true as well when none is `wanted`); keeps the count of
  // move_wanted_bytes_, which `kept` being cheaper by the margin brings
  // down.
  bool confirmed(hio_op op, int c, int kind, bool wanted, hio_path kept, hio_path other, uint64_t sampled,
                 bool confirm);
  // How much cheaper one side must be to move a verdict, as a factor.
  double margin() const { return 1.0 + tuning_.margin_percent / 100.0; }
  // Path a costs less than b by the margin plus `sigmas` standard errors
  // of the difference (noise_sigmas if negative).  Direct against uncached
  // reads compares the one not in use, once it has min_samples paired
  // samples, with what the one in use cost at the same moments
  // (paired_cost()); before that, with `await_pairs` (a move of the
  // preference) and once the one in use follows the pace (awaits_pairs()),
  // neither is clearly cheaper.
  bool clearly_cheaper(hio_op op, int c, hio_path a, hio_path b, double sigmas = -1, bool await_pairs = false) const;
  // Off the cache, the path (op, c) uses: uncached or direct.
  hio_path off_cache_in_use(hio_op op, int c) const;
  // Reads: a and b are direct and uncached, and the one in use has a full
  // damping window of samples: the other's are paired with it as they come
  // (fold_sample()), and only paired samples compare the two.  Its
  // estimate from before (when it was the one in use, or looked at before
  // the pairing began) is of other periods.
  bool awaits_pairs(hio_op op, int c, hio_path a, hio_path b) const;
  // Reads: `path`'s cost and what `than` cost at the same moments, and
  // the squared standard error of their difference, when `path` is the
  // off-cache path not in use and has min_samples samples paired with
  // `than`, the one in use; false otherwise.  The device's pace moves
  // under both (this VM: 1.4 or 2.4 GB/s for minutes at a time): the path
  // in use is sampled all along and its estimate follows the pace, the
  // other is sampled in a few runs, each in its own period.
  bool paired_cost(hio_op op, int c, hio_path path, hio_path than, double* path_ns, double* than_ns,
                   double* variance) const;
  // The squared standard error of cost(), given the variance of one sample.
  double variance_of_cost(hio_op op, int c, hio_path path, double call_var, double deferred_var) const;
  static void fold(double* avg, double* var, uint64_t n, double sample, uint32_t damping);

  LearnTuning tuning_;
  bool reads_at_random_ = false;
  PathEstimate est_[2][kSizeClasses][HIO_PATH_COUNT];
  PackedVerdicts packed_[2] = {0, 0};
  // Exploration, per direction and size class (a class earns its own
  // credit, so large requests are explored as often as small ones):
  uint64_t credit_[2][kSizeClasses] = {};      // bytes x 100 that may explore
  uint64_t debt_[2][kSizeClasses] = {};        // bytes x 100 explored beyond it (charge_credit), repaid first
  double time_credit_[2][kSizeClasses] = {};   // ns x 100 that may be spent exploring
  uint8_t last_explored_[2][kSizeClasses] = {};  // paths take turns
  // A request of this direction could not go uncached (account()): no
  // RWF_DONTCACHE in this kernel, or not allowed.  Off the cache means direct.
  bool dontcache_unavailable_[2] = {false, false};
  uint32_t explorations_[2][kSizeClasses] = {};   // so far: every fourth turn goes to a dearer path
  // Bytes sampled in the class while a move of its measured verdict (or of
  // its measured uncached preference) was wanted, less those while the side
  // it would leave was cheaper (LearnTuning::move_confirm_bytes).
  static constexpr int kVerdictMove = 0, kPreferenceMove = 1;
  uint64_t move_wanted_bytes_[2][kSizeClasses][2] = {};
  // A read class whose verdict was derived with both sides measured, and
  // stayed unknown (too close to call): it went as configured, and a
  // verdict it forms later is a move of that path (reconsider()).  Not
  // persisted: estimates loaded are judged outright.
  bool read_judged_[kSizeClasses] = {};
  // Calls through the cache not folded yet, per direction and path (buffered, uncached).
  struct Batch {
    uint32_t calls = 0;
    uint64_t bytes = 0;
    double ns = 0;
    uint64_t class_bytes[kSizeClasses] = {};
  } pending_[2][2] = {};
  // Direct reads, per class: a direct read's cost depends on its size
  // where the calls of a stream through the cache go at its readahead's pace.
  Batch direct_reads_[kSizeClasses] = {};
  bool fold_batch(hio_op op, hio_path path, Batch* batch);
  bool dirty_ = false;
};

// Whether a request's cost says what its path costs in a stream.  Not the
// first request of a sequential stream on a path after another path's,
// when the switch itself costs it: a read through the cache (its readahead
// starts over), a direct write (it queues behind the writeback the cached
// writes before it started), an uncached write (its writeback starts
// behind theirs: after 64 KiB buffered writes, the first uncached one took
// 0.1-0.4 ms where the next took a median 22-29 us, bench/regret/
// write_switch_probe; in a first look of 4 calls that one call made the
// sample 2-5 times the path's cost).  Unless it is as large as a whole
// exploration run: then it is its own stream.
inline bool steady_in_stream(hio_op op, bool sequential, hio_path previous, hio_path path, uint64_t len,
                             uint64_t run_bytes) {
  if (!sequential || previous == path || previous == HIO_PATH_COUNT || len >= run_bytes) return true;
  return op == HIO_OP_READ ? path == HIO_PATH_DIRECT : path == HIO_PATH_BUFFERED;
}

// What is learned on one filesystem: reads at random (File::reads_at_random:
// a stream begun at random, not yet long enough for a read-ahead window)
// are measured apart from streams.  A stream's direct path is a read-ahead
// window and its buffered one the kernel's readahead; a read at random's
// are a request each.  Learned together, 9 runs of a 64 MiB read stream
// measured class 64M direct (the window against explored uncached
// streams), and the next cold torch.load read 9 of its 14 records direct,
// at 1.12 GB/s where uncached had read 1.8 (docs/performance.md,
// seventeenth session).  random_reads uses its read direction only.
struct FsCostSet {
  explicit FsCostSet(const LearnTuning& tuning = LearnTuning())
      : streams(tuning), random_reads(tuning, true) {}
  FsCosts streams;       // writes, and reads of streams
  FsCosts random_reads;  // reads at random
  FsCosts& of(bool at_random) { return at_random ? random_reads : streams; }
  bool dirty() const { return streams.dirty() || random_reads.dirty(); }
  void clear_dirty() {
    streams.clear_dirty();
    random_reads.clear_dirty();
  }
};

// One filesystem the process has used: its estimates under a lock, and the
// verdicts published for lock-free reading by every decision.
struct LearnedFs {
  dev_t dev = 0;
  std::string key;  // stable across boots (statfs f_type + f_fsid): the persisted file's name
  std::mutex mu;
  FsCostSet costs;  // under mu
  std::atomic<PackedVerdicts> verdicts[2] = {{0}, {0}};
  std::atomic<PackedVerdicts> random_read_verdicts{0};

  // The verdicts a request is decided with: of reads at random, or of streams by direction.
  PackedVerdicts verdicts_for(hio_op op, bool at_random) const {
    return (at_random ? random_read_verdicts : verdicts[op]).load(std::memory_order_relaxed);
  }
  // Under mu: publishes costs' verdicts.
  void publish() {
    for (int op = 0; op < 2; ++op)
      verdicts[op].store(costs.streams.packed(static_cast<hio_op>(op)), std::memory_order_relaxed);
    random_read_verdicts.store(costs.random_reads.packed(HIO_OP_READ), std::memory_order_relaxed);
  }
};

// The process's filesystems, created on first use and never freed (files
// keep pointers).  Thread-safe.
class PathCosts {
 public:
  PathCosts(const LearnTuning& tuning, std::string state_dir)
      : tuning_(tuning), state_dir_(std::move(state_dir)) {}

  // The entry of the filesystem holding open file `fd` (device `dev`),
  // loading what was persisted for it the first time; nullptr when the
  // table is full or memory is short (that file is then not learned from).
  LearnedFs* filesystem(dev_t dev, int fd);
  // Writes every filesystem with new samples to the state directory
  // (learned_store.h); failures are logged at debug level, never reported.
  void save_all();
  // In a forked child: the locks may have been held by threads that do not exist there.
  void after_fork();
  const LearnTuning& tuning() const { return tuning_; }
  const std::string& state_dir() const { return state_dir_; }

 private:
  static constexpr int kMaxFilesystems = 32;
  const LearnTuning tuning_;
  const std::string state_dir_;
  std::mutex mu_;  // creation of entries
  std::atomic<int> count_{0};
  LearnedFs* fs_[kMaxFilesystems] = {};
};

}  // namespace hybridio
