// learner.h - the size crossover and off-cache path, measured per
// filesystem from the program's own requests (docs/policy.md, "Learned
// thresholds").
//
// The model, per filesystem and direction (read, write):
//  - a crossover size: requests at or above it leave the page cache, those
//    below stay in it; it starts at the configured threshold, or where
//    `hybridio calibrate` or an earlier process left it;
//  - an off-cache path: direct, or uncached (RWF_DONTCACHE).  Writes start
//    uncached, reads direct (an uncached read leaves the kernel's readahead
//    past its end in the cache); where RWF_DONTCACHE is missing the core
//    sends uncached requests direct;
//  - per size class (powers of two, 64 KiB .. 4 MiB, and 8 MiB and larger:
//    above it a request's fixed costs are a few percent of its transfer, so
//    its cost per byte no longer depends on its size) and path,
//    the wall time per byte: the mean of the first `damping` samples, then
//    an exponential average.  A sample is a batch of consecutive measured
//    calls on one path of one file, up to `run_bytes`.  A write also owes
//    its share of the next flush (fsync, fdatasync, close), measured per
//    path, not per class: the flush's time, less the share the other paths
//    are known to owe for their bytes, is charged to the path that wrote
//    most of the bytes since the last flush, per byte it wrote.  A flush
//    writes back what the cache still holds and empties the device's
//    volatile cache; what that costs depends on the path that filled both,
//    and a few percent of explored bytes in another path's file cannot
//    measure it.  A path that has never owed a flush owes the dearest
//    flush measured: it takes over only where its calls are cheaper by
//    more than that, and then measures its own.  With no flush measured,
//    no write cost is known;
//  - writes are measured only one file at a time: a write call during
//    which a write to another file of the filesystem began or ended, or
//    another thread wrote the same file, is not a sample, and neither is
//    the flush after it.  With several writers the kernel throttles the
//    ones that dirty pages for everyone's writeback while direct writers
//    pass, so a call's own time misprices both paths.  Reads are measured
//    under any number of streams;
//  - exploration: each learned request earns `explore_percent` of its
//    bytes as credit for its size class; a class's credit of `run_bytes`
//    sends the next run of a stream starting in that class (consecutive
//    requests up to `run_bytes`, or one larger request) down another path,
//    on every stream, reads of many streams included.  Each class explores
//    a share of its own bytes, so classes of many small calls do not spend
//    what the classes holding the bytes earned.  A class whose path is
//    settled (cheaper by the margin and the noise than every other path
//    measured there) earns a quarter as much.  A filesystem with nothing
//    persisted starts with one run's credit in every class.
//    Writes earn no credit and do not explore while they overlap.
//    The first request after a switch of path is not measured unless it
//    is at least half of `run_bytes`;
//  - moves: after each sample of class c, the crossover moves one octave
//    toward c when the path on the other side is cheaper at c by
//    `margin_percent` and `noise_sigmas` standard errors, and the off-cache
//    path changes when the other one is cheaper the same way.
// The policy core stays pure: the crossover is the threshold in the
// configuration it is given, the off-cache path and the labels are request
// flags (HIO_FILE_PREFER_DONTCACHE, HIO_FILE_LEARNED, HIO_FILE_EXPLORE).
//
// FsModel is a plain value: deterministic, no clock, no I/O, not
// thread-safe.  LearnedFs guards one under a mutex; FileLearner is one
// open file's side (thread-safe); Learner is the process's table of
// filesystems.  Nothing here throws but std::bad_alloc, caught where
// memory is allocated.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "hybridio/policy.h"

