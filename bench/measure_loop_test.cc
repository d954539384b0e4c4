// measure_loop_test.cc - the measuring loop on real files: rounds rotate the
// policies, skipped policies are never run, a failed check fails that
// policy's rows and ends the loop, cold phases say how the cache was
// dropped, a failed warm-up is noted on every row, a phase's own run
// (Phase::run) replaces the threads.
#include "measure_loop.h"

#include <fcntl.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "temp_dir.h"

namespace hybridio::bench {
namespace {

constexpr uint64_t kBs = 64 << 10, kLen = 256 << 10;

class MeasureLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    ASSERT_TRUE(buffer_.ok());
    machine_.o_direct = true;
    machine_.rwf_dontcache = true;
  }

  // Each trial: a write, then a cold, verified read of the same file through
  // the library; every trial the loop asks for is logged in calls_.
  MeasurePlan plan(std::vector<hio_mode> policies, unsigned repeat) {
    MeasurePlan p;
    p.prog = "measure_loop_test";
    p.row.job = "t";
    p.row.engine = "hybridio";
    p.policies = std::move(policies);
    p.ops = {HIO_OP_WRITE, HIO_OP_READ};
    p.repeat = repeat;
    p.files = {path_};
    p.drop_caches = false;
    p.remove_files_after_trial = true;
    p.bytes_per_trial = 2 * kLen;
    p.make_trial = [this](hio_mode mode, unsigned round) {
      calls_.emplace_back(mode, round);
      Phase w;
      w.label = "write";
      ThreadPlan t;
      t.path = path_;
      t.open_flags = O_WRONLY | O_CREAT | O_TRUNC;
      for (uint64_t off = 0; off < kLen; off += kBs) t.units.push_back({off, kBs, HIO_OP_WRITE});
      t.buffer = &buffer_;
      w.plans.push_back(t);
      w.config.engine = find_engine("hybridio");
      w.record_as = {HIO_OP_WRITE};
      Phase r = w;
      r.label = "read";
      r.plans[0].open_flags = O_RDONLY;
      for (IoUnit& u : r.plans[0].units) u.op = HIO_OP_READ;
      r.config.verify_reads = true;
      r.cold = true;
      r.record_as = {HIO_OP_READ};
      Trial trial;
      trial.phases.push_back(std::move(w));
      trial.phases.push_back(std::move(r));
      return trial;
    };
    return p;
  }

  testing::TempDir dir_;
  std::string path_ = dir_.file("data");
  PatternBuffer buffer_{kBs, 0, 0x7e57};
  MachineInfo machine_;
  std::vector<std::pair<hio_mode, unsigned>> calls_;
};

TEST_F(MeasureLoopTest, RoundsRotateThePoliciesAndEveryRowGetsEveryRound) {
  Report report;
  MeasureOutcome out = measure_policies(plan({HIO_MODE_BUFFERED, HIO_MODE_DIRECT, HIO_MODE_HYBRID}, 2), machine_, &report);
  EXPECT_EQ(out.status, 0);
  std::vector<std::pair<hio_mode, unsigned>> expected = {
      {HIO_MODE_BUFFERED, 0}, {HIO_MODE_DIRECT, 0}, {HIO_MODE_HYBRID, 0},
      {HIO_MODE_DIRECT, 1},   {HIO_MODE_HYBRID, 1}, {HIO_MODE_BUFFERED, 1}};
  EXPECT_EQ(calls_, expected);
  ASSERT_EQ(report.rows.size(), 6u);
  for (const ResultRow& row : report.rows) {
    EXPECT_EQ(row.status, "ok") << row.policy;
    ASSERT_EQ(row.runs.size(), 2u) << row.policy;
    EXPECT_EQ(row.runs[0].bytes, kLen);
  }
  EXPECT_EQ(report.rows[1].op, HIO_OP_READ);
  EXPECT_NE(access(path_.c_str(), F_OK), 0) << "the file is removed after each trial";
}

TEST_F(MeasureLoopTest, ASkippedPolicyIsNeverRunAndSaysWhy) {
  machine_.o_direct = false;
  machine_.o_direct_error = "EINVAL";
  Report report;
  MeasureOutcome out = measure_policies(plan({HIO_MODE_DIRECT, HIO_MODE_BUFFERED}, 1), machine_, &report);
  EXPECT_EQ(out.status, 0);
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].first, HIO_MODE_BUFFERED);
  for (int i : {0, 1}) {
    EXPECT_EQ(report.rows[i].status, "skipped");
    EXPECT_EQ(report.rows[i].reason, "the filesystem refuses O_DIRECT (EINVAL)");
    EXPECT_TRUE(report.rows[i].runs.empty());
  }
  EXPECT_EQ(report.rows[2].runs.size(), 1u);
}

