/* output_test: the run's JSON document and the sweep's merged one read back with their strings
 * (escapes, control characters, non-ASCII) and numbers intact. */
#include "output.hpp"
#include "sweep.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace hiosim;
using nlohmann::json;

namespace {

// A newline, a quote, a backslash, U+0001, é, 中 and U+1F600.
const std::string kAwkward = "a\nb \"q\" c\\d \x01 \xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80";

RunResult checkpoint_result()
{
  RunResult rr;
  rr.nodes       = 4;
  rr.gpus        = 32;
  rr.peak_write  = 12.5e9;
  rr.plan.preset = kAwkward;
  rr.plan.bytes  = 123456789012345.0;
  PolicyResult r;
  r.policy    = kAwkward;
  r.write_s   = 1.0 / 3;
  r.restore_s = std::nan("");
  r.write_rule_bytes[HIO_RULE_SMALL] = 3;
  r.write_rule_bytes[HIO_RULE_FORCED_DIRECT]       = 1;
  rr.policies.push_back(r);
  return rr;
}

std::string run_json(const RunResult& rr, const FlagList& config)
{
  std::ostringstream os;
  write_json(os, Params{}, rr, config);
  return os.str();
}

TEST(Output, JsonReadsBackWithEveryStringAndNumber)
{
  const FlagList config = {{"workload/preset", kAwkward}, {"tag/\xC3\xA9", "\x01"}};
  const std::string text = run_json(checkpoint_result(), config);
  const json doc         = json::parse(text);
  EXPECT_EQ(doc["schema"], "hybridio-sim/1");
  EXPECT_EQ(doc["config"]["workload/preset"].get<std::string>(), kAwkward);
  EXPECT_EQ(doc["config"]["tag/\xC3\xA9"], "\x01");
  EXPECT_EQ(doc["run"]["preset"].get<std::string>(), kAwkward);
  EXPECT_EQ(doc["run"]["ckpt_bytes"].get<double>(), 123456789012345.0);
  EXPECT_EQ(doc["run"]["peak_write_gbps"].get<double>(), 12.5);
  const json& r = doc["results"].at(0);
  EXPECT_EQ(r["policy"].get<std::string>(), kAwkward);
  EXPECT_EQ(r["write_s"].get<double>(), 1.0 / 3);
  EXPECT_TRUE(r["restore_s"].is_null()) << "a value that is not finite is null";
  EXPECT_EQ(r["write_rules"][hio_rule_name(HIO_RULE_SMALL)].get<double>(), 0.75);
  EXPECT_EQ(r["write_rules"].size(), 2u);
  EXPECT_TRUE(r["read_rules"].empty());
  EXPECT_NE(text.find(R"(\u0001)"), std::string::npos) << text;
}

TEST(Output, JsonKeepsTheFlagsInTheirOrder)
{
  const auto doc = nlohmann::ordered_json::parse(run_json(RunResult{}, {{"z/b", "1"}, {"a/c", "2"}}));
  ASSERT_EQ(doc["config"].size(), 2u);
  EXPECT_EQ(doc["config"].begin().key(), "z/b");
  EXPECT_TRUE(doc["results"].empty());
}

TEST(Output, SweepMergeKeepsEveryRunsDocument)
{
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "output_test_sweep";
  fs::remove_all(dir);
  fs::create_directories(dir / "runs");
  for (const char* id : {"run-0", "run-1"}) {
    std::ofstream((dir / "runs" / (std::string(id) + ".json")).string())
        << run_json(checkpoint_result(), {{"workload/preset", kAwkward + id}});
    std::ofstream((dir / "runs" / (std::string(id) + ".csv")).string()) << "preset\nx\n";
  }
  merge_results(dir.string());
  std::ifstream in((dir / "results.json").string());
  const json merged = json::parse(in);
  EXPECT_EQ(merged["schema"], "hybridio-sim-sweep/1");
  ASSERT_EQ(merged["runs"].size(), 2u);
  EXPECT_EQ(merged["runs"][1]["run"], "run-1");
  EXPECT_EQ(merged["runs"][1]["output"]["config"]["workload/preset"].get<std::string>(), kAwkward + "run-1");
  EXPECT_EQ(merged["runs"][0]["output"]["results"][0]["policy"].get<std::string>(), kAwkward);
}

TEST(Output, SweepMergeNamesARunThatIsNotJson)
{
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "output_test_sweep_bad";
  fs::remove_all(dir);
  fs::create_directories(dir / "runs");
  std::ofstream((dir / "runs" / "run-0.json").string()) << "{\"schema\": \"hybridio-sim/1\", ";
  std::ofstream((dir / "runs" / "run-0.csv").string()) << "preset\nx\n";
  try {
    merge_results(dir.string());
    FAIL() << "a truncated run was merged";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("run-0.json"), std::string::npos) << e.what();
  }
}

} // namespace