namespace hybridio {

struct Stats;

constexpr int kSizeClasses = 8;  // 64K, 128K, ..., 4M, and 8M and larger
constexpr uint64_t kSmallestClassBytes = 64 << 10;
// The size class of a request of `len` bytes; -1 below 64 KiB (not learned).
int size_class(uint64_t len);
inline uint64_t class_floor(int c) { return kSmallestClassBytes << c; }

struct LearnSettings {
  uint32_t explore_percent = 3;      // share of bytes sent down another path (0-3)
  uint32_t damping = 10;             // samples an estimate averages over
  uint32_t min_samples = 3;          // per side, before a comparison counts
  uint32_t margin_percent = 10;      // how much cheaper the other side must be ...
  double noise_sigmas = 2;           // ... plus this many standard errors
  uint64_t run_bytes = 16ULL << 20;  // an exploration run, and the largest batch
};

struct Estimate {
  uint32_t samples = 0;
  double ns_per_byte = 0, var = 0;  // wall time of the calls, and a sample's variance
};

// Crossover classes: requests of class >= crossover leave the cache;
// kSizeClasses: none does.  kConfigured: the configured threshold decides.
constexpr int kConfigured = -1;

class FsModel {
 public:
  // A first move starts from the configured thresholds of `policy` (for
  // writes, the lower of the write and stream thresholds).
  FsModel(const LearnSettings& s, const hio_policy_config& policy);

  int crossover(hio_op op) const { return crossover_[op]; }
  hio_path offcache(hio_op op) const { return offcache_[op]; }
  // The threshold the core is given for op: the configured one while the
  // crossover has not moved.
  uint64_t threshold(hio_op op, uint64_t configured) const;
  // A measured batch: `bytes` of class c on `path` took `ns`.  True when
  // the crossover or the off-cache path moved.
  bool add_sample(hio_op op, int c, hio_path path, uint64_t bytes, uint64_t ns);
  // A flush took `ns` after writes of written[p][c] bytes per path p and
  // class c since the last one.  True when something moved.
  bool charge_flush(const uint64_t written[HIO_PATH_COUNT][kSizeClasses], uint64_t ns);
  // The path a run starting in class c, whose side is `in_use`, explores:
  // the alternative with the fewest samples there, ties taking turns.
  hio_path explore_target(hio_op op, int c, hio_path in_use, bool dontcache_ok);
  // ns per byte of `path` in class c (a write's flush share included);
  // < 0 when not known.
  double cost(hio_op op, int c, hio_path path) const;
  // The path class c takes is clearly cheaper than every other path with
  // samples there, and each of those has `min_samples`.
  bool settled(hio_op op, int c) const;

  const Estimate& estimate(hio_op op, int c, hio_path p) const { return est_[op][c][p]; }
  // A write's flush on `p`: flushes charged, ns per byte written.
  const Estimate& flush_estimate(hio_path p) const { return flush_[p]; }
  // Loading and seeding: estimates and sides set outright.
  void set_estimate(hio_op op, int c, hio_path p, const Estimate& e) { est_[op][c][p] = e; }
  void set_flush_estimate(hio_path p, const Estimate& e) { flush_[p] = e; }
  void set_side(hio_op op, int crossover, hio_path offcache);
  // Places the crossover of op where the estimates say, from the largest
  // class down (seeding from calibration).
  void settle(hio_op op);
  const LearnSettings& settings() const { return s_; }
  bool dirty = false;  // samples since load or save

 private:
  // `a` is cheaper than `b` in class c by the margin and the noise.
  bool clearly_cheaper(hio_op op, int c, hio_path a, hio_path b) const;
  // The off-cache path of op as measured in c: the preferred one, else the other.
  hio_path offcache_at(hio_op op, int c) const;
  int start_class(hio_op op) const;
  // ns per byte written on p that its flush costs; < 0 when not known.
  double flush_share(hio_path p) const;
  // The crossover's class: where it moved, else where the configured
  // threshold puts it.
  int crossover_class(hio_op op) const;
  bool reconsider(hio_op op, int c);

