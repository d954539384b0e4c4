// write_behind_test.cc - opt-in write-behind: the bytes, the size at once,
// reads and overlapping writes waiting for queued ones, deferred errors
// reported once by fsync or close, bounded staging memory, fork.
#include "io/write_behind.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine_fixture.h"
#include "expect_bytes.h"
#include "file_bytes.h"
#include "hybridio/hybridio.h"
#include "io/uring_engine.h"

namespace hybridio {
namespace {

constexpr uint64_t K = 1024, M = 1024 * 1024;

std::atomic<uint64_t> g_fail_offset{~0ULL};
int fail_at(hio_op op, uint64_t offset, uint64_t, int res) {
  return op == HIO_OP_WRITE && offset == g_fail_offset.load() ? -EIO : res;
}

int slow_completion(hio_op, uint64_t, uint64_t, int res) {
  usleep(2000);
  return res;
}

class WriteBehind : public testing::DirectEngineTest {
 protected:
  void configure(hio_engine_config& e) override {
    testing::DirectEngineTest::configure(e);
    e.write_behind = 1;
    e.write_behind_limit = 8 * M;
  }
  void SetUp() override {
    testing::DirectEngineTest::SetUp();
    g_fail_offset = ~0ULL;
  }
};

TEST_F(WriteBehind, BytesSizeAndReadsAreExactImmediately) {
  const std::string path = dir_.file("wb");
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  const size_t len = 1 * M;
  std::vector<char> model;
  std::vector<char> readback(len + 8192);
  for (int i = 0; i < 40; ++i) {
    std::vector<char> data = testing::random_bytes(len, static_cast<unsigned>(i));
    // Sequential, then overwrites of the middle; some unaligned (head and tail pieces).
    uint64_t off = i < 20 ? static_cast<uint64_t>(i) * len : (static_cast<uint64_t>(i) * 777 * K) % (16 * M) + (i % 3);
    ASSERT_EQ(hio_pwrite(f, data.data(), len, static_cast<off_t>(off)), static_cast<ssize_t>(len)) << i;
    if (model.size() < off + len) model.resize(off + len, 0);
    memcpy(model.data() + off, data.data(), len);
    struct stat st;
    ASSERT_EQ(fstat(hio_fd(f), &st), 0);
    ASSERT_EQ(static_cast<uint64_t>(st.st_size), model.size()) << "size at once, write " << i;
    // Read what was just written (it may still be queued): the read waits.
    ASSERT_EQ(hio_pread(f, readback.data(), len, static_cast<off_t>(off)), static_cast<ssize_t>(len));
    ASSERT_TRUE(testing::same_bytes(readback.data(), model.data() + off, len)) << "read after write " << i;
  }
  ASSERT_EQ(hio_fsync(f), 0);
  ASSERT_EQ(hio_close(f), 0);
  ASSERT_TRUE(testing::file_holds(path, model));
  hio_stats s = stats();
  EXPECT_GT(s.write_behind_writes, 30u);
  EXPECT_EQ(s.write_behind_errors, 0u);
}

TEST_F(WriteBehind, OverlappingWritesLandInOrder) {
  const std::string path = dir_.file("order");
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  const size_t len = 2 * M;
  std::vector<char> last;
  for (int i = 0; i < 30; ++i) {
    last = testing::random_bytes(len, 100 + static_cast<unsigned>(i));
    ASSERT_EQ(hio_pwrite(f, last.data(), len, 0), static_cast<ssize_t>(len));
  }
  ASSERT_EQ(hio_close(f), 0);
  ASSERT_TRUE(testing::file_holds(path, last));
}

TEST_F(WriteBehind, DeferredErrorIsReportedOnceByFsync) {
  const std::string path = dir_.file("eio");
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  const size_t len = 1 * M;
  std::vector<char> data = testing::random_bytes(len, 7);
  ASSERT_EQ(hio_pwrite(f, data.data(), len, 0), static_cast<ssize_t>(len));  // proves direct I/O
  set_completion_hook(fail_at);
  g_fail_offset = 3 * M + 128 * K;
  for (int i = 1; i < 6; ++i)
    ASSERT_EQ(hio_pwrite(f, data.data(), len, static_cast<off_t>(i * len)), static_cast<ssize_t>(len))
        << "the call itself succeeds: the write is queued";
  EXPECT_EQ(hio_fsync(f), -EIO);
  EXPECT_EQ(hio_fsync(f), 0) << "reported once";
  set_completion_hook(nullptr);
  // Not fsynced: the error comes with close.
  set_completion_hook(fail_at);
  g_fail_offset = 8 * M;
  ASSERT_EQ(hio_pwrite(f, data.data(), len, 8 * M), static_cast<ssize_t>(len));
  EXPECT_EQ(hio_close(f), -EIO);
  set_completion_hook(nullptr);
  EXPECT_EQ(stats().write_behind_errors, 2u);
}

TEST_F(WriteBehind, StagingMemoryIsBounded) {
  change_engine([](hio_engine_config& e) { e.write_behind_limit = 2 * M; });
  const std::string path = dir_.file("bounded");
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  const size_t len = 1 * M;
  std::vector<char> all = testing::random_bytes(64 * len, 200);
  // Every completed chunk takes 2 ms more to be seen, so the writes outrun
  // the writer whatever the machine (a fast pipeline kept up with a caller
  // slowed down by ASan) and the limit must hold them back.
  set_completion_hook(slow_completion);
  for (int i = 0; i < 64; ++i)
    ASSERT_EQ(hio_pwrite(f, all.data() + i * len, len, static_cast<off_t>(i * len)), static_cast<ssize_t>(len));
  set_completion_hook(nullptr);
  // A write larger than the limit is done synchronously.
  std::vector<char> big = testing::random_bytes(4 * M, 300);
  ASSERT_EQ(hio_pwrite(f, big.data(), big.size(), 64 * M), static_cast<ssize_t>(big.size()));
  ASSERT_EQ(hio_close(f), 0);
  ASSERT_TRUE(testing::file_holds(path, 68 * M, 0, all.data(), all.size()));
  ASSERT_TRUE(testing::file_holds(path, 68 * M, 64 * M, big.data(), big.size()));
  hio_stats s = stats();
  EXPECT_EQ(s.write_behind_writes, 63u);  // all but the first (direct not yet proven)
  EXPECT_GT(s.write_behind_stalls, 0u);
}

TEST_F(WriteBehind, TruncateAndForkWaitForQueuedWrites) {
  const std::string path = dir_.file("trunc");
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  const size_t len = 1 * M;
  std::vector<char> data = testing::random_bytes(len, 9);
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(hio_pwrite(f, data.data(), len, static_cast<off_t>(i * len)), static_cast<ssize_t>(len));
  // A truncate must not be undone by a queued write landing after it.
  ASSERT_EQ(hio_ftruncate(f, 2 * M), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(0);  // inherits no queued write
  int status;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(hio_pwrite(f, data.data(), len, static_cast<off_t>(8 * M + i * len)), static_cast<ssize_t>(len));
  pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The parent's queue was drained before fork: the file is complete here.
    struct stat st;
    _exit(fstat(hio_fd(f), &st) == 0 && st.st_size == static_cast<off_t>(12 * M) ? 0 : 1);
  }
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(hio_close(f), 0);
  std::vector<char> disk = testing::file_bytes(path);
  ASSERT_EQ(disk.size(), 12 * M);
  EXPECT_TRUE(testing::same_bytes(disk.data() + M, data.data(), len));
  for (size_t i = 2 * M; i < 8 * M; i += 4096) ASSERT_EQ(disk[i], 0) << i;
  EXPECT_TRUE(testing::same_bytes(disk.data() + 11 * M, data.data(), len));
}

// Chunks of several queued writes are in flight together; a chunk that
// comes back short or with EAGAIN in the middle of that must still leave
// every byte right (the short job finished through the page cache, the
// EAGAIN chunk retried), whichever job completes first.
std::atomic<uint64_t> g_chunk_seen{0};
int short_or_again(hio_op op, uint64_t, uint64_t, int res) {
  if (op != HIO_OP_WRITE || res <= 0) return res;
  const uint64_t n = g_chunk_seen.fetch_add(1);
  if (n % 7 == 3) return res / 2 / 4096 * 4096;  // short, still aligned
  if (n % 11 == 5) return -EAGAIN;
  return res;
}

TEST_F(WriteBehind, ShortAndRetriedChunksAcrossQueuedWritesLoseNothing) {
  const std::string path = dir_.file("pipeline");
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  const size_t len = 256 * K;  // 4 chunks of 64 KiB, queue depth 4: the pipeline spans writes
  std::vector<char> all = testing::random_bytes(64 * len, 400);
  ASSERT_EQ(hio_pwrite(f, all.data(), len, 0), static_cast<ssize_t>(len));  // proves direct I/O
  g_chunk_seen = 0;
  set_completion_hook(short_or_again);
  for (size_t i = 1; i < 64; ++i)
    ASSERT_EQ(hio_pwrite(f, all.data() + i * len, len, static_cast<off_t>(i * len)), static_cast<ssize_t>(len));
  EXPECT_EQ(hio_fsync(f), 0) << "short and EAGAIN chunks are not errors";
  set_completion_hook(nullptr);
  ASSERT_EQ(hio_close(f), 0);
  ASSERT_TRUE(testing::file_holds(path, all));
  hio_stats s = stats();
  EXPECT_EQ(s.write_behind_writes, 63u);
  EXPECT_GT(s.uring_retries, 0u);
  // Each extending write sends its last page through the page cache; the
  // rest of the short jobs adds to that.
  EXPECT_GT(s.bytes[HIO_OP_WRITE][HIO_PATH_BUFFERED], 63u * 4096) << "the short jobs' rest went through the page cache";
}

TEST_F(WriteBehind, ForkedChildHasAWriterOfItsOwn) {
  const std::string path = dir_.file("child");
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  std::vector<char> data = testing::random_bytes(8 * M, 500);
  for (int i = 0; i < 8; ++i)  // the parent's writer thread exists
    ASSERT_EQ(hio_pwrite(f, data.data() + i * M, M, static_cast<off_t>(i * M)), static_cast<ssize_t>(M));
  ASSERT_EQ(hio_close(f), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Queued writes in the child need a writer there: without one, fsync
    // would wait forever (alarm turns that into a failure).
    alarm(60);
    hio_file* g;
    if (hio_open(path.c_str(), O_RDWR, 0, &g) != 0) _exit(2);
    std::vector<char> mine = testing::random_bytes(8 * M, 501);
    for (int i = 0; i < 8; ++i)
      if (hio_pwrite(g, mine.data() + i * M, M, static_cast<off_t>(i * M)) != static_cast<ssize_t>(M)) _exit(3);
    if (hio_fsync(g) != 0 || hio_close(g) != 0) _exit(4);
    std::vector<char> disk = testing::file_bytes(path);
    hio_stats s;
    hio_stats_get(&s);
    _exit(disk == mine && s.write_behind_writes > 0 ? 0 : 5);
  }
  int status;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "child killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace hybridio
