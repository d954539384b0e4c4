// memory_headroom_test.cc - the headroom is real memory: more than nothing,
// no more than the machine has, and it shrinks when memory is taken.
#include "probe/memory_headroom.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
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

bool write_text(const std::string& path, const std::string& text) {
  FILE* f = fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = fputs(text.c_str(), f) >= 0;
  return fclose(f) == 0 && ok;
}

// In a memory cgroup of 512 MiB, a 128 MiB file read twice (its pages then
// active): the room for page cache counts those pages as room, the headroom
// (inactive file pages only) does not.
TEST(PageCacheRoom, CountsTheCgroupsFilePagesAsRoom) {
  const std::string group = "/sys/fs/cgroup/memory/hybridio-headroom-test." + std::to_string(getpid());
  if (geteuid() != 0 || access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) != 0)
    GTEST_SKIP() << "needs root and the v1 memory cgroup at /sys/fs/cgroup/memory";
  ASSERT_EQ(mkdir(group.c_str(), 0755), 0) << strerror(errno);
  ASSERT_TRUE(write_text(group + "/memory.limit_in_bytes", std::to_string(512ULL << 20)));
  char path[] = "/var/tmp/hybridio-headroom-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  const pid_t child = fork();
  if (child == 0) {
    // The verdict is the exit status: 0 when both answers are as expected.
    if (!write_text(group + "/tasks", std::to_string(getpid()))) _exit(10);
    std::vector<char> block(1 << 20, 7);
    for (int i = 0; i < 128; ++i)
      if (write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) _exit(11);
    if (fdatasync(fd) != 0) _exit(12);
    for (int pass = 0; pass < 2; ++pass)
      for (int i = 0; i < 128; ++i)
        if (pread(fd, block.data(), block.size(), static_cast<off_t>(i) << 20) != static_cast<ssize_t>(block.size()))
          _exit(13);
    const uint64_t room = page_cache_room_bytes(0), headroom = memory_headroom_bytes(0);
    if (room > (512ULL << 20)) _exit(14);      // bounded by the limit
    if (room < (384ULL << 20)) _exit(15);      // the file's pages are room
    if (room < headroom + (64ULL << 20)) _exit(16);  // active file pages count only here
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  close(fd);
  rmdir(group.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10-13: setup failed; 14: above the limit; 15: file pages not counted; "
                                       "16: no more room than the headroom";
}

}  // namespace
}  // namespace hybridio
