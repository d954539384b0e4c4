// integrity_test.cc - randomized operations through the C API under every
// policy, checked byte for byte against an in-memory model of the file,
// then once more after the library is out of the way (plain read(2)).
//
// Environment: HYBRIDIO_INTEGRITY_OPS (default 10000 per policy),
// HYBRIDIO_INTEGRITY_SEED (default: a fixed seed per policy; a failure
// prints the seed and the operation number to replay it).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "rng.h"
#include "temp_dir.h"

namespace {

constexpr uint64_t K = 1024, M = 1024 * 1024;
constexpr uint64_t kMaxFile = 64 * M;
constexpr uint64_t kMaxIo = 32 * M;

struct Variant {
  const char* name;
  hio_mode mode;
  uint64_t write_threshold;  // 0 = default
  uint64_t read_threshold;
  // The engine: 0 = default.  chunk_size small so that most direct bodies are
  // cut into many chunks in flight together.
  uint64_t chunk_size = 0;
  uint32_t queue_depth = 0;
  int uring = 1;  // 0: io_uring off, synchronous submission
  uint64_t ops = 0;  // 0: HYBRIDIO_INTEGRITY_OPS (default 10000)
  int write_behind = 0;  // 1: direct-bound writes return once staged
};

// Every policy, plus hybrid with low thresholds so that splits, bounces and
// cache probes happen on most medium-sized requests.
const Variant kVariants[] = {
    {"hybrid", HIO_MODE_HYBRID, 0, 0},
    {"hybrid_low_thresholds", HIO_MODE_HYBRID, 64 * K, 64 * K},
    {"buffered", HIO_MODE_BUFFERED, 0, 0},
    {"direct", HIO_MODE_DIRECT, 0, 0},
    {"dontcache", HIO_MODE_DONTCACHE, 0, 0},
    // The parallel direct engine with small chunks (aligned and bounce bodies
    // of 2-512 chunks), and its synchronous fallback.
    // Fewer operations each: the chunked paths are what is new here.
    {"parallel_direct", HIO_MODE_DIRECT, 0, 0, 64 * K, 4, 1, 5000},
    {"parallel_hybrid_low_thresholds", HIO_MODE_HYBRID, 64 * K, 64 * K, 64 * K, 3, 1, 5000},
    {"sync_fallback_direct", HIO_MODE_DIRECT, 0, 0, 64 * K, 4, 0, 4000},
    // Write-behind: every size and read check right after a write meets a
    // queued write; a small staging limit makes writers wait for memory.
    {"write_behind_direct", HIO_MODE_DIRECT, 0, 0, 64 * K, 4, 1, 5000, 1},
    {"write_behind_hybrid_low_thresholds", HIO_MODE_HYBRID, 64 * K, 64 * K, 256 * K, 8, 1, 5000, 1},
};

// Names the variant in test listings instead of dumping its bytes.
void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

using hybridio::testing::Rng;

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = getenv(name);
  return v && *v ? strtoull(v, nullptr, 0) : fallback;
}

class Integrity : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    hio_policy_get(&saved_);
    hio_policy_config c = saved_;
    hio_policy_config_defaults(&c);
    c.mode = GetParam().mode;
    if (GetParam().write_threshold) c.write_threshold = GetParam().write_threshold;
    if (GetParam().read_threshold) c.read_threshold = GetParam().read_threshold;
    hio_policy_set(&c);
    hio_engine_get(&saved_engine_);
    hio_engine_config e = saved_engine_;
    if (GetParam().chunk_size) e.chunk_size = GetParam().chunk_size;
    if (GetParam().queue_depth) e.queue_depth = GetParam().queue_depth;
    e.uring = GetParam().uring;
    e.write_behind = GetParam().write_behind;
    if (e.write_behind) e.write_behind_limit = 16 * M;
    hio_engine_set(&e);
    hio_stats_reset();
  }
  void TearDown() override {
    hio_policy_set(&saved_);
    hio_engine_set(&saved_engine_);
  }
  hio_policy_config saved_;
  hio_engine_config saved_engine_;
};

