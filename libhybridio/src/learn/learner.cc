// learner.cc - see learner.h.
#include "learn/learner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>

#include "learn/learned_store.h"
#include "platform/byte_size.h"
#include "platform/log.h"
#include "platform/stats.h"
#include "probe/cache_probe.h"

namespace hybridio {
namespace {

constexpr uint32_t kLearnFlags = HIO_FILE_PREFER_DONTCACHE | HIO_FILE_LEARNED | HIO_FILE_EXPLORE;
constexpr uint32_t kNotLearned =
    HIO_FILE_CALLER_DIRECT | HIO_FILE_SYNC | HIO_FILE_APPEND | HIO_FILE_MAPPED | HIO_FILE_NO_DIRECT;
// A class whose path is settled earns this fraction of the exploration
// credit of one that is not.
constexpr int64_t kSettledShare = 4;
// A request that starts at most this far past the end of a run's previous
// one continues it: small calls (record headers) lie between large ones.
constexpr uint64_t kRunGapBytes = 1 << 20;

// Decisions made by a size threshold: the only ones whose cost says what
// their path costs at that size.
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

// Mean of the first `damping` samples, then an exponential average; the
// variance of a sample alike.
void fold(double* avg, double* var, uint32_t n, double x, uint32_t damping) {
  const double w = n <= damping ? 1.0 / n : 1.0 / damping;
  const double d = x - *avg;
  *avg += w * d;
  if (var) *var = (1 - w) * (*var + w * d * d);
}

hio_path other_offcache(hio_path p) { return p == HIO_PATH_DIRECT ? HIO_PATH_DONTCACHE : HIO_PATH_DIRECT; }

}  // namespace

int size_class(uint64_t len) {
  if (len < kSmallestClassBytes) return -1;
  return std::min(63 - __builtin_clzll(len / kSmallestClassBytes), kSizeClasses - 1);
}

// ---- FsModel ----

FsModel::FsModel(const LearnSettings& s, const hio_policy_config& policy) : s_(s) {
  configured_[HIO_OP_READ] = policy.read_threshold;
  configured_[HIO_OP_WRITE] = std::min(policy.write_threshold, policy.stream_threshold);
}

uint64_t FsModel::threshold(hio_op op, uint64_t configured) const {
  const int x = crossover_[op];
  if (x == kConfigured) return configured;
  return x >= kSizeClasses ? ~0ULL : class_floor(x);
}

int FsModel::start_class(hio_op op) const {
  int x = 0;
  while (x < kSizeClasses && class_floor(x) < configured_[op]) ++x;
  return x;
}

int FsModel::crossover_class(hio_op op) const {
  return crossover_[op] == kConfigured ? start_class(op) : crossover_[op];
}

double FsModel::flush_share(hio_path p) const {
  if (flush_[p].samples) return flush_[p].ns_per_byte;
  double dearest = -1;
  for (const Estimate& f : flush_)
    if (f.samples) dearest = std::max(dearest, f.ns_per_byte);
  return dearest;
}

double FsModel::cost(hio_op op, int c, hio_path path) const {
  const Estimate& e = est_[op][c][path];
  if (e.samples < s_.min_samples) return -1;
  if (op == HIO_OP_READ) return e.ns_per_byte;
  const double flush = flush_share(path);
  return flush < 0 ? -1 : e.ns_per_byte + flush;
}

bool FsModel::clearly_cheaper(hio_op op, int c, hio_path a, hio_path b) const {
  const double ca = cost(op, c, a), cb = cost(op, c, b);
  if (ca < 0 || cb < 0 || ca * (1 + s_.margin_percent / 100.0) >= cb) return false;
  const Estimate &ea = est_[op][c][a], &eb = est_[op][c][b];
  const double se2 = ea.var / std::min(ea.samples, s_.damping) + eb.var / std::min(eb.samples, s_.damping);
  return cb - ca > s_.noise_sigmas * std::sqrt(se2);
}

hio_path FsModel::offcache_at(hio_op op, int c) const {
  const hio_path p = offcache_[op];
  return cost(op, c, p) < 0 && cost(op, c, other_offcache(p)) >= 0 ? other_offcache(p) : p;
}

bool FsModel::reconsider(hio_op op, int c) {
  const int x = crossover_class(op);
  int to = x;
  if (c >= x && clearly_cheaper(op, c, HIO_PATH_BUFFERED, offcache_at(op, c))) {
    to = x + 1;  // unless a class between says the opposite
    for (int k = x; k < c; ++k)
      if (clearly_cheaper(op, k, offcache_at(op, k), HIO_PATH_BUFFERED)) to = x;
  } else if (c < x && clearly_cheaper(op, c, offcache_at(op, c), HIO_PATH_BUFFERED)) {
    to = x - 1;
    for (int k = c + 1; k < x; ++k)
      if (clearly_cheaper(op, k, HIO_PATH_BUFFERED, offcache_at(op, k))) to = x;
  }
  bool moved = false;
  if (to != x) {
    crossover_[op] = to;
    moved = true;
  }
  const hio_path other = other_offcache(offcache_[op]);
  if (clearly_cheaper(op, c, other, offcache_[op])) {
    offcache_[op] = other;
    moved = true;
  }
  return moved;
}

bool FsModel::add_sample(hio_op op, int c, hio_path path, uint64_t bytes, uint64_t ns) {
  if (c < 0 || c >= kSizeClasses || path >= HIO_PATH_COUNT || bytes == 0) return false;
  Estimate& e = est_[op][c][path];
  ++e.samples;
  fold(&e.ns_per_byte, &e.var, e.samples, static_cast<double>(ns) / static_cast<double>(bytes), s_.damping);
  dirty = true;
  return reconsider(op, c);
}

bool FsModel::charge_flush(const uint64_t written[HIO_PATH_COUNT][kSizeClasses], uint64_t ns) {
  uint64_t total[HIO_PATH_COUNT] = {};
  for (int p = 0; p < HIO_PATH_COUNT; ++p)
    for (int c = 0; c < kSizeClasses; ++c) total[p] += written[p][c];
  const int owner = static_cast<int>(std::max_element(total, total + HIO_PATH_COUNT) - total);
  if (total[owner] == 0) return false;
  double others = 0;  // what the other paths' bytes are known to owe
  for (int p = 0; p < HIO_PATH_COUNT; ++p) {
    if (p == owner || !total[p]) continue;
    const double share = flush_share(static_cast<hio_path>(p));
    if (share > 0) others += share * static_cast<double>(total[p]);
  }
  Estimate& f = flush_[owner];
  ++f.samples;
  fold(&f.ns_per_byte, &f.var, f.samples,
       std::max(0.0, static_cast<double>(ns) - others) / static_cast<double>(total[owner]), s_.damping);
  dirty = true;
  bool moved = false;
  for (int c = 0; c < kSizeClasses; ++c) {
    bool written_in_c = false;
    for (int p = 0; p < HIO_PATH_COUNT; ++p) written_in_c |= written[p][c] != 0;
    if (written_in_c) moved |= reconsider(HIO_OP_WRITE, c);
  }
  return moved;
}

bool FsModel::settled(hio_op op, int c) const {
  const int x = crossover_class(op);
  const hio_path in_use = c >= x ? offcache_[op] : HIO_PATH_BUFFERED;
  bool compared = false;
  for (hio_path p : {HIO_PATH_BUFFERED, HIO_PATH_DIRECT, HIO_PATH_DONTCACHE}) {
    if (p == in_use || est_[op][c][p].samples == 0) continue;
    if (!clearly_cheaper(op, c, in_use, p)) return false;
    compared = true;
  }
  return compared;
}

hio_path FsModel::explore_target(hio_op op, int c, hio_path in_use, bool dontcache_ok) {
  hio_path candidates[2];
  int n = 0;
  for (hio_path p : {HIO_PATH_BUFFERED, HIO_PATH_DIRECT, HIO_PATH_DONTCACHE})
    if (p != in_use && (p != HIO_PATH_DONTCACHE || dontcache_ok)) candidates[n++] = p;
  if (n == 0) return HIO_PATH_COUNT;
  if (n == 1) return candidates[0];
  const uint32_t a = est_[op][c][candidates[0]].samples, b = est_[op][c][candidates[1]].samples;
  if (std::min(a, b) < s_.min_samples && a != b) return a < b ? candidates[0] : candidates[1];
  return candidates[turn_[op][c]++ & 1];
}

void FsModel::set_side(hio_op op, int crossover, hio_path offcache) {
  crossover_[op] = crossover < kConfigured ? kConfigured : std::min(crossover, kSizeClasses);
  if (offcache == HIO_PATH_DIRECT || offcache == HIO_PATH_DONTCACHE) offcache_[op] = offcache;
}

void FsModel::settle(hio_op op) {
  int x = kSizeClasses;
  bool measured = false;
  for (int c = kSizeClasses - 1; c >= 0; --c) {
    const double b = cost(op, c, HIO_PATH_BUFFERED), o = cost(op, c, offcache_at(op, c));
    if (b < 0 || o < 0) continue;
    measured = true;
    if (o >= b) break;
    x = c;
  }
  if (measured) crossover_[op] = x;
}

// ---- LearnedFs ----

void LearnedFs::publish() {
  for (hio_op op : {HIO_OP_READ, HIO_OP_WRITE}) {
    side[op].store(static_cast<uint32_t>(model.crossover(op) + 1) | (static_cast<uint32_t>(model.offcache(op)) << 8),
                   std::memory_order_relaxed);
    uint32_t bits = 0;
    for (int c = 0; c < kSizeClasses; ++c)
      if (model.settled(op, c)) bits |= 1u << c;
    settled[op].store(bits, std::memory_order_relaxed);
  }
}

// ---- FileLearner ----

bool FileLearner::learns(const hio_policy_config& base, const hio_request& req) const {
  return fs_ && base.mode == HIO_MODE_HYBRID && !(req.file_flags & kNotLearned) && size_class(req.length) >= 0;
}

const hio_policy_config& FileLearner::steer(const hio_policy_config& base, hio_request& req, bool may_explore,
                                            hio_policy_config* scratch, bool* probed) {
  const hio_op op = req.op;
  if (op == HIO_OP_WRITE) {
    write_began_at_.store(fs_->write_events.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (fs_->writes_overlap.load(std::memory_order_relaxed)) may_explore = false;
  }
  const uint32_t side = fs_->side[op].load(std::memory_order_relaxed);
  const int crossover = static_cast<int>(side & 0xff) - 1;
  const bool dontcache_ok = (req.file_flags & HIO_FILE_DONTCACHE_OK) != 0;
  const hio_path offcache =
      static_cast<hio_path>(side >> 8) == HIO_PATH_DONTCACHE && dontcache_ok ? HIO_PATH_DONTCACHE : HIO_PATH_DIRECT;
  req.file_flags &= ~kLearnFlags;  // a cached-first rest arrives with its first part's
  *scratch = base;
  if (crossover != kConfigured) {
    const uint64_t t = crossover >= kSizeClasses ? ~0ULL : class_floor(crossover);
    if (op == HIO_OP_WRITE)
      scratch->write_threshold = scratch->stream_threshold = t;
    else
      scratch->read_threshold = t;
  }
  if (offcache == HIO_PATH_DONTCACHE) req.file_flags |= HIO_FILE_PREFER_DONTCACHE;
  // The side of this request by its size, as measured and as configured.
  auto threshold = [&](const hio_policy_config& c) {
    if (op == HIO_OP_READ) return c.read_threshold;
    return req.seq_run >= c.stream_min_run ? std::min(c.write_threshold, c.stream_threshold) : c.write_threshold;
  };
  const hio_path in_use = req.length >= threshold(*scratch) ? offcache : HIO_PATH_BUFFERED;
  const hio_path configured = req.length >= threshold(base) ? HIO_PATH_DIRECT : HIO_PATH_BUFFERED;
  if (in_use != configured) req.file_flags |= HIO_FILE_LEARNED;

  hio_path target = HIO_PATH_COUNT;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // A read stream that begins on cached pages does not measure the cache.
    if (op == HIO_OP_READ && req.seq_run == 0 && fd_ >= 0) {
      CacheState window;
      warm_stream_ = probe_cachestat(fd_, req.offset, kSmallestClassBytes, &window) && window.cached_pages > 0;
    }
    Run& run = run_[op];
    if (may_explore && run.path != HIO_PATH_COUNT && req.offset >= run.next_offset &&
        req.offset - run.next_offset <= kRunGapBytes && req.length <= run.bytes_left) {
      target = run.path;
      run.next_offset = req.offset + req.length;
      run.bytes_left -= req.length;
    } else if (may_explore) {
      run.path = HIO_PATH_COUNT;
    }
  }
  const int c = size_class(req.length);
  const uint64_t run_bytes = std::max<uint64_t>(req.length, fs_->model.settings().run_bytes);
  const int64_t price = static_cast<int64_t>(run_bytes) * 100;
  if (target == HIO_PATH_COUNT && may_explore && fs_->credit[op][c].load(std::memory_order_relaxed) >= price) {
    {
      std::unique_lock<std::mutex> lock(fs_->mu, std::try_to_lock);
      if (lock.owns_lock()) target = fs_->model.explore_target(op, c, in_use, dontcache_ok);
    }
    if (target != HIO_PATH_COUNT) {
      fs_->credit[op][c].fetch_sub(price, std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(mu_);
      run_[op] = Run{target, req.offset + req.length, run_bytes - req.length};
    }
  }
  if (target == HIO_PATH_COUNT) return *scratch;
  const uint64_t t = target == HIO_PATH_BUFFERED ? ~0ULL : 1;
  scratch->write_threshold = scratch->read_threshold = scratch->stream_threshold = t;
  req.file_flags = (req.file_flags & ~kLearnFlags) | HIO_FILE_EXPLORE;
  if (target == HIO_PATH_DONTCACHE) req.file_flags |= HIO_FILE_PREFER_DONTCACHE;
  if (op == HIO_OP_READ && target != HIO_PATH_BUFFERED) {
    // Readahead of the stream may have cached the range: the explored read
    // goes to the device as a cold read of its path would.
    req.cached_pages = 0;
    *probed = true;
  }
  return *scratch;
}

void FileLearner::observe(const hio_request& req, const hio_decision& d, uint64_t done, uint64_t ns, bool timed) {
  const hio_op op = req.op;
  const int c = size_class(req.length);
  if (c < 0) return;
  const LearnSettings& s = fs_->model.settings();
  const bool explored = d.rule == HIO_RULE_EXPLORED;
  bool overlapped = false;
  if (op == HIO_OP_WRITE) {
    // Another file's write began or ended during this one, or another
    // thread wrote this file.
    const uint64_t events = fs_->write_events.fetch_add(1, std::memory_order_relaxed);
    overlapped = req.writers > 1 || events != write_began_at_.load(std::memory_order_relaxed);
    fs_->writes_overlap.store(overlapped, std::memory_order_relaxed);
    if (overlapped) unsynced_overlapped_.store(true, std::memory_order_relaxed);
    if (done) unsynced_[d.path][c].fetch_add(done, std::memory_order_relaxed);
  }
  if (explored) {
    stats_->add(d.path == HIO_PATH_BUFFERED ? stats_->learn_explored_buffered
                : d.path == HIO_PATH_DIRECT ? stats_->learn_explored_direct
                                            : stats_->learn_explored_dontcache,
                req.length);
  } else if (by_size(d.rule) && !overlapped) {
    int64_t earned = static_cast<int64_t>(req.length * s.explore_percent);
    if (fs_->settled[op].load(std::memory_order_relaxed) & (1u << c)) earned /= kSettledShare;
    fs_->credit[op][c].fetch_add(earned, std::memory_order_relaxed);
  }
  bool measure = timed && by_size(d.rule) && done == req.length && !overlapped;
  // A partly cached read is not a sample of the path's cold cost.
  if (op == HIO_OP_READ && req.cached_pages > 0) measure = false;
  Batch finished[2];
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!explored) run_[op].path = HIO_PATH_COUNT;  // a run the policy did not follow ends
    const hio_path previous = last_path_[op];
    last_path_[op] = d.path;
    // The first request on a path after another's, in a stream, pays for
    // the switch (readahead starting over, the other path's writeback);
    // one of half a run or more is measured all the same: it is the only
    // request of its exploration run, and the switch is small beside it.
    if (req.seq_run > 0 && previous != d.path && previous != HIO_PATH_COUNT && req.length < s.run_bytes / 2)
      measure = false;
    if (op == HIO_OP_READ && d.path == HIO_PATH_BUFFERED && warm_stream_) measure = false;
    if (measure) {
      // Calls through the cache batch across sizes (readahead and
      // writeback set their pace); direct calls per size.
      Batch& b = batch_[op];
      const int key = d.path == HIO_PATH_DIRECT ? c : -1;
      if (b.bytes && (b.path != d.path || b.c != key)) {
        finished[0] = b;
        b = Batch();
      }
      b.path = d.path;
      b.c = key;
      b.bytes += done;
      b.ns += ns;
      b.class_bytes[c] += done;
      if (b.bytes >= s.run_bytes) {
        finished[1] = b;
        b = Batch();
      }
    }
  }
  if (measure) stats_->add(stats_->learn_samples);
  for (const Batch& b : finished)
    if (b.bytes) fold(op, b);
}

