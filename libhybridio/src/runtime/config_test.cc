// config_test.cc - sizes, policies, the environment, the config file and
// the diagnostics for bad values.
#include "runtime/config.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <set>

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

// A valid value for `row` other than its default, or "" when the test knows none.
std::string other_value(const SettingInfo& row) {
  static const std::map<SettingKind, std::vector<const char*>> kCandidates = {
      {SettingKind::kSize, {"3M", "128K", "64M", "1G"}},
      {SettingKind::kSizeOrOff, {"16M", "on", "off"}},
      {SettingKind::kInteger, {"3", "99", "1"}},
      {SettingKind::kBool, {"on", "off"}},
      {SettingKind::kMode, {"direct", "buffered"}},
      {SettingKind::kLogLevel, {"debug", "error"}},
      {SettingKind::kPath, {"/tmp/hybridio-config-test"}},
  };
  for (const char* candidate : kCandidates.at(row.kind)) {
    Config c;
    std::string printed;
    if (set_setting(&c, row.key, candidate) && get_setting(c, row.key, &printed) && printed != row.default_value)
      return printed;
  }
  return "";
}

TEST(SettingsTable, EveryRowRoundTripsParsePrintParse) {
  const std::vector<SettingInfo> rows = list_settings();
  ASSERT_GE(rows.size(), 21u);
  for (const SettingInfo& row : rows) {
    for (const std::string& value : {row.default_value, other_value(row)}) {
      if (value.empty()) continue;  // an unset path: not a value one can set
      Config c;
      ASSERT_TRUE(set_setting(&c, row.key, value)) << row.key << "=" << value;
      std::string printed;
      ASSERT_TRUE(get_setting(c, row.key, &printed)) << row.key;
      EXPECT_EQ(printed, value) << row.key;
      Config again;
      ASSERT_TRUE(set_setting(&again, row.key, printed)) << row.key << "=" << printed;
      std::string reprinted;
      get_setting(again, row.key, &reprinted);
      EXPECT_EQ(reprinted, printed) << row.key;
    }
  }
}

TEST(SettingsTable, RowsAreUniqueAndNamedAfterTheirKey) {
  std::set<std::string> keys;
  for (const SettingInfo& row : list_settings()) {
    EXPECT_TRUE(keys.insert(row.key).second) << row.key;
    std::string upper = row.key;
    for (char& ch : upper) ch = static_cast<char>(toupper(static_cast<unsigned char>(ch)));
    EXPECT_EQ(row.variable, "HYBRIDIO_" + upper);
    EXPECT_FALSE(row.accepted.empty()) << row.key;
    EXPECT_NE(std::string(row.help), "") << row.key;
  }
}

TEST(SettingsTable, DefaultsAreTheStructsOwn) {
  const Config defaults;
  for (const SettingInfo& row : list_settings()) {
    std::string value;
    ASSERT_TRUE(get_setting(defaults, row.key, &value));
    EXPECT_EQ(value, row.default_value) << row.key;
  }
  std::string v;
  ASSERT_TRUE(get_setting(defaults, "write_threshold", &v));
  EXPECT_EQ(v, "2M");  // hio_policy_config_defaults()
  ASSERT_TRUE(get_setting(defaults, "chunk_size", &v));
  EXPECT_EQ(v, "1M");  // EngineSettings()
  EXPECT_FALSE(get_setting(defaults, "read_ahead", &v));  // a removed setting
  EXPECT_FALSE(get_setting(defaults, "no_such_key", &v));
}

TEST(SettingsTable, EveryRowIsReachableByVariableAndByConfigFile) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const LogLevel saved_level = log_level();
  for (const SettingInfo& row : list_settings()) {
    const std::string value = other_value(row);
    ASSERT_FALSE(value.empty()) << "no non-default value known for " << row.key;

    std::vector<std::string> problems;
    Config from_env = load_config(env_of({{row.variable, value}}), &problems);
    EXPECT_TRUE(problems.empty()) << row.variable << ": " << (problems.empty() ? "" : problems[0]);
    std::string printed;
    ASSERT_TRUE(get_setting(from_env, row.key, &printed));
    EXPECT_EQ(printed, value) << row.variable;

    const std::string path = dir.file(std::string(row.key) + ".conf");
    std::ofstream(path) << row.key << " = " << value << "\n";
    Config from_file = load_config(env_of({{"HYBRIDIO_CONFIG", path}}), &problems);
    EXPECT_TRUE(problems.empty()) << path << ": " << (problems.empty() ? "" : problems[0]);
    ASSERT_TRUE(get_setting(from_file, row.key, &printed));
    EXPECT_EQ(printed, value) << row.key << " in a config file";
  }
  set_log_level(saved_level);  // HYBRIDIO_LOG above set the process's level
}

