// file_test.cc - the engine on real files: which path each request took
// (from the counters) and that the bytes and the file size are exact.
#include "file/file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "file_bytes.h"
#include "io/uring_engine.h"
#include "memory/aligned_buffer.h"
#include "memory/checked_copy.h"
#include "platform/private_fd.h"
#include "probe/cache_probe.h"
#include "runtime/runtime.h"
#include "temp_dir.h"

namespace hybridio {
namespace {

constexpr uint64_t K = 1024, M = 1024 * 1024;

class Engine : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    set_mode(HIO_MODE_HYBRID);
    Runtime::get().stats().reset();
  }
  void set_mode(hio_mode mode) {
    hio_policy_config c = default_policy_config();
    c.mode = mode;
    Runtime::get().set_policy(c);
  }
  static hio_policy_config default_policy_config() {
    hio_policy_config c;
    hio_policy_config_defaults(&c);
    return c;
  }
  std::unique_ptr<File> open_file(const std::string& name, int flags = O_RDWR | O_CREAT) {
    File* f = nullptr;
    int err = File::open(Runtime::get(), dir_.file(name).c_str(), flags, 0644, &f);
    EXPECT_EQ(err, 0) << strerror(-err);
    return std::unique_ptr<File>(f);
  }
  hio_stats stats() { return Runtime::get().stats().snapshot(); }
  testing::TempDir dir_;
};

TEST_F(Engine, LargeAlignedWriteGoesDirect) {
  auto f = open_file("a");
  AlignedBuffer buf(4 * M, 4096);
  auto data = testing::random_bytes(4 * M, 1);
  memcpy(buf.data(), data.data(), data.size());
  ASSERT_EQ(f->pwrite(buf.data(), 4 * M, 0), static_cast<ssize_t>(4 * M));
  hio_stats s = stats();
  EXPECT_EQ(s.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 4 * M);
  EXPECT_EQ(s.bytes[HIO_OP_WRITE][HIO_PATH_BUFFERED], 0u);
  EXPECT_EQ(s.rule_requests[HIO_RULE_WRITE_SIZE], 1u);
  EXPECT_EQ(s.bounces, 0u);
  ASSERT_EQ(f->close(), 0);
  EXPECT_EQ(testing::file_bytes(dir_.file("a")), data);
}

TEST_F(Engine, UnalignedWriteIsSplitAndExact) {
  auto f = open_file("b");
  auto data = testing::random_bytes(5 * M + 777, 2);
  const uint64_t off = 12345;
  ASSERT_EQ(f->pwrite(data.data(), data.size(), off), static_cast<ssize_t>(data.size()));
  hio_stats s = stats();
  EXPECT_EQ(s.splits, 1u);
  EXPECT_GT(s.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 4 * M);
  EXPECT_GT(s.bytes[HIO_OP_WRITE][HIO_PATH_BUFFERED], 0u);
  EXPECT_EQ(s.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT] + s.bytes[HIO_OP_WRITE][HIO_PATH_BUFFERED],
            data.size());
  ASSERT_EQ(f->close(), 0);
  auto got = testing::file_bytes(dir_.file("b"));
  ASSERT_EQ(got.size(), off + data.size()) << "file must end exactly where the write ended";
  EXPECT_TRUE(std::all_of(got.begin(), got.begin() + off, [](char c) { return c == 0; }));
  EXPECT_TRUE(std::equal(data.begin(), data.end(), got.begin() + off));
}

TEST_F(Engine, MisalignedBufferIsBounced) {
  auto f = open_file("c");
  auto data = testing::random_bytes(8 * M + 1, 3);  // odd address for the body: data.data() + 1
  ASSERT_EQ(f->pwrite(data.data() + 1, 8 * M, 0), static_cast<ssize_t>(8 * M));
  EXPECT_EQ(stats().bounces, 1u);
  EXPECT_EQ(stats().bounce_bytes, 8 * M);
  std::vector<char> back(8 * M + 3);
  Runtime::get().stats().reset();
  ASSERT_EQ(posix_fadvise(f->fd(), 0, 0, POSIX_FADV_DONTNEED), 0);
  ASSERT_EQ(f->pread(back.data() + 3, 8 * M, 0), static_cast<ssize_t>(8 * M));
  EXPECT_EQ(stats().bytes[HIO_OP_READ][HIO_PATH_DIRECT], 8 * M);
  EXPECT_EQ(stats().bounces, 1u);
  EXPECT_EQ(memcmp(back.data() + 3, data.data() + 1, 8 * M), 0);
}

