// fd_table_test.cc - slot states, counted references outliving a reset,
// and descriptors beyond the table.
#include "preload/fd_table.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>
#include <vector>

#include "file/file.h"
#include "runtime/runtime.h"
#include "temp_dir.h"

namespace hybridio::preload {
namespace {

Tracked* make_tracked(int fd) {
  File* f = nullptr;
  if (File::adopt(Runtime::get(), fd, false, &f) != 0) return nullptr;
  return new Tracked{f, 0, 0, 0, {1}};
}

TEST(FdTable, StatesAndReset) {
  FdTable table;
  EXPECT_EQ(table.state(5), SlotState::kUnknown);
  table.set_ignored(5);
  EXPECT_EQ(table.state(5), SlotState::kIgnored);
  EXPECT_FALSE(table.acquire(5));
  table.reset(5);
  EXPECT_EQ(table.state(5), SlotState::kUnknown);
  EXPECT_EQ(table.state(-1), SlotState::kUnknown);
  EXPECT_EQ(table.state(FdTable::kMaxFd + 10), SlotState::kUnknown);
  table.set_ignored(FdTable::kMaxFd + 10);  // out of range: ignored, not a crash
  EXPECT_EQ(table.state(FdTable::kMaxFd + 10), SlotState::kUnknown);
}

TEST(FdTable, ReferenceOutlivesReset) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  int fd = open(dir.file("f").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  FdTable table;
  Tracked* t = make_tracked(fd);
  ASSERT_NE(t, nullptr);
  table.set_tracked(fd, t);
  EXPECT_EQ(table.state(fd), SlotState::kTracked);
  {
    TrackedRef ref = table.acquire(fd);
    ASSERT_TRUE(ref);
    EXPECT_EQ(ref->refs.load(), 2);
    table.reset(fd);  // a close in another thread
    EXPECT_EQ(table.state(fd), SlotState::kUnknown);
    char c = 'x';
    EXPECT_EQ(ref->file->pwrite(&c, 1, 0), 1) << "the File is still alive while referenced";
  }
  close(fd);
}

TEST(FdTable, ConcurrentAcquireAndReplace) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  int fd = open(dir.file("f").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  FdTable table;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int n = 0; n < 2000; ++n) {
        TrackedRef ref = table.acquire(fd);
        if (ref) {
          ASSERT_NE(ref->file, nullptr);
        }
      }
    });
  for (int n = 0; n < 500; ++n) {
    table.set_tracked(fd, make_tracked(fd));
    if (n % 3 == 0) table.reset(fd);
  }
  for (auto& t : threads) t.join();
  table.reset(fd);
  close(fd);
}

}  // namespace
}  // namespace hybridio::preload