TEST_F(MeasureLoopTest, AFailedCheckFailsThatPolicysRowsAndEndsTheLoop) {
  MeasurePlan p = plan({HIO_MODE_BUFFERED, HIO_MODE_HYBRID, HIO_MODE_DIRECT}, 2);
  auto make = p.make_trial;
  p.make_trial = [make](hio_mode mode, unsigned round) {
    Trial t = make(mode, round);
    if (mode == HIO_MODE_HYBRID) t.phases[0].check = [] { return std::string("wrong bytes"); };
    return t;
  };
  Report report;
  MeasureOutcome out = measure_policies(p, machine_, &report);
  EXPECT_EQ(out.status, 1);
  ASSERT_EQ(calls_.size(), 2u) << "nothing runs after the failure";
  EXPECT_EQ(report.rows[0].runs.size(), 1u);
  for (int i : {2, 3}) {
    EXPECT_EQ(report.rows[i].status, "failed");
    EXPECT_EQ(report.rows[i].reason, "wrong bytes");
    EXPECT_TRUE(report.rows[i].runs.empty()) << "a failed trial records nothing";
  }
  EXPECT_TRUE(report.rows[4].runs.empty());
  EXPECT_NE(access(path_.c_str(), F_OK), 0) << "the file is removed after a failed trial too";
}

TEST_F(MeasureLoopTest, AColdPhaseSaysHowTheCacheWasDropped) {
  MeasurePlan p = plan({HIO_MODE_BUFFERED}, 1);
  Report report;
  EXPECT_EQ(measure_policies(p, machine_, &report).status, 0);
  EXPECT_EQ(report.cold, "none") << "not asked to drop";
  // Only the job's files (the suite's setting, test_environment.cmake): as
  // root a global drop would empty the cache of the tests running beside.
  setenv("HYBRIDIO_BENCH_COLD", "files", 1);
  p.drop_caches = true;
  EXPECT_EQ(measure_policies(p, machine_, &report).status, 0);
  EXPECT_EQ(report.cold, "fadvise");
}

TEST_F(MeasureLoopTest, APhasesOwnRunReplacesTheThreadsAndItsOutcomeIsRecorded) {
  MeasurePlan p = plan({HIO_MODE_BUFFERED, HIO_MODE_HYBRID}, 1);
  auto make = p.make_trial;
  std::vector<bool> had_progress;
  p.make_trial = [&](hio_mode mode, unsigned round) {
    Trial t = make(mode, round);
    t.phases[1].run = [&had_progress, mode](const RunConfig& config) {
      had_progress.push_back(config.progress != nullptr);
      RunOutcome r;
      r.seconds = 2;
      r.bytes[HIO_OP_READ] = 1000;
      r.ios[HIO_OP_READ] = 10;
      if (mode == HIO_MODE_HYBRID) r.error = "its own failure";
      return r;
    };
    return t;
  };
  Report report;
  EXPECT_EQ(measure_policies(p, machine_, &report).status, 1);
  EXPECT_EQ(had_progress, (std::vector<bool>{true, true}));
  ASSERT_EQ(report.rows[1].runs.size(), 1u);  // buffered's read: the phase's own outcome, not run_threads'
  EXPECT_EQ(report.rows[1].runs[0].bytes, 1000u);
  EXPECT_DOUBLE_EQ(report.rows[1].runs[0].seconds, 2);
  EXPECT_EQ(report.rows[0].runs[0].bytes, kLen);  // the write phase still ran its threads
  EXPECT_EQ(report.rows[3].status, "failed");
  EXPECT_EQ(report.rows[3].reason, "its own failure");
}

TEST_F(MeasureLoopTest, AFailedWarmUpIsReportedOnEveryRowAndTheRunsGoOn) {
  MeasurePlan p = plan({HIO_MODE_BUFFERED, HIO_MODE_HYBRID}, 1);
  p.warm_up_bytes = kLen;
  p.warm_up_dir = dir_.file("missing");
  Report report;
  MeasureOutcome out = measure_policies(p, machine_, &report);
  EXPECT_EQ(out.status, 0);
  EXPECT_NE(out.warm_up_error.find("cannot create"), std::string::npos) << out.warm_up_error;
  for (const ResultRow& row : report.rows) {
    EXPECT_EQ(row.runs.size(), 1u);
    ASSERT_EQ(row.notes.size(), 1u);
    EXPECT_EQ(row.notes[0], "memory warm-up failed: " + out.warm_up_error);
  }
}

}  // namespace
}  // namespace hybridio::bench
