// memory_pressure_test.cc - the pressure formula and a live sample.
#include "probe/memory_pressure.h"

#include <gtest/gtest.h>

namespace hybridio {
namespace {

TEST(MemoryPressure, IdleMachineIsLow) {
  MeminfoSample m{16u << 20, 15u << 20, 0, 0};
  EXPECT_LE(pressure_from(m, 20, 0.0), 10u);
}

TEST(MemoryPressure, DirtyNearTheLimitIsHigh) {
  MeminfoSample m{16u << 20, 15u << 20, 0, 0};
  m.dirty_kb = (15u << 20) * 20 / 100;  // exactly the dirty limit
  EXPECT_EQ(pressure_from(m, 20, -1), 100u);
  m.dirty_kb /= 2;
  EXPECT_EQ(pressure_from(m, 20, -1), 50u);
  m.writeback_kb = m.dirty_kb / 2;  // writeback counts too
  EXPECT_EQ(pressure_from(m, 20, -1), 75u);
}

TEST(MemoryPressure, DirtyBytesReplacesTheRatio) {
  // vm.dirty_bytes = 1 GiB on a machine whose ratio would allow 4 GiB: 512 MiB dirty is 50 %.
  MeminfoSample m{32 << 20, 20 << 20, 512 << 10, 0, 1 << 20};
  EXPECT_EQ(pressure_from(m, 20, -1), 50u);
  m.dirty_limit_kb = 0;  // the ratio: 20 % of 20 GiB = 4 GiB, 512 MiB dirty is 12 %
  EXPECT_EQ(pressure_from(m, 20, -1), 38u);  // (the share of memory not available wins)
}

TEST(MemoryPressure, LowAvailableMemoryIsHigh) {
  MeminfoSample m{16u << 20, 1u << 20, 0, 0};
  EXPECT_GE(pressure_from(m, 20, -1), 93u);
}

TEST(MemoryPressure, PsiStallsCount) {
  MeminfoSample m{16u << 20, 15u << 20, 0, 0};
  EXPECT_EQ(pressure_from(m, 20, 85.5), 85u);
  EXPECT_EQ(pressure_from(m, 20, 250.0), 100u);
}

TEST(MemoryPressure, LiveSampleIsInRange) {
  uint32_t p = memory_pressure(0);
  EXPECT_LE(p, 100u);
  EXPECT_EQ(memory_pressure(60000), p);  // cached within the age limit
}

}  // namespace
}  // namespace hybridio
