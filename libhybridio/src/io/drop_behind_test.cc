// drop_behind_test.cc - drop-behind writes: the bytes, the pages leaving
// the cache behind the call, the backlog bound (the suite runs this binary
// with HYBRIDIO_DROP_BEHIND_LIMIT=16M), a fork in the middle, an exit right
// after the writes, and the writeback error that the program's own fsync
// must still report.
#include "io/drop_behind.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "probe/cache_probe.h"
#include "runtime/runtime.h"
#include "temp_dir.h"

namespace hybridio {
namespace {

constexpr uint64_t M = 1024 * 1024;

std::vector<char> random_bytes(size_t n, unsigned seed) {
  std::vector<char> v(n);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i + 8 <= n; i += 8) {
    const uint64_t x = rng();
    memcpy(&v[i], &x, 8);
  }
  return v;
}

// One drop-behind write of `len` bytes of `buf` at `offset`: the bytes the
// write moved, or -errno; false in *dropped when it could not drop behind.
ssize_t drop_behind_write(int fd, const char* buf, size_t len, uint64_t offset, bool* dropped) {
  DropBehind d(Runtime::get().config().drop_behind_limit, Runtime::get().stats());
  *dropped = d.begin(fd, len);
  const ssize_t n = pwrite(fd, buf, len, static_cast<off_t>(offset));
  const int err = errno;
  if (*dropped) d.finish(offset, n > 0 ? static_cast<uint64_t>(n) : 0);
  return n < 0 ? -err : n;
}

hio_stats stats() {
  hio_stats s;
  hio_stats_get(&s);
  return s;
}

int64_t cached_pages(int fd, uint64_t len) { return probe_cache(fd, 0, len).cached_pages; }

// The file of `fd` holds `data`, and its pages were written back and
// dropped: a few may be back (a racing readahead of nothing, a folio still
// locked), not the file.  Reads the file, so last.
void expect_dropped(int fd, const std::vector<char>& data) {
  const int64_t left = cached_pages(fd, data.size());
  ASSERT_GE(left, 0);
  EXPECT_LT(left, static_cast<int64_t>(data.size() / 4096 / 20)) << "pages of drop-behind writes stayed cached";
  std::vector<char> back(data.size());
  ASSERT_EQ(pread(fd, back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
  EXPECT_TRUE(back == data);
}

class DropBehindTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    hio_stats_reset();
  }
  // A new empty file in the test's directory, open for reading and writing.
  int create(const char* name) { return open(dir_.file(name).c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644); }
  testing::TempDir dir_;
};

TEST_F(DropBehindTest, BytesAreExactAndThePagesLeaveTheCache) {
  const size_t len = 64 * M;
  const std::vector<char> data = random_bytes(len, 1);
  const int fd = create("dropped");
  ASSERT_GE(fd, 0);
  for (uint64_t off = 0; off < len; off += 16 * M) {
    bool dropped = false;
    ASSERT_EQ(drop_behind_write(fd, data.data() + off, 16 * M, off, &dropped), static_cast<ssize_t>(16 * M));
    ASSERT_TRUE(dropped) << "no drop-behind ring on this kernel (5.19+ with io_uring)";
  }
  drop_behind_drain();
  const hio_stats s = stats();
  EXPECT_EQ(s.drop_behind_writes, 4u);
  EXPECT_EQ(s.drop_behind_bytes, len);
  EXPECT_EQ(s.drop_behind_refused, 0u);
  expect_dropped(fd, data);
  close(fd);

  // The same writes without drop-behind stay in the cache: the check above can fail.
  const int plain = create("plain");
  ASSERT_GE(plain, 0);
  ASSERT_EQ(pwrite(plain, data.data(), len, 0), static_cast<ssize_t>(len));
  ASSERT_EQ(fsync(plain), 0);
  EXPECT_GT(cached_pages(plain, len), static_cast<int64_t>(len / 4096 * 9 / 10));
  close(plain);
}

TEST_F(DropBehindTest, WritesBeyondTheLimitWaitForEarlierOnes) {
  const char* limit = getenv("HYBRIDIO_DROP_BEHIND_LIMIT");
  ASSERT_TRUE(limit && std::string(limit) == "16M") << "ctest runs this binary with HYBRIDIO_DROP_BEHIND_LIMIT=16M";
  const size_t len = 16 * M, count = 16;
  const std::vector<char> data = random_bytes(len * count, 2);
  const int fd = create("bounded");
  ASSERT_GE(fd, 0);
  for (size_t i = 0; i < count; ++i) {
    bool dropped = false;
    ASSERT_EQ(drop_behind_write(fd, data.data() + i * len, len, i * len, &dropped), static_cast<ssize_t>(len));
    ASSERT_TRUE(dropped);
  }
  // With 16 MiB allowed in flight, a write waits whenever the one before
  // it has not been written back and dropped yet: its copy would have to
  // outlast the device's write of as much, its open and three requests.
  EXPECT_GE(stats().drop_behind_waits, 1u);
  drop_behind_drain();
  std::vector<char> back(len * count);
  ASSERT_EQ(pread(fd, back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
  EXPECT_TRUE(back == data);
  close(fd);
}

TEST_F(DropBehindTest, AForkedChildWritesOnItsOwnWhileTheParentsAreInFlight) {
  const size_t len = 32 * M;
  const std::vector<char> data = random_bytes(2 * len, 3);
  const int fd = create("forked");
  ASSERT_GE(fd, 0);
  bool dropped = false;
  ASSERT_EQ(drop_behind_write(fd, data.data(), len, 0, &dropped), static_cast<ssize_t>(len));
  ASSERT_TRUE(dropped);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool child_dropped = false;
    const ssize_t n = drop_behind_write(fd, data.data() + len, len, len, &child_dropped);
    drop_behind_drain();
    _exit(n == static_cast<ssize_t>(len) && child_dropped ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  drop_behind_drain();
  std::vector<char> back(2 * len);
  ASSERT_EQ(pread(fd, back.data(), back.size(), 0), static_cast<ssize_t>(back.size()));
  EXPECT_TRUE(back == data);
  close(fd);
}

TEST_F(DropBehindTest, AProcessThatExitsRightAfterItsWritesLeavesNoneCached) {
  const size_t len = 64 * M;
  const std::vector<char> data = random_bytes(len, 4);
  const int fd = create("exiting");
  ASSERT_GE(fd, 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool all_dropped = true;
    for (uint64_t off = 0; off < len; off += 16 * M) {
      bool dropped = false;
      if (drop_behind_write(fd, data.data() + off, 16 * M, off, &dropped) != static_cast<ssize_t>(16 * M)) exit(2);
      all_dropped = all_dropped && dropped;
    }
    exit(all_dropped ? 0 : 1);  // with the last writes still in flight
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  expect_dropped(fd, data);
  close(fd);
}

// ---- a device that fails every write ------------------------------------------

// An ext4 (no journal, so that data writeback errors reach fsync only
// through the file's error sequence) on a loop device whose backing file
// lives on a full tmpfs: every write of the loop device fails.
class FailingWritesFs {
 public:
  explicit FailingWritesFs(const std::string& base) : tmpfs_(base + "/tmpfs"), mnt_(base + "/mnt") {}
  ~FailingWritesFs() {
    if (mounted_) umount(mnt_.c_str());
    if (!loop_.empty()) run("losetup -d " + loop_);
    if (tmpfs_mounted_) umount(tmpfs_.c_str());
  }

  // "" when ready, else why not.
  std::string setup() {
    if (geteuid() != 0) return "needs root (tmpfs, loop device, mount)";
    if (mkdir(tmpfs_.c_str(), 0755) != 0 || mkdir(mnt_.c_str(), 0755) != 0) return "mkdir failed";
    if (mount("tmpfs", tmpfs_.c_str(), "tmpfs", 0, "size=48m") != 0) return "tmpfs mount failed";
    tmpfs_mounted_ = true;
    const std::string img = tmpfs_ + "/img";
    if (truncate_file(img, 256 * M) != 0) return "no image";
    FILE* p = popen(("losetup -f --show " + img + " 2>/dev/null").c_str(), "r");
    char dev[64] = {};
    if (!p || !fgets(dev, sizeof dev, p)) {
      if (p) pclose(p);
      return "losetup failed (no loop devices?)";
    }
    pclose(p);
    loop_ = std::string(dev, strcspn(dev, "\n"));
    if (!run("mkfs.ext4 -q -F -O ^has_journal " + loop_ + " >/dev/null 2>&1")) return "mkfs.ext4 failed";
    if (mount(loop_.c_str(), mnt_.c_str(), "ext4", 0, nullptr) != 0) return "ext4 mount failed";
    mounted_ = true;
    // Fill the tmpfs: from now on the loop device cannot write.
    const int filler = open((tmpfs_ + "/filler").c_str(), O_WRONLY | O_CREAT, 0644);
    std::vector<char> mib(M, 0);
    while (filler >= 0 && write(filler, mib.data(), mib.size()) > 0) {
    }
    if (filler >= 0) close(filler);
    return "";
  }
  std::string file(const std::string& name) const { return mnt_ + "/" + name; }

 private:
  static bool run(const std::string& cmd) { return system(cmd.c_str()) == 0; }
  static int truncate_file(const std::string& path, uint64_t size) {
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
    if (fd < 0) return -1;
    const int rc = ftruncate(fd, static_cast<off_t>(size));
    close(fd);
    return rc;
  }

  std::string tmpfs_, mnt_, loop_;
  bool tmpfs_mounted_ = false, mounted_ = false;
};

TEST_F(DropBehindTest, TheProgramsFsyncStillReportsAWritebackError) {
  FailingWritesFs fs(dir_.path());
  if (std::string why = fs.setup(); !why.empty()) GTEST_SKIP() << why;
  const std::vector<char> data = random_bytes(8 * M, 4);

  // A drop-behind write: its sync_file_range waited for the failed
  // writeback on the library's own open file, so the error is still the
  // program's to see.
  const int fd = open(fs.file("dropped").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  bool dropped = false;
  ASSERT_EQ(drop_behind_write(fd, data.data(), data.size(), 0, &dropped), static_cast<ssize_t>(data.size()));
  ASSERT_TRUE(dropped);
  drop_behind_drain();
  errno = 0;
  EXPECT_EQ(fsync(fd), -1) << "the writeback error was lost";
  EXPECT_TRUE(errno == EIO || errno == ENOSPC) << strerror(errno);
  close(fd);

  // Why the library's own open file: the same wait on the program's file
  // takes the error away from the program's fsync.
  const int own = open(fs.file("own").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(own, 0);
  ASSERT_EQ(pwrite(own, data.data(), data.size(), 0), static_cast<ssize_t>(data.size()));
  EXPECT_EQ(sync_file_range(own, 0, static_cast<off_t>(data.size()),
                            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER),
            -1);
  EXPECT_EQ(fsync(own), 0);
  close(own);
}

}  // namespace
}  // namespace hybridio
