// train_job_test.cc - the training workload: the per-epoch shuffle, the
// sizing of a run from its options, and the epochs on a small real
// dataset (threads and forked readers, hit rates, checked bytes, a wrong
// byte caught).
#include "train_job.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "io_runner.h"
#include "temp_dir.h"
#include "train_epochs.h"

namespace hybridio::bench {
namespace {

TEST(EpochOrder, APermutationTheSameForEveryPolicyNewEveryEpoch) {
  const std::vector<uint32_t> a = epoch_order(1000, 7, 0), b = epoch_order(1000, 7, 0);
  EXPECT_EQ(a, b);  // what every policy and round reads
  std::vector<uint32_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_NE(a, epoch_order(1000, 7, 1));  // a new order every epoch
  EXPECT_NE(a, epoch_order(1000, 8, 0));  // and per seed
  size_t in_place = 0;
  for (uint32_t i = 0; i < 1000; ++i) in_place += a[i] == i;
  EXPECT_LT(in_place, 20u);  // shuffled, not the identity (about 1 expected)
}

TEST(SizeTrainRun, DefaultsFollowThePresetAndTheBudget) {
  TrainOptions o;
  TrainSizing s;
  std::string error;
  ASSERT_TRUE(size_train_run(o, 4ULL << 30, &s, &error)) << error;
  EXPECT_EQ(s.sample_bytes, 146600628u);  // unet3d: one sample per file, its real size
  EXPECT_EQ(s.stride % 64, 0u);
  EXPECT_EQ(s.samples_per_file, 1u);
  EXPECT_EQ(s.readers, 4u);
  EXPECT_EQ(s.batch, 7u);
  EXPECT_EQ(s.compute_s, 0);
  EXPECT_EQ(s.files, 7u);  // a quarter of 4 GiB in 140 MB files
  ASSERT_TRUE(size_train_run(o, 64ULL << 30, &s, &error));
  EXPECT_EQ(s.files, 15u);  // capped at 2 GiB
  EXPECT_LE(s.dataset, kTrainAutoDatasetMax + s.sample_bytes);

  o.preset = "resnet50";
  o.compute_ms = -1;
  ASSERT_TRUE(size_train_run(o, 4ULL << 30, &s, &error));
  EXPECT_EQ(s.sample_bytes, 114660u);
  EXPECT_EQ(s.stride, 114688u);  // records at 64-byte boundaries
  EXPECT_EQ(s.samples_per_file, 1251u);
  EXPECT_EQ(s.batch, 400u);
  EXPECT_EQ(s.readers, 8u);
  EXPECT_DOUBLE_EQ(s.compute_s, 0.224);
}

TEST(SizeTrainRun, DatasetAsAMultipleOfTheBudget) {
  TrainOptions o;
  o.sample_size = 4 << 20;
  o.dataset_x_budget = 2;
  o.memory_limit = 256 << 20;
  TrainSizing s;
  std::string error;
  ASSERT_TRUE(size_train_run(o, 64ULL << 30, &s, &error)) << error;
  EXPECT_EQ(s.budget, 256u << 20);  // the limit, not MemAvailable
  EXPECT_EQ(s.samples_per_file, 1u);
  EXPECT_EQ(s.files, 128u);
  EXPECT_EQ(s.dataset, 512u << 20);
}

TEST(SizeTrainRun, RefusesContradictionsAndEmptyDatasets) {
  TrainOptions o;
  TrainSizing s;
  std::string error;
  o.files = 4;
  o.dataset = 1 << 30;
  EXPECT_FALSE(size_train_run(o, 4ULL << 30, &s, &error));
  EXPECT_NE(error.find("one of --dataset"), std::string::npos);
  o.files = 0;
  o.dataset = 1 << 20;  // less than one 140 MB sample file
  EXPECT_FALSE(size_train_run(o, 4ULL << 30, &s, &error));
  EXPECT_NE(error.find("smaller than one file"), std::string::npos);
}

TEST(TrainOptions, ParsingRefusesBadValues) {
  for (const char* bad : {"--preset=gpt5", "--epochs=0", "--readers=300", "--compute=-5", "--sample-size=100",
                          "--dataset-x-budget=0", "--policy=fast", "--batch=x", "--frobnicate"}) {
    TrainOptions o;
    std::string error;
    std::vector<std::string> args = {bad};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    EXPECT_EQ(parse_train_options(static_cast<int>(argv.size()), argv.data(), &o, &error), 2) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
  TrainOptions o;
  std::string error;
  std::vector<std::string> args = {"--preset=resnet50", "--epochs=5", "--compute=preset", "--processes"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ASSERT_EQ(parse_train_options(static_cast<int>(argv.size()), argv.data(), &o, &error), 0) << error;
  EXPECT_EQ(o.epochs, 5u);
  EXPECT_LT(o.compute_ms, 0);
  EXPECT_TRUE(o.processes);
}

class RunEpochsTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    d_.sample_bytes = 64 << 10;
    d_.stride = 64 << 10;
    d_.samples_per_file = 4;
    for (int f = 0; f < 4; ++f) d_.paths.push_back(dir_.file("s" + std::to_string(f)));
    ASSERT_EQ(write_train_dataset(d_), "");
    plan_.engine = find_engine("hybridio");
    plan_.epochs = 3;
    plan_.batch = 3;
    plan_.readers = 2;
    plan_.processes = GetParam();
    plan_.prefetch = 4;
    plan_.hit = probe_hit_method(d_.paths[0]);
    plan_.buffers = &buffers_;
    set_library_policy(HIO_MODE_BUFFERED, 0);
  }
  void TearDown() override {
    for (const auto& p : d_.paths) unlink(p.c_str());
  }
  hybridio::testing::TempDir dir_;
  TrainDataset d_;
  EpochPlan plan_;
  ReaderBuffers buffers_{2, 64 << 10};
};

TEST_P(RunEpochsTest, EveryEpochReadsAndChecksTheWholeDataset) {
  drop_caches(d_.paths);
  std::vector<EpochResult> epochs;
  const RunOutcome r = run_epochs(d_, plan_, RunConfig{}, &epochs);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(epochs.size(), 3u);
  for (const EpochResult& e : epochs) {
    EXPECT_EQ(e.bytes, d_.bytes());
    EXPECT_EQ(e.samples, d_.samples());
    EXPECT_EQ(e.verified_bytes, d_.bytes());
    EXPECT_GE(e.hit_rate(), 0);
    EXPECT_LE(e.hit_rate(), 1);
    EXPECT_GT(e.gbps(), 0);
    EXPECT_EQ(e.path_bytes[HIO_PATH_BUFFERED], d_.bytes());  // buffered: the library routed them so
  }
  // Buffered reads leave the dataset cached: epochs 2+ find every byte there.
  EXPECT_DOUBLE_EQ(epochs[1].hit_rate(), 1.0);
  EXPECT_DOUBLE_EQ(epochs[2].hit_rate(), 1.0);
  EXPECT_EQ(r.bytes[HIO_OP_READ], 3 * d_.bytes());
  EXPECT_EQ(r.ios[HIO_OP_READ], 3 * d_.samples());
}

TEST_P(RunEpochsTest, ComputeTimeGivesTheAcceleratorUtilisation) {
  plan_.compute_s = 0.01;
  plan_.epochs = 1;
  std::vector<EpochResult> epochs;
  ASSERT_EQ(run_epochs(d_, plan_, RunConfig{}, &epochs).error, "");
  ASSERT_EQ(epochs.size(), 1u);
  EXPECT_DOUBLE_EQ(epochs[0].compute_s, 0.01 * 6);  // 16 samples in batches of 3
  EXPECT_GT(epochs[0].au(), 0.3);
  EXPECT_LE(epochs[0].au(), 1.0);
}

TEST_P(RunEpochsTest, AWrongByteFailsTheRun) {
  ASSERT_TRUE(corrupt_byte(d_.paths[2], 3 * (64 << 10) + 777));
  std::vector<EpochResult> epochs;
  const RunOutcome r = run_epochs(d_, plan_, RunConfig{}, &epochs);
  EXPECT_NE(r.error.find("verify: " + d_.paths[2]), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("offset 197385"), std::string::npos) << r.error;
}

// A reader process killed in the middle of an epoch (as the OOM killer
// would under a memory limit) fails the run instead of hanging it.
TEST(RunEpochsProcesses, AReaderThatDiesFailsTheRunInsteadOfHangingIt) {
  hybridio::testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  TrainDataset d;
  d.sample_bytes = d.stride = 64 << 10;
  d.samples_per_file = 4;
  for (int f = 0; f < 4; ++f) d.paths.push_back(dir.file("k" + std::to_string(f)));
  ASSERT_EQ(write_train_dataset(d), "");
  ReaderBuffers buffers(2, 64 << 10);
  EpochPlan plan;
  plan.engine = find_engine("hybridio");
  plan.batch = 1;
  plan.readers = 2;
  plan.processes = true;
  plan.prefetch = 1;      // the readers wait for the accelerator...
  plan.compute_s = 0.05;  // ...which takes 0.8 s over the 16 batches
  plan.hit = probe_hit_method(d.paths[0]);
  plan.buffers = &buffers;
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::string children =
        "/proc/" + std::to_string(getpid()) + "/task/" + std::to_string(getpid()) + "/children";
    FILE* f = fopen(children.c_str(), "re");
    int pid = 0;
    if (f) {
      if (fscanf(f, "%d", &pid) != 1) pid = 0;
      fclose(f);
    }
    if (pid > 0) kill(pid, SIGKILL);
  });
  std::vector<EpochResult> epochs;
  const RunOutcome r = run_epochs(d, plan, RunConfig{}, &epochs);
  killer.join();
  EXPECT_NE(r.error.find("died of signal 9"), std::string::npos) << r.error;
  for (const auto& p : d.paths) unlink(p.c_str());
}

INSTANTIATE_TEST_SUITE_P(Readers, RunEpochsTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? "processes" : "threads";
                         });

}  // namespace
}  // namespace hybridio::bench
