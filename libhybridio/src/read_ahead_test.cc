// read_ahead_test.cc - read-ahead of sequential direct reads: the bytes,
// EOF, changes by other descriptors and by the library seen at once (the
// read lease), no window without a lease, failed read-aheads reported by
// the read itself, windows given up and their memory returned, fork,
// concurrent readers.
#include "read_ahead.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine_fixture.h"
#include "file.h"
#include "file_bytes.h"
#include "hybridio/hybridio.h"
#include "stats.h"
#include "uring_engine.h"

namespace hybridio {
namespace {

constexpr uint64_t K = 1024, M = 1024 * 1024;
constexpr uint64_t kRead = 256 * K;  // four of the fixture's 64 KiB chunks

std::atomic<uint64_t> g_fail_offset{~0ULL};
std::atomic<int> g_fail_count{0};  // failures left to inject at g_fail_offset
int fail_reads_at(hio_op op, uint64_t offset, uint64_t, int res) {
  if (op == HIO_OP_READ && offset == g_fail_offset.load() && g_fail_count.load() > 0) {
    g_fail_count.fetch_sub(1);
    return -EIO;
  }
  return res;
}

class ReadAheadTest : public testing::DirectEngineTest {
 protected:
  void configure(hio_engine_config& e) override {
    testing::DirectEngineTest::configure(e);
    e.read_ahead = 2 * M;  // eight reads of kRead ahead
  }
  void SetUp() override {
    testing::DirectEngineTest::SetUp();
    g_fail_offset = ~0ULL;
    g_fail_count = 0;
  }

  // A file of `size` random bytes, written and synced through a plain
  // descriptor (closed: nothing keeps it open for writing).
  std::vector<char> make_file(const std::string& path, size_t size, unsigned seed) {
    std::vector<char> data = testing::random_bytes(size, seed);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::pwrite(fd, data.data(), size, 0), static_cast<ssize_t>(size));
    EXPECT_EQ(::fsync(fd), 0);
    ::close(fd);
    return data;
  }

  // A file of `size` random bytes (`*model`), opened read-only as a File.
  std::unique_ptr<File> open_file(const std::string& path, size_t size, unsigned seed, std::vector<char>* model) {
    *model = make_file(path, size, seed);
    File* raw = nullptr;
    EXPECT_EQ(File::open(path.c_str(), O_RDONLY, 0, &raw), 0);
    return std::unique_ptr<File>(raw);
  }

  // Opens `path` and reads its first four requests: a window is then in flight.
  static hio_file* open_streaming(const std::string& path, const std::vector<char>& model, int flags) {
    hio_file* f = nullptr;
    EXPECT_EQ(hio_open(path.c_str(), flags, 0, &f), 0);
    if (!f) return nullptr;
    for (uint64_t off = 0; off < 4 * kRead; off += kRead) read_and_check(f, model, off);
    EXPECT_GT(stats().read_ahead_hits, 0u);
    EXPECT_GT(ReadAhead::staged_bytes(), 0u) << "a window is in flight";
    return f;
  }

  // Reads [offset, offset + kRead) through `f` and checks it against `model`.
  static void read_and_check(hio_file* f, const std::vector<char>& model, uint64_t offset) {
    std::vector<char> buf(kRead);
    const uint64_t want = offset >= model.size() ? 0 : std::min<uint64_t>(kRead, model.size() - offset);
    ASSERT_EQ(hio_pread(f, buf.data(), kRead, static_cast<off_t>(offset)), static_cast<ssize_t>(want)) << offset;
    ASSERT_EQ(memcmp(buf.data(), model.data() + offset, want), 0) << "bytes at " << offset;
  }
};

TEST_F(ReadAheadTest, SequentialReadsComeFromTheWindowToTheEnd) {
  const std::string path = dir_.file("seq");
  // Not a multiple of the request: the last read is short, then EOF.
  std::vector<char> model = make_file(path, 24 * M + 100 * K + 17, 1);
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);
  for (uint64_t off = 0; off <= model.size(); off += kRead) {
    read_and_check(f, model, off);
    if (off == 8 * M) {
      // From the block the read ended in to 2 MiB past its end: two 2 MiB blocks.
      EXPECT_EQ(ReadAhead::staged_bytes(), 4 * M) << "a full window in flight";
    }
  }
  hio_stats s = stats();
  // 97 reads: the first two start the stream; the short last one (cut to
  // the file's size) comes from the window too, but for its last 17 bytes,
  // less than a page, which go through the page cache.
  EXPECT_GE(s.read_ahead_hits, 90u);
  EXPECT_EQ(s.read_ahead_bytes, (s.read_ahead_hits - 1) * kRead + model.size() % kRead - 17);
  EXPECT_EQ(s.read_ahead_dropped, 0u);
  EXPECT_LE(ReadAhead::staged_bytes(), 2 * M) << "nothing past the end of the file is read ahead";
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_EQ(ReadAhead::staged_bytes(), 0u);
}

