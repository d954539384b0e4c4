// buffer_pool_test.cc - the NUMA-local buffer pool on whatever machine runs the tests.
#include "memory/buffer_pool.h"

#include <gtest/gtest.h>
#include <numa.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace hybridio {
namespace {

TEST(BufferPool, BuffersArePageAlignedZeroedAndWritable) {
  BufferPool pool(64 << 20);
  PoolBuffer b = pool.acquire(1 << 20);
  ASSERT_TRUE(b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 4096, 0u);
  EXPECT_EQ(b.size(), size_t{1} << 20);
  for (size_t i = 0; i < b.size(); i += 4096) ASSERT_EQ(b.data()[i], 0);
  memset(b.data(), 0xab, b.size());
}

// The program has just unmapped a range (the kernel's next pick for a new
// mapping); buffers taken after it must not make its stale pointers valid.
TEST(BufferPool, BuffersStayOutOfARangeTheProgramJustUnmapped) {
  BufferPool pool(64 << 20);
  for (size_t size : {size_t{64} << 10, size_t{1} << 20, size_t{4} << 20}) {
    void* p = mmap(nullptr, 64 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    munmap(p, 64 << 20);
    const uintptr_t freed = reinterpret_cast<uintptr_t>(p);
    PoolBuffer b = pool.acquire(size);
    ASSERT_TRUE(b);
    const uintptr_t at = reinterpret_cast<uintptr_t>(b.data());
    EXPECT_FALSE(at < freed + (64 << 20) && freed < at + b.size()) << size;
  }
}

// The smaps entry of the mapping that holds `addr`, or "" if not found.
std::string smaps_entry_of(const void* addr) {
  std::ifstream in("/proc/self/smaps");
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  std::string line, entry;
  bool inside = false;
  while (std::getline(in, line)) {
    unsigned long lo, hi;
    if (sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find('-')) {
      if (inside) return entry;
      inside = a >= lo && a < hi;
      entry.clear();
    }
    if (inside) entry += line + "\n";
  }
  return inside ? entry : "";
}

TEST(BufferPool, LargeBuffersAskForHugePages) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode((std::istreambuf_iterator<char>(thp)), std::istreambuf_iterator<char>());
  if (mode.find("[never]") != std::string::npos || mode.empty()) {
    GTEST_SKIP() << "transparent huge pages are off on this machine (" << mode << "): nothing to ask for";
  }
  BufferPool pool(64 << 20);
  PoolBuffer b = pool.acquire(4 << 20);
  ASSERT_TRUE(b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % (2 << 20), 0u) << "2 MiB aligned, so that huge pages fit";
  const std::string entry = smaps_entry_of(b.data());
  ASSERT_FALSE(entry.empty());
  // VmFlags "hg" = MADV_HUGEPAGE (whether the kernel had huge pages to give is its business).
  const size_t flags = entry.find("VmFlags:");
  ASSERT_NE(flags, std::string::npos);
  EXPECT_NE(entry.find(" hg", flags), std::string::npos) << entry;
}

TEST(BufferPool, SizesAreRoundedToPages) {
  BufferPool pool;
  PoolBuffer b = pool.acquire(5000);
  ASSERT_TRUE(b);
  EXPECT_EQ(b.size(), 8192u);
  EXPECT_FALSE(pool.acquire(0));
}

TEST(BufferPool, ReleasedBuffersAreReused) {
  BufferPool pool(64 << 20);
  char* first;
  {
    PoolBuffer b = pool.acquire(256 << 10);
    first = b.data();
  }
  EXPECT_EQ(pool.cached_bytes(), size_t{256} << 10);
  PoolBuffer again = pool.acquire(256 << 10);
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(pool.allocations(), 1u);
  EXPECT_EQ(pool.cached_bytes(), 0u);
}

TEST(BufferPool, CacheIsBounded) {
  BufferPool pool(1 << 20);
  {
    PoolBuffer a = pool.acquire(768 << 10);
    PoolBuffer b = pool.acquire(768 << 10);
  }
  EXPECT_LE(pool.cached_bytes(), size_t{1} << 20);
}

// What the process may still take, as the pool sees it (set by the cases below).
uint64_t g_headroom = 0;
uint64_t fixed_headroom(uint32_t) { return g_headroom; }

// Kept buffers are memory nothing reclaims: with little headroom (a memory
// cgroup near its limit) the pool keeps at most a quarter of what the
// process could take with them given back, and frees kept buffers of other
// sizes before it maps fresh memory.
TEST(BufferPool, LittleHeadroomKeepsLittle) {
  BufferPool pool(80 << 20, fixed_headroom);
  g_headroom = 1ull << 40;
  {
    PoolBuffer a = pool.acquire(4 << 20);
    PoolBuffer b = pool.acquire(4 << 20);
    PoolBuffer c = pool.acquire(4 << 20);
  }
  EXPECT_EQ(pool.cached_bytes(), size_t{12} << 20) << "plenty of headroom: everything is kept";

  // A cgroup near its limit: 4 MiB more could be taken, 16 with what the pool keeps.
  g_headroom = 4 << 20;
  PoolBuffer fresh = pool.acquire(1 << 20);  // no kept buffer of this size
  EXPECT_EQ(pool.cached_bytes(), size_t{4} << 20) << "kept buffers given back down to a quarter of 16 MiB";
  EXPECT_FALSE(fresh) << "the pool holds 4 MiB, half of the 8 it could take";
  PoolBuffer kept = pool.acquire(4 << 20);
  EXPECT_TRUE(kept) << "a kept buffer is not fresh memory";
  EXPECT_EQ(pool.allocations(), 3u);
  kept.reset();  // a quarter of 4 MiB could be kept
  EXPECT_EQ(pool.cached_bytes(), 0u) << "released with little headroom: given back";
  EXPECT_EQ(pool.mapped_bytes(), 0u);
}

// The pool's share counts what it holds already: with 16 MiB that the
// process could take, it maps at most 8 MiB in all, however it is asked.
TEST(BufferPool, ThePoolTakesAtMostHalfOfTheHeadroom) {
  BufferPool pool(80 << 20, fixed_headroom);
  constexpr size_t kCould = 16 << 20;
  std::vector<PoolBuffer> held;
  for (int i = 0; i < 16; ++i) {
    g_headroom = kCould - pool.mapped_bytes();  // as the cgroup would report it
    PoolBuffer b = pool.acquire(1 << 20);
    if (!b) break;
    held.push_back(std::move(b));
  }
  EXPECT_EQ(held.size(), 8u);
  EXPECT_EQ(pool.mapped_bytes(), size_t{8} << 20);
  held.clear();
  g_headroom = kCould;
  EXPECT_LE(pool.cached_bytes(), kCould / 4) << "kept: a quarter of what the process could take";
  EXPECT_EQ(pool.mapped_bytes(), pool.cached_bytes());
}

TEST(BufferPool, NodeIsThisThreadsNodeOrZeroWithoutNuma) {
  BufferPool pool;
  // This runs on single-node machines (and where libnuma reports no NUMA):
  // the pool must work there with everything on node 0.
  if (numa_available() < 0 || numa_max_node() == 0) {
    EXPECT_FALSE(pool.numa());
    EXPECT_EQ(pool.current_node(), 0);
  } else {
    EXPECT_TRUE(pool.numa());
    EXPECT_GE(pool.current_node(), 0);
    EXPECT_LE(pool.current_node(), numa_max_node());
  }
  PoolBuffer b = pool.acquire(64 << 10);
  ASSERT_TRUE(b);
  EXPECT_GE(b.node(), 0);
}

TEST(BufferPool, MovesTransferOwnershipAndThreadsShareThePool) {
  BufferPool pool(16 << 20);
  PoolBuffer a = pool.acquire(64 << 10);
  char* p = a.data();
  PoolBuffer b = std::move(a);
  EXPECT_FALSE(a);
  EXPECT_EQ(b.data(), p);
  std::thread t([&] {
    for (int i = 0; i < 100; ++i) {
      PoolBuffer c = pool.acquire(64 << 10);
      ASSERT_TRUE(c);
      c.data()[0] = 1;
    }
  });
  for (int i = 0; i < 100; ++i) {
    PoolBuffer c = pool.acquire(64 << 10);
    ASSERT_TRUE(c);
  }
  t.join();
}

}  // namespace
}  // namespace hybridio
