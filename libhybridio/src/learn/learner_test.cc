// learner_test.cc - the learner through its File seam (steer, observe,
// flush), driven by the policy core with injected costs: no I/O, no
// clock, a seeded random source; deterministic.
#include "learn/learner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "platform/stats.h"

namespace hybridio {
namespace {

constexpr uint64_t K = 1024, M = K * K, G = M * K;

// A device: ns per byte of each path for a request of `len` bytes.
using CostFn = std::function<double(hio_op op, hio_path path, uint64_t len)>;

class Harness {
 public:
  explicit Harness(int streams, bool dontcache_ok = true, double jitter = 0.1)
      : base_(defaults()),
        fs_(LearnSettings(), base_),
        files_(streams),
        offsets_(streams, 0),
        runs_(streams, 0),
        dontcache_ok_(dontcache_ok),
        jitter_(jitter) {
    fs_.publish();
    for (FileLearner& f : files_) f.attach(&fs_, -1, &stats_);
  }

  // `bytes` of requests of `len` on each stream in turn, costed by `cost`;
  // a flush every `flush_every` bytes written per stream, which writes back
  // the buffered bytes written since the last and the last `uncached_tail`
  // uncached ones (still in flight), `flush_ns_per_byte` each, and empties
  // the device's volatile cache of the direct and the written-back uncached
  // bytes written since the last, `direct_flush_ns_per_byte` and
  // `uncached_flush_ns_per_byte` each.  With `concurrent`, the streams'
  // calls of a round all begin before any ends.
  void run(hio_op op, uint64_t len, uint64_t bytes, const CostFn& cost, uint64_t flush_every = 256 * M,
           double flush_ns_per_byte = 0, uint64_t uncached_tail = 0) {
    std::vector<uint64_t> since_flush(files_.size(), 0);
    std::vector<uint64_t> written(files_.size() * HIO_PATH_COUNT, 0);
    struct Call {
      size_t stream;
      hio_request req;
      hio_decision d;
    };
    auto end = [&](const Call& call) {
      const size_t s = call.stream;
      const double factor = 1 + jitter_ * (2 * uniform_(rng_) - 1);
      files_[s].observe(call.req, call.d, len, static_cast<uint64_t>(cost(op, call.d.path, len) * len * factor), true);
      ++paths_[call.d.path];
      if (op != HIO_OP_WRITE) return;
      uint64_t* w = &written[s * HIO_PATH_COUNT];
      w[call.d.path] += len;
      if ((since_flush[s] += len) < flush_every) return;
      const uint64_t pending = w[HIO_PATH_BUFFERED] + std::min(w[HIO_PATH_DONTCACHE], uncached_tail);
      const double ns = pending * flush_ns_per_byte + w[HIO_PATH_DIRECT] * direct_flush_ns_per_byte +
                        (w[HIO_PATH_DONTCACHE] - std::min(w[HIO_PATH_DONTCACHE], uncached_tail)) *
                            uncached_flush_ns_per_byte;
      files_[s].flush(static_cast<uint64_t>(ns) + 1000);
      since_flush[s] = 0;
      std::fill(w, w + HIO_PATH_COUNT, 0);
    };
    std::vector<Call> begun;
    for (uint64_t done = 0; done < bytes;) {
      for (size_t s = 0; s < files_.size() && done < bytes; ++s, done += len) {
        Call call{s, {}, {}};
        hio_request& req = call.req;
        req.op = op;
        req.offset = offsets_[s];
        req.length = len;
        req.buf_addr = 1 << 20;
        req.mem_align = req.offset_align = 4096;
        req.file_size = ~0ULL >> 1;
        req.cached_pages = 0;
        req.dirty_pages = 0;
        req.seq_run = runs_[s];
        req.file_flags = dontcache_ok_ ? HIO_FILE_DONTCACHE_OK : 0;
        hio_policy_config scratch;
        bool probed = true;
        const hio_policy_config& cfg = files_[s].steer(base_, req, true, &scratch, &probed);
        hio_policy_decide(&cfg, &req, &call.d);
        offsets_[s] += len;
        ++runs_[s];
        if (concurrent)
          begun.push_back(call);
        else
          end(call);
      }
      for (const Call& call : begun) end(call);
      begun.clear();
    }
  }

