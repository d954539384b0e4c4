// report_test.cc - the report's summaries of a row's runs.
#include "report.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace hybridio::bench
