// syscall_table_test.cc - every path of the engine can be faulted through
// the syscall table (and the completion hook) on real files, without root:
// the synchronous direct path, the parallel io_uring path, write-behind,
// read-ahead and RWF_DONTCACHE.  One test per path; the real call runs
// underneath unless the test injects a fault.
#include "platform/syscall_table.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine_fixture.h"
#include "expect_bytes.h"
#include "file_bytes.h"
#include "hybridio/hybridio.h"
#include "io/uring_engine.h"
#include "runtime/runtime.h"

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080  // Linux 6.14+ uapi value
#endif

namespace hybridio {
namespace {

constexpr uint64_t K = 1024, M = 1024 * 1024;

bool is_direct(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  return flags >= 0 && (flags & O_DIRECT);
}

// Faults the tests turn on; each fake calls the real function otherwise.
std::atomic<int> g_direct_write_errno{0};            // every direct pwrite fails with it
std::atomic<uint64_t> g_direct_write_at{~0ULL};      // ... or only the one at this offset
std::atomic<int> g_dontcache_errno{0};               // RWF_DONTCACHE transfers fail with it
std::atomic<int> g_enter_calls{0};                   // io_uring entries seen
std::atomic<int> g_enter_fail_after{1 << 30};        // entries after this many fail
std::atomic<int> g_enter_failures{0};
std::atomic<int> g_submits_after_failure{0};         // submissions tried once one entry failed

ssize_t fake_pwrite(int fd, const void* buf, size_t len, off_t offset) {
  const int err = g_direct_write_errno.load();
  const uint64_t at = g_direct_write_at.load();
  if (err && is_direct(fd) && (at == ~0ULL || at == static_cast<uint64_t>(offset))) {
    errno = err;
    return -1;
  }
  return real_syscalls().pwrite(fd, buf, len, offset);
}

ssize_t fake_pwritev2(int fd, const iovec* iov, int n, off_t offset, int flags) {
  if (const int err = g_dontcache_errno.load(); err && (flags & RWF_DONTCACHE)) {
    errno = err;
    return -1;
  }
  return real_syscalls().pwritev2(fd, iov, n, offset, flags);
}

int fake_ring_enter(io_uring* ring, unsigned wait_nr, bool submit) {
  if (submit && g_enter_failures.load() > 0) g_submits_after_failure.fetch_add(1);
  if (g_enter_calls.fetch_add(1) >= g_enter_fail_after.load()) {
    g_enter_failures.fetch_add(1);
    return -ENXIO;
  }
  return real_syscalls().ring_enter(ring, wait_nr, submit);
}

// Completion results: a short chunk at one offset.
std::atomic<uint64_t> g_short_at{~0ULL};
std::atomic<int> g_completion_errno{0};
int fake_completion(hio_op, uint64_t offset, uint64_t, int res) {
  if (offset != g_short_at.load() || res <= 0) return res;
  if (const int err = g_completion_errno.load()) return -err;
  return 4096;
}

class SyscallSeam : public testing::DirectEngineTest {
 protected:
  void SetUp() override {
    testing::DirectEngineTest::SetUp();
    g_direct_write_errno = 0;
    g_direct_write_at = ~0ULL;
    g_dontcache_errno = 0;
    g_enter_calls = 0;
    g_enter_fail_after = 1 << 30;
    g_enter_failures = 0;
    g_submits_after_failure = 0;
    g_short_at = ~0ULL;
    g_completion_errno = 0;
    table_ = real_syscalls();
    table_.pwrite = fake_pwrite;
    table_.pwritev2 = fake_pwritev2;
    table_.ring_enter = fake_ring_enter;
    set_syscalls_for_testing(&table_);
  }
  void TearDown() override {
    set_syscalls_for_testing(nullptr);
    testing::DirectEngineTest::TearDown();
  }
  static void set_engine(int uring, int write_behind, uint64_t read_ahead) {
    hio_engine_config e;
    hio_engine_get(&e);
    e.uring = uring;
    e.write_behind = write_behind;
    e.write_behind_limit = 8 * M;
    e.read_ahead = read_ahead;
    hio_engine_set(&e);
  }
  static std::vector<char> aligned_copy(const std::vector<char>& v, char** out) {
    void* p = nullptr;
    EXPECT_EQ(posix_memalign(&p, 4096, v.size()), 0);
    memcpy(p, v.data(), v.size());
    *out = static_cast<char*>(p);
    return v;
  }

