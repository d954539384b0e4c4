// stats_test.cc - counting and the JSON document.
#include "stats.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace hybridio
