// config_test.cc - sizes, policies, the environment, the config file and
// the diagnostics for bad values.
#include "config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "temp_dir.h"

namespace hybridio {
namespace {

EnvLookup env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(ParseSize, AcceptsSuffixes) {
  uint64_t v = 0;
  EXPECT_TRUE(parse_size("123", &v));
  EXPECT_EQ(v, 123u);
  EXPECT_TRUE(parse_size("4k", &v));
  EXPECT_EQ(v, 4096u);
  EXPECT_TRUE(parse_size("8M", &v));
  EXPECT_EQ(v, 8u << 20);
  EXPECT_TRUE(parse_size("2MiB", &v));
  EXPECT_EQ(v, 2u << 20);
  EXPECT_TRUE(parse_size("1G", &v));
  EXPECT_EQ(v, 1u << 30);
  EXPECT_TRUE(parse_size("512KB", &v));
  EXPECT_EQ(v, 512u << 10);
}

TEST(ParseSize, RejectsGarbage) {
  uint64_t v = 7;
  for (const char* bad : {"", "M", "-1", "4X", "4MM", "1.5M", " 4M", "99999999999999999999",
                          "17179869184G"})
    EXPECT_FALSE(parse_size(bad, &v)) << bad;
  EXPECT_EQ(v, 7u);
}

TEST(FormatSize, RoundTrips) {
  for (uint64_t v : {0ULL, 100ULL, 4096ULL, 1536ULL << 10, 8ULL << 20, 3ULL << 30}) {
    uint64_t back = 0;
    ASSERT_TRUE(parse_size(format_size(v), &back)) << format_size(v);
    EXPECT_EQ(back, v);
  }
  EXPECT_EQ(format_size(8 << 20), "8M");
}

TEST(LoadConfig, DefaultsAreLustres) {
  Config c = load_config(env_of({}), nullptr);
  EXPECT_EQ(c.policy.mode, HIO_MODE_HYBRID);
  EXPECT_EQ(c.policy.write_threshold, 2u << 20);
  EXPECT_EQ(c.policy.read_threshold, 8u << 20);
}

TEST(LoadConfig, EnvironmentSetsValues) {
  std::vector<std::string> problems;
  Config c = load_config(env_of({{"HYBRIDIO_POLICY", "direct"},
                                 {"HYBRIDIO_WRITE_THRESHOLD", "4M"},
                                 {"HYBRIDIO_READ_THRESHOLD", "16m"},
                                 {"HYBRIDIO_STATS", "/tmp/x.json"},
                                 {"HYBRIDIO_DONTCACHE", "off"}}),
                         &problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(c.policy.mode, HIO_MODE_DIRECT);
  EXPECT_EQ(c.policy.write_threshold, 4u << 20);
  EXPECT_EQ(c.policy.read_threshold, 16u << 20);
  EXPECT_EQ(c.stats_path, "/tmp/x.json");
  EXPECT_FALSE(c.dontcache);
}

TEST(LoadConfig, BadValueNamesTheVariableAndKeepsTheDefault) {
  std::vector<std::string> problems;
  Config c = load_config(env_of({{"HYBRIDIO_WRITE_THRESHOLD", "lots"},
                                 {"HYBRIDIO_POLICY", "fast"},
                                 {"HYBRIDIO_CACHED_PERCENT", "150"}}),
                         &problems);
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_NE(problems[0].find("HYBRIDIO_POLICY='fast'"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("hybrid|buffered|direct|dontcache"), std::string::npos);
  EXPECT_NE(problems[1].find("HYBRIDIO_WRITE_THRESHOLD='lots'"), std::string::npos) << problems[1];
  EXPECT_NE(problems[1].find("K/M/G"), std::string::npos);
  EXPECT_NE(problems[1].find("keeping 2M"), std::string::npos);
  EXPECT_EQ(c.policy.mode, HIO_MODE_HYBRID);
  EXPECT_EQ(c.policy.write_threshold, 2u << 20);
  EXPECT_EQ(c.policy.cached_percent, 50u);
}

TEST(LoadConfig, FileIsReadAndEnvironmentWins) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  std::string path = dir.file("hybridio.conf");
  std::ofstream(path) << "# site defaults\npolicy = buffered\nwrite_threshold = 8M  # big\n"
                         "read_threshold=32M\n\nbogus line\nstream_threshold = x\n";
  std::vector<std::string> problems;
  Config c = load_config(env_of({{"HYBRIDIO_CONFIG", path}, {"HYBRIDIO_POLICY", "hybrid"}}), &problems);
  EXPECT_EQ(c.policy.mode, HIO_MODE_HYBRID);
  EXPECT_EQ(c.policy.write_threshold, 8u << 20);
  EXPECT_EQ(c.policy.read_threshold, 32u << 20);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find(":6:"), std::string::npos) << problems[0];
  EXPECT_NE(problems[1].find(":7: stream_threshold='x'"), std::string::npos) << problems[1];
}

TEST(LoadConfig, MissingFileIsReportedNotFatal) {
  std::vector<std::string> problems;
  Config c = load_config(env_of({{"HYBRIDIO_CONFIG", "/nonexistent/hybridio.conf"}}), &problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("cannot be read"), std::string::npos);
  EXPECT_EQ(c.policy.mode, HIO_MODE_HYBRID);
}

TEST(DescribeSettings, ListsEveryVariable) {
  std::string text = describe_settings();
  for (const char* v : {"HYBRIDIO_POLICY", "HYBRIDIO_WRITE_THRESHOLD", "HYBRIDIO_READ_THRESHOLD",
                        "HYBRIDIO_STATS", "HYBRIDIO_TRACE", "HYBRIDIO_LOG", "HYBRIDIO_CONFIG"})
    EXPECT_NE(text.find(v), std::string::npos) << v;
}

}  // namespace
}  // namespace hybridio
