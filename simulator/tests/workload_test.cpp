/* workload_test: checkpoint sizes, layouts and writers from presets and custom models. */
#include "workload.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace hiosim;

TEST(Workload, MlperfPresetsHaveTheirPublishedSizesAndRanks)
{
  Params p;
  struct {
    const char* name;
    double gib;
    int ranks;
  } cases[] = {{"llama3-8b", 105, 8}, {"llama3-70b", 912, 64}, {"llama3-405b", 5.29 * 1024, 512}, {"llama3-1t", 18 * 1024, 1024}};
  for (const auto& c : cases) {
    p.workload.preset = c.name;
    CheckpointPlan plan = make_checkpoint_plan(p);
    EXPECT_NEAR(plan.bytes / 1073741824.0, c.gib, 1e-6) << c.name;
    EXPECT_EQ(plan.ranks, c.ranks) << c.name;
    EXPECT_EQ(static_cast<int>(plan.writers.size()), c.ranks) << c.name;
    EXPECT_EQ(plan.nodes, c.ranks / 8) << c.name;
  }
}

TEST(Workload, FourteenBytesPerParameter)
{
  Params p;
  p.workload.preset = "custom";
  p.workload.params = 1e12;
  p.workload.tp = 8;
  p.workload.pp = 16;
  p.workload.dp = 128;
  CheckpointPlan plan = make_checkpoint_plan(p);
  EXPECT_EQ(plan.bytes, 14e12); // Megatron-LM's 1T model: about 13.8 TB
  EXPECT_EQ(plan.nodes, 2048);
  EXPECT_EQ(plan.writers.size(), 16384u);
  p.workload.writers = "replica"; // one data-parallel replica writes
  plan = make_checkpoint_plan(p);
  EXPECT_EQ(plan.writers.size(), 128u);
  EXPECT_EQ(plan.writers.back().node, 15);
  EXPECT_DOUBLE_EQ(plan.writers[0].bytes, 14e12 / 128);
}

TEST(Workload, ClusterSizeFillsDataParallelReplicas)
{
  Params p;
  p.workload.preset = "llama3-70b";
  p.cluster.nodes   = 64;
  CheckpointPlan plan = make_checkpoint_plan(p);
  EXPECT_EQ(plan.dp, 8);
  EXPECT_EQ(plan.ranks, 512);
}

TEST(Workload, LayoutLargerThanClusterIsAnError)
{
  Params p;
  p.workload.preset = "llama3-405b";
  p.workload.dp     = 4;
  p.cluster.nodes   = 8;
  EXPECT_THROW(make_checkpoint_plan(p), std::invalid_argument);
}

TEST(Workload, TorchSaveMixIsMostlyLargeRecords)
{
  WorkloadParams w;
  auto mix = request_mix(w);
  ASSERT_EQ(mix.size(), 2u);
  EXPECT_DOUBLE_EQ(mix[0].fraction + mix[1].fraction, 1.0);
  EXPECT_GT(mix[0].size, mix[1].size);
  w.request = "fixed";
  w.request_bytes = 1 << 20;
  mix = request_mix(w);
  ASSERT_EQ(mix.size(), 1u);
  EXPECT_EQ(mix[0].size, 1 << 20);
}
