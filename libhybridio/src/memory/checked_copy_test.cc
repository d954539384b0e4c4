// checked_copy_test.cc - the checked copy at every distance between its ends
// (the direct and the bounced way), in both directions, where the caller's
// memory ends (unmapped, or not writable / not readable, in the first piece
// or a later one), and in a child sharing the memory whose cached process
// id the kernel does not know.
#include "memory/checked_copy.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "platform/process_id.h"

namespace hybridio {
namespace {

constexpr size_t kPage = 4096;

// Memory of `pages` pages, mapped read-write, unmapped at the end.
struct Pages {
  explicit Pages(size_t pages) : len(pages * kPage) {
    void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    data = p == MAP_FAILED ? nullptr : static_cast<char*>(p);
  }
  ~Pages() {
    if (data) munmap(data, len);
  }
  char* data;
  size_t len;
};

void fill(char* p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>((i * 131 + seed * 7 + (i >> 12)) & 0xff);
}

// Distances (destination minus source, modulo a page) on both sides of the
// slow ones, and lengths around the bounce buffer's 256 KiB pieces.
// Both ways of copying: bounced at short distances, and direct at every one.
class CheckedCopyBothWays : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override { assume_short_distance_copies_slow(GetParam()); }
};
INSTANTIATE_TEST_SUITE_P(CheckedCopy, CheckedCopyBothWays, testing::Values(true, false),
                         [](const testing::TestParamInfo<bool>& p) { return p.param ? "bounced" : "direct"; });

TEST(CheckedCopy, ShortDistancesAreOneToThirtyOneBytesPastTheSourceInAPage) {
  EXPECT_TRUE(short_copy_distance(0, 1));
  EXPECT_TRUE(short_copy_distance(4096 * 3, 4096 * 7 + 16));
  EXPECT_TRUE(short_copy_distance(4080, 4096));
  EXPECT_FALSE(short_copy_distance(0, 0));
  EXPECT_FALSE(short_copy_distance(0, 32));
  EXPECT_FALSE(short_copy_distance(16, 0));
  // Either answer is this CPU's; it is measured once and then kept.
  const bool slow = short_distance_copies_slow();
  EXPECT_EQ(short_distance_copies_slow(), slow);
}

TEST_P(CheckedCopyBothWays, CopiesEveryByteAtEveryDistanceBothWays) {
  const size_t lens[] = {1, 15, 4096, 4097, (256 << 10) - 1, 256 << 10, (256 << 10) + 4095, (1 << 20) + 17};
  const size_t offsets[] = {0, 1, 15, 16, 17, 31, 32, 48, 63, 64, 2048, 4080, 4095};
  Pages engine(260 + 2), user(260 + 2);
  ASSERT_TRUE(engine.data && user.data);
  for (bool into_engine : {false, true}) {
    for (size_t len : lens) {
      for (size_t eo : {size_t{0}, size_t{16}}) {
        for (size_t uo : offsets) {
          char* e = engine.data + eo;
          char* u = user.data + uo;
          char* src = into_engine ? u : e;
          char* dst = into_engine ? e : u;
          fill(src, len, static_cast<unsigned>(len + uo));
          memset(dst, 0x5a, len + 1);
          ASSERT_EQ(copy_checked(e, u, len, into_engine), len) << "len " << len << " user+" << uo << " engine+" << eo;
          ASSERT_EQ(memcmp(dst, src, len), 0) << "len " << len << " user+" << uo << " engine+" << eo;
          ASSERT_EQ(dst[len], 0x5a) << "wrote past the end";
        }
      }
    }
  }
}

// The caller's memory ends (a page taken away, or one it may not write or
// read) at `end` bytes into the copy: exactly those bytes are copied, at a
// slow distance (bounced) and at a fast one, in the first piece and later.
void expect_stops_at(bool into_engine, size_t user_offset, size_t end, int prot) {
  const size_t pages = 300;
  Pages engine(pages), user(pages);
  ASSERT_TRUE(engine.data && user.data);
  char* u = user.data + user_offset;
  const size_t len = pages * kPage - user_offset - 1;
  char* hole = u + end;
  ASSERT_EQ(reinterpret_cast<uintptr_t>(hole) % kPage, 0u);
  ASSERT_EQ(mprotect(hole, kPage, prot), 0);
  char* src = into_engine ? u : engine.data;
  char* dst = into_engine ? engine.data : u;
  fill(src, end, 3);
  memset(dst, 0x5a, end);
  EXPECT_EQ(copy_checked(engine.data, u, len, into_engine), end) << "user+" << user_offset;
  EXPECT_EQ(memcmp(dst, src, end), 0);
}

TEST_P(CheckedCopyBothWays, StopsWhereTheCallersMemoryEnds) {
  for (bool into_engine : {false, true}) {
    for (size_t uo : {size_t{0}, size_t{16}, size_t{2048}}) {
      const size_t first = kPage - uo;  // the first page boundary after the start
      for (size_t end : {first, first + 5 * kPage, first + (256 << 10), first + (600 << 10)}) {
        expect_stops_at(into_engine, uo, end, PROT_NONE);
        expect_stops_at(into_engine, uo, end, into_engine ? PROT_NONE : PROT_READ);
      }
    }
  }
}

TEST(CheckedCopy, NothingWhenTheFirstPageIsMissing) {
  Pages engine(4), user(4);
  ASSERT_TRUE(engine.data && user.data);
  ASSERT_EQ(munmap(user.data, kPage), 0);
  for (size_t uo : {size_t{0}, size_t{16}}) {
    EXPECT_EQ(copy_checked(engine.data, user.data + uo, 3 * kPage, false), 0u);
    EXPECT_EQ(copy_checked(engine.data, user.data + uo, 3 * kPage, true), 0u);
  }
  user.data += kPage;
  user.len -= kPage;
}

// What the child of the next test copies, in the memory it shares.
struct SharedCopy {
  char user[2 * kPage];
  char engine[2 * kPage];
  char back[2 * kPage];
  size_t copied[2];
};

int copy_in_child(void* arg) {
  auto* c = static_cast<SharedCopy*>(arg);
  c->copied[0] = copy_checked(c->engine, c->user, sizeof c->user, true);
  c->copied[1] = copy_checked(c->engine, c->back, sizeof c->back, false);
  return 0;
}

// A child made with CLONE_VM in a new pid namespace shares the cached id
// (process_id.h), which names no process there: the copy must not fail.
TEST(CheckedCopy, CopiesInAChildWhoseCachedIdTheKernelDoesNotKnow) {
  ASSERT_GT(current_pid(), 1);  // cached now, and the child will see it
  Pages stack(64);
  auto* c = new SharedCopy();
  fill(c->user, sizeof c->user, 9);
  const int child = clone(copy_in_child, stack.data + stack.len, CLONE_VM | CLONE_NEWPID | SIGCHLD, c);
  if (child < 0 && errno == EPERM) {
    delete c;
    GTEST_SKIP() << "clone(CLONE_NEWPID) needs CAP_SYS_ADMIN, which this test runs without";
  }
  ASSERT_GT(child, 0) << strerror(errno);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(c->copied[0], sizeof c->user);
  EXPECT_EQ(memcmp(c->engine, c->user, sizeof c->user), 0);
  EXPECT_EQ(c->copied[1], sizeof c->back);
  EXPECT_EQ(memcmp(c->back, c->user, sizeof c->user), 0);
  delete c;
}

}  // namespace
}  // namespace hybridio