void FileLearner::fold(hio_op op, const Batch& b) {
  bool moved = false;
  {
    std::lock_guard<std::mutex> lock(fs_->mu);
    for (int c = 0; c < kSizeClasses; ++c)
      if (b.class_bytes[c]) moved |= fs_->model.add_sample(op, c, b.path, b.bytes, b.ns);
    fs_->publish();
  }
  if (moved) stats_->add(stats_->learn_moves);
}

void FileLearner::flush(uint64_t ns) {
  if (!fs_) return;
  uint64_t written[HIO_PATH_COUNT][kSizeClasses];
  uint64_t total = 0;
  for (int p = 0; p < HIO_PATH_COUNT; ++p)
    for (int c = 0; c < kSizeClasses; ++c)
      total += written[p][c] = unsynced_[p][c].exchange(0, std::memory_order_relaxed);
  if (unsynced_overlapped_.exchange(false, std::memory_order_relaxed) || total == 0) return;
  bool moved;
  {
    std::lock_guard<std::mutex> lock(fs_->mu);
    moved = fs_->model.charge_flush(written, ns);
    fs_->publish();
  }
  stats_->add(stats_->learn_deferred);
  if (moved) stats_->add(stats_->learn_moves);
}

std::string FileLearner::estimate_note(const hio_request& req) const {
  const int c = size_class(req.length);
  if (!fs_ || c < 0) return "";
  try {
    std::string note = format_size(class_floor(c));
    std::lock_guard<std::mutex> lock(fs_->mu);
    for (hio_path p : {HIO_PATH_BUFFERED, HIO_PATH_DIRECT, HIO_PATH_DONTCACHE}) {
      char rate[48] = "-";
      const double cost = fs_->model.cost(req.op, c, p);
      if (cost > 0) snprintf(rate, sizeof rate, "%.2fGB/s", 1 / cost);
      note += std::string(",") + hio_path_name(p) + "=" + rate;
    }
    return note;
  } catch (const std::bad_alloc&) {
    return "";
  }
}

