// integrity_fault_test.cc - the randomized model test with a fault-injecting
// backend under the parallel direct engine: chunk completions are turned
// into EIO, ENOSPC, short transfers or EAGAIN at random, and every call must
// report exactly what POSIX allows - a short count or -errno - with every
// reported byte in the file, the file size exact, and no byte outside the
// written ranges changed.  Bytes of a failed write past its reported count
// may hold the old or the new data (as after a failed kernel direct write),
// never anything else.
//
// Links the library's internals for the completion hook (uring_engine.h).
// Environment: HYBRIDIO_INTEGRITY_OPS (default 2000), HYBRIDIO_INTEGRITY_SEED.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "io/uring_engine.h"
#include "temp_dir.h"

namespace {

constexpr uint64_t K = 1024, M = 1024 * 1024;

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = getenv(name);
  return v && *v ? strtoull(v, nullptr, 0) : fallback;
}

struct Rng {
  uint64_t s;
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545f4914f6cdd1dULL;
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
};

// The injector: every chunk completion draws; about 4 % are faults.
std::atomic<uint64_t> g_state{1};
std::atomic<uint64_t> g_faults{0};
std::atomic<bool> g_armed{false};

int inject(hio_op, uint64_t, uint64_t len, int res) {
  if (!g_armed.load() || res <= 0) return res;
  uint64_t x = g_state.fetch_add(0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 31;
  switch (x % 100) {
    case 0: g_faults++; return -EIO;
    case 1: g_faults++; return -ENOSPC;
    case 2: g_faults++; return static_cast<int>(len / 2 / 512 * 512);  // short (maybe 0 bytes)
    case 3: g_faults++; return -EAGAIN;  // retried: invisible to the caller
    default: return res;
  }
}

std::vector<char> read_all(const std::string& path) {
  std::vector<char> v;
  int fd = open(path.c_str(), O_RDONLY);
  struct stat st;
  fstat(fd, &st);
  v.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < v.size()) {
    ssize_t n = pread(fd, v.data() + done, v.size() - done, static_cast<off_t>(done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  return v;
}

TEST(IntegrityFaults, InjectedChunkFailuresSurfaceExactly) {
  const uint64_t ops = env_u64("HYBRIDIO_INTEGRITY_OPS", 2000);
  const uint64_t seed = env_u64("HYBRIDIO_INTEGRITY_SEED", 0xfa017);
  hybridio::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("faults");

  hio_policy_config saved_policy, c;
  hio_policy_get(&saved_policy);
  hio_policy_config_defaults(&c);
  c.mode = HIO_MODE_DIRECT;
  hio_policy_set(&c);
  hio_engine_config saved_engine, e;
  hio_engine_get(&saved_engine);
  e = saved_engine;
  e.chunk_size = 64 * K;
  e.queue_depth = 4;
  e.uring = 1;
  e.write_behind = 0;
  hio_engine_set(&e);
  if (!hybridio::uring_usable()) GTEST_SKIP() << "io_uring unavailable: no chunks to inject into";
  hybridio::set_completion_hook(inject);
  g_state = seed;

  Rng rng{seed};
  std::vector<char> model;
  void* raw;
  ASSERT_EQ(posix_memalign(&raw, 4096, 8 * M + 8 * K), 0);
  std::unique_ptr<char, decltype(&free)> pool(static_cast<char*>(raw), free);
  std::vector<char> rbuf(8 * M + 8 * K);
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  g_armed = true;
  uint64_t short_writes = 0, failed_writes = 0, short_reads = 0;

  for (uint64_t i = 0; i < ops; ++i) {
    const std::string where = "op " + std::to_string(i) + ", seed " + std::to_string(seed);
    unsigned op = static_cast<unsigned>(rng.below(100));
    uint64_t len = 4 * K + rng.below(2 * M);
    if (rng.below(2)) len &= ~(4 * K - 1);
    char* buf = pool.get() + (rng.below(3) == 0 ? 1 + rng.below(4095) : 0);
    if (op < 50) {
      uint64_t off = rng.below(std::min<uint64_t>(model.size() + 512 * K, 48 * M));
      if (rng.below(2)) off &= ~(4 * K - 1);
      for (uint64_t b = 0; b < len; b += 8) {
        uint64_t v = rng.next();
        memcpy(buf + b, &v, std::min<uint64_t>(8, len - b));
      }
      const uint64_t faults_before = g_faults.load();
      const std::vector<char> old = model;
      ssize_t n = hio_pwrite(f, buf, len, static_cast<off_t>(off));
      const bool faulted = g_faults.load() != faults_before;
      if (n == static_cast<ssize_t>(len)) {
        if (model.size() < off + len) model.resize(off + len, 0);
        memcpy(model.data() + off, buf, len);
      } else {
        ASSERT_TRUE(faulted) << where << ": write of " << len << " returned " << n << " without a fault";
        ASSERT_TRUE(n == -EIO || n == -ENOSPC || (n >= 0 && static_cast<uint64_t>(n) < len)) << where << ": " << n;
        const uint64_t done = n > 0 ? static_cast<uint64_t>(n) : 0;
        (n > 0 ? short_writes : failed_writes)++;
        // Reported bytes are in; the size is what a short write reports.
        const uint64_t size = done ? std::max<uint64_t>(old.size(), off + done) : old.size();
        if (model.size() < off + done) model.resize(off + done, 0);
        memcpy(model.data() + off, buf, done);
        std::vector<char> disk = read_all(path);
        ASSERT_EQ(disk.size(), size) << where << ": size after a failed write";
        // Past the reported count, each byte is old or new, nothing else.
        for (uint64_t b = off + done; b < std::min<uint64_t>(off + len, size); ++b) {
          const char was = b < old.size() ? old[b] : 0;
          ASSERT_TRUE(disk[b] == was || disk[b] == buf[b - off]) << where << ": byte " << b;
        }
        model.resize(size, 0);
        for (uint64_t b = off + done; b < std::min<uint64_t>(off + len, size); ++b) model[b] = disk[b];
      }
      struct stat st;
      ASSERT_EQ(fstat(hio_fd(f), &st), 0);
      ASSERT_EQ(static_cast<uint64_t>(st.st_size), model.size()) << where << ": size";
    } else if (op < 90) {
      uint64_t off = rng.below(model.size() + 64 * K);
      if (rng.below(2)) off &= ~(4 * K - 1);
      const uint64_t faults_before = g_faults.load();
      ssize_t n = hio_pread(f, rbuf.data() + (buf - pool.get()), len, static_cast<off_t>(off));
      const char* got = rbuf.data() + (buf - pool.get());
      const uint64_t expect = off >= model.size() ? 0 : std::min<uint64_t>(len, model.size() - off);
      if (n != static_cast<ssize_t>(expect)) {
        ASSERT_NE(g_faults.load(), faults_before) << where << ": read returned " << n << ", expected " << expect;
        ASSERT_TRUE(n == -EIO || n == -ENOSPC || (n >= 0 && static_cast<uint64_t>(n) < expect)) << where << ": " << n;
        short_reads++;
      }
      if (n > 0) {
        ASSERT_EQ(memcmp(got, model.data() + off, static_cast<size_t>(n)), 0) << where << ": read data";
      }
    } else if (op < 95) {
      uint64_t size = rng.below(model.size() + 1);
      ASSERT_EQ(hio_ftruncate(f, static_cast<off_t>(size)), 0) << where;
      model.resize(size);
    } else {
      ASSERT_EQ(hio_fsync(f), 0) << where;
    }
  }
  g_armed = false;
  ASSERT_EQ(hio_close(f), 0);
  std::vector<char> disk = read_all(path);
  ASSERT_EQ(disk.size(), model.size());
  EXPECT_EQ(memcmp(disk.data(), model.data(), model.size()), 0);
  hybridio::set_completion_hook(nullptr);
  hio_engine_set(&saved_engine);
  hio_policy_set(&saved_policy);
  printf("[ faults ] %llu ops, %llu faults injected: %llu short writes, %llu failed writes, %llu short reads\n",
         static_cast<unsigned long long>(ops), static_cast<unsigned long long>(g_faults.load()),
         static_cast<unsigned long long>(short_writes), static_cast<unsigned long long>(failed_writes),
         static_cast<unsigned long long>(short_reads));
  EXPECT_GT(failed_writes + short_writes, 0u);
}

}  // namespace
