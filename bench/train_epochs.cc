// train_epochs.cc - see train_epochs.h.
#include "train_epochs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

#include "clock.h"

namespace hybridio::bench {
namespace {

constexpr long kCachestatSyscall = 451;  // Linux 6.5+, every architecture

struct CachestatRange {
  uint64_t off, len;
};
struct Cachestat {
  uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void sleep_us(unsigned us) {
  timespec ts{0, static_cast<long>(us) * 1000};
  nanosleep(&ts, nullptr);
}

// hio_stats is a struct of uint64_t counters only (an ABI kept by appending).
static_assert(sizeof(hio_stats) % sizeof(uint64_t) == 0, "hio_stats holds uint64_t counters");
void stats_add(hio_stats* to, const hio_stats& a, const hio_stats& b, int sign) {
  uint64_t w[sizeof(hio_stats) / 8], x[sizeof(hio_stats) / 8], y[sizeof(hio_stats) / 8];
  memcpy(x, &a, sizeof a);
  memcpy(y, &b, sizeof b);
  for (size_t i = 0; i < sizeof w / 8; ++i) w[i] = sign > 0 ? x[i] + y[i] : x[i] - y[i];
  memcpy(to, w, sizeof w);
}

// One reader's figures for one epoch, in shared memory.
struct ReaderSlot {
  LatencyHistogram latency;
  uint64_t bytes, samples, verified;
  double cached_bytes;
  double seconds;
  hio_stats stats;  // processes: the reader's own counters over the epoch
  char error[512];
};

// What the accelerator and the readers share during an epoch.
struct Shared {
  std::atomic<uint64_t> consumed;  // batches the accelerator has taken
  std::atomic<uint32_t> failed;
  std::atomic<uint64_t> progress;  // bytes read, for the progress line
};

// The epoch's shared memory: the header, a slot per reader, a ready flag per batch.
class EpochMemory {
 public:
  EpochMemory(unsigned readers, uint64_t batches) : readers_(readers), batches_(batches) {
    len_ = sizeof(Shared) + readers * sizeof(ReaderSlot) + batches * sizeof(std::atomic<uint32_t>) + 64;
    void* p = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    base_ = static_cast<char*>(p);
    new (base_) Shared{};
    for (unsigned r = 0; r < readers; ++r) new (slot(r)) ReaderSlot{};
    for (uint64_t b = 0; b < batches; ++b) new (&ready(b)) std::atomic<uint32_t>(0);
  }
  ~EpochMemory() {
    if (base_) munmap(base_, len_);
  }
  bool ok() const { return base_ != nullptr; }
  Shared& shared() const { return *reinterpret_cast<Shared*>(base_); }
  ReaderSlot* slot(unsigned r) const { return reinterpret_cast<ReaderSlot*>(base_ + sizeof(Shared)) + r; }
  std::atomic<uint32_t>& ready(uint64_t b) const {
    return reinterpret_cast<std::atomic<uint32_t>*>(base_ + sizeof(Shared) +
                                                    readers_ * sizeof(ReaderSlot))[b];
  }

 private:
  char* base_ = nullptr;
  size_t len_ = 0;
  unsigned readers_;
  uint64_t batches_;
};

// Page-cache residency of a file range, in bytes, by the method chosen.
class Residency {
 public:
  Residency(const TrainDataset& d, HitMethod m)
      : method_(m), page_(static_cast<uint64_t>(sysconf(_SC_PAGESIZE))) {
    for (const std::string& p : d.paths) {
      fds_.push_back(open(p.c_str(), O_RDONLY | O_CLOEXEC));
      void* map = MAP_FAILED;
      if (m == HitMethod::kMincore && fds_.back() >= 0)
        map = mmap(nullptr, d.file_bytes(), PROT_READ, MAP_SHARED, fds_.back(), 0);
      maps_.push_back(map == MAP_FAILED ? nullptr : static_cast<unsigned char*>(map));
    }
    len_ = d.file_bytes();
  }
  ~Residency() {
    for (size_t i = 0; i < fds_.size(); ++i) {
      if (maps_[i]) munmap(maps_[i], len_);
      if (fds_[i] >= 0) close(fds_[i]);
    }
  }
  // Bytes of [off, off + len) of file f in the page cache (pages in it
  // cached x their share of the range).  Thread-safe.
  double cached(size_t f, uint64_t off, uint64_t len) const {
    const uint64_t first = off / page_, last = (off + len + page_ - 1) / page_;
    const uint64_t pages = last - first;
    if (!pages || fds_[f] < 0) return 0;
    uint64_t in = 0;
    if (method_ == HitMethod::kCachestat) {
      CachestatRange range{first * page_, pages * page_};
      Cachestat cs{};
      if (syscall(kCachestatSyscall, fds_[f], &range, &cs, 0) != 0) return 0;
      in = cs.nr_cache;
    } else {
      if (!maps_[f]) return 0;
      std::vector<unsigned char> v(pages);
      if (mincore(maps_[f] + first * page_, pages * page_, v.data()) != 0) return 0;
      for (unsigned char c : v) in += c & 1;
    }
    return static_cast<double>(len) * std::min<uint64_t>(in, pages) / pages;
  }

