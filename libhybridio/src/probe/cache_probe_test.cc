// cache_probe_test.cc - the probes against a real file whose cache state
// the test sets with buffered writes, fsync and POSIX_FADV_DONTNEED.
#include "probe/cache_probe.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <vector>

#include "temp_dir.h"

namespace hybridio {
namespace {

constexpr size_t kPages = 256;
constexpr size_t kSize = kPages * 4096;

class CacheProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    fd_ = open(dir_.file("f").c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd_, 0);
    std::vector<char> data(kSize, 'x');
    ASSERT_EQ(pwrite(fd_, data.data(), kSize, 0), static_cast<ssize_t>(kSize));
  }
  void TearDown() override { close(fd_); }
  void drop() {
    ASSERT_EQ(fdatasync(fd_), 0);
    ASSERT_EQ(posix_fadvise(fd_, 0, 0, POSIX_FADV_DONTNEED), 0);
  }
  testing::TempDir dir_;
  int fd_ = -1;
};

TEST_F(CacheProbe, CachestatSeesDirtyThenCleanThenNothing) {
  CacheState s;
  if (!probe_cachestat(fd_, 0, kSize, &s)) {
    GTEST_SKIP() << "cachestat(2) is not available on this kernel (needs Linux 6.5+)";
  }
  EXPECT_EQ(s.cached_pages, static_cast<int64_t>(kPages));
  EXPECT_EQ(s.dirty_pages, static_cast<int64_t>(kPages));
  ASSERT_EQ(fsync(fd_), 0);
  ASSERT_TRUE(probe_cachestat(fd_, 0, kSize, &s));
  EXPECT_EQ(s.cached_pages, static_cast<int64_t>(kPages));
  EXPECT_EQ(s.dirty_pages, 0);
  drop();
  ASSERT_TRUE(probe_cachestat(fd_, 0, kSize, &s));
  EXPECT_EQ(s.cached_pages, 0);
  EXPECT_EQ(s.method, ProbeMethod::kCachestat);
}

TEST_F(CacheProbe, MincoreSeesCachedPages) {
  CacheState s;
  ASSERT_TRUE(probe_mincore(fd_, 0, kSize, &s));
  EXPECT_EQ(s.cached_pages, static_cast<int64_t>(kPages));
  EXPECT_EQ(s.dirty_pages, -1);  // mincore cannot tell
  drop();
  char buf[4096];
  ASSERT_EQ(pread(fd_, buf, sizeof buf, 10 * 4096), 4096);  // may read ahead a little
  ASSERT_TRUE(probe_mincore(fd_, 0, kSize, &s));
  EXPECT_GE(s.cached_pages, 1);
  EXPECT_LT(s.cached_pages, static_cast<int64_t>(kPages));
  // Unaligned ranges count every page they touch.
  drop();
  ASSERT_EQ(pread(fd_, buf, 1, 0), 1);
  ASSERT_TRUE(probe_mincore(fd_, 100, 10, &s));
  EXPECT_EQ(s.cached_pages, 1);
}

TEST_F(CacheProbe, CachedPrefixStopsAtTheFirstGap) {
  CacheState s;
  if (!probe_cachestat(fd_, 0, kSize, &s)) GTEST_SKIP() << "cachestat(2) is not available (needs Linux 6.5+)";
  EXPECT_EQ(cached_prefix_bytes(fd_, 0, kSize), kSize);
  EXPECT_EQ(cached_prefix_bytes(fd_, 100, 5000), 5000u);
  drop();
  EXPECT_EQ(cached_prefix_bytes(fd_, 0, kSize), 0u);
  char buf[4096];
  ASSERT_EQ(posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM), 0);  // little or no readahead
  for (int page = 0; page < 37; ++page)
    ASSERT_EQ(pread(fd_, buf, sizeof buf, page * 4096), 4096);
  // Readahead may have cached a little more than 37 pages, never fewer.
  uint64_t prefix = cached_prefix_bytes(fd_, 0, kSize);
  EXPECT_GE(prefix, 37u * 4096);
  EXPECT_EQ(prefix % 4096, 0u);
  ASSERT_TRUE(probe_cachestat(fd_, 0, prefix, &s));
  EXPECT_EQ(s.cached_pages, static_cast<int64_t>(prefix / 4096));
  if (prefix < kSize) {
    ASSERT_TRUE(probe_cachestat(fd_, prefix, 4096, &s));
    EXPECT_EQ(s.cached_pages, 0) << "the page after the prefix must be uncached";
  }
  EXPECT_EQ(cached_prefix_bytes(fd_, 10, 100), 100u);  // within the first page
}

TEST_F(CacheProbe, MincoreCannotProbeWriteOnlyDescriptors) {
  int wfd = open(dir_.file("f").c_str(), O_WRONLY);
  ASSERT_GE(wfd, 0);
  CacheState s;
  EXPECT_FALSE(probe_mincore(wfd, 0, kSize, &s));
  close(wfd);
}

TEST_F(CacheProbe, ProbeCachePrefersCachestat) {
  CacheState s = probe_cache(fd_, 0, kSize);
  EXPECT_EQ(s.method, cachestat_available() ? ProbeMethod::kCachestat : ProbeMethod::kMincore);
  EXPECT_EQ(s.cached_pages, static_cast<int64_t>(kPages));
  s = probe_cache(fd_, 0, kSize, ProbeMethod::kMincore);
  EXPECT_EQ(s.method, ProbeMethod::kMincore);
}

}  // namespace
}  // namespace hybridio