TEST_F(ReadAheadTest, OnByDefault) {
  hio_engine_config e;
  hio_engine_get(&e);
  e.read_ahead = saved_.read_ahead;  // the process default (no HYBRIDIO_READ_AHEAD in the test's environment)
  hio_engine_set(&e);
  ASSERT_EQ(e.read_ahead, 16 * M);
  const std::string path = dir_.file("default");
  std::vector<char> model = make_file(path, 4 * M, 2);
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);
  for (uint64_t off = 0; off < model.size(); off += kRead) read_and_check(f, model, off);
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_GT(stats().read_ahead_hits, 0u);
}

TEST_F(ReadAheadTest, AWindowStartsWithTwoBlocksAndGrowsToItsSize) {
  change_engine([](hio_engine_config& e) { e.read_ahead = 32 * M; });
  const std::string path = dir_.file("ramp");
  std::vector<char> model = make_file(path, 48 * M, 4);
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);
  std::vector<uint64_t> staged;
  for (uint64_t off = 0; off < 8 * kRead; off += kRead) {
    read_and_check(f, model, off);
    staged.push_back(ReadAhead::staged_bytes());
  }
  // The second read starts the window: from the 2 MiB block it ended in to
  // two blocks past its end, not all of the 32 MiB at once.
  EXPECT_EQ(staged[1], 6 * M);
  EXPECT_LT(staged[2], 16 * M) << "it doubles with every read of the stream";
  EXPECT_GE(staged[7], 32 * M) << "and reaches the 32 MiB asked for";
  for (uint64_t off = 8 * kRead; off < model.size(); off += kRead) read_and_check(f, model, off);
  EXPECT_EQ(stats().read_ahead_dropped, 0u);
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_EQ(ReadAhead::staged_bytes(), 0u);
}

TEST_F(ReadAheadTest, TheReadsOverAWindowsFirstBlocksArePriming) {
  // The fixture's window: 2 MiB ahead, in 2 MiB blocks, two of them at the
  // start.  The second read (at 256 KiB) starts it with the blocks at 0 and
  // 2 MiB; the reads from it to 4 MiB wait for that start, not for the
  // stream's pace (the learner does not measure them).
  std::vector<char> model;
  std::unique_ptr<File> f = open_file(dir_.file("priming"), 16 * M, 6, &model);
  ASSERT_TRUE(f);
  std::vector<char> buf(kRead);
  auto read_at = [&](uint64_t off) {
    ASSERT_EQ(f->pread(buf.data(), kRead, off), static_cast<ssize_t>(kRead)) << off;
    ASSERT_EQ(memcmp(buf.data(), model.data() + off, kRead), 0) << off;
  };
  const ReadAhead& ra = f->read_ahead();
  ASSERT_NO_FATAL_FAILURE(read_at(0));
  EXPECT_FALSE(ra.priming(0)) << "no window yet";
  ASSERT_NO_FATAL_FAILURE(read_at(kRead));
  EXPECT_FALSE(ra.priming(0)) << "before the read that started it";
  EXPECT_TRUE(ra.priming(kRead));
  EXPECT_TRUE(ra.priming(4 * M - kRead));
  EXPECT_EQ(ra.primed_end(), 4 * M);
  for (uint64_t off = 2 * kRead; off < 8 * M; off += kRead) ASSERT_NO_FATAL_FAILURE(read_at(off));
  EXPECT_FALSE(ra.priming(4 * M)) << "the stream's pace from here";
  EXPECT_EQ(ra.primed_end(), 4 * M) << "the window went on; it did not start again";
  // Elsewhere, the window is given up; the next stream's window starts anew.
  ASSERT_NO_FATAL_FAILURE(read_at(12 * M));
  ASSERT_NO_FATAL_FAILURE(read_at(12 * M + kRead));
  EXPECT_TRUE(ra.priming(12 * M + kRead));
  EXPECT_FALSE(ra.priming(kRead)) << "the old stream's start is forgotten";
  EXPECT_EQ(stats().read_ahead_dropped, 1u);
  ASSERT_EQ(f->close(), 0);
}