 private:
  HitMethod method_;
  uint64_t page_, len_ = 0;
  std::vector<int> fds_;
  std::vector<unsigned char*> maps_;
};

struct EpochInputs {
  const TrainDataset* d;
  const EpochPlan* plan;
  const std::vector<uint32_t>* order;
  const std::vector<std::unique_ptr<PatternBuffer>>* checkers;
  const Residency* residency;
  const EpochMemory* mem;
  uint64_t batches;
};

// One reader's epoch: its batches (r, r + N, ...) in order, each sample
// read whole with one call, checked, counted; then its batch is ready.
void read_batches(const EpochInputs& in, unsigned r) {
  const TrainDataset& d = *in.d;
  const EpochPlan& p = *in.plan;
  ReaderSlot& slot = *in.mem->slot(r);
  Shared& sh = in.mem->shared();
  char* buf = p.buffers->data(r);
  std::vector<void*> handles(d.paths.size(), nullptr);
  const double t0 = now_s();
  auto fail = [&](const std::string& why) {
    snprintf(slot.error, sizeof slot.error, "%s", why.c_str());
    sh.failed.store(1);
  };
  for (uint64_t b = r; b < in.batches && !sh.failed.load(std::memory_order_relaxed); b += p.readers) {
    while (b >= sh.consumed.load(std::memory_order_acquire) + p.prefetch &&
           !sh.failed.load(std::memory_order_relaxed))
      sleep_us(50);
    const uint64_t first = b * p.batch, end = std::min<uint64_t>(first + p.batch, in.order->size());
    for (uint64_t s = first; s < end && !sh.failed.load(std::memory_order_relaxed); ++s) {
      const uint32_t id = (*in.order)[s];
      const size_t f = id / d.samples_per_file;
      const uint64_t off = (id % d.samples_per_file) * d.stride;
      if (!handles[f]) {
        const int err = p.engine->open(d.paths[f].c_str(), O_RDONLY, &handles[f]);
        if (err) {
          handles[f] = nullptr;
          fail("cannot open " + d.paths[f] + ": " + strerror(-err));
          break;
        }
      }
      slot.cached_bytes += in.residency->cached(f, off, d.sample_bytes);
      const uint64_t a = now_ns();
      const ssize_t n = p.engine->pread(handles[f], buf, d.sample_bytes, static_cast<off_t>(off));
      slot.latency.add(now_ns() - a);
      if (n != static_cast<ssize_t>(d.sample_bytes)) {
        char why[512];
        snprintf(why, sizeof why, "read of %" PRIu64 " bytes at %" PRIu64 " in %s %s", d.sample_bytes, off,
                 d.paths[f].c_str(), n < 0 ? strerror(static_cast<int>(-n)) : "came back short");
        fail(why);
        break;
      }
      if (p.verify) {
        std::string why;
        if (!(*in.checkers)[f]->check(buf, off, d.sample_bytes, &why)) {
          fail("verify: " + d.paths[f] + ": " + why);
          break;
        }
        slot.verified += d.sample_bytes;
      }
      slot.bytes += d.sample_bytes;
      ++slot.samples;
      sh.progress.fetch_add(d.sample_bytes, std::memory_order_relaxed);
    }
    in.mem->ready(b).store(1, std::memory_order_release);
  }
  for (size_t f = 0; f < handles.size(); ++f)
    if (handles[f]) {
      const int e = p.engine->close(handles[f]);
      if (e && !sh.failed.load()) fail("close of " + d.paths[f] + ": " + strerror(-e));
    }
  slot.seconds = now_s() - t0;
}

}  // namespace

std::string write_train_dataset(const TrainDataset& d) {
  const uint64_t chunk = std::min<uint64_t>(d.file_bytes(), 8ULL << 20);
  PatternBuffer buf(chunk, 0, d.key(0));
  if (!buf.ok()) return "cannot allocate a write buffer";
  for (size_t f = 0; f < d.paths.size(); ++f) {
    buf.set_key(d.key(f));
    const int fd = open(d.paths[f].c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return "cannot create " + d.paths[f] + ": " + strerror(errno);
    for (uint64_t at = 0; at < d.file_bytes(); at += chunk) {
      const uint64_t n = std::min(chunk, d.file_bytes() - at);
      buf.stamp_for(at, n);
      if (pwrite(fd, buf.data(), n, static_cast<off_t>(at)) != static_cast<ssize_t>(n)) {
        const int e = errno ? errno : ENOSPC;
        close(fd);
        return "cannot write " + d.paths[f] + ": " + strerror(e);
      }
    }
    if (fsync(fd) != 0 || close(fd) != 0) return "cannot write " + d.paths[f] + ": " + strerror(errno);
  }
  return "";
}

std::vector<uint32_t> epoch_order(uint64_t samples, uint64_t seed, unsigned epoch) {
  std::vector<uint32_t> order(samples);
  for (uint64_t i = 0; i < samples; ++i) order[i] = static_cast<uint32_t>(i);
  uint64_t state = seed * 0x100000001b3ULL ^ (static_cast<uint64_t>(epoch) + 1) * 0xd6e8feb86659fd93ULL;
  for (uint64_t i = samples; i > 1; --i) {
    const uint64_t j = splitmix64(&state) % i;  // modulo bias under 2^-40 for any real dataset
    std::swap(order[i - 1], order[j]);
  }
  return order;
}

const char* hit_method_name(HitMethod m) {
  return m == HitMethod::kCachestat ? "cachestat" : "mincore";
}

HitMethod probe_hit_method(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return HitMethod::kMincore;
  CachestatRange range{0, 4096};
  Cachestat cs{};
  const bool ok = syscall(kCachestatSyscall, fd, &range, &cs, 0) == 0;
  close(fd);
  return ok ? HitMethod::kCachestat : HitMethod::kMincore;
}

ReaderBuffers::ReaderBuffers(unsigned readers, uint64_t bytes_each) {
  each_ = (bytes_each + 4095) / 4096 * 4096;
  len_ = each_ * readers;
  void* p = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  base_ = static_cast<char*>(p);
  memset(base_, 0, len_);  // touched once here, not inside a timed epoch
}

ReaderBuffers::~ReaderBuffers() {
  if (base_) munmap(base_, len_);
}

RunOutcome run_epochs(const TrainDataset& d, const EpochPlan& p, const RunConfig& cfg,
                      std::vector<EpochResult>* epochs) {
  RunOutcome out;
  epochs->clear();
  std::vector<std::unique_ptr<PatternBuffer>> checkers;  // const check() only: shared by every reader
  for (size_t f = 0; f < d.paths.size(); ++f)
    checkers.push_back(std::make_unique<PatternBuffer>(64, 0, d.key(f)));
  const Residency residency(d, p.hit);
  const uint64_t batches = (d.samples() + p.batch - 1) / p.batch;
  const int64_t cached_before = page_cache_bytes();
  const MemoryEvents memory_before = memory_events_now(cfg.cgroup);
  double u0, s0, u1, s1;
  cpu_times(&u0, &s0, true);  // reader processes too, once reaped
  hio_stats_reset();
  for (unsigned e = 0; e < p.epochs && out.error.empty(); ++e) {
    const std::vector<uint32_t> order = epoch_order(d.samples(), p.seed, e);
    EpochMemory mem(p.readers, batches);
    if (!mem.ok()) {
      out.error = std::string("cannot map the epoch's shared memory: ") + strerror(errno);
      break;
    }
    const EpochInputs in{&d, &p, &order, &checkers, &residency, &mem, batches};
    Shared& sh = mem.shared();
    hio_stats lib_before;
    hio_stats_get(&lib_before);
    EpochResult er;
    const double t0 = now_s();
    std::vector<std::thread> threads;
    std::vector<pid_t> children;
    for (unsigned r = 0; r < p.readers; ++r) {
      if (!p.processes) {
        threads.emplace_back(read_batches, std::cref(in), r);
        continue;
      }
      const pid_t pid = fork();
      if (pid == 0) {
        hio_stats before, after;
        hio_stats_get(&before);
        read_batches(in, r);
        hio_stats_get(&after);
        stats_add(&mem.slot(r)->stats, after, before, -1);
        _exit(0);
      }
      if (pid < 0) {
        snprintf(mem.slot(r)->error, sizeof mem.slot(r)->error, "fork: %s", strerror(errno));
        sh.failed.store(1);
        break;
      }
      children.push_back(pid);
    }
    // The accelerator: batches in order, each computed on once it is ready.
    uint64_t shown = 0;
    double last_progress = t0;
    auto show_progress = [&] {
      if (!cfg.progress) return;
      const uint64_t now_bytes = sh.progress.load(std::memory_order_relaxed);
      cfg.progress->advance(now_bytes - shown);
      shown = now_bytes;
    };
    // A reader process that dies (a signal, the OOM killer under a memory
    // limit) leaves its batches never ready: it is reaped while waiting, and
    // the first death fails the epoch instead of hanging it.
    std::vector<int> status(children.size(), 0);
    std::vector<bool> reaped(children.size(), false);
    auto reap = [&](int flags) {
      for (size_t k = 0; k < children.size(); ++k) {
        if (reaped[k]) continue;
        pid_t got;
        while ((got = waitpid(children[k], &status[k], flags)) < 0 && errno == EINTR) {
        }
        if (got != children[k]) continue;
        reaped[k] = true;
        if (!WIFEXITED(status[k]) || WEXITSTATUS(status[k]) != 0) sh.failed.store(1);
      }
    };
    for (uint64_t b = 0; b < batches && !sh.failed.load(); ++b) {
      while (!mem.ready(b).load(std::memory_order_acquire) && !sh.failed.load()) {
        sleep_us(20);
        if (now_s() - last_progress > 0.05) {
          show_progress();
          reap(WNOHANG);
          last_progress = now_s();
        }
      }
      if (sh.failed.load()) break;
      if (b == 0) er.first_batch_wait_s = now_s() - t0;
      sh.consumed.store(b + 1, std::memory_order_release);
      if (p.compute_s > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(p.compute_s));
        er.compute_s += p.compute_s;
      }
    }
    er.seconds = now_s() - t0;
    for (auto& t : threads) t.join();
    reap(0);
    for (size_t k = 0; k < children.size(); ++k) {
      if (reaped[k] && WIFEXITED(status[k]) && WEXITSTATUS(status[k]) == 0) continue;
      if (!out.error.empty()) continue;
      char why[128];
      if (reaped[k] && WIFSIGNALED(status[k]))
        snprintf(why, sizeof why, "reader process %zu died of signal %d", k, WTERMSIG(status[k]));
      else if (reaped[k])
        snprintf(why, sizeof why, "reader process %zu exited %d", k, WEXITSTATUS(status[k]));
      else
        snprintf(why, sizeof why, "reader process %zu could not be waited for: %s", k, strerror(errno));
      out.error = why;
    }
    show_progress();
    hio_stats epoch_stats;
    if (p.processes) {
      epoch_stats = hio_stats{};
      for (unsigned r = 0; r < p.readers; ++r) stats_add(&epoch_stats, epoch_stats, mem.slot(r)->stats, +1);
    } else {
      hio_stats lib_after;
      hio_stats_get(&lib_after);
      stats_add(&epoch_stats, lib_after, lib_before, -1);
    }
    stats_add(&out.stats, out.stats, epoch_stats, +1);
    double slowest = 0;
    for (unsigned r = 0; r < p.readers; ++r) {
      const ReaderSlot& s = *mem.slot(r);
      if (s.error[0] && out.error.empty()) out.error = s.error;
      er.bytes += s.bytes;
      er.samples += s.samples;
      er.verified_bytes += s.verified;
      er.cached_bytes += s.cached_bytes;
      out.latency[HIO_OP_READ].merge(s.latency);
      out.thread_seconds.push_back(s.seconds);
      slowest = std::max(slowest, s.seconds);
    }
    for (int k = 0; k < HIO_PATH_COUNT; ++k) er.path_bytes[k] = epoch_stats.bytes[HIO_OP_READ][k];
    out.slowest_thread_s += slowest;
    out.seconds += er.seconds;
    out.bytes[HIO_OP_READ] += er.bytes;
    out.ios[HIO_OP_READ] += er.samples;
    if (out.error.empty() && er.samples != d.samples())
      out.error = "an epoch read fewer samples than the dataset holds";
    epochs->push_back(er);
  }
  cpu_times(&u1, &s1, true);
  out.usr_s = u1 - u0;
  out.sys_s = s1 - s0;
  out.page_cache_growth = page_cache_bytes() - cached_before;
  out.memory = memory_events_now(cfg.cgroup).since(memory_before);
  return out;
}

}  // namespace hybridio::bench
