// dio_alignment_test.cc - the alignment the library uses must really work
// for O_DIRECT on the test filesystem.
#include "probe/dio_alignment.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include "temp_dir.h"

namespace hybridio {
namespace {

TEST(DioAlignment, ReportedAlignmentWorksForODirect) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  int fd = open(dir.file("f").c_str(), O_RDWR | O_CREAT | O_DIRECT, 0644);
  if (fd < 0 && errno == EINVAL) GTEST_SKIP() << "the test filesystem refuses O_DIRECT";
  ASSERT_GE(fd, 0);
  DioAlignment a = query_dio_alignment(fd);
  ASSERT_GT(a.mem_align, 0u);
  ASSERT_GT(a.offset_align, 0u);
  EXPECT_EQ(a.mem_align & (a.mem_align - 1), 0u);
  EXPECT_EQ(a.offset_align & (a.offset_align - 1), 0u);
  void* buf = nullptr;
  ASSERT_EQ(posix_memalign(&buf, 4096, 8192), 0);
  char* p = static_cast<char*>(buf) + (a.mem_align < 4096 ? a.mem_align : 0);
  EXPECT_EQ(pwrite(fd, p, a.offset_align, a.offset_align), static_cast<ssize_t>(a.offset_align))
      << "mem_align " << a.mem_align << " offset_align " << a.offset_align << ": " << strerror(errno);
  free(buf);
  close(fd);
}

TEST(DioAlignment, NonRegularDescriptorHasAFallback) {
  int fd = open("/dev/null", O_RDONLY);
  ASSERT_GE(fd, 0);
  DioAlignment a = query_dio_alignment(fd);
  EXPECT_GT(a.offset_align, 0u);
  close(fd);
}

}  // namespace
}  // namespace hybridio