TEST_F(ReadAheadTest, AServedReadPutsTheNextBlocksInFlightBeforeItCopies) {
  std::vector<char> model;
  std::unique_ptr<File> f = open_file(dir_.file("refill"), 32 * M, 7, &model);
  ASSERT_TRUE(f);
  Stats stats;
  std::vector<char> buf(M);
  for (bool refill : {false, true}) {
    SCOPED_TRACE(refill ? "with the refill" : "without");
    ReadAhead ra(f.get());
    // 1 MiB reads, 8 MiB ahead: the second read starts the window with two
    // 2 MiB blocks, [2, 6) MiB.
    ra.advance(f->fd(), M, 0, 8 * M, stats);
    ra.advance(f->fd(), M, M, 8 * M, stats);
    ASSERT_EQ(ReadAhead::staged_bytes(), 4 * M);
    // The third read needs the block at 2 MiB.  With the refill it first
    // puts in flight what its advance() would: up to 8 MiB past its end at
    // the window's next doubling, three more blocks; without, nothing
    // until advance() is called.
    const ReadAhead::Refill next{8 * M, ~0ULL};
    ASSERT_EQ(ra.serve(buf.data(), M, 2 * M, stats, refill ? &next : nullptr), M);
    EXPECT_EQ(memcmp(buf.data(), model.data() + 2 * M, M), 0);
    EXPECT_EQ(ReadAhead::staged_bytes(), (refill ? 10 : 4) * M);
    // advance() puts nothing more in flight after a refill: the window is
    // where it would have been without one.
    ra.advance(f->fd(), M, 2 * M, 8 * M, stats);
    EXPECT_EQ(ReadAhead::staged_bytes(), 10 * M);
    for (uint64_t off = 3 * M; off < 24 * M; off += M) {
      ASSERT_EQ(ra.serve(buf.data(), M, off, stats, refill ? &next : nullptr), M) << off;
      ASSERT_EQ(memcmp(buf.data(), model.data() + off, M), 0) << off;
      ra.advance(f->fd(), M, off, 8 * M, stats);
    }
    // Held (limit 0, an explored run through the cache is next): nothing new.
    const uint64_t held = ReadAhead::staged_bytes();
    const ReadAhead::Refill hold{8 * M, 0};
    ASSERT_EQ(ra.serve(buf.data(), M, 24 * M, stats, &hold), M);
    EXPECT_LE(ReadAhead::staged_bytes(), held);
    ra.drop();
    EXPECT_EQ(ReadAhead::staged_bytes(), 0u);
  }
  EXPECT_EQ(stats.snapshot().read_ahead_dropped, 0u);
  ASSERT_EQ(f->close(), 0);
}

TEST(ReadAheadWindow, HoldsAtLeastTwoRequestsUpToALimit) {
  EXPECT_EQ(ReadAhead::window_for(0, 64 * M), 0u) << "off stays off";
  EXPECT_EQ(ReadAhead::window_for(32 * M, 4 * M), 32 * M);
  EXPECT_EQ(ReadAhead::window_for(32 * M, 16 * M), 32 * M);
  EXPECT_EQ(ReadAhead::window_for(32 * M, 64 * M), 128 * M);
  EXPECT_EQ(ReadAhead::window_for(32 * M, 100 * M), ReadAhead::kLargeRequestWindow) << "too large for two: no window";
  EXPECT_EQ(ReadAhead::window_for(512 * M, 64 * M), 512 * M) << "a larger setting stays";
}

