// learned_store_test.cc - learned path costs on disk: real files in a
// temporary directory.
#include "learned_store.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <string>

#include "temp_dir.h"

namespace hybridio {
namespace {

using testing::TempDir;

constexpr uint64_t M = 1 << 20;

FsCostSet some_costs() {
  FsCostSet set;
  FsCosts& c = set.streams;
  PathEstimate buffered{12, 0.51, 0.001, 3, 0.75, 0.01}, direct{40, 0.4, 0.0004, 0, 0, 0};
  PathEstimate dontcache{5, 0.3333333, 0.002, 2, 0.1, 0.0001};
  c.set_estimate(HIO_OP_WRITE, size_class(4 * M), HIO_PATH_BUFFERED, buffered);
  c.set_estimate(HIO_OP_WRITE, size_class(4 * M), HIO_PATH_DIRECT, direct);
  c.set_estimate(HIO_OP_WRITE, size_class(4 * M), HIO_PATH_DONTCACHE, dontcache);
  c.set_estimate(HIO_OP_READ, size_class(64 * M), HIO_PATH_DIRECT, {9, 0.25, 0.0001, 0, 0, 0});
  c.set_estimate(HIO_OP_READ, size_class(64 * M), HIO_PATH_BUFFERED, {9, 0.5, 0.0001, 0, 0, 0});
  // Uncached reads looked at while direct ones were in use, paired with them.
  c.set_estimate(HIO_OP_READ, size_class(64 * M), HIO_PATH_DONTCACHE,
                 {6, 0.31, 0.0004, 0, 0, 0, 6, 0.3, 0.31, 0.00002});
  // Reads at random of the same class, measured the other way round.
  set.random_reads.set_estimate(HIO_OP_READ, size_class(64 * M), HIO_PATH_DIRECT, {11, 0.8, 0.0002, 0, 0, 0});
  set.random_reads.set_estimate(HIO_OP_READ, size_class(64 * M), HIO_PATH_DONTCACHE, {11, 0.41, 0.0003, 0, 0, 0});
  return set;
}

void expect_same(const FsCosts& a, const FsCosts& b) {
  for (hio_op op : {HIO_OP_READ, HIO_OP_WRITE}) {
    EXPECT_EQ(a.packed(op), b.packed(op)) << op;
    for (int c = 0; c < kSizeClasses; ++c)
      for (int p = 0; p < HIO_PATH_COUNT; ++p) {
        const PathEstimate& x = a.estimate(op, c, static_cast<hio_path>(p));
        const PathEstimate& y = b.estimate(op, c, static_cast<hio_path>(p));
        EXPECT_EQ(x.samples, y.samples);
        EXPECT_EQ(x.deferred_samples, y.deferred_samples);
        EXPECT_NEAR(x.ns_per_byte, y.ns_per_byte, 1e-5 * x.ns_per_byte);
        EXPECT_NEAR(x.deferred_ns_per_byte, y.deferred_ns_per_byte, 1e-5 * x.deferred_ns_per_byte);
        EXPECT_NEAR(x.ns_var, y.ns_var, 1e-5 * x.ns_var);
        EXPECT_NEAR(x.deferred_var, y.deferred_var, 1e-5 * x.deferred_var);
        EXPECT_EQ(x.paired_samples, y.paired_samples);
        EXPECT_NEAR(x.paired_own_ns_per_byte, y.paired_own_ns_per_byte, 1e-5 * x.paired_own_ns_per_byte);
        EXPECT_NEAR(x.paired_ns_per_byte, y.paired_ns_per_byte, 1e-5 * x.paired_ns_per_byte);
        EXPECT_NEAR(x.paired_var, y.paired_var, 1e-5 * x.paired_var);
      }
  }
}

void expect_same(const FsCostSet& a, const FsCostSet& b) {
  expect_same(a.streams, b.streams);
  expect_same(a.random_reads, b.random_reads);
}

TEST(LearnedStore, RoundTripThroughARealFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const FsCostSet saved = some_costs();
  EXPECT_EQ(saved.streams.verdict(HIO_OP_READ, size_class(64 * M)), Verdict::kOffcache);
  EXPECT_EQ(saved.streams.verdict(HIO_OP_WRITE, size_class(4 * M)), Verdict::kOffcache);
  EXPECT_FALSE(prefers_dontcache(saved.streams.packed(HIO_OP_READ), size_class(64 * M)));
  EXPECT_TRUE(prefers_dontcache(saved.random_reads.packed(HIO_OP_READ), size_class(64 * M)));
  const std::string where = dir.file("state/hybridio/learned");  // created on demand
  ASSERT_EQ(save_learned(where, "ef53-0000000100000002", saved), 0);
  FsCostSet loaded;
  ASSERT_TRUE(load_learned(where, "ef53-0000000100000002", &loaded));
  expect_same(saved, loaded);
  // Saved again over itself: still one file, still the same.
  ASSERT_EQ(save_learned(where, "ef53-0000000100000002", loaded), 0);
  FsCostSet again;
  ASSERT_TRUE(load_learned(where, "ef53-0000000100000002", &again));
  expect_same(saved, again);
}

TEST(LearnedStore, ForeignTextIsRefused) {
  FsCostSet c;
  EXPECT_FALSE(parse_learned("", &c));
  EXPECT_FALSE(parse_learned("{\"schema\": \"hybridio-stats/1\"}\n", &c));
  EXPECT_FALSE(parse_learned("schema hybridio-learned/999\n", &c));
  EXPECT_FALSE(parse_learned("schema hybridio-learned/1\nwrite 3M direct 1 0.5 0 0 0 0\n", &c)) << "not a class";
  EXPECT_FALSE(parse_learned("schema hybridio-learned/1\nwrite 4M sideways 1 0.5 0 0 0 0\n", &c));
  EXPECT_FALSE(parse_learned("schema hybridio-learned/1\nwrite 4M direct 1 nan 0 0 0 0\n", &c));
  EXPECT_FALSE(parse_learned("schema hybridio-learned/1\nrandwrite 4M direct 1 0.5 0 0 0 0\n", &c));
  EXPECT_TRUE(parse_learned("schema hybridio-learned/1\n# a comment\nfs x\nread 64K direct 1 0.5 0 0 0 0\n", &c));
  EXPECT_EQ(c.streams.estimate(HIO_OP_READ, 0, HIO_PATH_DIRECT).samples, 1u);
  EXPECT_EQ(c.random_reads.estimate(HIO_OP_READ, 0, HIO_PATH_DIRECT).samples, 0u);
  EXPECT_TRUE(parse_learned("schema hybridio-learned/1\nrandread 64K dontcache 2 0.5 0 0 0 0\n", &c));
  EXPECT_EQ(c.random_reads.estimate(HIO_OP_READ, 0, HIO_PATH_DONTCACHE).samples, 2u);
  EXPECT_EQ(c.streams.estimate(HIO_OP_READ, 0, HIO_PATH_DONTCACHE).samples, 0u);
  // The pairing of an off-cache path is optional, and dropped when it does not parse.
  EXPECT_TRUE(parse_learned("schema hybridio-learned/1\nread 64M dontcache 4 0.3 0 0 0 0 4 0.3 0.4 0.001\n", &c));
  EXPECT_EQ(c.streams.estimate(HIO_OP_READ, size_class(64 * M), HIO_PATH_DONTCACHE).paired_samples, 4u);
  EXPECT_DOUBLE_EQ(c.streams.estimate(HIO_OP_READ, size_class(64 * M), HIO_PATH_DONTCACHE).paired_ns_per_byte, 0.4);
  EXPECT_TRUE(parse_learned("schema hybridio-learned/1\nread 64M dontcache 4 0.3 0 0 0 0 4 0.3 -1 0.001\n", &c));
  EXPECT_EQ(c.streams.estimate(HIO_OP_READ, size_class(64 * M), HIO_PATH_DONTCACHE).paired_samples, 0u);
  EXPECT_EQ(c.streams.estimate(HIO_OP_READ, size_class(64 * M), HIO_PATH_DONTCACHE).samples, 4u);
}

TEST(LearnedStore, MissingOrUnwritableIsAValueNotAFailure) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  FsCostSet c;
  EXPECT_FALSE(load_learned(dir.path(), "no-such-fs", &c));
  std::ofstream(dir.file("plain")) << "a file, not a directory\n";
  EXPECT_EQ(save_learned(dir.file("plain/learned"), "k", some_costs()), -ENOTDIR);
}

TEST(LearnedStore, StateDirectoryPrecedence) {
  const char* xdg = getenv("XDG_STATE_HOME");
  const std::string saved_xdg = xdg ? xdg : "";
  EXPECT_EQ(learned_state_dir("/configured"), "/configured");
  setenv("XDG_STATE_HOME", "/xdg-state", 1);
  EXPECT_EQ(learned_state_dir(""), "/xdg-state/hybridio/learned");
  unsetenv("XDG_STATE_HOME");
  const char* home = getenv("HOME");
  if (home && *home == '/') {
    EXPECT_EQ(learned_state_dir(""), std::string(home) + "/.local/state/hybridio/learned");
  }
  if (xdg) {
    setenv("XDG_STATE_HOME", saved_xdg.c_str(), 1);
  }
}

TEST(LearnedStore, FilesystemKeyIsStablePerFilesystem) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const int a = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
  const int b = open(dir.file("f").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  const std::string key = filesystem_key(a);
  EXPECT_FALSE(key.empty());
  EXPECT_EQ(key, filesystem_key(b));
  EXPECT_EQ(key.find('/'), std::string::npos) << "a file name";
  close(a);
  close(b);
  EXPECT_EQ(filesystem_key(-1), "");
}

}  // namespace
}  // namespace hybridio