  SyscallTable table_{};
};

// Synchronous direct path: EIO on the direct write is the call's result,
// and the file holds exactly the bytes the calls reported.
TEST_F(SyscallSeam, EioOnASynchronousDirectWriteIsReportedExactly) {
  set_engine(0, 0, 0);
  const std::string path = dir_.file("sync");
  char* buf;
  const std::vector<char> data = aligned_copy(testing::random_bytes(1 * M, 1), &buf);
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  ASSERT_EQ(hio_pwrite(f, buf, M, 0), static_cast<ssize_t>(M));
  g_direct_write_errno = EIO;
  EXPECT_EQ(hio_pwrite(f, buf, M, M), -EIO) << "nothing written: the errno";
  // A misaligned request: its head goes through the page cache, its body
  // fails direct - the call reports the head, and the file holds just it.
  EXPECT_EQ(hio_pwrite(f, buf, M, M + 100), static_cast<ssize_t>(4096 - 100));
  g_direct_write_errno = 0;
  ASSERT_EQ(hio_close(f), 0);
  ASSERT_TRUE(testing::file_holds(path, M + 4096, 0, data.data(), M));
  ASSERT_TRUE(testing::file_holds(path, M + 4096, M + 100, data.data(), 4096 - 100));
  EXPECT_GT(stats().bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 0u);
  free(buf);
}

// Parallel io_uring path: a short completion ends the prefix there; a ring
// that stops taking work ends it where the chunks did, with its errno, and
// the next request gets a fresh ring.
TEST_F(SyscallSeam, ParallelReadReportsThePrefixOnShortAndFailedRings) {
  set_engine(1, 0, 0);
  if (!uring_usable()) GTEST_SKIP() << "io_uring is not usable here";
  const std::string path = dir_.file("parallel");
  const std::vector<char> data = testing::random_bytes(1 * M, 2);
  {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
    ASSERT_EQ(::fsync(fd), 0);
    ::close(fd);
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECT);
  if (fd < 0) GTEST_SKIP() << "no O_DIRECT on this filesystem";
  void* p = nullptr;
  ASSERT_EQ(posix_memalign(&p, 4096, M), 0);
  char* buf = static_cast<char*>(p);
  Stats& stats = Runtime::get().stats();
  const EngineSettings e = engine_settings();

  set_completion_hook(fake_completion);
  g_short_at = 3 * 64 * K;
  ChunkedResult r = parallel_direct(HIO_OP_READ, fd, buf, M, 0, false, e, stats);
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.done, 3 * 64 * K + 4096);
  EXPECT_TRUE(testing::same_bytes(buf, data.data(), r.done));
  set_completion_hook(nullptr);

  g_enter_fail_after = g_enter_calls.load() + 1;  // the first entry works, the rest fail
  memset(buf, 0, M);
  r = parallel_direct(HIO_OP_READ, fd, buf, M, 0, false, e, stats);
  EXPECT_EQ(r.error, ENXIO);
  EXPECT_GE(g_enter_failures.load(), 1);
  EXPECT_LT(r.done, M);
  EXPECT_EQ(r.done % (64 * K), 0u) << "whole chunks, up to the first one the ring did not take";
  EXPECT_TRUE(testing::same_bytes(buf, data.data(), r.done));

  g_enter_fail_after = 1 << 30;
  memset(buf, 0, M);
  r = parallel_direct(HIO_OP_READ, fd, buf, M, 0, false, e, stats);
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(r.done, M) << "a fresh ring";
  EXPECT_TRUE(testing::same_bytes(buf, data.data(), M));
  ::close(fd);
  free(buf);
}

// Write-behind: ENOSPC on a queued write - from the synchronous writer's
// system call, and from an io_uring completion - is reported once, by the
// next fsync.
TEST_F(SyscallSeam, EnospcOnAQueuedWriteSurfacesOnceAtFsync) {
  for (int uring : {0, 1}) {
    set_engine(uring, 1, 0);
    const std::string path = dir_.file("wb" + std::to_string(uring));
    char* buf;
    const std::vector<char> data = aligned_copy(testing::random_bytes(1 * M, 3), &buf);
    hio_file* f;
    ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
    ASSERT_EQ(hio_pwrite(f, buf, M, 0), static_cast<ssize_t>(M));  // proves direct I/O
    if (uring) {
      set_completion_hook(fake_completion);
      g_completion_errno = ENOSPC;
      g_short_at = 3 * M + 128 * K;
    } else {
      g_direct_write_errno = ENOSPC;
      g_direct_write_at = 3 * M;
    }
    for (int i = 1; i < 6; ++i)
      ASSERT_EQ(hio_pwrite(f, buf, M, static_cast<off_t>(i * M)), static_cast<ssize_t>(M)) << "queued, uring " << uring;
    EXPECT_EQ(hio_fsync(f), -ENOSPC) << "uring " << uring;
    EXPECT_EQ(hio_fsync(f), 0) << "reported once, uring " << uring;
    set_completion_hook(nullptr);
    g_direct_write_errno = 0;
    ASSERT_EQ(hio_close(f), 0);
    ASSERT_TRUE(testing::file_holds(path, 6 * M, 0, data.data(), M));
    free(buf);
  }
  EXPECT_EQ(stats().write_behind_errors, 2u);
}

// RWF_DONTCACHE: an I/O error is the call's result; refused (EOPNOTSUPP)
// falls back to the page cache for good, counted, with the bytes right.
TEST_F(SyscallSeam, DontcacheErrorsAndRefusalAreInjectable) {
  hio_policy_config c;
  hio_policy_get(&c);
  c.mode = HIO_MODE_DONTCACHE;
  hio_policy_set(&c);
  const std::vector<char> data = testing::random_bytes(1 * M, 5);
  hio_file* f;
  const std::string eio = dir_.file("eio");
  ASSERT_EQ(hio_open(eio.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  g_dontcache_errno = EIO;
  EXPECT_EQ(hio_pwrite(f, data.data(), M, 0), -EIO);
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_TRUE(testing::file_holds(eio, 0, 0, nullptr, 0)) << "nothing reported, nothing written";

  const std::string refused = dir_.file("refused");
  ASSERT_EQ(hio_open(refused.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  g_dontcache_errno = EOPNOTSUPP;
  EXPECT_EQ(hio_pwrite(f, data.data(), M, 0), static_cast<ssize_t>(M));
  EXPECT_EQ(hio_pwrite(f, data.data(), M, M), static_cast<ssize_t>(M));
  ASSERT_EQ(hio_close(f), 0);
  ASSERT_TRUE(testing::file_holds(refused, 2 * M, M, data.data(), M));
  const hio_stats s = stats();
  EXPECT_EQ(s.dontcache_refused, 1u);
  EXPECT_EQ(s.bytes[HIO_OP_WRITE][HIO_PATH_BUFFERED], 2 * M);
}

}  // namespace
}  // namespace hybridio