TEST_F(ReadAheadTest, RequestsLargerThanHalfTheSettingAreReadAheadToo) {
  // The fixture's window is 2 MiB; a stream of 4 MiB reads gets a window
  // of two of them.
  const std::string path = dir_.file("large");
  std::vector<char> model = make_file(path, 40 * M, 3);
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);
  std::vector<char> buf(4 * M);
  for (uint64_t off = 0; off < model.size(); off += buf.size()) {
    ASSERT_EQ(hio_pread(f, buf.data(), buf.size(), static_cast<off_t>(off)), static_cast<ssize_t>(buf.size()));
    ASSERT_EQ(memcmp(buf.data(), model.data() + off, buf.size()), 0) << "bytes at " << off;
  }
  const hio_stats s = stats();
  EXPECT_GE(s.read_ahead_hits, 7u) << "the reads after the first two come from the window";
  EXPECT_EQ(s.read_ahead_dropped, 0u);
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_EQ(ReadAhead::staged_bytes(), 0u);
}

TEST_F(ReadAheadTest, ALargeReadAtTheFilesBeginningStartsAWindowWithItself) {
  // 16 MiB reads: the first, at offset 0 of a file with two more after it,
  // comes from a window of its own (ReadAhead::begin()).  Not a read that
  // starts elsewhere, nor a smaller one, nor one of a file too short for
  // two more: those are read alone, and a window starts at the second.
  constexpr uint64_t kLarge = 16 * M;
  auto first_read_served = [&](const char* name, uint64_t size, uint64_t offset, uint64_t len) {
    const std::string path = dir_.file(name);
    const std::vector<char> model = make_file(path, size, 21);
    hio_stats_reset();
    hio_file* f = nullptr;
    EXPECT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);
    if (!f) return false;
    std::vector<char> buf(len);
    EXPECT_EQ(hio_pread(f, buf.data(), len, static_cast<off_t>(offset)), static_cast<ssize_t>(len));
    EXPECT_EQ(memcmp(buf.data(), model.data() + offset, len), 0) << name << ": the first read's bytes";
    const bool served = stats().read_ahead_hits == 1;
    // The rest of the stream, from the window, to the end of the file.
    for (uint64_t off = offset + len; off + len <= size; off += len) {
      EXPECT_EQ(hio_pread(f, buf.data(), len, static_cast<off_t>(off)), static_cast<ssize_t>(len));
      EXPECT_EQ(memcmp(buf.data(), model.data() + off, len), 0) << name << ": bytes at " << off;
    }
    EXPECT_EQ(stats().read_ahead_dropped, 0u) << name;
    EXPECT_EQ(hio_close(f), 0);
    EXPECT_EQ(ReadAhead::staged_bytes(), 0u) << name;
    return served;
  };
  change_engine([](hio_engine_config& e) { e.read_ahead = 32 * M; });  // two 16 MiB reads ahead
  EXPECT_TRUE(first_read_served("begins", 4 * kLarge, 0, kLarge));
  EXPECT_TRUE(first_read_served("just-two-more", 3 * kLarge, 0, kLarge));
  EXPECT_FALSE(first_read_served("elsewhere", 5 * kLarge, kLarge, kLarge));
  EXPECT_FALSE(first_read_served("smaller", 4 * kLarge, 0, 8 * M));
  EXPECT_FALSE(first_read_served("short", 3 * kLarge - 4096, 0, kLarge));
}

TEST_F(ReadAheadTest, WriteByAnotherDescriptorIsSeen) {
  const std::string path = dir_.file("other");
  std::vector<char> model = make_file(path, 8 * M, 3);
  hio_file* f = open_streaming(path, model, O_RDONLY);
  ASSERT_TRUE(f);
  // Overwrite what the window already holds, through the page cache.
  std::vector<char> fresh = testing::random_bytes(3 * kRead, 4);
  int fd = ::open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, fresh.data(), fresh.size(), 4 * kRead + 1000), static_cast<ssize_t>(fresh.size()));
  ::close(fd);
  memcpy(model.data() + 4 * kRead + 1000, fresh.data(), fresh.size());
  for (uint64_t off = 4 * kRead; off < model.size(); off += kRead) read_and_check(f, model, off);
  EXPECT_GE(stats().read_ahead_dropped, 1u);
  ASSERT_EQ(hio_close(f), 0);
}

