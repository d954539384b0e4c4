// path_rules_test.cc - include/exclude prefixes and globs, and the
// user.hybridio opt-out attribute on a real file.
#include "preload/path_rules.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/statfs.h>
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

TEST(KernelPseudoFs, TheKernelsOwnFilesystemsByType) {
  EXPECT_STREQ(kernel_pseudo_fs(0x62656572), "sysfs");
  EXPECT_STREQ(kernel_pseudo_fs(0x9fa0), "proc");
  EXPECT_STREQ(kernel_pseudo_fs(0x63677270), "cgroup2");
  EXPECT_STREQ(kernel_pseudo_fs(0x74726163), "tracefs");
  // A magic with the top bit set, as statfs's signed f_type gives it.
  EXPECT_STREQ(kernel_pseudo_fs(static_cast<unsigned long>(static_cast<long>(static_cast<int>(0xf97cff8c)))),
               "selinuxfs");
  EXPECT_STREQ(kernel_pseudo_fs(0xde5e81e4UL), "efivarfs");
  for (unsigned long data_fs : {0xEF53UL /* ext4 */, 0x58465342UL /* xfs */, 0x9123683EUL /* btrfs */,
                                0x01021994UL /* tmpfs */, 0x6969UL /* nfs */, 0x65735546UL /* fuse */})
    EXPECT_EQ(kernel_pseudo_fs(data_fs), nullptr) << std::hex << data_fs;
}

TEST(KernelPseudoFs, TheMountsHereAreFound) {
  struct statfs st;
  ASSERT_EQ(statfs("/proc/self", &st), 0);
  EXPECT_STREQ(kernel_pseudo_fs(static_cast<unsigned long>(st.f_type)), "proc");
  if (statfs("/sys/kernel", &st) == 0) {
    EXPECT_STREQ(kernel_pseudo_fs(static_cast<unsigned long>(st.f_type)), "sysfs");
  }
  testing::TempDir dir;
  ASSERT_EQ(statfs(dir.path().c_str(), &st), 0);
  EXPECT_EQ(kernel_pseudo_fs(static_cast<unsigned long>(st.f_type)), nullptr);
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
