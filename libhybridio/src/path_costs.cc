// path_costs.cc - see path_costs.h.
#include "path_costs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "learned_store.h"
#include "log.h"

namespace hybridio {
namespace {

// A class's credit never holds more than this many of its requests (or
// the price of its next exploration, if higher): a run of requests that
// could not explore (cached reads) does not turn into a burst later.
constexpr uint64_t kCreditRequests = 17;
// A read run may take this many times the time it was priced at: its
// first request through the cache pays for the kernel's readahead starting
// over (30 ns/byte for one 1 MiB call, where a stream of them reads at
// 0.7), and a path not measured yet is priced at a guess.
constexpr double kRunTimeSlack = 4;

}  // namespace

int size_class(uint64_t len) {
  if (len < kSmallestClassBytes) return -1;
  const int c = 63 - __builtin_clzll(len / kSmallestClassBytes);
  return std::min(c, kSizeClasses - 1);
}

Verdict verdict_of(PackedVerdicts v, int c) { return static_cast<Verdict>((v >> (2 * c)) & 3); }

bool prefers_dontcache(PackedVerdicts v, int c) { return (v >> (32 + c)) & 1; }

bool measured_off_cache(PackedVerdicts v, int c) { return (v >> (48 + c)) & 1; }

bool stream_prefers_dontcache(PackedVerdicts v, int c, bool otherwise) {
  for (int k = c; k >= 0; --k)
    if (measured_off_cache(v, k)) return prefers_dontcache(v, k);
  return otherwise;
}

uint64_t learned_threshold(PackedVerdicts v, uint64_t configured) {
  bool disagrees = false;
  bool offcache_below = false;  // the nearest smaller measured class went off the cache
  int highest_buffered = -1;
  for (int c = 0; c < kSizeClasses; ++c) {
    const Verdict by_config = class_floor(c) >= configured ? Verdict::kOffcache : Verdict::kBuffered;
    const Verdict measured = verdict_of(v, c);
    if (measured != Verdict::kUnknown && measured != by_config) disagrees = true;
    if (measured != Verdict::kUnknown) offcache_below = measured == Verdict::kOffcache;
    const Verdict side = measured != Verdict::kUnknown ? measured : offcache_below ? Verdict::kOffcache : by_config;
    if (side == Verdict::kBuffered) highest_buffered = c;
  }
  if (!disagrees) return configured;
  if (highest_buffered < 0) return std::min(configured, class_floor(0));
  if (highest_buffered == kSizeClasses - 1) return ~0ULL;  // the page cache at every size measured
  return class_floor(highest_buffered + 1);
}

void FsCosts::fold(double* avg, double* var, uint64_t n, double sample, uint32_t damping) {
  // The mean of the first `damping` samples, then an exponential average
  // of weight 1/damping: quick to settle, slow to be talked out of it.
  // The variance is averaged alike (West's exponentially weighted form).
  const double weight = 1.0 / static_cast<double>(std::min<uint64_t>(n, std::max<uint32_t>(damping, 1)));
  const double delta = sample - *avg;
  *avg += weight * delta;
  *var = (1 - weight) * (*var + weight * delta * delta);
}

bool FsCosts::add_sample(hio_op op, hio_path path, uint64_t len, uint64_t ns) {
  const int c = size_class(len);
  if (c < 0 || path >= HIO_PATH_COUNT) return false;
  if (op == HIO_OP_WRITE && path == HIO_PATH_DIRECT) return fold_sample(op, c, path, len, static_cast<double>(ns));
  Batch& b = path == HIO_PATH_DIRECT ? direct_reads_[c] : pending_[op][path == HIO_PATH_DONTCACHE];
  ++b.calls;
  b.bytes += len;
  b.ns += static_cast<double>(ns);
  b.class_bytes[c] += len;
  const bool full = op == HIO_OP_WRITE ? b.calls >= tuning_.cached_write_batch && b.bytes >= tuning_.cached_batch_bytes
                                       : b.bytes >= tuning_.read_batch_bytes;
  return full && fold_batch(op, path, &b);
}

bool FsCosts::finish_batch(hio_op op, hio_path path) {
  if (path >= HIO_PATH_COUNT || (op == HIO_OP_WRITE && path == HIO_PATH_DIRECT)) return false;
  bool moved = false;
  if (op == HIO_OP_READ && path == HIO_PATH_DIRECT) {
    for (Batch& b : direct_reads_)
      if (b.bytes) moved |= fold_batch(op, path, &b);
  } else if (Batch& b = pending_[op][path == HIO_PATH_DONTCACHE]; b.bytes) {
    moved = fold_batch(op, path, &b);
  }
  return moved;
}

bool FsCosts::fold_batch(hio_op op, hio_path path, Batch* batch) {
  const Batch full = *batch;
  *batch = Batch();
  bool moved = false;
  for (int k = 0; k < kSizeClasses; ++k) {
    if (!full.class_bytes[k]) continue;
    const double share = full.ns * static_cast<double>(full.class_bytes[k]) / static_cast<double>(full.bytes);
    moved |= fold_sample(op, k, path, full.class_bytes[k], share);
  }
  return moved;
}

bool FsCosts::fold_sample(hio_op op, int c, hio_path path, uint64_t len, double ns) {
  PathEstimate& e = est_[op][c][path];
  ++e.samples;
  fold(&e.ns_per_byte, &e.ns_var, e.samples, ns / static_cast<double>(len), tuning_.damping);
  // A read off the cache, of the path not in use, is paired with the
  // estimate of the one in use, once that one has a full window of samples
  // (it follows the device's pace).  Not writes: the uncached path stalls
  // on its own writeback now and then (AStallOfThePathInUseDoesNotMoveIt),
  // and a direct write paired with such a stall would move the class.
  const hio_path in_use = off_cache_in_use(op, c);
  if (op == HIO_OP_READ && !reads_at_random_ && path != HIO_PATH_BUFFERED && path != in_use &&
      est_[op][c][in_use].samples >= std::max<uint32_t>(tuning_.damping, 1)) {
    const double own = ns / static_cast<double>(len), then = est_[op][c][in_use].ns_per_byte;
    double diff = e.paired_own_ns_per_byte - e.paired_ns_per_byte, unused_var = 0;
    ++e.paired_samples;
    fold(&e.paired_own_ns_per_byte, &unused_var, e.paired_samples, own, tuning_.damping);
    fold(&e.paired_ns_per_byte, &unused_var, e.paired_samples, then, tuning_.damping);
    fold(&diff, &e.paired_var, e.paired_samples, own - then, tuning_.damping);
  }
  dirty_ = true;
  return reconsider(op, c, len);
}

bool FsCosts::add_deferred(hio_path path, int c, uint64_t bytes, uint64_t ns) {
  if (c < 0 || c >= kSizeClasses || bytes == 0 || path >= HIO_PATH_COUNT) return false;
  PathEstimate& e = est_[HIO_OP_WRITE][c][path];
  ++e.deferred_samples;
  fold(&e.deferred_ns_per_byte, &e.deferred_var, e.deferred_samples,
       static_cast<double>(ns) / static_cast<double>(bytes), tuning_.damping);
  dirty_ = true;
  return reconsider(HIO_OP_WRITE, c);
}

bool FsCosts::charge_flush(const uint64_t (&written)[kFlushPaths][kSizeClasses + 1], uint64_t ns) {
  uint64_t total[kFlushPaths] = {};
  for (int p = 0; p < kFlushPaths; ++p)
    for (uint64_t bytes : written[p]) total[p] += bytes;
  // The path most of the bytes took (ties: buffered, then uncached).
  int charged = kFlushBuffered;
  for (int p = 1; p < kFlushPaths; ++p)
    if (total[p] > total[charged]) charged = p;
  if (total[charged] == 0) return false;
  static constexpr hio_path kPathOf[kFlushPaths] = {HIO_PATH_BUFFERED, HIO_PATH_DONTCACHE, HIO_PATH_DIRECT};
  // What the other paths' bytes keep of the flush: what their estimates
  // say they owe per class, or else a share of the time, byte for byte.
  double owed = 0;
  uint64_t sharing = total[charged];
  for (int p = 0; p < kFlushPaths; ++p) {
    if (p == charged) continue;
    for (int c = 0; c <= kSizeClasses; ++c) {
      const uint64_t bytes = written[p][c];
      const PathEstimate* e = c < kSizeClasses ? &est_[HIO_OP_WRITE][c][kPathOf[p]] : nullptr;
      if (e && e->deferred_samples) {
        owed += e->deferred_ns_per_byte * static_cast<double>(bytes);
      } else {
        sharing += bytes;
      }
    }
  }
  const double per_byte = std::max(0.0, static_cast<double>(ns) - owed) / static_cast<double>(sharing);
  bool moved = false;
  for (int c = 0; c < kSizeClasses; ++c) {
    const uint64_t bytes = written[charged][c];
    if (bytes) moved |= add_deferred(kPathOf[charged], c, bytes, static_cast<uint64_t>(per_byte * bytes));
    // A buffered run off the stream's path with no flush yet keeps its
    // share as its first one.
    const uint64_t run = written[kFlushBuffered][c];
    if (charged != kFlushBuffered && run && !est_[HIO_OP_WRITE][c][HIO_PATH_BUFFERED].deferred_samples)
      moved |= add_deferred(HIO_PATH_BUFFERED, c, run, static_cast<uint64_t>(per_byte * run));
  }
  return moved;
}

void FsCosts::set_estimate(hio_op op, int c, hio_path path, const PathEstimate& e) {
  if (c < 0 || c >= kSizeClasses || path >= HIO_PATH_COUNT) return;
  est_[op][c][path] = e;
  reconsider(op, c, 0, false);
}

bool FsCosts::known(hio_op op, int c, hio_path path) const {
  const PathEstimate& e = est_[op][c][path];
  if (e.samples < tuning_.min_samples) return false;
  // A buffered write is only half measured until a flush is.  An uncached
  // one started its own writeback before it returned, and the device
  // queue it waited on shows in its call; a flush charged to it (one with
  // no buffered bytes to write) adds what was left.
  return op == HIO_OP_READ || path != HIO_PATH_BUFFERED || e.deferred_samples > 0;
}

double FsCosts::cost(hio_op op, int c, hio_path path) const {
  const PathEstimate& e = est_[op][c][path];
  return e.ns_per_byte + (op == HIO_OP_WRITE ? e.deferred_ns_per_byte : 0.0);
}

double FsCosts::rate(hio_op op, int c, hio_path path) const {
  const double ns = cost(op, c, path);
  return ns > 0 ? 1e9 / ns : 0;
}

double FsCosts::variance_of_cost(hio_op op, int c, hio_path path, double call_var, double deferred_var) const {
  // An exponential average of weight 1/N has the variance of a mean of
  // about 2N - 1 samples.
  const uint64_t window = 2ULL * std::max<uint32_t>(tuning_.damping, 1) - 1;
  const PathEstimate& e = est_[op][c][path];
  double v = e.samples ? call_var / static_cast<double>(std::min(e.samples, window)) : 0;
  if (op == HIO_OP_WRITE && e.deferred_samples)
    v += deferred_var / static_cast<double>(std::min(e.deferred_samples, window));
  return v;
}

bool FsCosts::clearly_cheaper(hio_op op, int c, hio_path a, hio_path b, double sigmas, bool await_pairs) const {
  // The variance of one sample: a path's own once it has a full damping
  // window of samples; before that, the larger of the two paths' (a path
  // explored a few times can look steadier than it is by luck, and the
  // device under both is the same).
  const PathEstimate& x = est_[op][c][a];
  const PathEstimate& y = est_[op][c][b];
  const uint32_t window = std::max<uint32_t>(tuning_.damping, 1);
  auto call_var = [&](const PathEstimate& e) {
    return e.samples >= window ? e.ns_var : std::max(x.ns_var, y.ns_var);
  };
  auto deferred_var = [&](const PathEstimate& e) {
    return e.deferred_samples >= window ? e.deferred_var : std::max(x.deferred_var, y.deferred_var);
  };
  if (sigmas < 0) sigmas = tuning_.noise_sigmas;
  double cost_a, cost_b, variance;
  if (!paired_cost(op, c, a, b, &cost_a, &cost_b, &variance) && !paired_cost(op, c, b, a, &cost_b, &cost_a, &variance)) {
    if (await_pairs && awaits_pairs(op, c, a, b)) return false;
    cost_a = cost(op, c, a);
    cost_b = cost(op, c, b);
    variance = variance_of_cost(op, c, a, call_var(x), deferred_var(x)) +
               variance_of_cost(op, c, b, call_var(y), deferred_var(y));
  }
  return cost_a * margin() + sigmas * std::sqrt(variance) < cost_b;
}

hio_path FsCosts::off_cache_in_use(hio_op op, int c) const {
  // As File::steer(): a read stream goes as its class prefers.
  const bool uncached = op == HIO_OP_WRITE ? stream_prefers_dontcache(packed_[op], c, uncached_first(op))
                                           : prefers_dontcache(packed_[op], c);
  return uncached ? HIO_PATH_DONTCACHE : HIO_PATH_DIRECT;
}

bool FsCosts::awaits_pairs(hio_op op, int c, hio_path a, hio_path b) const {
  if (op != HIO_OP_READ || reads_at_random_ || a == HIO_PATH_BUFFERED || b == HIO_PATH_BUFFERED || a == b)
    return false;
  const hio_path in_use = off_cache_in_use(op, c);
  return (a == in_use || b == in_use) && est_[op][c][in_use].samples >= std::max<uint32_t>(tuning_.damping, 1);
}

bool FsCosts::paired_cost(hio_op op, int c, hio_path path, hio_path than, double* path_ns, double* than_ns,
                          double* variance) const {
  if (op != HIO_OP_READ || path == HIO_PATH_BUFFERED || than == HIO_PATH_BUFFERED || path == than ||
      than != off_cache_in_use(op, c))
    return false;
  const PathEstimate& e = est_[op][c][path];
  if (e.paired_samples < tuning_.min_samples) return false;
  *path_ns = e.paired_own_ns_per_byte;
  *than_ns = e.paired_ns_per_byte;
  // As variance_of_cost(): an exponential average of weight 1/N has the
  // variance of a mean of about 2N - 1 samples.
  const uint64_t window = 2ULL * std::max<uint32_t>(tuning_.damping, 1) - 1;
  *variance = e.paired_var / static_cast<double>(std::min(e.paired_samples, window));
  return true;
}

bool FsCosts::reconsider(hio_op op, int c, uint64_t sampled, bool confirm) {
  const PackedVerdicts before = packed_[op];
  const bool first = uncached_first(op);
  // Until the class is measured both ways, it goes as its stream does.
  bool uncached = stream_prefers_dontcache(before, c, first);
  Verdict v = verdict_of(before, c);
  // Off the cache: the path in use until the other is measured and clearly cheaper.
  const bool both_measured = known(op, c, HIO_PATH_DIRECT) && known(op, c, HIO_PATH_DONTCACHE);
  if (both_measured) {
    // A move waits for paired samples, unless the estimates were set
    // outright (loaded, seeded): those are compared as they are.
    if (!uncached && clearly_cheaper(op, c, HIO_PATH_DONTCACHE, HIO_PATH_DIRECT, -1, confirm)) uncached = true;
    if (uncached && clearly_cheaper(op, c, HIO_PATH_DIRECT, HIO_PATH_DONTCACHE, -1, confirm)) uncached = false;
  }
  if ((before >> (48 + c)) & 1) {  // a measured preference: a move of it waits
    const bool was_uncached = prefers_dontcache(before, c);
    const hio_path in_use = was_uncached ? HIO_PATH_DONTCACHE : HIO_PATH_DIRECT;
    const hio_path other = was_uncached ? HIO_PATH_DIRECT : HIO_PATH_DONTCACHE;
    if (!confirmed(op, c, kPreferenceMove, uncached != was_uncached, in_use, other, sampled, confirm))
      uncached = was_uncached;
  }
  // A write class that would go uncached off the cache is judged against
  // the uncached path once it is measured, not against direct before: its
  // direct writes, measured call by call, are known long before the
  // uncached runs are (64 KiB writes: 1.4-3.5 ns/byte direct, 0.5
  // uncached, 0.7 buffered with its flush), and a first verdict formed
  // then kept the class in the cache for good.
  const bool awaiting_uncached =
      op == HIO_OP_WRITE && uncached && !known(op, c, HIO_PATH_DONTCACHE) && !dontcache_unavailable_[op];
  const hio_path off = uncached && known(op, c, HIO_PATH_DONTCACHE) ? HIO_PATH_DONTCACHE : HIO_PATH_DIRECT;
  if (!awaiting_uncached && known(op, c, HIO_PATH_BUFFERED) && known(op, c, off)) {
    const double leave_sigmas =
        op == HIO_OP_WRITE && v == Verdict::kUnknown ? tuning_.first_write_verdict_sigmas : tuning_.noise_sigmas;
    if (v != Verdict::kOffcache && clearly_cheaper(op, c, off, HIO_PATH_BUFFERED, leave_sigmas))
      v = Verdict::kOffcache;
    else if (v != Verdict::kBuffered && clearly_cheaper(op, c, HIO_PATH_BUFFERED, off))
      v = Verdict::kBuffered;
  }
  const Verdict was = verdict_of(before, c);
  if (was != Verdict::kUnknown) {  // a measured verdict: a move of it waits
    const hio_path kept = was == Verdict::kBuffered ? HIO_PATH_BUFFERED : off;
    const hio_path other = was == Verdict::kBuffered ? off : HIO_PATH_BUFFERED;
    if (!confirmed(op, c, kVerdictMove, v != was, kept, other, sampled, confirm)) v = was;
  } else if (op == HIO_OP_READ && read_judged_[c] && v != Verdict::kUnknown) {
    // Measured both ways and too close to call until now, the class went as
    // configured, and a verdict takes it off that path: it waits as a move
    // does.  A slow spell of the path in use otherwise decided against an
    // estimate of the other from another period: 16 MiB reads of a 7 GiB
    // file, direct at 3.35 GB/s and buffered at 3.05 (too close), went
    // through the cache for good after some 200 MiB of direct reads at
    // 1 GB/s (docs/performance.md, twenty-seventh session).
    const hio_path other = v == Verdict::kBuffered ? HIO_PATH_BUFFERED : off;
    const hio_path kept = v == Verdict::kBuffered ? off : HIO_PATH_BUFFERED;
    if (!confirmed(op, c, kVerdictMove, true, kept, other, sampled, confirm)) v = was;
  }
  if (op == HIO_OP_READ && known(op, c, HIO_PATH_BUFFERED) && known(op, c, off)) read_judged_[c] = true;
  PackedVerdicts after = before & ~((3ULL << (2 * c)) | (1ULL << (32 + c)) | (1ULL << (48 + c)));
  after |= static_cast<uint64_t>(v) << (2 * c);
  if (uncached) after |= 1ULL << (32 + c);
  if (both_measured) after |= 1ULL << (48 + c);
  packed_[op] = after;
  // A move is a changed decision: class c's verdict, or the uncached
  // preference of c or of a larger class that follows it - not a measured
  // bit alone.  Only class c's bits changed, so smaller classes cannot move.
  if (was != v) return true;
  for (int k = c; k < kSizeClasses; ++k)
    if (stream_prefers_dontcache(before, k, first) != stream_prefers_dontcache(after, k, first)) return true;
  return false;
}

bool FsCosts::confirmed(hio_op op, int c, int kind, bool wanted, hio_path kept, hio_path other, uint64_t sampled,
                        bool confirm) {
  // A move away from what was measured waits until it has been wanted
  // (the other side clearly cheaper) for move_confirm_bytes of samples
  // more than the side kept was cheaper by the margin: a stall of the path
  // in use passes, and a move wanted now and then through noise, with
  // nothing against it, still comes.  Estimates set outright (loaded,
  // seeded) are not a change over time.
  uint64_t& bytes = move_wanted_bytes_[op][c][kind];
  if (!confirm) {
    bytes = 0;
    return true;
  }
  if (!wanted) {
    if (clearly_cheaper(op, c, kept, other, 0)) bytes -= std::min(bytes, sampled);
    return true;
  }
  if (bytes + sampled < tuning_.move_confirm_bytes) {
    bytes += std::max<uint64_t>(sampled, 1);  // 1: wanted, with nothing sampled yet
    return false;
  }
  bytes = 0;
  return true;
}

bool FsCosts::measured_dearer(hio_op op, int c, hio_path path, hio_path than) const {
  return known(op, c, path) && known(op, c, than) && clearly_cheaper(op, c, than, path);
}

hio_path FsCosts::next_turn(hio_op op, int c, hio_path decided, bool dontcache_ok) const {
  hio_path first = HIO_PATH_COUNT;
  for (int step = 1; step <= HIO_PATH_COUNT; ++step) {
    const hio_path path = static_cast<hio_path>((last_explored_[op][c] + step) % HIO_PATH_COUNT);
    if (path == decided || (path == HIO_PATH_DONTCACHE && !dontcache_ok)) continue;
    if (first == HIO_PATH_COUNT) first = path;
    // The budget goes where a verdict could still move: a path measured
    // clearly dearer than the one in use is looked at every fourth turn.
    const bool dearer = measured_dearer(op, c, path, decided);
    if (!dearer || explorations_[op][c] % 4 == 3) return path;
  }
  return first;
}

double FsCosts::time_of(hio_op op, int c, hio_path path, hio_path decided, uint64_t len) const {
  // Measured ns per byte; a path not measured yet is taken to cost what
  // the one in use does (and with neither measured, 1 ns per byte: bytes).
  // A read path with fewer than min_samples samples too: its first look is
  // a batch of 4 MiB that may hold a read-ahead window's start (the ring,
  // the staging, the first blocks: 1.2-40 ns/byte for 64 KiB direct reads
  // that stream at 0.4), and priced at that, its next run waited for more
  // time credit than a process ever earned, for good (the estimate is
  // persisted), and the other paths' turns with it.  A read run is held to
  // its time (spend()), so a path that really is that dear costs at most
  // kRunTimeSlack times the price.
  const uint64_t samples = est_[op][c][path].samples;
  const bool priced = op == HIO_OP_READ ? samples >= tuning_.min_samples : samples > 0;
  const hio_path known_path = priced ? path : decided;
  const double ns = est_[op][c][known_path].samples ? cost(op, c, known_path) : 1.0;
  return static_cast<double>(len) * std::max(ns, 1e-3);
}

uint64_t FsCosts::run_bytes(hio_op op, uint64_t len, hio_path path, hio_path decided) const {
  uint64_t run = std::max(len, tuning_.explore_run_bytes);
  const int c = size_class(len);
  if (c < 0 || path >= HIO_PATH_COUNT) return run;
  const uint64_t first_look = (tuning_.min_samples + uint64_t{1}) * len;
  if (!est_[op][c][path].samples) {
    // Direct writes are measured call by call; reads, and writes through
    // the cache, in batches (one per run for an explored write).
    const uint64_t batch = op == HIO_OP_READ            ? tuning_.read_batch_bytes
                           : path == HIO_PATH_DIRECT ? 0
                                                     : tuning_.cached_batch_bytes;
    return std::min<uint64_t>(run, std::max(first_look, batch));
  }
  if (op == HIO_OP_WRITE && path == HIO_PATH_DIRECT && decided < HIO_PATH_COUNT && decided != path &&
      measured_dearer(op, c, path, decided)) {
    const double share = cost(op, c, decided) / cost(op, c, path);
    const uint64_t timed = static_cast<uint64_t>(static_cast<double>(run) * share) / len * len;
    run = std::min(run, std::max(first_look, timed));
  }
  // What a run skips of its start, it measures after it at least (a first
  // look excepted: it is one sample, the cheapest the class can take).
  if (ramp_bytes(op, len, path, decided))
    run = std::max<uint64_t>(run, tuning_.cold_read_ramp_requests * len);
  return run;
}

uint64_t FsCosts::ramp_bytes(hio_op op, uint64_t len, hio_path path, hio_path decided) const {
  if (op != HIO_OP_READ || reads_at_random_ || path >= HIO_PATH_COUNT || decided >= HIO_PATH_COUNT ||
      path == decided || size_class(len) < 0)
    return 0;
  if (decided == HIO_PATH_DIRECT) return std::max<uint64_t>(tuning_.cold_read_ramp_requests, 1) * len;
  return path == HIO_PATH_DIRECT ? kWindowStartRequests * len : 0;
}

void FsCosts::account(hio_op op, uint64_t len, hio_path decided, bool dontcache_ok) {
  const int c = size_class(len);
  if (c < 0) return;
  if (!dontcache_ok) dontcache_unavailable_[op] = true;
  const hio_path next = next_turn(op, c, decided, dontcache_ok);
  const uint64_t run = run_bytes(op, len, next, decided);
  uint64_t earned = len * tuning_.explore_percent;
  const uint64_t repaid = std::min(debt_[op][c], earned);  // charge_credit() took more than there was
  debt_[op][c] -= repaid;
  earned -= repaid;
  credit_[op][c] = std::min(std::max(len * kCreditRequests, run) * 100, credit_[op][c] + earned);
  const double in_use = time_of(op, c, decided, decided, len);
  const double price = next == HIO_PATH_COUNT ? 0 : time_of(op, c, next, decided, run) * 100;
  time_credit_[op][c] = std::min(std::max(in_use * 100 * kCreditRequests, price),
                                 time_credit_[op][c] + in_use * tuning_.explore_percent);
}

hio_path FsCosts::explore_target(hio_op op, uint64_t len, hio_path decided, bool dontcache_ok,
                                 bool time_granted) const {
  const int c = size_class(len);
  if (c < 0 || tuning_.explore_percent == 0) return HIO_PATH_COUNT;
  const hio_path next = next_turn(op, c, decided, dontcache_ok);
  const uint64_t run = run_bytes(op, len, next, decided);
  if (next == HIO_PATH_COUNT || credit_[op][c] < run * 100) return HIO_PATH_COUNT;
  if (!time_granted && time_credit_[op][c] < time_of(op, c, next, decided, run) * 100) return HIO_PATH_COUNT;
  return next;
}

void FsCosts::start_run(ExploreRun* run, hio_op op, uint64_t offset, uint64_t len, hio_path explored,
                        hio_path decided) {
  const int c = size_class(len);
  if (c < 0) return;
  const uint64_t bytes = run_bytes(op, len, explored, decided);
  credit_[op][c] -= std::min(credit_[op][c], bytes * 100);
  // A debt (charge_overrun) stays one: a run whose time was granted earlier may start over it.
  const double price = time_of(op, c, explored, decided, bytes) * 100;
  time_credit_[op][c] = std::max(std::min(0.0, time_credit_[op][c]), time_credit_[op][c] - price);
  last_explored_[op][c] = static_cast<uint8_t>(explored);
  ++explorations_[op][c];
  run->start(explored, decided, offset, len, bytes);
  run->ns_left = kRunTimeSlack * time_of(op, c, explored, decided, bytes);
}

void FsCosts::charge_credit(hio_op op, uint64_t len) {
  const int c = size_class(len);
  if (c < 0) return;
  const uint64_t taken = std::min(credit_[op][c], len * 100);
  credit_[op][c] -= taken;
  debt_[op][c] += len * 100 - taken;
}

bool FsCosts::spend(ExploreRun* run, hio_op op, hio_path path, uint64_t ns) {
  if (run->active() && run->path == path && !run->spend(static_cast<double>(ns))) end_run(run, op, false);
  return run->active() ? false : finish_batch(op, path);
}

bool FsCosts::end_write_run(const ExploreRun& run, hio_path path) {
  return path != HIO_PATH_DIRECT && !run.active() && finish_batch(HIO_OP_WRITE, path);
}

void FsCosts::charge_overrun(hio_op op, uint64_t len, hio_path path, hio_path decided, uint64_t ns) {
  const int c = size_class(len);
  if (c < 0 || path >= HIO_PATH_COUNT) return;
  const double over = static_cast<double>(ns) - time_of(op, c, path, decided < HIO_PATH_COUNT ? decided : path, len);
  if (over > 0) time_credit_[op][c] -= over * 100;
}

void FsCosts::end_run(ExploreRun* run, hio_op op, bool refund_time) {
  const hio_path explored = run->path, decided = run->decided;
  const int c = run->start_class;
  const uint64_t left = run->end();
  if (c < 0 || c >= kSizeClasses || left == 0) return;
  credit_[op][c] += left * 100;
  if (refund_time) time_credit_[op][c] += time_of(op, c, explored, decided, left) * 100;
}

LearnedFs* PathCosts::filesystem(dev_t dev, int fd) {
  const int n = count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (fs_[i]->dev == dev) return fs_[i];
  std::lock_guard<std::mutex> lock(mu_);
  const int m = count_.load(std::memory_order_relaxed);
  for (int i = 0; i < m; ++i)
    if (fs_[i]->dev == dev) return fs_[i];
  if (m == kMaxFilesystems) return nullptr;
  LearnedFs* fs = new (std::nothrow) LearnedFs;
  if (!fs) return nullptr;
  try {
    fs->dev = dev;
    fs->costs = FsCostSet(tuning_);
    fs->key = filesystem_key(fd);
    if (!fs->key.empty() && !state_dir_.empty()) load_learned(state_dir_, fs->key, &fs->costs);
  } catch (const std::bad_alloc&) {
    fs->key.clear();  // learned from, not persisted
  }
  fs->costs.clear_dirty();
  fs->publish();
  fs_[m] = fs;
  count_.store(m + 1, std::memory_order_release);
  return fs;
}

void PathCosts::save_all() {
  const int n = count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    LearnedFs* fs = fs_[i];
    if (fs->key.empty() || state_dir_.empty()) continue;
    std::unique_lock<std::mutex> lock(fs->mu, std::try_to_lock);
    if (!lock.owns_lock() || !fs->costs.dirty()) continue;
    const FsCostSet snapshot = fs->costs;
    fs->costs.clear_dirty();
    lock.unlock();
    if (int err = save_learned(state_dir_, fs->key, snapshot))
      HIO_DEBUG("learned path costs for %s not saved in %s: %s", fs->key.c_str(), state_dir_.c_str(), strerror(-err));
  }
}

void PathCosts::after_fork() {
  // Only this thread exists in the child: no lock can be legitimately held.
  new (&mu_) std::mutex;
  const int n = count_.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) new (&fs_[i]->mu) std::mutex;
}

}  // namespace hybridio
