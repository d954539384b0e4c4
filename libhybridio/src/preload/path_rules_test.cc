// path_rules_test.cc - include/exclude prefixes and globs, and the
// user.hybridio opt-out attribute on a real file.
#include "path_rules.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "temp_dir.h"

namespace hybridio::preload {
namespace {

TEST(PathRules, EverythingButSystemTreesByDefault) {
  PathRules rules(nullptr, nullptr);
  EXPECT_TRUE(rules.allows("/data/ckpt/model.pt"));
  EXPECT_FALSE(rules.allows("/proc/self/status"));
  EXPECT_FALSE(rules.allows("/sys/block/vda/size"));
  EXPECT_FALSE(rules.allows("/dev/shm/x"));
  EXPECT_TRUE(rules.allows("/devices/x")) << "a prefix is a directory, not a string prefix";
}

TEST(PathRules, PrefixesMatchTheDirectoryAndBelow) {
  PathRules rules("/data:/scratch/", "/data/cache");
  EXPECT_TRUE(rules.allows("/data"));
  EXPECT_TRUE(rules.allows("/data/a/b.bin"));
  EXPECT_FALSE(rules.allows("/data2/a.bin"));
  EXPECT_TRUE(rules.allows("/scratch/x"));
  EXPECT_FALSE(rules.allows("/home/u/x"));
  EXPECT_FALSE(rules.allows("/data/cache/x")) << "exclude wins over include";
}

TEST(PathRules, GlobsMatchNamesOrWholePaths) {
  PathRules rules("*.pt:*.npy:/ckpt/*/shard-*", "*.tmp");
  EXPECT_TRUE(rules.allows("/any/where/model.pt"));
  EXPECT_TRUE(rules.allows("/x/a.npy"));
  EXPECT_FALSE(rules.allows("/x/a.npz"));
  EXPECT_TRUE(rules.allows("/ckpt/step10/shard-3"));
  EXPECT_FALSE(rules.allows("/ckpt/shard-3"));
  EXPECT_FALSE(rules.allows("/x/model.pt.tmp"));
}

TEST(PathRules, EmptyItemsAreIgnored) {
  PathRules rules("::/data::", "");
  EXPECT_TRUE(rules.allows("/data/x"));
  EXPECT_FALSE(rules.allows("/other"));
}

TEST(OptOut, XattrOffLeavesTheFileAlone) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  int fd = open(dir.file("f").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_FALSE(opted_out(fd));
  if (fsetxattr(fd, "user.hybridio", "off", 3, 0) != 0) {
    close(fd);
    GTEST_SKIP() << "the test filesystem has no user xattrs: " << strerror(errno);
  }
  EXPECT_TRUE(opted_out(fd));
  ASSERT_EQ(fsetxattr(fd, "user.hybridio", "hybrid", 6, 0), 0);
  EXPECT_FALSE(opted_out(fd));
  ASSERT_EQ(fsetxattr(fd, "user.hybridio", "buffered", 8, 0), 0);
  EXPECT_TRUE(opted_out(fd));
  close(fd);
}

}  // namespace
}  // namespace hybridio::preload