TEST_F(ReadAheadTest, WriteThroughTheLibraryIsSeen) {
  // (A file the library itself has open for writing gets no window at all:
  // FileOpenForWritingGetsNoWindow.  So the write comes through a second
  // library file, opened while the first streams.)
  const std::string path = dir_.file("same");
  std::vector<char> model = make_file(path, 8 * M, 5);
  hio_file* f = open_streaming(path, model, O_RDONLY);
  ASSERT_TRUE(f);
  hio_file* g;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR, 0, &g), 0);
  std::vector<char> fresh = testing::random_bytes(kRead, 6);  // aligned: goes direct
  ASSERT_EQ(hio_pwrite(g, fresh.data(), kRead, static_cast<off_t>(6 * kRead)), static_cast<ssize_t>(kRead));
  memcpy(model.data() + 6 * kRead, fresh.data(), kRead);
  for (uint64_t off = 4 * kRead; off < model.size(); off += kRead) read_and_check(f, model, off);
  EXPECT_GE(stats().read_ahead_dropped, 1u);
  ASSERT_EQ(hio_close(g), 0);
  ASSERT_EQ(hio_close(f), 0);
}

TEST_F(ReadAheadTest, TruncateByAnotherDescriptorIsSeen) {
  const std::string path = dir_.file("trunc");
  std::vector<char> model = make_file(path, 8 * M, 7);
  hio_file* f = open_streaming(path, model, O_RDONLY);
  ASSERT_TRUE(f);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(5 * kRead + 333)), 0);
  model.resize(5 * kRead + 333);
  for (uint64_t off = 4 * kRead; off < 8 * kRead; off += kRead) read_and_check(f, model, off);
  ASSERT_EQ(hio_close(f), 0);
}

TEST_F(ReadAheadTest, FileOpenForWritingGetsNoWindow) {
  const std::string path = dir_.file("written");
  std::vector<char> model = make_file(path, 4 * M, 8);
  int writer = ::open(path.c_str(), O_WRONLY);  // another descriptor open for writing: no read lease
  ASSERT_GE(writer, 0);
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);
  for (uint64_t off = 0; off < model.size(); off += kRead) read_and_check(f, model, off);
  ASSERT_EQ(hio_close(f), 0);
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR, 0, &f), 0);  // the library's own file open for writing
  ::close(writer);
  for (uint64_t off = 0; off < model.size(); off += kRead) read_and_check(f, model, off);
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_EQ(stats().read_ahead_hits, 0u);
  EXPECT_EQ(ReadAhead::staged_bytes(), 0u);
}

TEST_F(ReadAheadTest, ClosingTheFileReleasesTheLease) {
  const std::string path = dir_.file("released");
  std::vector<char> model = make_file(path, 4 * M, 15);
  hio_file* f = open_streaming(path, model, O_RDONLY);
  ASSERT_TRUE(f);
  // While the window's lease is held, a non-blocking open for writing is
  // refused (and breaks it); the lease is taken again by the next reads.
  int w = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
  EXPECT_EQ(w, -1);
  EXPECT_EQ(errno, EWOULDBLOCK);
  for (uint64_t off = 4 * kRead; off < model.size(); off += kRead) read_and_check(f, model, off);
  ASSERT_EQ(hio_close(f), 0);
  w = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
  EXPECT_GE(w, 0) << "no lease is left once the file is closed: " << strerror(errno);
  if (w >= 0) ::close(w);
}

// A window's ring is opened when its stream starts and closed with the
// file.  The kernel sends a ring's creator task work when the ring is torn
// down, flagged as a pending signal, so the reading thread must not be its
// creator: opened by the reader, each close cut the reader's next read of
// /dev/zero short.
TEST_F(ReadAheadTest, AWindowsRingComesAndGoesWithoutFlaggingTheReader) {
  const std::string path = dir_.file("flags");
  std::vector<char> model = make_file(path, 2 * M, 16);
  const int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(zero, 0);
  std::vector<char> buf(8 * M);
  constexpr int kFiles = 8;
  int reads = 0, shorts = 0;
  for (int i = 0; i < kFiles; ++i) {
    hio_file* f = open_streaming(path, model, O_RDONLY);
    ASSERT_TRUE(f);
    for (uint64_t off = 4 * kRead; off < model.size(); off += kRead) read_and_check(f, model, off);
    ASSERT_EQ(hio_close(f), 0);
    // The ring's teardown runs in a kernel worker, soon after the close.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    while (std::chrono::steady_clock::now() < until) {
      ++reads;
      if (::read(zero, buf.data(), buf.size()) != static_cast<ssize_t>(buf.size())) ++shorts;
    }
  }
  ::close(zero);
  EXPECT_EQ(shorts, 0) << "of " << reads << " reads of /dev/zero after " << kFiles << " windows' rings closed";
}

