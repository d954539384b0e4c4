// learned_store_test.cc - the learned state on disk: real files in a
// temporary directory.
#include "learn/learned_store.h"

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

FsModel model() {
  hio_policy_config policy;
  hio_policy_config_defaults(&policy);
  return FsModel(LearnSettings(), policy);
}

FsModel some_state() {
  FsModel m = model();
  m.set_estimate(HIO_OP_WRITE, size_class(4 * M), HIO_PATH_BUFFERED, {12, 0.51, 0.001});
  m.set_estimate(HIO_OP_WRITE, size_class(4 * M), HIO_PATH_DIRECT, {40, 0.4, 0.0004});
  m.set_estimate(HIO_OP_WRITE, size_class(4 * M), HIO_PATH_DONTCACHE, {5, 0.3333333, 0.002});
  m.set_estimate(HIO_OP_READ, size_class(64 * M), HIO_PATH_DIRECT, {9, 0.25, 0.0001});
  m.set_estimate(HIO_OP_READ, size_class(64 * M), HIO_PATH_BUFFERED, {9, 0.5, 0.0001});
  m.set_flush_estimate(HIO_PATH_BUFFERED, {3, 0.75, 0.01});
  m.set_flush_estimate(HIO_PATH_DONTCACHE, {7, 0.125, 0});
  m.set_side(HIO_OP_WRITE, size_class(512 << 10), HIO_PATH_DONTCACHE);
  m.set_side(HIO_OP_READ, kSizeClasses, HIO_PATH_DIRECT);
  return m;
}

void expect_same_estimate(const Estimate& x, const Estimate& y) {
  EXPECT_EQ(x.samples, y.samples);
  EXPECT_NEAR(x.ns_per_byte, y.ns_per_byte, 1e-5 * x.ns_per_byte);
  EXPECT_NEAR(x.var, y.var, 1e-5 * x.var);
}

void expect_same(const FsModel& a, const FsModel& b) {
  for (hio_path p : {HIO_PATH_BUFFERED, HIO_PATH_DIRECT, HIO_PATH_DONTCACHE})
    expect_same_estimate(a.flush_estimate(p), b.flush_estimate(p));
  for (hio_op op : {HIO_OP_READ, HIO_OP_WRITE}) {
    EXPECT_EQ(a.crossover(op), b.crossover(op)) << op;
    EXPECT_EQ(a.offcache(op), b.offcache(op)) << op;
    for (int c = 0; c < kSizeClasses; ++c)
      for (hio_path p : {HIO_PATH_BUFFERED, HIO_PATH_DIRECT, HIO_PATH_DONTCACHE})
        expect_same_estimate(a.estimate(op, c, p), b.estimate(op, c, p));
  }
}

TEST(LearnedStore, RoundTripThroughARealFile) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  const FsModel saved = some_state();
  const std::string where = dir.file("state/hybridio/learned");  // created on demand
  ASSERT_EQ(save_learned(where, "ef53-0000000100000002", saved), 0);
  FsModel loaded = model();
  ASSERT_TRUE(load_learned(where, "ef53-0000000100000002", &loaded));
  expect_same(saved, loaded);
  EXPECT_EQ(loaded.threshold(HIO_OP_WRITE, 2 * M), 512u << 10);
  EXPECT_EQ(loaded.threshold(HIO_OP_READ, 8 * M), ~0ULL) << "none leaves the cache by size";
  // Saved again over itself: still one file, still the same.
  ASSERT_EQ(save_learned(where, "ef53-0000000100000002", loaded), 0);
  FsModel again = model();
  ASSERT_TRUE(load_learned(where, "ef53-0000000100000002", &again));
  expect_same(saved, again);
}

TEST(LearnedStore, ForeignTextIsRefused) {
  FsModel c = model();
  EXPECT_FALSE(parse_learned("", &c));
  EXPECT_FALSE(parse_learned("{\"schema\": \"hybridio-stats/1\"}\n", &c));
  EXPECT_FALSE(parse_learned("schema hybridio-learned/1\nwrite 4M direct 1 0.5 0 0 0 0\n", &c)) << "the old model";
  EXPECT_FALSE(parse_learned("schema hybridio-learned/3\nwrite 4M direct 1 0.5 0 0 0\n", &c)) << "flushes per class";
  EXPECT_FALSE(parse_learned("schema hybridio-learned/4\nwrite 3M direct 1 0.5 0\n", &c)) << "not a class";
  EXPECT_FALSE(parse_learned("schema hybridio-learned/4\nwrite 4M sideways 1 0.5 0\n", &c));
  EXPECT_FALSE(parse_learned("schema hybridio-learned/4\nwrite 4M direct 1 nan 0\n", &c));
  EXPECT_FALSE(parse_learned("schema hybridio-learned/4\nrandread 4M direct 1 0.5 0\n", &c));
  EXPECT_FALSE(parse_learned("schema hybridio-learned/4\nflush sideways 1 0.5 0\n", &c));
  EXPECT_FALSE(parse_learned("schema hybridio-learned/4\nflush direct 1 -0.5 0\n", &c));
  EXPECT_FALSE(parse_learned("schema hybridio-learned/4\nside write 3M direct\n", &c));
  EXPECT_TRUE(parse_learned("schema hybridio-learned/4\n# a comment\nfs x\nread 64K direct 1 0.5 0\n", &c));
  EXPECT_EQ(c.estimate(HIO_OP_READ, 0, HIO_PATH_DIRECT).samples, 1u);
  EXPECT_EQ(c.crossover(HIO_OP_READ), kConfigured);
  EXPECT_TRUE(parse_learned("schema hybridio-learned/4\nside read 1M dontcache\nside write configured direct\n", &c));
  EXPECT_EQ(c.crossover(HIO_OP_READ), size_class(1 * M));
  EXPECT_EQ(c.offcache(HIO_OP_READ), HIO_PATH_DONTCACHE);
  EXPECT_EQ(c.crossover(HIO_OP_WRITE), kConfigured);
  EXPECT_EQ(c.offcache(HIO_OP_WRITE), HIO_PATH_DIRECT);
}

TEST(LearnedStore, MissingOrUnwritableIsAValueNotAFailure) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  FsModel c = model();
  EXPECT_FALSE(load_learned(dir.path(), "no-such-fs", &c));
  std::ofstream(dir.file("plain")) << "a file, not a directory\n";
  EXPECT_EQ(save_learned(dir.file("plain/learned"), "k", some_state()), -ENOTDIR);
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
