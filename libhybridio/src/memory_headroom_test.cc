// memory_headroom_test.cc - the headroom is real memory: more than nothing,
// no more than the machine has, and it shrinks when memory is taken.
#include "memory_headroom.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace hybridio {
namespace {

TEST(MemoryHeadroom, BetweenNothingAndAllOfMemory) {
  const uint64_t total = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t room = memory_headroom_bytes(0);
  EXPECT_GT(room, 0u);
  EXPECT_LE(room, total);
}

TEST(MemoryHeadroom, TakingMemoryLeavesLess) {
  const uint64_t before = memory_headroom_bytes(0);
  std::vector<char> taken(1ULL << 30);
  memset(taken.data(), 1, taken.size());  // touched: really taken
  const uint64_t after = memory_headroom_bytes(0);
  EXPECT_LT(after, before - (512ULL << 20)) << "1 GiB taken, the headroom moved by " << (before - after);
}

}  // namespace
}  // namespace hybridio
