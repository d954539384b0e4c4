// proc_files_test.cc - numbers are found only at the start of their line.
#include "platform/proc_files.h"

#include <gtest/gtest.h>

namespace hybridio {
namespace {

TEST(LineNumber, FindsTheLineThatStartsWithTheKey) {
  const char* meminfo = "MemTotal:       24000 kB\nMemAvailable:   23000 kB\nWriteback:         7 kB\nWritebackTmp:      9 kB\n";
  uint64_t v = 0;
  ASSERT_TRUE(line_number(meminfo, "MemAvailable:", &v));
  EXPECT_EQ(v, 23000u);
  ASSERT_TRUE(line_number(meminfo, "Writeback:", &v));
  EXPECT_EQ(v, 7u);
  EXPECT_FALSE(line_number(meminfo, "Dirty:", &v));
}

TEST(LineNumber, AKeyInsideALineDoesNotCount) {
  const char* stat = "total_inactive_file 100\ninactive_file 5\n";
  uint64_t v = 0;
  ASSERT_TRUE(line_number(stat, "inactive_file ", &v));
  EXPECT_EQ(v, 5u);
}

TEST(ReadSmallFile, ReadsProcfsAndRefusesWhatIsNotThere) {
  char buf[8192];
  ASSERT_TRUE(read_small_file("/proc/meminfo", buf, sizeof buf));
  uint64_t total = 0;
  EXPECT_TRUE(line_number(buf, "MemTotal:", &total));
  EXPECT_GT(total, 0u);
  EXPECT_FALSE(read_small_file("/proc/no-such-file", buf, sizeof buf));
}

}  // namespace
}  // namespace hybridio