TEST_F(ReadAheadTest, FailedReadAheadIsRetriedByTheRead) {
  const std::string path = dir_.file("transient");
  std::vector<char> model = make_file(path, 8 * M, 9);
  set_completion_hook(fail_reads_at);
  g_fail_offset = 2 * M;  // a block read ahead of the stream, once
  g_fail_count = 1;
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);
  for (uint64_t off = 0; off < model.size(); off += kRead) read_and_check(f, model, off);
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_EQ(g_fail_count.load(), 0) << "the read-ahead met the failure";
  EXPECT_GE(stats().read_ahead_dropped, 1u);
  EXPECT_GT(stats().read_ahead_hits, 0u);
}

TEST_F(ReadAheadTest, PersistentErrorIsReportedByTheReadOfThatRange) {
  const std::string path = dir_.file("eio");
  std::vector<char> model = make_file(path, 8 * M, 10);
  set_completion_hook(fail_reads_at);
  g_fail_offset = 2 * M;  // every read of it, ahead (a block) or not (a chunk of the caller's read)
  g_fail_count = 1000;
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);
  std::vector<char> buf(kRead);
  for (uint64_t off = 0; off < 2 * M; off += kRead) read_and_check(f, model, off);
  ASSERT_GT(stats().read_ahead_hits, 0u);
  EXPECT_EQ(hio_pread(f, buf.data(), kRead, static_cast<off_t>(2 * M)), -EIO);
  g_fail_count = 0;
  for (uint64_t off = 2 * M + kRead; off < model.size(); off += kRead) read_and_check(f, model, off);
  ASSERT_EQ(hio_close(f), 0);
}

TEST_F(ReadAheadTest, ReadsAheadOfTheStreamAreServedReadsElsewhereGiveTheWindowUp) {
  const std::string path = dir_.file("jump");
  std::vector<char> model = make_file(path, 8 * M, 11);
  hio_file* f = open_streaming(path, model, O_RDONLY);
  ASSERT_TRUE(f);
  read_and_check(f, model, 20 * kRead);  // a jump past the window
  EXPECT_EQ(stats().read_ahead_dropped, 1u);
  read_and_check(f, model, 4 * kRead);   // and back
  read_and_check(f, model, 5 * kRead);   // the stream goes on from there: a new window
  const uint64_t hits = stats().read_ahead_hits;
  // Another size, after a gap: the window holds it all and serves it.
  std::vector<char> big(2 * kRead);
  ASSERT_EQ(hio_pread(f, big.data(), big.size(), static_cast<off_t>(6 * kRead + 4096)),
            static_cast<ssize_t>(big.size()));
  EXPECT_EQ(memcmp(big.data(), model.data() + 6 * kRead + 4096, big.size()), 0);
  EXPECT_EQ(stats().read_ahead_hits, hits + 1);
  // Behind the window: given up.
  read_and_check(f, model, 0);
  EXPECT_EQ(stats().read_ahead_dropped, 2u);
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_EQ(ReadAhead::staged_bytes(), 0u);
}

TEST_F(ReadAheadTest, ForkedChildReadsOnItsOwn) {
  const std::string path = dir_.file("fork");
  std::vector<char> model = make_file(path, 8 * M, 12);
  hio_file* f = open_streaming(path, model, O_RDONLY);
  ASSERT_TRUE(f);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(60);  // a hang fails the test instead of stalling it
    std::vector<char> buf(kRead);
    for (uint64_t off = 4 * kRead; off < model.size(); off += kRead) {
      if (hio_pread(f, buf.data(), kRead, static_cast<off_t>(off)) != static_cast<ssize_t>(kRead)) _exit(1);
      if (memcmp(buf.data(), model.data() + off, kRead) != 0) _exit(2);
    }
    hio_stats s;
    hio_stats_get(&s);
    _exit(s.read_ahead_hits > 0 ? 0 : 3);  // the child's own window worked
  }
  for (uint64_t off = 4 * kRead; off < model.size(); off += kRead) read_and_check(f, model, off);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child died with signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ASSERT_EQ(hio_close(f), 0);
}