TEST(SettingsTable, LogPrintsItsRealLevel) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("hybridio.conf");
  std::ofstream(path) << "log = info\n";
  std::vector<std::string> problems;
  Config c = load_config(env_of({{"HYBRIDIO_CONFIG", path}, {"HYBRIDIO_LOG", "loud"}}), &problems);
  EXPECT_EQ(c.log_level, LogLevel::kInfo);
  std::string value;
  ASSERT_TRUE(get_setting(c, "log", &value));
  EXPECT_EQ(value, "info");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("HYBRIDIO_LOG='loud' is not valid: expected error|warn|info|debug; keeping info"),
            std::string::npos)
      << problems[0];
}

TEST(SettingsTable, LimitsComeFromTheRow) {
  Config c;
  EXPECT_FALSE(set_setting(&c, "chunk_size", "3M"));  // not a power of two
  EXPECT_FALSE(set_setting(&c, "chunk_size", "128M"));
  EXPECT_TRUE(set_setting(&c, "chunk_size", "64M"));
  EXPECT_FALSE(set_setting(&c, "queue_depth", "0"));
  EXPECT_FALSE(set_setting(&c, "queue_depth", "257"));
  EXPECT_FALSE(set_setting(&c, "queue_depth", "8K"));  // an integer, not a size
  EXPECT_FALSE(set_setting(&c, "write_behind_limit", "512K"));
  EXPECT_FALSE(set_setting(&c, "read_ahead", "on"));  // a removed setting
  EXPECT_FALSE(set_setting(&c, "stats", ""));
  EXPECT_EQ(c.engine.chunk_size, 64u << 20);  // the refused values changed nothing

  std::vector<std::string> problems;
  load_config(env_of({{"HYBRIDIO_CHUNK_SIZE", "3M"}}), &problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("expected a byte count with optional K/M/G suffix, e.g. 4M, a power of two, "
                             "from 64K to 64M; keeping 1M"),
            std::string::npos)
      << problems[0];
}

TEST(SettingsTable, RemovedSettingsAreIgnoredWithoutAProblem) {
  std::vector<std::string> problems;
  const Config c = load_config(env_of({{"HYBRIDIO_READ_AHEAD", "32M"}, {"HYBRIDIO_LEARN_PIPELINED_READS", "off"}}),
                               &problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(c.engine.read_ahead, 0u);
}

TEST(SettingsTable, EngineSettingsAreClampedToTheRowsLimits) {
  EngineSettings e;
  e.queue_depth = 100000;
  e.chunk_size = 3;
  e.uring = 7;
  e.write_behind_limit = 1;
  e.read_ahead = 5ULL << 30;
  clamp_engine_settings(&e);
  EXPECT_EQ(e.queue_depth, 256u);
  EXPECT_EQ(e.chunk_size, 64u << 10);
  EXPECT_EQ(e.uring, 1);
  EXPECT_EQ(e.write_behind_limit, 1u << 20);
  EXPECT_EQ(e.read_ahead, 0u);  // a removed setting: ignored
  e.queue_depth = 0;
  e.chunk_size = 3 << 20;  // in range, not a power of two: the default
  clamp_engine_settings(&e);
  EXPECT_EQ(e.queue_depth, 1u);
  EXPECT_EQ(e.chunk_size, 1u << 20);

  // The defaults are within the limits: clamping leaves them alone.
  const EngineSettings defaults;
  EngineSettings d = defaults;
  clamp_engine_settings(&d);
  EXPECT_EQ(memcmp(static_cast<const hio_engine_config*>(&d), static_cast<const hio_engine_config*>(&defaults),
                   sizeof(hio_engine_config)),
            0);
}

TEST(LoadConfig, UnknownFileKeyPointsAtTheConfigCommand) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("hybridio.conf");
  std::ofstream(path) << "queue_deep = 4\n";
  std::vector<std::string> problems;
  load_config(env_of({{"HYBRIDIO_CONFIG", path}}), &problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("is not a setting"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("(see hybridio config)"), std::string::npos) << problems[0];
}

TEST(DescribeSettings, ListsEveryVariable) {
  std::string text = describe_settings();
  for (const char* v : {"HYBRIDIO_POLICY", "HYBRIDIO_WRITE_THRESHOLD", "HYBRIDIO_READ_THRESHOLD",
                        "HYBRIDIO_STATS", "HYBRIDIO_TRACE", "HYBRIDIO_LOG", "HYBRIDIO_CONFIG"})
    EXPECT_NE(text.find(v), std::string::npos) << v;
  for (const SettingInfo& row : list_settings()) {
    EXPECT_NE(text.find("  " + row.variable + "=<" + row.accepted + ">"), std::string::npos) << row.key;
    EXPECT_NE(text.find(std::string(row.help)), std::string::npos) << row.key;
  }
  EXPECT_NE(text.find("HYBRIDIO_LOG=<error|warn|info|debug>\n      diagnostics on stderr (default warn)"),
            std::string::npos);
  EXPECT_NE(text.find("HYBRIDIO_STATS=<a file path>\n      write JSON counters to this file at exit (default (unset))"),
            std::string::npos);
}

}  // namespace
}  // namespace hybridio