// ---- Learner ----

LearnedFs* Learner::filesystem(dev_t dev, int fd) {
  const int n = count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (fs_[i]->dev == dev) return fs_[i];
  std::lock_guard<std::mutex> lock(mu_);
  const int m = count_.load(std::memory_order_relaxed);
  for (int i = 0; i < m; ++i)
    if (fs_[i]->dev == dev) return fs_[i];
  if (m == kMax) return nullptr;
  LearnedFs* fs = new (std::nothrow) LearnedFs(s_, policy_);
  if (!fs) return nullptr;
  fs->dev = dev;
  bool loaded = false;
  try {
    fs->key = filesystem_key(fd);
    loaded = !fs->key.empty() && !state_dir_.empty() && load_learned(state_dir_, fs->key, &fs->model);
  } catch (const std::bad_alloc&) {
    fs->key.clear();  // learned from, not persisted
  }
  // Nothing known yet: the first run of each direction and class is taken
  // at once (a run of its requests, each less than twice its floor, but
  // in the last class).
  if (!loaded)
    for (auto& direction : fs->credit)
      for (int c = 0; c < kSizeClasses; ++c)
        direction[c].store(static_cast<int64_t>(std::max(s_.run_bytes, 2 * class_floor(c))) * 100,
                           std::memory_order_relaxed);
  fs->model.dirty = false;
  fs->publish();
  fs_[m] = fs;
  count_.store(m + 1, std::memory_order_release);
  return fs;
}

void Learner::save_all() {
  const int n = count_.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i) {
    LearnedFs* fs = fs_[i];
    if (fs->key.empty() || state_dir_.empty()) continue;
    std::unique_lock<std::mutex> lock(fs->mu, std::try_to_lock);
    if (!lock.owns_lock() || !fs->model.dirty) continue;
    const FsModel snapshot = fs->model;
    fs->model.dirty = false;
    lock.unlock();
    if (int err = save_learned(state_dir_, fs->key, snapshot))
      HIO_DEBUG("learned state for %s not saved in %s: %s", fs->key.c_str(), state_dir_.c_str(), strerror(-err));
  }
}

void Learner::after_fork() {
  new (&mu_) std::mutex;
  const int n = count_.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) new (&fs_[i]->mu) std::mutex;
}

}  // namespace hybridio