  bool concurrent = false;
  double direct_flush_ns_per_byte = 0;
  double uncached_flush_ns_per_byte = 0;

  uint64_t threshold(hio_op op) const {
    return fs_.model.threshold(op, op == HIO_OP_WRITE ? base_.write_threshold : base_.read_threshold);
  }
  hio_path offcache(hio_op op) const { return fs_.model.offcache(op); }
  // Where an earlier workload left the crossover.
  void set_side(hio_op op, int crossover, hio_path offcache) {
    fs_.model.set_side(op, crossover, offcache);
    fs_.publish();
  }
  // A flush cost per byte of `p` that an earlier workload measured.
  void set_flush(hio_path p, double ns_per_byte) {
    Estimate e;
    e.samples = 10;
    e.ns_per_byte = ns_per_byte;
    fs_.model.set_flush_estimate(p, e);
  }
  uint64_t moves() const { return stats_.learn_moves.load(); }
  uint64_t explored() const {
    return stats_.learn_explored_buffered.load() + stats_.learn_explored_direct.load() +
           stats_.learn_explored_dontcache.load();
  }
  // Requests on `p` of a further run(args...).
  template <typename... Args>
  uint64_t then_took(hio_path p, Args&&... args) {
    took(p);
    run(std::forward<Args>(args)...);
    return took(p);
  }
  // Requests per path since the last call.
  uint64_t took(hio_path p) {
    const uint64_t n = paths_[p];
    paths_[p] = 0;
    return n;
  }