TEST_P(Integrity, RandomOperationsMatchTheModel) {
  const Variant& v = GetParam();
  const uint64_t ops = env_u64("HYBRIDIO_INTEGRITY_OPS", v.ops ? v.ops : 10000);
  const uint64_t seed = env_u64("HYBRIDIO_INTEGRITY_SEED", 0x5eed0000 + static_cast<uint64_t>(v.mode) * 7 +
                                                               v.write_threshold + v.chunk_size * 3 +
                                                               static_cast<uint64_t>(v.uring) +
                                                               static_cast<uint64_t>(v.write_behind) * 11);
  hybridio::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file(std::string("model-") + v.name);
  Rng rng(seed);

  std::vector<char> model;
  // One pool for data and one for reads, 4 KiB aligned with room to misalign.
  void* wraw = nullptr;
  void* rraw = nullptr;
  ASSERT_EQ(posix_memalign(&wraw, 4096, kMaxIo + 8 * K), 0);
  ASSERT_EQ(posix_memalign(&rraw, 4096, kMaxIo + 8 * K), 0);
  std::unique_ptr<char, decltype(&free)> wpool(static_cast<char*>(wraw), free);
  std::unique_ptr<char, decltype(&free)> rpool(static_cast<char*>(rraw), free);

  hio_file* f = nullptr;
  bool append = false;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);

  auto size_of_request = [&]() -> uint64_t {
    unsigned kind = static_cast<unsigned>(rng.below(100));
    if (kind < 70) return rng.log_uniform(1, 64 * K);
    if (kind < 97) return rng.log_uniform(64 * K, 2 * M);
    return rng.log_uniform(2 * M, kMaxIo);
  };
  auto offset_for = [&](uint64_t len) -> uint64_t {
    uint64_t limit = std::min<uint64_t>(model.size() + 1 * M, kMaxFile - len);
    uint64_t off = rng.below(limit + 1);
    if (rng.chance(50)) off &= ~(4 * K - 1);
    return off;
  };
  auto misalign = [&]() -> uint64_t {
    unsigned kind = static_cast<unsigned>(rng.below(4));
    if (kind < 2) return 0;
    if (kind == 2) return 512 * (1 + rng.below(7));
    return 1 + rng.below(4095);
  };
  auto where = [&](uint64_t i, const char* what) {
    return std::string(v.name) + " op " + std::to_string(i) + " (" + what + "), seed " +
           std::to_string(seed);
  };

  uint64_t bytes_written = 0, bytes_read = 0;
  for (uint64_t i = 0; i < ops; ++i) {
    unsigned op = static_cast<unsigned>(rng.below(100));
    if (op < 45) {  // pwrite, or write at the file position
      uint64_t len = size_of_request();
      uint64_t off = offset_for(len);
      char* buf = wpool.get() + misalign();
      rng.fill(buf, len);
      ssize_t n;
      if (rng.chance(10)) {
        ASSERT_EQ(lseek(hio_fd(f), static_cast<off_t>(off), SEEK_SET), static_cast<off_t>(off));
        n = hio_write(f, buf, len);
        if (!append) {
          ASSERT_EQ(lseek(hio_fd(f), 0, SEEK_CUR), static_cast<off_t>(off + len)) << where(i, "write pos");
        }
      } else {
        n = hio_pwrite(f, buf, len, static_cast<off_t>(off));
      }
      ASSERT_EQ(n, static_cast<ssize_t>(len)) << where(i, "write") << ": " << strerror(static_cast<int>(-n));
      if (append) off = model.size();  // O_APPEND: the kernel writes at EOF
      if (model.size() < off + len) model.resize(off + len, 0);
      memcpy(model.data() + off, buf, len);
      bytes_written += len;
      struct stat st;
      ASSERT_EQ(fstat(hio_fd(f), &st), 0);
      ASSERT_EQ(static_cast<uint64_t>(st.st_size), model.size()) << where(i, "size after write");
    } else if (op < 85) {  // pread, or read at the file position
      uint64_t len = size_of_request();
      uint64_t off = rng.below(model.size() + 64 * K);
      if (rng.chance(50)) off &= ~(4 * K - 1);
      char* buf = rpool.get() + misalign();
      ssize_t n;
      if (rng.chance(10)) {
        ASSERT_EQ(lseek(hio_fd(f), static_cast<off_t>(off), SEEK_SET), static_cast<off_t>(off));
        n = hio_read(f, buf, len);
      } else {
        n = hio_pread(f, buf, len, static_cast<off_t>(off));
      }
      uint64_t expect = off >= model.size() ? 0 : std::min<uint64_t>(len, model.size() - off);
      ASSERT_EQ(n, static_cast<ssize_t>(expect)) << where(i, "read length");
      if (expect && memcmp(buf, model.data() + off, expect) != 0) {
        uint64_t at = 0;
        while (buf[at] == model[off + at]) ++at;
        FAIL() << where(i, "read data") << ": first difference at file offset " << off + at
               << " in a read of " << len << " at " << off;
      }
      bytes_read += expect;
    } else if (op < 90) {  // truncate, shrinking or growing
      uint64_t size = rng.chance(50) ? rng.below(model.size() + 1) : rng.below(kMaxFile / 2);
      ASSERT_EQ(hio_ftruncate(f, static_cast<off_t>(size)), 0) << where(i, "truncate");
      model.resize(size, 0);
    } else if (op < 95) {
      ASSERT_EQ(rng.chance(50) ? hio_fsync(f) : hio_fdatasync(f), 0) << where(i, "fsync");
    } else {  // close and reopen, sometimes for appending
      ASSERT_EQ(hio_close(f), 0) << where(i, "close");
      append = rng.chance(20);
      ASSERT_EQ(hio_open(path.c_str(), O_RDWR | (append ? O_APPEND : 0), 0, &f), 0) << where(i, "reopen");
      struct stat st;
      ASSERT_EQ(fstat(hio_fd(f), &st), 0);
      ASSERT_EQ(static_cast<uint64_t>(st.st_size), model.size()) << where(i, "size after reopen");
    }
  }
  ASSERT_EQ(hio_close(f), 0);

  // The library is out of the way: what a plain program reads must be the model.
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::vector<char> disk(model.size() + 1);
  uint64_t got = 0;
  for (ssize_t n; (n = read(fd, disk.data() + got, disk.size() - got)) > 0;) got += static_cast<uint64_t>(n);
  close(fd);
  ASSERT_EQ(got, model.size());
  EXPECT_EQ(memcmp(disk.data(), model.data(), model.size()), 0) << "file differs from the model after reopen";

  hio_stats s;
  hio_stats_get(&s);
  uint64_t moved = 0;
  for (int o = 0; o < 2; ++o)
    for (int p = 0; p < HIO_PATH_COUNT; ++p) moved += s.bytes[o][p];
  EXPECT_EQ(moved, bytes_written + bytes_read) << "every byte is counted on exactly one path";
  if (v.mode == HIO_MODE_DIRECT || v.write_threshold) {
    EXPECT_GT(s.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 0u);
    EXPECT_GT(s.bounces, 0u);
    EXPECT_GT(s.splits, 0u);
  }
  if (v.write_behind) {
    EXPECT_GT(s.write_behind_writes, 0u);
    EXPECT_EQ(s.write_behind_errors, 0u);
  }
  if (v.chunk_size) {
    // Multi-chunk bodies went where the variant says.
    if (v.uring) {
      EXPECT_GT(s.uring_requests, 0u);
      EXPECT_EQ(s.sync_fallback_requests, 0u);
    } else {
      EXPECT_EQ(s.uring_requests, 0u);
      EXPECT_GT(s.sync_fallback_requests, 0u);
    }
  }
  if (v.mode == HIO_MODE_BUFFERED) {
    EXPECT_EQ(s.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT] + s.bytes[HIO_OP_READ][HIO_PATH_DIRECT], 0u);
  }
  printf("[ %s ] %llu ops, %.1f MiB written, %.1f MiB read; direct %.1f MiB, dontcache %.1f MiB, "
         "splits %llu, bounces %llu, uring requests %llu (chunks %llu), sync multi-chunk %llu\n",
         v.name, static_cast<unsigned long long>(ops), bytes_written / double(M), bytes_read / double(M),
         (s.bytes[0][HIO_PATH_DIRECT] + s.bytes[1][HIO_PATH_DIRECT]) / double(M),
         (s.bytes[0][HIO_PATH_DONTCACHE] + s.bytes[1][HIO_PATH_DONTCACHE]) / double(M),
         static_cast<unsigned long long>(s.splits), static_cast<unsigned long long>(s.bounces),
         static_cast<unsigned long long>(s.uring_requests), static_cast<unsigned long long>(s.uring_chunks),
         static_cast<unsigned long long>(s.sync_fallback_requests));
}

INSTANTIATE_TEST_SUITE_P(Policies, Integrity, ::testing::ValuesIn(kVariants),
                         [](const ::testing::TestParamInfo<Variant>& param_info) {
                           return std::string(param_info.param.name);
                         });

}  // namespace
