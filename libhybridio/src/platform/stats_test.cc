// stats_test.cc - counting and the JSON document.
#include "platform/stats.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "platform/stats_file.h"
#include "platform/stats_json.h"
#include "temp_dir.h"

namespace hybridio {
namespace {

TEST(Stats, CountsAndResets) {
  Stats s;
  s.count_request(HIO_OP_WRITE, HIO_PATH_DIRECT);
  s.count_bytes(HIO_OP_WRITE, HIO_PATH_DIRECT, 4096);
  s.count_request(HIO_OP_WRITE, HIO_PATH_DIRECT);
  s.count_bytes(HIO_OP_WRITE, HIO_PATH_DIRECT, 100);
  s.count_rule(HIO_RULE_WRITE_SIZE, 4196);
  s.add(s.splits);
  hio_stats snap = s.snapshot();
  EXPECT_EQ(snap.requests[HIO_OP_WRITE][HIO_PATH_DIRECT], 2u);
  EXPECT_EQ(snap.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 4196u);
  EXPECT_EQ(snap.rule_requests[HIO_RULE_WRITE_SIZE], 1u);
  EXPECT_EQ(snap.splits, 1u);
  s.reset();
  snap = s.snapshot();
  EXPECT_EQ(snap.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 0u);
  EXPECT_EQ(snap.splits, 0u);
}

TEST(Stats, JsonHasSchemaPathsAndRules) {
  Stats s;
  s.count_request(HIO_OP_READ, HIO_PATH_BUFFERED);
  s.count_bytes(HIO_OP_READ, HIO_PATH_BUFFERED, 10);
  s.count_rule(HIO_RULE_READ_CACHED, 10);
  hio_policy_config cfg;
  hio_policy_config_defaults(&cfg);
  std::string j = s.to_json(cfg);
  EXPECT_NE(j.find("\"schema\": \"hybridio-stats/1\""), std::string::npos);
  EXPECT_NE(j.find("\"read\": {\"buffered\": {\"requests\": 1, \"bytes\": 10}"), std::string::npos) << j;
  EXPECT_NE(j.find("\"read_cached\": {\"requests\": 1, \"bytes\": 10}"), std::string::npos) << j;
  EXPECT_NE(j.find("\"write_threshold\": 2097152"), std::string::npos);
}

// Every counter a distinct value: paths, rules (both arrays) and each row of
// kScalarCounters, so a counter the document loses or misplaces shows.
Stats& numbered_stats(Stats& s) {
  uint64_t v = 1;
  for (int op = 0; op < 2; ++op)
    for (int p = 0; p < HIO_PATH_COUNT; ++p) {
      for (uint64_t i = 0; i < v; ++i) s.count_request(static_cast<hio_op>(op), static_cast<hio_path>(p));
      s.count_bytes(static_cast<hio_op>(op), static_cast<hio_path>(p), 1000 * v++);
    }
  for (int r = 0; r < HIO_RULE_COUNT; ++r)
    for (int i = 0; i <= r; ++i) s.count_rule(static_cast<hio_rule>(r), 7);
  for (size_t i = 0; i < Stats::kScalarCounterCount; ++i) s.add(s.*Stats::kScalarCounters[i].live, 100 + i);
  return s;
}

hio_policy_config default_policy() {
  hio_policy_config cfg;
  hio_policy_config_defaults(&cfg);
  return cfg;
}

TEST(Stats, EveryScalarCounterIsReportedAndReset) {
  Stats s;
  const hio_stats snap = numbered_stats(s).snapshot();
  for (size_t i = 0; i < Stats::kScalarCounterCount; ++i)
    EXPECT_EQ(snap.*Stats::kScalarCounters[i].reported, 100 + i) << Stats::kScalarCounters[i].json_path;
  EXPECT_EQ(hio_stats_rule_requests(&snap, static_cast<hio_rule>(HIO_RULE_COUNT - 1)), uint64_t{HIO_RULE_COUNT});
  s.reset();
  const hio_stats zero{};
  const hio_stats after = s.snapshot();
  EXPECT_EQ(memcmp(&after, &zero, sizeof zero), 0);
}

TEST(StatsJson, ReadsBackEveryCounterItWrites) {
  Stats s;
  const hio_stats written = numbered_stats(s).snapshot();
  hio_stats read{};
  uint64_t processes = 0;
  ASSERT_TRUE(add_stats_json(stats_json(written, 3, default_policy()), &read, &processes));
  EXPECT_EQ(memcmp(&read, &written, sizeof read), 0);
  EXPECT_EQ(processes, 3u);
}

TEST(StatsJson, AddsDocumentsUp) {
  Stats s;
  const hio_stats one = numbered_stats(s).snapshot();
  hio_stats sum{};
  uint64_t processes = 0;
  const std::string doc = stats_json(one, 1, default_policy());
  ASSERT_TRUE(add_stats_json(doc, &sum, &processes));
  ASSERT_TRUE(add_stats_json(doc, &sum, &processes));
  EXPECT_EQ(sum.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 2 * one.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT]);
  EXPECT_EQ(sum.fsyncs, 2 * one.fsyncs);
  EXPECT_EQ(hio_stats_rule_bytes(&sum, HIO_RULE_CONTENDED), 2 * hio_stats_rule_bytes(&one, HIO_RULE_CONTENDED));
  EXPECT_EQ(processes, 2u);
}

TEST(StatsJson, RefusesWhatItDidNotWrite) {
  hio_stats sum{};
  sum.fsyncs = 5;
  uint64_t processes = 0;
  for (const char* text : {"", "{}", "not json", "{\"schema\": \"other/1\", \"fsyncs\": 1}",
                           "{\"schema\": \"hybridio-stats/1\", \"fsyncs\": -1}",
                           "{\"schema\": \"hybridio-stats/1\", \"fsyncs\": 99999999999999999999}",
                           "{\"schema\": \"hybridio-stats/1\", \"fsyncs\": 1} trailing"}) {
    EXPECT_FALSE(add_stats_json(text, &sum, &processes)) << text;
  }
  EXPECT_EQ(sum.fsyncs, 5u);
  EXPECT_EQ(processes, 0u);
  // A document from before "processes" existed counts as one process.
  EXPECT_TRUE(add_stats_json("{\"schema\": \"hybridio-stats/1\", \"fsyncs\": 1}", &sum, &processes));
  EXPECT_EQ(sum.fsyncs, 6u);
  EXPECT_EQ(processes, 1u);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Processes that exit together all reach the one file: none is lost to a
// race, none erases another.
TEST(StatsFile, ConcurrentProcessesAddUp) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/stats.json";
  constexpr int kProcesses = 12;
  pid_t children[kProcesses];
  for (int i = 0; i < kProcesses; ++i) {
    children[i] = fork();
    ASSERT_GE(children[i], 0);
    if (children[i] == 0) {
      hio_stats mine{};
      mine.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT] = 1u << i;
      mine.fsyncs = 1;
      _exit(add_stats_to_file(path, mine, default_policy()) == 0 ? 0 : 1);
    }
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  hio_stats sum{};
  uint64_t processes = 0;
  ASSERT_TRUE(add_stats_json(slurp(path), &sum, &processes));
  EXPECT_EQ(sum.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], (1u << kProcesses) - 1);
  EXPECT_EQ(sum.fsyncs, uint64_t{kProcesses});
  EXPECT_EQ(processes, uint64_t{kProcesses});
}

TEST(StatsFile, LeavesAForeignFileAlone) {
  testing::TempDir dir;
  const std::string path = dir.path() + "/notes.txt";
  std::ofstream(path) << "my notes\n";
  hio_stats mine{};
  mine.fsyncs = 1;
  EXPECT_EQ(add_stats_to_file(path, mine, default_policy()), -EEXIST);
  EXPECT_EQ(slurp(path), "my notes\n");
}

}  // namespace
}  // namespace hybridio
