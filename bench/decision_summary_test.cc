// decision_summary_test.cc - the main job's "why" line.
#include "decision_summary.h"

#include <gtest/gtest.h>

#include "hybridio/policy.h"

namespace hybridio::bench {
namespace {

void add(hio_stats& s, hio_op op, hio_path path, hio_rule rule, uint64_t bytes) {
  s.bytes[op][path] += bytes;
  if (rule < HIO_STATS_RULES_V1)
    s.rule_bytes[rule] += bytes;
  else
    s.rule_bytes_ext[rule - HIO_STATS_RULES_V1] += bytes;
}

TEST(ExplainDecisions, SharesPerPathThenRulesWithTheirThresholds) {
  hio_policy_config cfg;
  hio_policy_config_defaults(&cfg);
  hio_stats s{};
  add(s, HIO_OP_WRITE, HIO_PATH_DIRECT, HIO_RULE_SEQUENTIAL, 90 << 20);
  add(s, HIO_OP_WRITE, HIO_PATH_BUFFERED, HIO_RULE_SMALL, 10 << 20);
  EXPECT_EQ(explain_decisions(s, HIO_OP_WRITE, cfg),
            "10 % buffered, 90 % direct; decided by 90 % sequential (a stream of calls at or above the 1M stream "
            "threshold); 10 % small (calls below the 2M write threshold)");
}

TEST(ExplainDecisions, ReadsNameTheReadThresholdAndSkipCrumbs) {
  hio_policy_config cfg;
  hio_policy_config_defaults(&cfg);
  cfg.read_threshold = 16 << 20;
  hio_stats s{};
  add(s, HIO_OP_READ, HIO_PATH_BUFFERED, HIO_RULE_SMALL, 1000 << 20);
  add(s, HIO_OP_READ, HIO_PATH_DIRECT, HIO_RULE_CONTENDED, 1 << 20);  // < 1 %: left out
  EXPECT_EQ(explain_decisions(s, HIO_OP_READ, cfg),
            "100 % buffered; decided by 100 % small (calls below the 16M read threshold)");
}

TEST(ExplainDecisions, NothingMovedSaysNothing) {
  hio_policy_config cfg;
  hio_policy_config_defaults(&cfg);
  hio_stats s{};
  EXPECT_EQ(explain_decisions(s, HIO_OP_WRITE, cfg), "");
}

}  // namespace
}  // namespace hybridio::bench
