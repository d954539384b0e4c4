// private_mappings_test.cc - the library's buffers stay out of the ranges the
// program uses, on the real address space of the test process.
#include "platform/private_mappings.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>

namespace hybridio {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Where the kernel would put the program's next mapping of up to `len`
// bytes: a range mapped and unmapped again.
uintptr_t just_unmapped(size_t len) {
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  munmap(p, len);
  return reinterpret_cast<uintptr_t>(p);
}

bool overlaps(uintptr_t a, size_t alen, uintptr_t b, size_t blen) { return a < b + blen && b < a + alen; }

TEST(PrivateMappings, StayOutOfARangeTheProgramJustUnmapped) {
  struct Case {
    size_t size, align;
  };
  for (Case c : {Case{4096, 4096}, Case{64 << 10, 4096}, Case{kMiB + 4096, 4096}, Case{2 * kMiB, 2 * kMiB},
                 Case{8 * kMiB, 2 * kMiB}}) {
    const uintptr_t freed = just_unmapped(64 * kMiB);
    char* p = map_private(c.size, c.align);
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(overlaps(reinterpret_cast<uintptr_t>(p), c.size, freed, 64 * kMiB))
        << c.size << " bytes mapped at " << static_cast<void*>(p) << ", in the range the program unmapped at "
        << reinterpret_cast<void*>(freed);
    EXPECT_TRUE(in_private_region(p, c.size));
    unmap_private(p, c.size);
  }
}

TEST(PrivateMappings, AreAlignedZeroedAndWritable) {
  for (size_t align : {size_t{4096}, 2 * kMiB, 16 * kMiB}) {
    char* p = map_private(3 * kMiB + 5, align);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u) << align;
    for (size_t i = 0; i < 3 * kMiB + 5; i += 4096) ASSERT_EQ(p[i], 0);
    memset(p, 0x5a, 3 * kMiB + 5);
    unmap_private(p, 3 * kMiB + 5);
  }
}

TEST(PrivateMappings, KeepTheCallersErrno) {
  errno = ENOTTY;
  char* p = map_private(kMiB, 4096);
  EXPECT_EQ(errno, ENOTTY);
  unmap_private(p, kMiB);
  EXPECT_EQ(errno, ENOTTY);
}

TEST(PrivateMappings, AFreedRangeIsReused) {
  char* a = map_private(kMiB, 4096);
  ASSERT_NE(a, nullptr);
  char* b = map_private(kMiB, 4096);
  ASSERT_NE(b, nullptr);
  unmap_private(a, kMiB);
  char* c = map_private(kMiB, 4096);
  EXPECT_EQ(c, a);
  unmap_private(b, kMiB);
  unmap_private(c, kMiB);
}

TEST(PrivateMappings, ARangeSomeoneTookSinceIsLeftAlone) {
  char* keep = map_private(kMiB, 4096);  // so that the freed one is not the region's bottom
  char* a = map_private(kMiB, 4096);
  char* above = map_private(kMiB, 4096);
  ASSERT_TRUE(keep && a && above);
  unmap_private(a, kMiB);
  // The program maps exactly there (it may: the range is free).
  void* theirs = mmap(a, kMiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(theirs, static_cast<void*>(a));
  memset(theirs, 0x77, kMiB);
  char* b = map_private(kMiB, 4096);
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(overlaps(reinterpret_cast<uintptr_t>(b), kMiB, reinterpret_cast<uintptr_t>(a), kMiB));
  memset(b, 0x11, kMiB);
  for (size_t i = 0; i < kMiB; i += 512) ASSERT_EQ(static_cast<char*>(theirs)[i], 0x77);
  munmap(theirs, kMiB);
  unmap_private(b, kMiB);
  unmap_private(keep, kMiB);
  unmap_private(above, kMiB);
}

TEST(PrivateMappings, ManyBuffersOfMixedSizesNeverShareMemory) {
  std::mt19937_64 rng(13);
  std::map<char*, std::pair<size_t, uint8_t>> live;  // data -> (size, fill byte)
  for (int step = 0; step < 600; ++step) {
    if (!live.empty() && rng() % 3 == 0) {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      unmap_private(it->first, it->second.first);
      live.erase(it);
      continue;
    }
    const size_t size = (1 + rng() % 1024) * 4096;
    const size_t align = rng() % 4 == 0 ? 2 * kMiB : 4096;
    char* p = map_private(size, align);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % align, 0u);
    for (const auto& [q, v] : live)
      ASSERT_FALSE(overlaps(reinterpret_cast<uintptr_t>(p), size, reinterpret_cast<uintptr_t>(q), v.first));
    const uint8_t fill = static_cast<uint8_t>(step);
    memset(p, fill, size);
    live[p] = {size, fill};
  }
  for (const auto& [p, v] : live) {
    for (size_t i = 0; i < v.first; i += 4096) ASSERT_EQ(static_cast<uint8_t>(p[i]), v.second);
    unmap_private(p, v.first);
  }
}

}  // namespace
}  // namespace hybridio
