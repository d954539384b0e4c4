// checkpoint_job_test.cc - the main job's default size.
#include "checkpoint_job.h"

#include <gtest/gtest.h>

namespace hybridio::bench {
namespace {

TEST(AutoCheckpointSize, TwiceTheDirtyLimitClampedToFreeSpace) {
  MachineInfo m;
  m.memory_bytes = 10ULL << 30;
  m.dirty_ratio = 20;
  m.dirty_bytes = 0;
  m.free_bytes = 100ULL << 30;
  EXPECT_EQ(auto_checkpoint_size(m, 0), 2 * dirty_limit_bytes(m));
  m.free_bytes = 4ULL << 30;  // 80 % less 1 GiB, less the dataset
  EXPECT_EQ(auto_checkpoint_size(m, 0), (4ULL << 30) / 10 * 8 - (1ULL << 30));
  EXPECT_EQ(auto_checkpoint_size(m, 1ULL << 30), (4ULL << 30) / 10 * 8 - (2ULL << 30));
  m.free_bytes = 1ULL << 30;  // too little: the floor
  EXPECT_EQ(auto_checkpoint_size(m, 0), 256ULL << 20);
}

}  // namespace
}  // namespace hybridio::bench
