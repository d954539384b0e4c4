// file_learning_test.cc - learned thresholds through the C API on real
// files: requests are measured, flushes charged, exploration stays within
// its share, bytes stay exact, and the estimates reach the state directory.
// CTest runs this binary with HYBRIDIO_LEARN=on and a state directory in
// the build tree (the rest of the suite runs with learning off).
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "learned_store.h"
#include "runtime.h"
#include "temp_dir.h"

namespace hybridio {
namespace {

using testing::TempDir;

constexpr size_t M = 1 << 20;

hio_stats stats() {
  hio_stats s;
  hio_stats_get(&s);
  return s;
}

std::vector<char> pattern(size_t len, unsigned seed) {
  std::vector<char> v(len);
  for (size_t i = 0; i < len; ++i) v[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 12)) & 0xff);
  return v;
}

class FileLearning : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Runtime::get().learned()) GTEST_SKIP() << "learning is off in this environment (HYBRIDIO_LEARN=off)";
    ASSERT_TRUE(dir_.ok());
    hio_policy_get(&saved_);
    hio_policy_config c;
    hio_policy_config_defaults(&c);
    hio_policy_set(&c);
    hio_stats_reset();
  }
  void TearDown() override { hio_policy_set(&saved_); }

  TempDir dir_;
  hio_policy_config saved_{};
};

TEST_F(FileLearning, AStreamIsMeasuredAndItsFlushCharged) {
  const std::string path = dir_.file("stream");
  hio_file* f = nullptr;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  constexpr int kWrites = 96;
  const std::vector<char> data = pattern(kWrites * M, 3);
  for (int i = 0; i < kWrites; ++i)
    ASSERT_EQ(hio_pwrite(f, data.data() + i * M, M, static_cast<off_t>(i * M)), static_cast<ssize_t>(M));
  ASSERT_EQ(hio_fsync(f), 0);
  posix_fadvise(hio_fd(f), 0, 0, POSIX_FADV_DONTNEED);
  std::vector<char> back(data.size());
  for (size_t at = 0; at < back.size(); at += 4 * M)
    ASSERT_EQ(hio_pread(f, back.data() + at, 4 * M, static_cast<off_t>(at)), static_cast<ssize_t>(4 * M));
  EXPECT_TRUE(back == data) << "every byte as written, whichever path each request took";
  ASSERT_EQ(hio_close(f), 0);

  const hio_stats s = stats();
  EXPECT_GE(s.learn_samples, uint64_t{kWrites}) << "writes and reads of at least 64 KiB are measured";
  EXPECT_GE(s.learn_deferred, 1u) << "the fsync after buffered writes was charged to them";
  const uint64_t explored = s.learn_explored_buffered + s.learn_explored_direct + s.learn_explored_dontcache;
  EXPECT_LE(explored * 100, 3 * 2 * data.size()) << "at most 3 % of the bytes explore";
  EXPECT_EQ(hio_stats_rule_bytes(&s, HIO_RULE_EXPLORED), explored) << "each explored request says so";
}

TEST_F(FileLearning, EstimatesReachTheStateDirectory) {
  const char* state = getenv("HYBRIDIO_STATE_DIR");
  if (!state || !*state) GTEST_SKIP() << "HYBRIDIO_STATE_DIR is not set: not writing the user's state directory";
  const std::string path = dir_.file("persist");
  hio_file* f = nullptr;
  ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
  const std::vector<char> data = pattern(8 * M, 5);
  for (size_t at = 0; at < data.size(); at += M)
    ASSERT_EQ(hio_pwrite(f, data.data() + at, M, static_cast<off_t>(at)), static_cast<ssize_t>(M));
  const std::string key = filesystem_key(hio_fd(f));
  ASSERT_EQ(hio_close(f), 0);
  ASSERT_FALSE(key.empty());
  Runtime::get().learned()->save_all();  // what exit() does
  FsCosts loaded;
  ASSERT_TRUE(load_learned(state, key, &loaded)) << state << "/" << key;
  uint64_t samples = 0;
  for (int c = 0; c < kSizeClasses; ++c)
    for (int p = 0; p < HIO_PATH_COUNT; ++p) samples += loaded.estimate(HIO_OP_WRITE, c, static_cast<hio_path>(p)).samples;
  EXPECT_GT(samples, 0u);
}

}  // namespace
}  // namespace hybridio
