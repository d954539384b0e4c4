// report_test.cc - the report's summaries of a row's runs, and its JSON
// read back with every string and number intact.
#include "report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace hybridio::bench {
namespace {

ResultRow row_of(std::initializer_list<double> seconds_per_gb) {
  ResultRow row;
  for (double s : seconds_per_gb) {
    RunSample run;
    run.bytes = 1000000000;
    run.seconds = s;
    row.runs.push_back(run);
  }
  return row;
}

TEST(RoundRatios, ComparesRunsOfTheSameRound) {
  // The machine slows down from round to round; hybrid is 5 % ahead in each.
  const ResultRow other = row_of({1.0, 1.5, 2.0});
  const ResultRow hybrid = row_of({1.0 / 1.05, 1.5 / 1.05, 2.0 / 1.05});
  const RoundRatios r = round_ratios(hybrid, other);
  EXPECT_EQ(r.rounds, 3u);
  EXPECT_NEAR(r.median, 1.05, 1e-9);
  EXPECT_NEAR(r.min, 1.05, 1e-9);
  EXPECT_NEAR(r.max, 1.05, 1e-9);
}

TEST(RoundRatios, OnlyRoundsBothRan) {
  const RoundRatios r = round_ratios(row_of({1.0, 2.0, 4.0}), row_of({2.0, 2.0}));
  EXPECT_EQ(r.rounds, 2u);
  EXPECT_NEAR(r.min, 1.0, 1e-9);
  EXPECT_NEAR(r.max, 2.0, 1e-9);
  EXPECT_NEAR(r.median, 1.5, 1e-9);
  EXPECT_EQ(round_ratios(row_of({1.0}), ResultRow{}).rounds, 0u);
}

// A newline, a quote, a backslash, U+0001, é, 中 and U+1F600.
const std::string kAwkward = "a\nb \"q\" c\\d \x01 \xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80";

Report awkward_report() {
  Report r;
  r.argv = {"hybridio", "bench", "--name=" + kAwkward};
  r.machine.hostname = kAwkward;
  r.machine.mount_point = "/mnt/\xC3\xA9t\xC3\xA9";
  r.file_bytes = 1 << 20;
  r.cold = "files";
  ResultRow ok = row_of({0.5, 0.25, 1.0});
  ok.job = kAwkward;
  ok.policy = "hybrid";
  ok.engine = "hybridio";
  ok.pattern = "sequential";
  ok.bs_bytes = 1 << 20;
  ok.notes = {kAwkward, "plain"};
  ok.run_stats.resize(ok.runs.size());
  ok.run_stats[0].bytes[HIO_OP_WRITE][HIO_PATH_DIRECT] = 1000000000;
  ok.runs[2].usr_s = std::nan("");
  r.rows.push_back(ok);
  ResultRow skipped;
  skipped.job = kAwkward;
  skipped.policy = "dontcache";
  skipped.status = "skipped";
  skipped.reason = "RWF_DONTCACHE refused: " + kAwkward;
  r.rows.push_back(skipped);
  r.write_settings = [](JsonWriter& w) {
    w.begin_array("jobs").begin_object().field("name", kAwkward).begin_object("settings");
    w.field("filename", kAwkward).field("iodepth", 4u).field_bool("verify", true).field_null("size");
    w.end_object().end_object().end_array();
  };
  return r;
}

TEST(ReportJson, ReadsBackWithEveryStringAndNumber) {
  const std::string text = report_json(awkward_report());
  const nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["schema"], kBenchSchema);
  EXPECT_EQ(doc["argv"][2].get<std::string>(), "--name=" + kAwkward);
  EXPECT_EQ(doc["machine"]["hostname"].get<std::string>(), kAwkward);
  EXPECT_EQ(doc["machine"]["filesystem"]["mount_point"], "/mnt/\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(doc["machine"]["file_bytes"], 1 << 20);
  EXPECT_EQ(doc["jobs"][0]["name"].get<std::string>(), kAwkward);
  EXPECT_EQ(doc["jobs"][0]["settings"]["filename"].get<std::string>(), kAwkward);
  EXPECT_EQ(doc["jobs"][0]["settings"]["iodepth"], 4);
  EXPECT_EQ(doc["jobs"][0]["settings"]["verify"], true);
  EXPECT_TRUE(doc["jobs"][0]["settings"]["size"].is_null());

  ASSERT_EQ(doc["results"].size(), 1u);
  const nlohmann::json& row = doc["results"][0];
  EXPECT_EQ(row["job"].get<std::string>(), kAwkward);
  EXPECT_EQ(row["notes"], nlohmann::json({kAwkward, "plain"}));
  EXPECT_EQ(row["reps"], 3);
  EXPECT_EQ(row["gbps_median"], 2);  // runs of 4, 2 and 1 GB/s
  EXPECT_EQ(row["gbps_max"], 4);
  EXPECT_EQ(row["runs"][1]["seconds"].get<double>(), 0.25);
  EXPECT_TRUE(row["runs"][2]["usr_s"].is_null()) << "a value that is not finite is null";
  EXPECT_EQ(row["counters"]["bytes"]["direct"], 1000000000u);

  ASSERT_EQ(doc["skipped"].size(), 1u);
  EXPECT_EQ(doc["skipped"][0]["job"].get<std::string>(), kAwkward);
  EXPECT_EQ(doc["skipped"][0]["reason"].get<std::string>(), "RWF_DONTCACHE refused: " + kAwkward);
  // The escapes themselves, and the document alone with one trailing newline.
  EXPECT_NE(text.find(R"("a\nb \"q\" c\\d \u0001 )"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n', text.size() - 2), text.size() - 1);
}

TEST(ReportJson, KeysKeepTheOrderTheyAreWrittenIn) {
  const auto doc = nlohmann::ordered_json::parse(report_json(awkward_report()));
  std::vector<std::string> keys;
  for (const auto& [key, value] : doc.items()) keys.push_back(key);
  const std::vector<std::string> expected = {"schema", "kind", "tool", "argv", "time", "machine", "cold",
                                             "jobs", "results", "skipped"};
  EXPECT_EQ(keys, expected);
}

TEST(ReportJson, NumbersKeepSixSignificantDigitsAndIntegersStayIntegers) {
  JsonWriter w;
  w.begin_object().field("third", 1.0 / 3).field("whole", 3.0).field("big", uint64_t{1} << 62).field("neg", -2);
  w.begin_array("list").value(0.5).value("x").end_array().end_object();
  EXPECT_EQ(w.str(),
            "{\n  \"third\": 0.333333,\n  \"whole\": 3,\n  \"big\": 4611686018427387904,\n  \"neg\": -2,\n"
            "  \"list\": [\n    0.5,\n    \"x\"\n  ]\n}\n");
}

}  // namespace
}  // namespace hybridio::bench