TEST_F(ReadAheadTest, ConcurrentReadersOfOneFileGetTheirBytes) {
  const std::string path = dir_.file("threads");
  std::vector<char> model = make_file(path, 16 * M, 13);
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);
  std::atomic<int> bad{0};
  auto reader = [&](uint64_t begin, uint64_t end) {
    std::vector<char> buf(kRead);
    for (uint64_t off = begin; off < end; off += kRead)
      if (hio_pread(f, buf.data(), kRead, static_cast<off_t>(off)) != static_cast<ssize_t>(kRead) ||
          memcmp(buf.data(), model.data() + off, kRead) != 0)
        ++bad;
  };
  std::thread a(reader, 0, 8 * M), b(reader, 8 * M, 16 * M);
  a.join();
  b.join();
  EXPECT_EQ(bad.load(), 0);
  ASSERT_EQ(hio_close(f), 0);
  EXPECT_EQ(ReadAhead::staged_bytes(), 0u);
}


// Sequential runs of direct reads of several sizes, with writes (through the
// library and through another descriptor, each opened for the write),
// truncates and extensions between the reads: every read must return the
// bytes of a model of the file.
TEST_F(ReadAheadTest, RandomStreamsAndChangesMatchTheModel) {
  const std::string path = dir_.file("model");
  std::vector<char> model = make_file(path, 16 * M, 14);
  hio_file* f;
  ASSERT_EQ(hio_open(path.c_str(), O_RDONLY, 0, &f), 0);
  std::mt19937_64 rng(0x5eedULL);
  auto below = [&](uint64_t n) { return n ? rng() % n : 0; };
  std::vector<char> buf(1 * M);
  uint64_t changes = 0;
  for (int run = 0; run < 300; ++run) {
    const uint64_t size = (64 * K) << below(4);  // 64K-512K
    uint64_t off = below(model.size() + 1 * M) / size * size;
    const unsigned reads = 3 + static_cast<unsigned>(below(8));
    for (unsigned r = 0; r < reads; ++r, off += size) {
      const uint64_t want = off >= model.size() ? 0 : std::min<uint64_t>(size, model.size() - off);
      ASSERT_EQ(hio_pread(f, buf.data(), size, static_cast<off_t>(off)), static_cast<ssize_t>(want))
          << "run " << run << " read " << r << " at " << off;
      ASSERT_EQ(memcmp(buf.data(), model.data() + off, want), 0) << "run " << run << " read " << r << " at " << off;
      if (below(100) >= 12) continue;
      ++changes;
      const unsigned kind = static_cast<unsigned>(below(4));
      if (kind < 3) {  // a write, often just ahead of the stream
        const uint64_t len = 1 + below(300 * K);
        const uint64_t at = below(2) ? off + size + below(2 * size) : below(model.size() + 64 * K);
        std::vector<char> data = testing::random_bytes(len, static_cast<unsigned>(rng()));
        ssize_t n;
        if (kind == 0) {
          hio_file* g;
          ASSERT_EQ(hio_open(path.c_str(), O_RDWR, 0, &g), 0);
          n = hio_pwrite(g, data.data(), len, static_cast<off_t>(at));
          ASSERT_EQ(hio_close(g), 0);
        } else {
          int other = ::open(path.c_str(), O_RDWR);
          ASSERT_GE(other, 0);
          n = ::pwrite(other, data.data(), len, static_cast<off_t>(at));
          ::close(other);
        }
        ASSERT_EQ(n, static_cast<ssize_t>(len));
        if (model.size() < at + len) model.resize(at + len, 0);
        memcpy(model.data() + at, data.data(), len);
      } else {  // shrink or grow
        const uint64_t to = below(20 * M);
        ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(to)), 0);
        model.resize(to, 0);
      }
    }
  }
  ASSERT_EQ(hio_close(f), 0);
  hio_stats s = stats();
  EXPECT_GT(changes, 50u);
  EXPECT_GT(s.read_ahead_hits, 100u) << "windows served reads";
  EXPECT_GT(s.read_ahead_dropped, 10u) << "changes gave windows up";
  EXPECT_EQ(ReadAhead::staged_bytes(), 0u);
}

}  // namespace
}  // namespace hybridio