 private:
  static hio_policy_config defaults() {
    hio_policy_config c;
    hio_policy_config_defaults(&c);
    return c;
  }
  hio_policy_config base_;
  LearnedFs fs_;
  Stats stats_;
  std::vector<FileLearner> files_;
  std::vector<uint64_t> offsets_;
  std::vector<uint32_t> runs_;
  bool dontcache_ok_;
  double jitter_;
  std::mt19937_64 rng_{42};
  std::uniform_real_distribution<double> uniform_{0, 1};
  uint64_t paths_[HIO_PATH_COUNT] = {};
};

// Direct pays a latency per request; the cache paths a flat rate.
CostFn latency_device(double buffered, double direct_latency_ns, double direct, double uncached = 10) {
  return [=](hio_op, hio_path p, uint64_t len) {
    if (p == HIO_PATH_DIRECT) return direct_latency_ns / len + direct;
    return p == HIO_PATH_BUFFERED ? buffered : uncached;
  };
}

TEST(Learner, MovesToTheCrossoverOneOctaveAtATime) {
  // Buffered 0.5 ns/byte; direct 100 us + 0.25 ns/byte: 1 MiB reads cost
  // 0.35 direct, 256 KiB ones 0.63.  The configured threshold is 8 MiB.
  Harness h(1, false);
  const CostFn device = latency_device(0.5, 100e3, 0.25);
  uint64_t last = h.threshold(HIO_OP_READ);
  EXPECT_EQ(last, 8 * M);
  for (int step = 0; step < 640; ++step) {  // one sample a step
    h.run(HIO_OP_READ, 1 * M, 16 * M, device);
    const uint64_t now = h.threshold(HIO_OP_READ);
    EXPECT_TRUE(now == last || now == last / 2 || now == last * 2) << last << " -> " << now;
    last = now;
  }
  EXPECT_EQ(last, 1 * M) << "1 MiB reads go direct";
  EXPECT_GT(h.then_took(HIO_PATH_DIRECT, HIO_OP_READ, 1 * M, 1 * G, device), 950u) << "of 1024";
  // 256 KiB reads stay in the cache, where they are cheaper.
  h.run(HIO_OP_READ, 256 * K, 4 * G, device);
  EXPECT_GE(h.threshold(HIO_OP_READ), 512 * K);
  EXPECT_LE(h.threshold(HIO_OP_READ), 1 * M);
  EXPECT_LE(h.explored(), (15 * G / 100) * 3 + 16 * M) << "at most 3 % of the bytes explore";
}

TEST(Learner, StaysPutUnderNoise) {
  // Buffered and direct cost the same, each call +-25 %.
  Harness h(1, false, 0.25);
  const CostFn device = latency_device(0.4, 0, 0.4);
  h.run(HIO_OP_READ, 4 * M, 32 * G, device);
  EXPECT_EQ(h.moves(), 0u);
  EXPECT_EQ(h.threshold(HIO_OP_READ), 8 * M);
  EXPECT_GT(h.explored(), 0u);
}

TEST(Learner, ASettledClassExploresAQuarterAsMuch) {
  // Direct costs 0.2 ns/byte, buffered 0.5: once 4 MiB reads have gone
  // direct and the comparison is clear, they explore 3/4 % of their bytes.
  Harness h(1, false);
  const CostFn device = latency_device(0.5, 0, 0.2);
  h.run(HIO_OP_READ, 4 * M, 8 * G, device);
  ASSERT_LE(h.threshold(HIO_OP_READ), 4 * M);
  const uint64_t before = h.explored();
  h.run(HIO_OP_READ, 4 * M, 32 * G, device);
  EXPECT_LE(h.explored() - before, 32 * G * 3 / 400 + 16 * M);
  EXPECT_GE(h.explored() - before, 32 * G * 3 / 400 - 16 * M);
  // Where buffered and direct cost the same, nothing settles: about 3 %.
  Harness even(1, false, 0.25);
  even.run(HIO_OP_READ, 4 * M, 32 * G, latency_device(0.4, 0, 0.4));
  EXPECT_GE(even.explored(), 32 * G * 25 / 1000);
}

TEST(Learner, RecoversWhenTheDeviceChangesSpeed) {
  Harness h(1, false);
  h.run(HIO_OP_READ, 4 * M, 8 * G, latency_device(0.5, 0, 0.2));
  EXPECT_LE(h.threshold(HIO_OP_READ), 4 * M) << "direct is cheaper: 4 MiB reads leave the cache";
  // The device slows down to a fifth.
  h.run(HIO_OP_READ, 4 * M, 16 * G, latency_device(0.5, 0, 1.0));
  EXPECT_GT(h.threshold(HIO_OP_READ), 4 * M) << "back in the cache";
  EXPECT_GT(h.then_took(HIO_PATH_BUFFERED, HIO_OP_READ, 4 * M, 1 * G, latency_device(0.5, 0, 1.0)), 240u) << "of 256";
}

TEST(Learner, ManyStreamsFindBufferedReadsWhereTheyWin) {
  // A restore: 8 streams of 16 MiB reads, buffered 7.2 GB/s, direct 5.0,
  // uncached 4.0.  16 MiB is above the configured 8 MiB: they start off
  // the cache, direct.
  Harness h(8);
  const CostFn device = latency_device(1 / 7.2, 0, 1 / 5.0, 1 / 4.0);
  h.run(HIO_OP_READ, 16 * M, 1 * G, device);
  EXPECT_GT(h.took(HIO_PATH_DIRECT), 50u) << "of 64";
  h.run(HIO_OP_READ, 16 * M, 32 * G, device);
  EXPECT_GT(h.threshold(HIO_OP_READ), 16 * M);
  EXPECT_EQ(h.offcache(HIO_OP_READ), HIO_PATH_DIRECT) << "the cheaper off-cache path stays";
  EXPECT_GT(h.then_took(HIO_PATH_BUFFERED, HIO_OP_READ, 16 * M, 4 * G, device), 240u) << "of 256";
}

TEST(Learner, RecordsOfLessThanARunAreMeasuredWhenExplored) {
  // A restore's 12 MiB records in 8 streams, read direct from a fresh
  // state (the configured 8 MiB threshold); buffered costs a third.  An
  // exploration run holds one such record, the first after a switch.
  Harness h(8);
  const CostFn device = latency_device(0.15, 0, 0.5, 0.6);
  h.run(HIO_OP_READ, 12 * M, 8 * G, device);
  EXPECT_GT(h.threshold(HIO_OP_READ), 12 * M);
  EXPECT_GT(h.then_took(HIO_PATH_BUFFERED, HIO_OP_READ, 12 * M, 1 * G, device), 75u) << "of 85";
}

TEST(Learner, WritesStartUncachedAndBufferedOnesOweTheirFlush) {
  // 1 MiB writes in a stream (the configured stream threshold: 1 MiB):
  // off the cache, uncached, 0.5 ns/byte; direct 0.9; buffered 0.2 a call
  // but 0.6 more at each flush.
  Harness h(1);
  const CostFn device = [](hio_op, hio_path p, uint64_t) {
    return p == HIO_PATH_BUFFERED ? 0.2 : p == HIO_PATH_DIRECT ? 0.9 : 0.5;
  };
  h.run(HIO_OP_WRITE, 1 * M, 16 * G, device, 256 * M, 0.6);
  EXPECT_EQ(h.offcache(HIO_OP_WRITE), HIO_PATH_DONTCACHE);
  EXPECT_LE(h.threshold(HIO_OP_WRITE), 2 * M);
  EXPECT_GT(h.then_took(HIO_PATH_DONTCACHE, HIO_OP_WRITE, 1 * M, 1 * G, device, 256 * M, 0.6), 950u) << "of 1024";
  // Where the flush is cheap, the cache wins: the crossover goes up.
  Harness cheap(1);
  cheap.run(HIO_OP_WRITE, 1 * M, 16 * G, device, 256 * M, 0.05);
  EXPECT_GT(cheap.threshold(HIO_OP_WRITE), 1 * M);
  EXPECT_GT(cheap.then_took(HIO_PATH_BUFFERED, HIO_OP_WRITE, 1 * M, 1 * G, device, 256 * M, 0.05), 950u) << "of 1024";
}

TEST(Learner, AFlushIsChargedToThePathThatWroteMostOfIt) {
  hio_policy_config policy;
  hio_policy_config_defaults(&policy);
  FsModel m(LearnSettings(), policy);
  // 1008 MiB of uncached 64 KiB writes and an explored 16 MiB buffered run:
  // the flush, 0.2 ns for each byte, is the uncached path's.
  uint64_t uncached[HIO_PATH_COUNT][kSizeClasses] = {};
  uncached[HIO_PATH_BUFFERED][0] = 16 * M;
  uncached[HIO_PATH_DONTCACHE][0] = 1008 * M;
  m.charge_flush(uncached, static_cast<uint64_t>(1008 * M * 0.2));
  EXPECT_NEAR(m.flush_estimate(HIO_PATH_DONTCACHE).ns_per_byte, 0.2, 1e-6);
  EXPECT_EQ(m.flush_estimate(HIO_PATH_BUFFERED).samples, 0u) << "a few explored bytes measure no flush";
  // A buffered file's flush, 0.6 ns a byte, less the uncached bytes' known share.
  uint64_t buffered[HIO_PATH_COUNT][kSizeClasses] = {};
  buffered[HIO_PATH_BUFFERED][0] = 1008 * M;
  buffered[HIO_PATH_DONTCACHE][0] = 16 * M;
  m.charge_flush(buffered, static_cast<uint64_t>(1008 * M * 0.6 + 16 * M * 0.2));
  EXPECT_NEAR(m.flush_estimate(HIO_PATH_BUFFERED).ns_per_byte, 0.6, 1e-6);
  EXPECT_NEAR(m.flush_estimate(HIO_PATH_DONTCACHE).ns_per_byte, 0.2, 1e-6);
  // A path that has owed no flush is priced at the dearest one measured.
  for (int i = 0; i < 3; ++i) m.add_sample(HIO_OP_WRITE, 6, HIO_PATH_DIRECT, 16 * M, static_cast<uint64_t>(16 * M * 0.3));
  EXPECT_NEAR(m.cost(HIO_OP_WRITE, 6, HIO_PATH_DIRECT), 0.3 + 0.6, 1e-6);
  // With no flush measured, no write cost is known.
  FsModel fresh(LearnSettings(), policy);
  for (int i = 0; i < 3; ++i) fresh.add_sample(HIO_OP_WRITE, 6, HIO_PATH_DIRECT, 16 * M, 16 * M);
  EXPECT_LT(fresh.cost(HIO_OP_WRITE, 6, HIO_PATH_DIRECT), 0);
}

TEST(Learner, DirectWritesOweTheFlushThatEmptiesTheDevicesCache) {
  // 4 MiB writes: a direct call 0.2 ns/byte, then 0.8 more at the flush
  // (a device with a volatile write cache); an uncached one 0.4, its
  // writeback begun by the call; buffered 0.2 and 1.5 at the flush.
  const CostFn device = [](hio_op, hio_path p, uint64_t) {
    return p == HIO_PATH_DIRECT ? 0.2 : p == HIO_PATH_DONTCACHE ? 0.4 : 0.2;
  };
  Harness h(1);
  h.direct_flush_ns_per_byte = 0.8;
  h.run(HIO_OP_WRITE, 4 * M, 16 * G, device, 256 * M, 1.5);
  EXPECT_EQ(h.offcache(HIO_OP_WRITE), HIO_PATH_DONTCACHE) << "direct's calls are cheaper, its flushes are not";
  // Where an earlier workload left direct, after uncached files had
  // measured their flush, direct's own flushes bring it back.
  Harness back(1);
  back.direct_flush_ns_per_byte = 0.8;
  back.set_side(HIO_OP_WRITE, kConfigured, HIO_PATH_DIRECT);
  back.set_flush(HIO_PATH_DONTCACHE, 0.05);
  back.run(HIO_OP_WRITE, 4 * M, 16 * G, device, 256 * M, 1.5);
  EXPECT_EQ(back.offcache(HIO_OP_WRITE), HIO_PATH_DONTCACHE);
  EXPECT_GT(back.then_took(HIO_PATH_DONTCACHE, HIO_OP_WRITE, 4 * M, 1 * G, device, 256 * M, 1.5), 240u) << "of 256";
}

TEST(Learner, WritesThatOverlapOthersAreNotMeasured) {
  // 8 writers at once: each uncached call waits for the others' writeback
  // (5 ns/byte), a direct one passes (0.5).  Were those times samples,
  // direct would win; one writer at a time, the same costs move it.
  const CostFn throttled = [](hio_op, hio_path p, uint64_t) {
    return p == HIO_PATH_DIRECT ? 0.5 : p == HIO_PATH_DONTCACHE ? 5.0 : 4.0;
  };
  Harness h(8);
  h.concurrent = true;
  h.run(HIO_OP_WRITE, 4 * M, 32 * G, throttled, 256 * M, 0.5);
  EXPECT_EQ(h.offcache(HIO_OP_WRITE), HIO_PATH_DONTCACHE);
  EXPECT_EQ(h.moves(), 0u);
  EXPECT_LE(h.explored(), 4 * M) << "no exploration while writes overlap";
  h.concurrent = false;
  h.run(HIO_OP_WRITE, 4 * M, 32 * G, throttled, 256 * M, 0.5);
  EXPECT_EQ(h.offcache(HIO_OP_WRITE), HIO_PATH_DIRECT);
}

TEST(Learner, SmallWritesReturnToTheCacheWhenAMixedFlushSaysSo) {
  // An earlier workload left 64 KiB writes off the cache.  Here a 64 KiB
  // buffered write costs 0.1 ns/byte and 0.5 more at the flush; an
  // uncached one 0.9, and each flush still waits for its last 64 MiB.
  // Exploration's buffered runs are a few percent of a flush's bytes: were
  // the whole flush charged to them, buffered would look five times dearer.
  Harness h(1);
  h.set_side(HIO_OP_WRITE, 0, HIO_PATH_DONTCACHE);
  const CostFn device = [](hio_op, hio_path p, uint64_t) {
    return p == HIO_PATH_BUFFERED ? 0.1 : p == HIO_PATH_DIRECT ? 2.0 : 0.9;
  };
  h.run(HIO_OP_WRITE, 64 * K, 16 * G, device, 256 * M, 0.5, 64 * M);
  EXPECT_GT(h.threshold(HIO_OP_WRITE), 64 * K);
  EXPECT_GT(h.then_took(HIO_PATH_BUFFERED, HIO_OP_WRITE, 64 * K, 1 * G, device, 256 * M, 0.5, 64 * M), 15000u) << "of 16384";
}

TEST(Learner, AFlushOfManyUncachedBytesIsNotChargedToAFewBufferedOnes) {
  // An earlier workload left 64 KiB writes off the cache.  A 64 KiB
  // buffered write costs 0.17 ns/byte and 0.4 more at the flush; an
  // uncached one 0.67, and the flush of the device's cache 0.2 for each
  // uncached byte.  Each 1 GiB file's flush finds only the explored 16 MiB
  // of buffered bytes in the page cache, and takes about 200 ms.
  Harness h(1);
  h.set_side(HIO_OP_WRITE, 0, HIO_PATH_DONTCACHE);
  h.uncached_flush_ns_per_byte = 0.2;
  const CostFn device = [](hio_op, hio_path p, uint64_t) {
    return p == HIO_PATH_BUFFERED ? 0.17 : p == HIO_PATH_DIRECT ? 2.0 : 0.67;
  };
  h.run(HIO_OP_WRITE, 64 * K, 16 * G, device, 1 * G, 0.4);
  EXPECT_GT(h.threshold(HIO_OP_WRITE), 64 * K);
  EXPECT_GT(h.then_took(HIO_PATH_BUFFERED, HIO_OP_WRITE, 64 * K, 1 * G, device, 1 * G, 0.4), 15000u) << "of 16384";
}

TEST(Learner, TheOffCachePathMovesToDirectWhereItIsCheaper) {
  Harness h(1);
  const CostFn device = [](hio_op, hio_path p, uint64_t) {
    return p == HIO_PATH_BUFFERED ? 2.0 : p == HIO_PATH_DIRECT ? 0.3 : 0.6;
  };
  h.run(HIO_OP_WRITE, 4 * M, 16 * G, device, 256 * M, 1.0);
  EXPECT_EQ(h.offcache(HIO_OP_WRITE), HIO_PATH_DIRECT);
  EXPECT_GT(h.then_took(HIO_PATH_DIRECT, HIO_OP_WRITE, 4 * M, 1 * G, device, 256 * M, 1.0), 240u) << "of 256";
}

TEST(Learner, CalibrationSeedsTheCrossover) {
  hio_policy_config policy;
  hio_policy_config_defaults(&policy);
  FsModel m(LearnSettings(), policy);
  for (int c = 0; c < kSizeClasses; ++c) {
    const double direct = 1e5 / class_floor(c) + 0.25;  // 100 us + 0.25 ns/byte
    m.set_estimate(HIO_OP_READ, c, HIO_PATH_BUFFERED, {10, 0.5, 0});
    m.set_estimate(HIO_OP_READ, c, HIO_PATH_DIRECT, {10, direct, 0});
  }
  m.settle(HIO_OP_READ);
  EXPECT_EQ(m.threshold(HIO_OP_READ, 8 * M), 512 * K);
  m.settle(HIO_OP_WRITE);  // nothing measured: configured
  EXPECT_EQ(m.threshold(HIO_OP_WRITE, 2 * M), 2 * M);
}

}  // namespace
}  // namespace hybridio