  LearnSettings s_;
  uint64_t configured_[2];
  int crossover_[2] = {kConfigured, kConfigured};
  hio_path offcache_[2] = {HIO_PATH_DIRECT, HIO_PATH_DONTCACHE};  // [read], [write]
  Estimate est_[2][kSizeClasses][HIO_PATH_COUNT];
  Estimate flush_[HIO_PATH_COUNT];
  uint8_t turn_[2][kSizeClasses] = {};
};

// One filesystem: its model under a lock, its sides published for the
// decision path, and the exploration credit of each direction and class.
struct LearnedFs {
  LearnedFs(const LearnSettings& s, const hio_policy_config& policy) : model(s, policy) {}
  dev_t dev = 0;
  std::string key;  // statfs f_type and f_fsid: the persisted file's name
  std::mutex mu;
  FsModel model;  // under mu
  std::atomic<uint32_t> side[2] = {{0}, {0}};  // crossover + 1 (0: configured) | offcache << 8
  std::atomic<uint32_t> settled[2] = {{0}, {0}};  // bit c: FsModel::settled(op, c)
  std::atomic<int64_t> credit[2][kSizeClasses] = {};  // bytes x 100 that may explore
  std::atomic<uint64_t> write_events{0};          // learned write calls begun or ended
  std::atomic<bool> writes_overlap{false};        // the last one overlapped another
  void publish();  // under mu
};

// One open file's side of the learner: its exploration runs, the path of
// its last request, its batches and the bytes written that its next flush
// is charged to.  Thread-safe; inert until attach().
class FileLearner {
 public:
  void attach(LearnedFs* fs, int fd, Stats* stats) {
    fs_ = fs;
    fd_ = fd;
    stats_ = stats;
  }
  bool attached() const { return fs_ != nullptr; }
  // Whether `req`, under `base`, is learned from and decided by measurements.
  bool learns(const hio_policy_config& base, const hio_request& req) const;
  // The configuration `req` is decided with: `base`, or *scratch holding
  // the measured threshold; sets the request's learner flags.  With
  // `may_explore`, the request may start or continue a run down another
  // path; an explored read leaves the cache unprobed (*probed set), as a
  // cold read of that path would.
  const hio_policy_config& steer(const hio_policy_config& base, hio_request& req, bool may_explore,
                                 hio_policy_config* scratch, bool* probed);
  // (req, d) moved `done` bytes in `ns`; `timed`: its time is its own (not
  // queued behind the call).
  void observe(const hio_request& req, const hio_decision& d, uint64_t done, uint64_t ns, bool timed);
  // A flush (sync or close) took `ns`.
  void flush(uint64_t ns);
  // "4M,buffered=1.95GB/s,direct=2.51GB/s,dontcache=-" for the trace.
  std::string estimate_note(const hio_request& req) const;

 private:
  struct Run {
    hio_path path = HIO_PATH_COUNT;  // HIO_PATH_COUNT: none
    uint64_t next_offset = 0, bytes_left = 0;
  };
  struct Batch {
    hio_path path = HIO_PATH_COUNT;
    int c = -1;
    uint64_t bytes = 0, ns = 0;
    uint64_t class_bytes[kSizeClasses] = {};
  };
  // Folds a finished batch into the model (takes the filesystem's lock).
  void fold(hio_op op, const Batch& b);

  LearnedFs* fs_ = nullptr;
  int fd_ = -1;
  Stats* stats_ = nullptr;
  mutable std::mutex mu_;  // the members below; never held with fs_->mu
  Run run_[2];
  Batch batch_[2];
  hio_path last_path_[2] = {HIO_PATH_COUNT, HIO_PATH_COUNT};
  bool warm_stream_ = false;  // the read stream began on cached pages
  std::atomic<uint64_t> write_began_at_{0};  // fs_->write_events after its last write began
  std::atomic<bool> unsynced_overlapped_{false};  // a write since the last flush overlapped another
  std::atomic<uint64_t> unsynced_[HIO_PATH_COUNT][kSizeClasses] = {};  // written since the last flush, per path
};

// The process's filesystems, created on first use and never freed.
class Learner {
 public:
  Learner(const LearnSettings& s, std::string state_dir, const hio_policy_config& policy)
      : s_(s), state_dir_(std::move(state_dir)), policy_(policy) {}
  // The entry of the filesystem of open file `fd` (device `dev`), loaded
  // from the state directory on first use; nullptr when full or out of memory.
  LearnedFs* filesystem(dev_t dev, int fd);
  // Writes every filesystem with new samples (learned_store.h); failures
  // are logged at debug level.
  void save_all();
  void after_fork();  // in a child: locks held by threads that are gone
  const LearnSettings& settings() const { return s_; }
  const std::string& state_dir() const { return state_dir_; }

 private:
  static constexpr int kMax = 32;
  const LearnSettings s_;
  const std::string state_dir_;
  const hio_policy_config policy_;
  std::mutex mu_;
  std::atomic<int> count_{0};
  LearnedFs* fs_[kMax] = {};
};

}  // namespace hybridio