// Memory aligned for the device (512 B here) but not to a page is staged too:
// direct I/O from it ran 17x slower than the staged copy (docs/performance.md).
TEST_F(Engine, SubPageAlignedBufferIsBounced) {
  auto f = open_file("subpage");
  void* raw = nullptr;
  ASSERT_EQ(posix_memalign(&raw, 4096, 8 * M + 4096), 0);
  std::unique_ptr<char, decltype(&free)> block(static_cast<char*>(raw), &free);
  char* buf = block.get() + 512;  // 512-byte aligned, not page aligned
  auto data = testing::random_bytes(8 * M, 4);
  memcpy(buf, data.data(), 8 * M);
  ASSERT_EQ(f->pwrite(buf, 8 * M, 0), static_cast<ssize_t>(8 * M));
  EXPECT_EQ(stats().bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 8 * M);
  EXPECT_EQ(stats().bounces, 1u);
  Runtime::get().stats().reset();
  ASSERT_EQ(f->pwrite(block.get(), 8 * M, 8 * M), static_cast<ssize_t>(8 * M));
  EXPECT_EQ(stats().bounces, 0u) << "page-aligned memory goes straight to the device";
  EXPECT_EQ(testing::file_bytes(dir_.file("subpage")).size(), 16 * M);
  std::vector<char> back(8 * M);
  ASSERT_EQ(f->pread(back.data(), 8 * M, 0), static_cast<ssize_t>(8 * M));
  EXPECT_EQ(back, data);
}

