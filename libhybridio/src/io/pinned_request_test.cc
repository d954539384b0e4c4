// pinned_request_test.cc - a pinned request keeps to the open file it began
// on, and its twin never shows as a descriptor nor drops a POSIX lock.
#include "io/pinned_request.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "file_bytes.h"
#include "io/uring_engine.h"
#include "memory/aligned_buffer.h"
#include "temp_dir.h"

namespace hybridio {
namespace {

using testing::TempDir;

int open_descriptors() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - 1;  // opendir's own
}

// Whether another process is kept from write-locking byte 0 of `path`.
bool locked_by_us(const std::string& path) {
  pid_t child = fork();
  if (child == 0) {
    int fd = ::open(path.c_str(), O_RDWR);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_len = 1;
    _exit(fd >= 0 && fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK ? 0 : 1);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::string text_of(const std::string& path) {
  std::vector<char> bytes = testing::file_bytes(path);
  return std::string(bytes.begin(), bytes.end());
}

class Pinned : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    set_transparent_mode(true);
    reset_uring_detection_for_testing();
    if (!uring_usable()) GTEST_SKIP() << "io_uring without registered rings or sparse file tables here";
  }
  void TearDown() override {
    set_transparent_mode(false);
    reset_uring_detection_for_testing();
  }
  int open_file(const char* name, int flags = O_RDWR | O_CREAT) {
    return ::open(dir_.file(name).c_str(), flags, 0644);
  }
  static struct stat identity(int fd) {
    struct stat st {};
    fstat(fd, &st);
    return st;
  }
  TempDir dir_;
};

TEST_F(Pinned, KeepsWorkingOnTheOpenFileWhenTheNumberIsReused) {
  int fd = open_file("a");
  struct stat a = identity(fd);
  PinnedRequest pin;
  ASSERT_EQ(pin.begin(fd, O_RDWR, a.st_dev, a.st_ino), 0);
  ::close(fd);
  int other = open_file("b");
  ASSERT_EQ(other, fd) << "the number is reused";
  char data[] = "pinned";
  EXPECT_EQ(pin.buffered(HIO_OP_WRITE, data, 6, 0, 0), 6);
  EXPECT_EQ(pin.open_twin(), -ESTALE) << "a twin through the reused number would be of the other file";
  EXPECT_EQ(text_of(dir_.file("a")), "pinned");
  EXPECT_EQ(text_of(dir_.file("b")), "");
  ::close(other);
}

TEST_F(Pinned, TwinTakesNoDescriptorAndKeepsLocks) {
  int fd = open_file("a");
  struct stat a = identity(fd);
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_len = 1;
  ASSERT_EQ(fcntl(fd, F_SETLK, &fl), 0);
  const int before = open_descriptors();
  {
    PinnedRequest pin;
    ASSERT_EQ(pin.begin(fd, O_RDWR, a.st_dev, a.st_ino), 0);
    ASSERT_EQ(pin.open_twin(), 0);
    AlignedBuffer buf(1 << 20, 4096);
    memset(buf.data(), 'x', buf.size());
    EXPECT_EQ(pin.direct(HIO_OP_WRITE, buf.data(), buf.size(), 0), static_cast<ssize_t>(buf.size()));
    EXPECT_EQ(open_descriptors(), before) << "the ring and both slots stay out of the descriptor table";
  }
  EXPECT_EQ(open_descriptors(), before);
  EXPECT_TRUE(locked_by_us(dir_.file("a"))) << "releasing the twin is not a close(2) of the file";
  EXPECT_EQ(identity(fd).st_size, 1 << 20);
  ::close(fd);
}

TEST_F(Pinned, BeginFailsOnAClosedDescriptor) {
  int fd = open_file("a");
  struct stat a = identity(fd);
  ::close(fd);
  PinnedRequest pin;
  EXPECT_EQ(pin.begin(fd, O_RDWR, a.st_dev, a.st_ino), -EBADF);
  EXPECT_EQ(PinnedRequest::current(), nullptr);
}

TEST_F(Pinned, OneRequestPerThreadAtATime) {
  int fd = open_file("a");
  struct stat a = identity(fd);
  PinnedRequest first, second;
  ASSERT_EQ(first.begin(fd, O_RDWR, a.st_dev, a.st_ino), 0);
  EXPECT_EQ(PinnedRequest::current(), &first);
  EXPECT_EQ(second.begin(fd, O_RDWR, a.st_dev, a.st_ino), -EOPNOTSUPP);
  ::close(fd);
}

TEST(PinnedOutsideTheShim, NeedsTransparentMode) {
  PinnedRequest pin;
  EXPECT_EQ(pin.begin(0, O_RDONLY, 0, 0), -EOPNOTSUPP);
}

}  // namespace
}  // namespace hybridio
