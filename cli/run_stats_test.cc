// run_stats_test.cc - `hybridio run`'s counters: the shim's per-process
// documents added up by the library's reader, and the hybridio-run/1
// document read back with its strings intact.
#include "run_stats.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "hybridio_internal/stats_document.h"

namespace hybridio::cli {
namespace {

// A newline, a quote, a backslash, U+0001, é, 中 and U+1F600 (a surrogate pair in JSON).
const std::string kAwkward = "a\nb \"q\" c\\d \x01 \xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x98\x80";

std::string make_dir() {
  std::string templ = ::testing::TempDir() + "run_stats.XXXXXX";
  EXPECT_NE(mkdtemp(templ.data()), nullptr);
  return templ;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

hio_stats counters(uint64_t scale) {
  hio_stats s{};
  s.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT] = 4096 * scale;
  s.requests[HIO_OP_WRITE][HIO_PATH_DIRECT] = scale;
  s.bytes[HIO_OP_READ][HIO_PATH_BUFFERED] = 100 * scale;
  s.splits = scale;
  s.reuse_hit_bytes = 7 * scale;
  return s;
}

TEST(RunStats, AddsUpEveryProcessDocumentAndRemovesWhatItRead) {
  const std::string dir = make_dir();
  hio_policy_config policy{};
  write_file(dir + "/stats.100.json", internal::stats_document(counters(1), 1, policy));
  write_file(dir + "/stats.200.json", internal::stats_document(counters(3), 2, policy));
  write_file(dir + "/stats.300.json", "{\"schema\": \"something-else/1\"}");
  write_file(dir + "/other.json", internal::stats_document(counters(5), 1, policy));

  const MergedStats m = merge_stats_dir(dir);
  EXPECT_EQ(m.documents, 2);
  EXPECT_EQ(m.processes, 3u);
  EXPECT_EQ(m.sum.bytes[HIO_OP_WRITE][HIO_PATH_DIRECT], 4u * 4096);
  EXPECT_EQ(m.sum.requests[HIO_OP_WRITE][HIO_PATH_DIRECT], 4u);
  EXPECT_EQ(m.sum.bytes[HIO_OP_READ][HIO_PATH_BUFFERED], 400u);
  EXPECT_EQ(m.sum.splits, 4u);
  EXPECT_EQ(m.sum.reuse_hit_bytes, 28u);
  EXPECT_FALSE(exists(dir + "/stats.100.json"));
  EXPECT_FALSE(exists(dir + "/stats.200.json"));
  EXPECT_TRUE(exists(dir + "/stats.300.json")) << "a document it could not read is left for the user";
  EXPECT_TRUE(exists(dir + "/other.json")) << "only stats.*.json are the shim's";
}

TEST(RunStats, RunDocumentReadsBackWithTheSumAndTheSettingsIntact) {
  MergedStats m;
  m.sum = counters(2);
  m.processes = 2;
  m.documents = 2;
  nlohmann::json settings = {{"include", kAwkward}, {"trace", ""}, {"quiet", true}};

  const std::string text = run_stats_json(m, 1.2345678, settings);
  const nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["schema"], "hybridio-run/1");
  EXPECT_EQ(doc["processes"], 2);
  EXPECT_DOUBLE_EQ(doc["seconds"].get<double>(), 1.23457);
  EXPECT_EQ(doc["write"]["direct"]["bytes"], 2 * 4096);
  EXPECT_EQ(doc["read"]["buffered"]["bytes"], 200);
  EXPECT_EQ(doc["reuse"]["hit_bytes"], 14);
  EXPECT_FALSE(doc.contains("policy")) << "one process's settings are not a sum";
  EXPECT_EQ(doc["settings"]["include"].get<std::string>(), kAwkward);
  EXPECT_EQ(doc["settings"]["trace"], "");
  EXPECT_EQ(doc["settings"]["quiet"], true);
  // The escapes themselves: a newline keeps its backslash, a control character is \u-escaped.
  EXPECT_NE(text.find(R"("a\nb \"q\" c\\d \u0001 )"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(RunStats, SurrogatePairsReadBackAsTheirCharacter) {
  // What another tool may write for U+1F600, read the way `run --stats` readers do.
  const nlohmann::json doc = nlohmann::json::parse(R"({"s": "\u00e9\u4e2d\ud83d\ude00\u0001"})");
  EXPECT_EQ(doc["s"].get<std::string>(), "\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\x01");
  MergedStats none;
  const nlohmann::json back = nlohmann::json::parse(run_stats_json(none, 0, {{"s", doc["s"]}}));
  EXPECT_EQ(back["settings"]["s"], doc["s"]);
}

TEST(RunStats, NoDocumentMeansNoCounters) {
  const nlohmann::json doc =
      nlohmann::json::parse(run_stats_json(MergedStats{}, 2.0, nlohmann::json::object()));
  EXPECT_EQ(doc["processes"], 0);
  EXPECT_EQ(doc["seconds"], 2);
  EXPECT_FALSE(doc.contains("write"));
  EXPECT_EQ(doc.size(), 4u);
}

TEST(RunStats, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  const std::string text = run_stats_json(MergedStats{}, 0, {{"exclude", std::string("/data/\xE9t\xE9")}});
  EXPECT_EQ(nlohmann::json::parse(text)["settings"]["exclude"], "/data/\xEF\xBF\xBDt\xEF\xBF\xBD");
}

}  // namespace
}  // namespace hybridio::cli