TEST_F(Engine, ReadsStopAtEndOfFile) {
  auto f = open_file("d");
  auto data = testing::random_bytes(10 * M + 100, 4);
  ASSERT_EQ(f->pwrite(data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  ASSERT_EQ(f->sync(false), 0);
  ASSERT_EQ(posix_fadvise(f->fd(), 0, 0, POSIX_FADV_DONTNEED), 0);
  Runtime::get().stats().reset();
  AlignedBuffer buf(16 * M, 4096);
  ASSERT_EQ(f->pread(buf.data(), 16 * M, 0), static_cast<ssize_t>(data.size()));
  EXPECT_EQ(memcmp(buf.data(), data.data(), data.size()), 0);
  EXPECT_EQ(stats().bytes[HIO_OP_READ][HIO_PATH_DIRECT], 10 * M);
  EXPECT_EQ(stats().bytes[HIO_OP_READ][HIO_PATH_BUFFERED], 100u);
  EXPECT_EQ(f->pread(buf.data(), 16 * M, data.size()), 0);
  EXPECT_EQ(f->pread(buf.data(), 16 * M, data.size() + 5000), 0);
}

TEST_F(Engine, CachedRangeIsReadFromTheCache) {
  auto f = open_file("e");
  auto data = testing::random_bytes(16 * M, 5);
  set_mode(HIO_MODE_BUFFERED);
  ASSERT_EQ(f->pwrite(data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  set_mode(HIO_MODE_HYBRID);
  Runtime::get().stats().reset();
  AlignedBuffer buf(16 * M, 4096);
  ASSERT_EQ(f->pread(buf.data(), 16 * M, 0), static_cast<ssize_t>(16 * M));
  EXPECT_EQ(stats().rule_requests[HIO_RULE_READ_CACHED], 1u);
  EXPECT_EQ(stats().bytes[HIO_OP_READ][HIO_PATH_BUFFERED], 16 * M);
  EXPECT_EQ(memcmp(buf.data(), data.data(), data.size()), 0);
  // Once dropped from the cache, the same read goes direct.
  ASSERT_EQ(f->sync(false), 0);
  ASSERT_EQ(posix_fadvise(f->fd(), 0, 0, POSIX_FADV_DONTNEED), 0);
  Runtime::get().stats().reset();
  ASSERT_EQ(f->pread(buf.data(), 16 * M, 0), static_cast<ssize_t>(16 * M));
  EXPECT_EQ(stats().rule_requests[HIO_RULE_READ_SIZE], 1u);
  EXPECT_EQ(memcmp(buf.data(), data.data(), data.size()), 0);
}

TEST_F(Engine, PartlyCachedReadServesTheCachedPrefixFirst) {
  auto f = open_file("pc");
  auto data = testing::random_bytes(16 * M, 15);
  set_mode(HIO_MODE_BUFFERED);
  ASSERT_EQ(f->pwrite(data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  ASSERT_EQ(f->sync(false), 0);
  ASSERT_EQ(posix_fadvise(f->fd(), 0, 0, POSIX_FADV_DONTNEED), 0);
  AlignedBuffer buf(16 * M, 4096);
  ASSERT_EQ(f->pread(buf.data(), 2 * M, 0), static_cast<ssize_t>(2 * M));  // caches [0, 2M+readahead)
  set_mode(HIO_MODE_HYBRID);
  Runtime::get().stats().reset();
  ASSERT_EQ(f->pread(buf.data(), 16 * M, 0), static_cast<ssize_t>(16 * M));
  EXPECT_EQ(memcmp(buf.data(), data.data(), data.size()), 0);
  hio_stats s = stats();
  EXPECT_EQ(s.cached_first_reads, 1u);
  EXPECT_GE(s.cached_first_bytes, 2 * M);
  EXPECT_GT(s.bytes[HIO_OP_READ][HIO_PATH_DIRECT], 0u);
  EXPECT_EQ(s.bytes[HIO_OP_READ][HIO_PATH_DIRECT] + s.bytes[HIO_OP_READ][HIO_PATH_BUFFERED], 16 * M);
  EXPECT_EQ(s.requests[HIO_OP_READ][HIO_PATH_DIRECT], 1u) << "one caller request, counted once";
}

TEST_F(Engine, ReadsTheCacheCopiesSlowlyToAreBouncedAndExact) {
  // Which reads through the cache are bounced (file/buffered_io.cc, buffered_read) on a
  // CPU that copies slowly at short distances: 256 KiB or more, into memory
  // 1-31 bytes past the offset's place in a page.
  assume_short_distance_copies_slow(true);
  char* page = reinterpret_cast<char*>(1 << 20);
  EXPECT_TRUE(File::bounces_read(page + 16, File::kBouncedReadMin, 0));
  EXPECT_TRUE(File::bounces_read(page + 1, M, 8192));
  EXPECT_TRUE(File::bounces_read(page, M, 4080));
  EXPECT_FALSE(File::bounces_read(page + 16, File::kBouncedReadMin - 1, 0));
  EXPECT_FALSE(File::bounces_read(page + 16, M, 16));
  EXPECT_FALSE(File::bounces_read(page + 32, M, 0));
  EXPECT_FALSE(File::bounces_read(page, M, 0));

  auto f = open_file("bounced");
  auto data = testing::random_bytes(10 * M + 100, 6);
  ASSERT_EQ(f->pwrite(data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  AlignedBuffer mem(17 * M, 4096);
  ASSERT_TRUE(mem);
  for (hio_mode mode : {HIO_MODE_BUFFERED, HIO_MODE_DONTCACHE}) {
    set_mode(mode);
    for (size_t skew : {1, 16, 31, 32}) {
      for (uint64_t offset : {uint64_t{0}, uint64_t{5000}, 3 * M + 4096}) {
        for (size_t len : {size_t{256 * K}, M + 17, 16 * M}) {
          char* buf = mem.data() + skew;
          memset(buf, 0x5a, len + 1);
          const size_t want = std::min<size_t>(len, data.size() - offset);  // the last ones end at EOF
          ASSERT_EQ(f->pread(buf, len, offset), static_cast<ssize_t>(want))
              << "mode " << mode << " skew " << skew << " offset " << offset << " len " << len;
          ASSERT_EQ(memcmp(buf, data.data() + offset, want), 0)
              << "mode " << mode << " skew " << skew << " offset " << offset << " len " << len;
          ASSERT_EQ(buf[want], 0x5a) << "wrote past what it read";
        }
      }
    }
    EXPECT_EQ(f->pread(mem.data() + 16, M, data.size()), 0) << "at EOF";
  }
}

// Under the shim the caller's memory is not trusted: a bounced read into
// memory that ends (unmapped, or not writable) moves what the kernel's own
// read moves there, and fails with EFAULT where it moves nothing.
TEST_F(Engine, BouncedReadsEndWhereTheCallersMemoryEnds) {
  auto f = open_file("bounced-bad");
  auto data = testing::random_bytes(8 * M, 7);
  ASSERT_EQ(f->pwrite(data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  set_mode(HIO_MODE_BUFFERED);
  set_transparent_mode(true);
  assume_short_distance_copies_slow(true);
  struct Damage {
    size_t at;  // from the start of the mapping
    int prot;   // PROT_NONE, PROT_READ; -1: unmapped
  };
  for (Damage d : {Damage{0, -1}, Damage{4096, -1}, Damage{1 * M + 12288, PROT_NONE}, Damage{3 * M, PROT_READ}}) {
    for (size_t skew : {1, 16}) {
      AlignedBuffer mem(4 * M, 4096);
      ASSERT_TRUE(mem);
      char* hole = mem.data() + d.at;
      ASSERT_EQ(d.prot < 0 ? munmap(hole, 4096) : mprotect(hole, 4096, d.prot), 0);
      char* buf = mem.data() + skew;
      const ssize_t kernel = ::pread(f->fd(), buf, 4 * M - skew, 4096);
      const int kernel_errno = errno;
      std::vector<char> landed(buf, buf + std::max<ssize_t>(kernel, 0));
      memset(buf, 0, static_cast<size_t>(std::max<ssize_t>(kernel, 0)));
      const ssize_t engine = f->pread(buf, 4 * M - skew, 4096);
      EXPECT_EQ(engine, kernel >= 0 ? kernel : -kernel_errno) << "damage at " << d.at << " skew " << skew;
      if (engine > 0) {
        EXPECT_EQ(memcmp(buf, landed.data(), static_cast<size_t>(engine)), 0);
      }
      if (d.prot >= 0) {
        mprotect(hole, 4096, PROT_READ | PROT_WRITE);
      } else {
        mmap(hole, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
      }
    }
  }
  set_transparent_mode(false);
}

TEST_F(Engine, DirtyRangeOverwriteStaysBuffered) {
  auto f = open_file("g");
  auto data = testing::random_bytes(4 * M, 6);
  set_mode(HIO_MODE_BUFFERED);
  ASSERT_EQ(f->pwrite(data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  set_mode(HIO_MODE_HYBRID);
  Runtime::get().stats().reset();
  ASSERT_EQ(f->pwrite(data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  hio_stats s = stats();
  if (s.probe_cachestat == 0) GTEST_SKIP() << "no cachestat(2): dirty pages cannot be seen";
  EXPECT_EQ(s.rule_requests[HIO_RULE_WRITE_DIRTY], 1u);
}

TEST_F(Engine, SmallRequestsStayBuffered) {
  auto f = open_file("h");
  char buf[4096] = {1, 2, 3};
  ASSERT_EQ(f->pwrite(buf, sizeof buf, 0), 4096);
  ASSERT_EQ(f->pread(buf, sizeof buf, 0), 4096);
  hio_stats s = stats();
  EXPECT_EQ(s.rule_requests[HIO_RULE_SMALL], 2u);
  EXPECT_EQ(s.probe_cachestat + s.probe_mincore, 0u) << "small requests must not pay for probes";
}

// The contention signal: writes made while another thread is writing the
// same file see writers >= 2, and medium writes then go direct (rule
// contended); alone, the same writes stay buffered.
TEST_F(Engine, ConcurrentWritersOfOneFileAreContended) {
  auto f = open_file("contended");
  auto data = testing::random_bytes(512 * K, 3);
  ASSERT_EQ(f->pwrite(data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  hio_stats alone = stats();
  EXPECT_EQ(hio_stats_rule_requests(&alone, HIO_RULE_CONTENDED), 0u);
  EXPECT_EQ(alone.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 0u);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      AlignedBuffer buf(512 * K, 4096);
      memcpy(buf.data(), data.data(), data.size());
      for (int i = 0; i < 100; ++i)
        EXPECT_EQ(f->pwrite(buf.data(), 512 * K, (t * 100 + i) * 512 * K), static_cast<ssize_t>(512 * K));
    });
  for (auto& th : threads) th.join();
  hio_stats s = stats();
  EXPECT_GT(hio_stats_rule_requests(&s, HIO_RULE_CONTENDED), 0u);
  EXPECT_GT(s.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 0u);
  ASSERT_EQ(f->close(), 0);
  std::vector<char> disk = testing::file_bytes(dir_.file("contended"));
  ASSERT_EQ(disk.size(), 400 * 512 * K);
  for (size_t at = 0; at < disk.size(); at += 512 * K) ASSERT_EQ(memcmp(disk.data() + at, data.data(), 512 * K), 0);
}

// RWF_DONTCACHE refused (tmpfs has no uncached buffered I/O): detected on
// the first request, counted once, plain buffered from then on, same bytes.
TEST_F(Engine, DontcacheRefusedFallsBackCleanly) {
  struct stat st;
  if (stat("/dev/shm", &st) != 0) GTEST_SKIP() << "no /dev/shm";
  char path[] = "/dev/shm/hio-dontcache-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  set_mode(HIO_MODE_DONTCACHE);
  File* raw = nullptr;
  ASSERT_EQ(File::adopt(Runtime::get(), fd, true, &raw), 0);
  std::unique_ptr<File> f(raw);
  auto data = testing::random_bytes(1 * M, 4);
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(f->pwrite(data.data(), data.size(), static_cast<uint64_t>(i) * M), static_cast<ssize_t>(M));
  std::vector<char> back(M);
  ASSERT_EQ(f->pread(back.data(), M, 2 * M), static_cast<ssize_t>(M));
  EXPECT_EQ(back, data);
  hio_stats s = stats();
  if (s.bytes[HIO_OP_WRITE][HIO_PATH_DONTCACHE] == 3 * M) {
    unlink(path);
    GTEST_SKIP() << "this kernel's tmpfs supports RWF_DONTCACHE: nothing to fall back from";
  }
  EXPECT_EQ(s.dontcache_refused, 1u) << "refused once, then not tried again";
  EXPECT_EQ(s.bytes[HIO_OP_WRITE][HIO_PATH_BUFFERED], 3 * M);
  EXPECT_EQ(s.bytes[HIO_OP_READ][HIO_PATH_BUFFERED], M);
  ASSERT_EQ(f->close(), 0);
  unlink(path);
}

TEST_F(Engine, ReadWriteShareThePosition) {
  auto f = open_file("i");
  auto data = testing::random_bytes(3 * M, 7);
  ASSERT_EQ(f->write(data.data(), 1000), 1000);
  ASSERT_EQ(f->write(data.data() + 1000, data.size() - 1000), static_cast<ssize_t>(data.size() - 1000));
  EXPECT_EQ(lseek(f->fd(), 0, SEEK_CUR), static_cast<off_t>(data.size()));
  ASSERT_EQ(lseek(f->fd(), 0, SEEK_SET), 0);
  std::vector<char> back(data.size());
  ASSERT_EQ(f->read(back.data(), back.size()), static_cast<ssize_t>(back.size()));
  EXPECT_EQ(back, data);
  EXPECT_EQ(f->read(back.data(), 10), 0);
}

TEST_F(Engine, AppendWritesAppend) {
  auto f = open_file("j", O_RDWR | O_CREAT | O_APPEND);
  auto data = testing::random_bytes(4 * M, 8);
  ASSERT_EQ(f->write(data.data(), 100), 100);
  ASSERT_EQ(f->pwrite(data.data() + 100, data.size() - 100, 0), static_cast<ssize_t>(data.size() - 100));
  EXPECT_EQ(stats().rule_requests[HIO_RULE_APPEND], 2u);
  ASSERT_EQ(f->close(), 0);
  EXPECT_EQ(testing::file_bytes(dir_.file("j")), data);
}

TEST_F(Engine, CallerODirectIsLeftAlone) {
  auto f = open_file("k", O_RDWR | O_CREAT | O_DIRECT);
  AlignedBuffer buf(64 * K, 4096);
  memset(buf.data(), 'z', 64 * K);
  ASSERT_EQ(f->pwrite(buf.data(), 64 * K, 0), static_cast<ssize_t>(64 * K));
  EXPECT_EQ(stats().rule_requests[HIO_RULE_CALLER_DIRECT], 1u);
  // Misaligned I/O on the caller's own O_DIRECT descriptor fails as it would without us.
  EXPECT_EQ(f->pwrite(buf.data() + 1, 100, 1), -EINVAL);
}

TEST_F(Engine, ForcedPoliciesGiveTheSameBytes) {
  for (hio_mode mode : {HIO_MODE_BUFFERED, HIO_MODE_DIRECT, HIO_MODE_DONTCACHE}) {
    set_mode(mode);
    Runtime::get().stats().reset();
    std::string name = std::string("m-") + hio_mode_name(mode);
    auto f = open_file(name);
    auto data = testing::random_bytes(3 * M + 3, mode);
    ASSERT_EQ(f->pwrite(data.data() + 1, data.size() - 1, 511), static_cast<ssize_t>(data.size() - 1));
    ASSERT_EQ(f->sync(false), 0);
    ASSERT_EQ(f->close(), 0);
    auto got = testing::file_bytes(dir_.file(name));
    ASSERT_EQ(got.size(), 511 + data.size() - 1);
    EXPECT_TRUE(std::equal(data.begin() + 1, data.end(), got.begin() + 511)) << name;
    hio_stats s = stats();
    if (mode == HIO_MODE_DIRECT) {
      EXPECT_GT(s.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 3 * M - 8 * K);
    } else if (mode == HIO_MODE_BUFFERED) {
      EXPECT_EQ(s.bytes[HIO_OP_WRITE][HIO_PATH_BUFFERED], data.size() - 1);
    } else {
      EXPECT_TRUE(s.bytes[HIO_OP_WRITE][HIO_PATH_DONTCACHE] == data.size() - 1 || s.dontcache_refused == 1)
          << "RWF_DONTCACHE neither used nor refused";
    }
  }
}

// ramfs has no direct I/O at all: O_DIRECT opens fail with EINVAL.
TEST_F(Engine, FilesystemWithoutODirectFallsBackOnce) {
  std::string mnt = dir_.file("ramfs");
  ASSERT_EQ(mkdir(mnt.c_str(), 0755), 0);
  if (mount("none", mnt.c_str(), "ramfs", 0, nullptr) != 0)
    GTEST_SKIP() << "cannot mount ramfs here (" << strerror(errno) << "); run as root to test";
  {
    File* raw = nullptr;
    ASSERT_EQ(File::open(Runtime::get(), (mnt + "/f").c_str(), O_RDWR | O_CREAT, 0644, &raw), 0);
    std::unique_ptr<File> f(raw);
    auto data = testing::random_bytes(8 * M, 9);
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(f->pwrite(data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
    hio_stats s = stats();
    EXPECT_EQ(s.direct_open_refused + s.direct_io_refused, 1u) << "fallback counted once";
    EXPECT_EQ(s.bytes[HIO_OP_WRITE][HIO_PATH_BUFFERED], 3 * data.size());
    std::vector<char> back(data.size());
    ASSERT_EQ(f->pread(back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
    EXPECT_EQ(back, data);
    f.reset();
  }
  EXPECT_EQ(umount(mnt.c_str()), 0);
}

// The twin lives high, close-on-exec, and its loss (a program closing every
// descriptor) costs nothing but a reopen.
// Partly cached records (kernel readahead behind a small header read caches
// the start of the next record): the cached parts come from the cache, the
// uncached part goes direct, instead of the whole record through the cache
// (rule read_cached).  The cached parts are made with a descriptor that
// does no readahead of its own (POSIX_FADV_RANDOM), so they are exact.
class PartlyCachedRecord : public Engine {
 protected:
  static constexpr uint64_t kHeader = 4096, kRecord = 8 * M;

  void SetUp() override {
    Engine::SetUp();
    data_ = testing::random_bytes(kHeader + kRecord + 4 * M, 21);
    auto w = open_file("rec");
    set_mode(HIO_MODE_BUFFERED);
    ASSERT_EQ(w->pwrite(data_.data(), data_.size(), 0), static_cast<ssize_t>(data_.size()));
    ASSERT_EQ(w->sync(false), 0);
    ASSERT_EQ(w->close(), 0);
    set_mode(HIO_MODE_HYBRID);
    plain_ = ::open(dir_.file("rec").c_str(), O_RDONLY);
    ASSERT_GE(plain_, 0);
    ASSERT_EQ(posix_fadvise(plain_, 0, 0, POSIX_FADV_DONTNEED), 0);
    ASSERT_EQ(posix_fadvise(plain_, 0, 0, POSIX_FADV_RANDOM), 0);
    f_ = open_file("rec", O_RDONLY);
    ASSERT_TRUE(f_);
  }
  void TearDown() override {
    if (plain_ >= 0) ::close(plain_);
  }
  // Puts [offset, offset + len) into the page cache, and nothing around it.
  void cache(uint64_t offset, uint64_t len) {
    std::vector<char> tmp(len);
    ASSERT_EQ(::pread(plain_, tmp.data(), len, static_cast<off_t>(offset)), static_cast<ssize_t>(len));
  }
  int64_t cached_pages(uint64_t offset, uint64_t len) { return probe_cache(plain_, offset, len).cached_pages; }
  // Reads the header through the engine (small: the page cache), then the
  // record, and checks the record's bytes and where they came from.
  void read_record_expecting_direct(uint64_t uncached_bytes) {
    AlignedBuffer buf(kRecord, 4096);
    ASSERT_EQ(f_->pread(buf.data(), kHeader, 0), static_cast<ssize_t>(kHeader));
    const int64_t cached = cached_pages(kHeader, kRecord);
    ASSERT_GE(cached, static_cast<int64_t>(kRecord / 4096 / 2)) << "mostly cached: rule read_cached before this change";
    Runtime::get().stats().reset();
    ASSERT_EQ(f_->pread(buf.data(), kRecord, kHeader), static_cast<ssize_t>(kRecord));
    EXPECT_EQ(memcmp(buf.data(), data_.data() + kHeader, kRecord), 0);
    hio_stats s = stats();
    EXPECT_EQ(s.bytes[HIO_OP_READ][HIO_PATH_DIRECT], kRecord - static_cast<uint64_t>(cached) * 4096)
        << "exactly the uncached part went direct";
    EXPECT_EQ(s.bytes[HIO_OP_READ][HIO_PATH_DIRECT], uncached_bytes);
    EXPECT_EQ(s.cached_first_bytes, kRecord - uncached_bytes);
    EXPECT_EQ(s.bytes[HIO_OP_READ][HIO_PATH_BUFFERED], kRecord - uncached_bytes);
    EXPECT_EQ(s.requests[HIO_OP_READ][HIO_PATH_DIRECT], 1u);
  }

  std::vector<char> data_;
  int plain_ = -1;
  std::unique_ptr<File> f_;
};

TEST_F(PartlyCachedRecord, CachedStartComesFromTheCacheTheRestGoesDirect) {
  cache(0, kHeader + 6 * M);  // what readahead behind the header read cached
  read_record_expecting_direct(2 * M);
}

TEST_F(PartlyCachedRecord, CachedEndComesFromTheCacheTheRestGoesDirect) {
  cache(0, kHeader);
  cache(kHeader + 2 * M, 6 * M);
  read_record_expecting_direct(2 * M);
}

TEST_F(PartlyCachedRecord, CachedStartThenCachedIslandsGoDirectAfterTheStart) {
  // Start cached, then a gap, a cached island and an uncached end: the
  // cached start from the cache, everything after it direct.  (A record
  // whose two ends are both cached looks cached to the sampling probe,
  // File::probe_cache_sampled, and stays in the cache.)
  cache(0, kHeader + 3 * M);
  cache(kHeader + 5 * M, 2 * M);
  AlignedBuffer buf(kRecord, 4096);
  ASSERT_EQ(f_->pread(buf.data(), kHeader, 0), static_cast<ssize_t>(kHeader));
  Runtime::get().stats().reset();
  ASSERT_EQ(f_->pread(buf.data(), kRecord, kHeader), static_cast<ssize_t>(kRecord));
  EXPECT_EQ(memcmp(buf.data(), data_.data() + kHeader, kRecord), 0);
  hio_stats s = stats();
  EXPECT_EQ(s.cached_first_bytes, 3 * M);
  EXPECT_EQ(s.bytes[HIO_OP_READ][HIO_PATH_DIRECT], 5 * M);
  EXPECT_EQ(s.requests[HIO_OP_READ][HIO_PATH_DIRECT], 1u);
}

TEST_F(PartlyCachedRecord, AFullyCachedRecordStaysInTheCache) {
  cache(0, kHeader + kRecord);
  AlignedBuffer buf(kRecord, 4096);
  Runtime::get().stats().reset();
  ASSERT_EQ(f_->pread(buf.data(), kRecord, kHeader), static_cast<ssize_t>(kRecord));
  EXPECT_EQ(memcmp(buf.data(), data_.data() + kHeader, kRecord), 0);
  EXPECT_EQ(stats().rule_requests[HIO_RULE_READ_CACHED], 1u);
  EXPECT_EQ(stats().bytes[HIO_OP_READ][HIO_PATH_DIRECT], 0u);
}

TEST_F(Engine, DirectTwinIsPrivateAndSurvivesBeingClosed) {
  auto f = open_file("tw");
  AlignedBuffer buf(4 * M, 4096);
  memset(buf.data(), 'a', 4 * M);
  ASSERT_EQ(f->pwrite(buf.data(), 4 * M, 0), static_cast<ssize_t>(4 * M));
  int twin = -1;
  for (int fd = 0; fd < 65536 && twin < 0; ++fd)
    if (private_fd_owner(fd) == f.get()) twin = fd;
  ASSERT_GE(twin, 0) << "no registered twin";
  EXPECT_GT(twin, f->fd() + 100) << "the twin should sit high in the descriptor space";
  EXPECT_TRUE(fcntl(twin, F_GETFD) & FD_CLOEXEC);
  EXPECT_EQ(fcntl(f->fd(), F_GETFL) & O_DIRECT, 0) << "the caller's descriptor is unchanged";

  // Behind the engine's back: closed and not told (EBADF path).
  ASSERT_EQ(close(twin), 0);
  memset(buf.data(), 'b', 4 * M);
  ASSERT_EQ(f->pwrite(buf.data(), 4 * M, 4 * M), static_cast<ssize_t>(4 * M));
  // Told (the shim's path): forgotten, then reopened on the next direct write.
  for (int fd = 0; fd < 65536; ++fd)
    if (private_fd_owner(fd) == f.get()) {
      f->forget_direct_fd(fd);
      close(fd);
    }
  memset(buf.data(), 'c', 4 * M);
  ASSERT_EQ(f->pwrite(buf.data(), 4 * M, 8 * M), static_cast<ssize_t>(4 * M));
  EXPECT_GT(stats().bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 4 * M) << "direct I/O resumed after the reopen";
  ASSERT_EQ(f->close(), 0);
  auto got = testing::file_bytes(dir_.file("tw"));
  ASSERT_EQ(got.size(), 12 * M);
  EXPECT_TRUE(std::all_of(got.begin(), got.begin() + 4 * M, [](char c) { return c == 'a'; }));
  EXPECT_TRUE(std::all_of(got.begin() + 4 * M, got.begin() + 8 * M, [](char c) { return c == 'b'; }));
  EXPECT_TRUE(std::all_of(got.begin() + 8 * M, got.end(), [](char c) { return c == 'c'; }));
}

TEST_F(Engine, NonRegularFilesAreRefused) {
  File* f = nullptr;
  int fd = open("/dev/null", O_RDWR);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(File::adopt(Runtime::get(), fd, false, &f), -EINVAL);
  close(fd);
}

}  // namespace
}  // namespace hybridio

namespace hybridio {
namespace {

// HYBRIDIO_LEARN=off (as CTest runs this binary): the configured policy,
// exactly - nothing measured, explored, relabelled or persisted.
TEST(EngineLearningOff, TheConfiguredPolicyExactly) {
  if (Runtime::get().config().learn) GTEST_SKIP() << "learning is on in this environment (HYBRIDIO_LEARN unset or on)";
  ASSERT_EQ(Runtime::get().learner(), nullptr) << "no learner, so no exploration and no state file";
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  hio_policy_config c;
  hio_policy_config_defaults(&c);
  // The counts below are the size rules': memory pressure from whatever
  // else runs on the machine (a test filling a memory cgroup) would lower
  // the thresholds and move requests to `pressure`.
  c.pressure_high = 101;
  Runtime::get().set_policy(c);
  Runtime::get().stats().reset();
  File* raw = nullptr;
  ASSERT_EQ(File::open(Runtime::get(), dir.file("off").c_str(), O_RDWR | O_CREAT, 0644, &raw), 0);
  std::unique_ptr<File> f(raw);
  AlignedBuffer buf(4 * M, 4096);
  memset(buf.data(), 7, 4 * M);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(f->pwrite(buf.data(), 1 * M, i * M), static_cast<ssize_t>(M));
  ASSERT_EQ(f->sync(false), 0);
  for (int i = 0; i < 16; ++i) ASSERT_EQ(f->pread(buf.data(), 4 * M, i * 4 * M), static_cast<ssize_t>(4 * M));
  const hio_stats s = Runtime::get().stats().snapshot();
  // 1 MiB writes: four buffered (small), then the sequential stream direct; 4 MiB reads below 8 MiB: buffered.
  EXPECT_EQ(hio_stats_rule_requests(&s, HIO_RULE_SMALL), 4u + 16u);
  EXPECT_EQ(hio_stats_rule_requests(&s, HIO_RULE_SEQUENTIAL), 60u);
  EXPECT_EQ(hio_stats_rule_requests(&s, HIO_RULE_LEARNED), 0u);
  EXPECT_EQ(hio_stats_rule_requests(&s, HIO_RULE_EXPLORED), 0u);
  EXPECT_EQ(s.learn_samples + s.learn_deferred + s.learn_moves, 0u);
  EXPECT_EQ(s.learn_explored_buffered + s.learn_explored_direct + s.learn_explored_dontcache, 0u);
}

}  // namespace
}  // namespace hybridio
