/* analytic_test: the model against closed-form answers. One client and one disk take
 * size / bandwidth; N clients on one OST share it; a NIC slower than the disks bounds the flow;
 * direct requests pay their latency; buffered writes with end fsync pay copy then writeback;
 * a small dirty limit throttles writers; hybrid decides with libhybridio's policy core (size,
 * stream, pressure and cache rules). Each test runs real SimGrid in its own process (ctest runs
 * one test per process). */
#include "simulation.hpp"
#include "test_engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace hiosim;

namespace {

constexpr double GiB = 1073741824.0;
constexpr double MiB = 1048576.0;

// One writer per node, one rank per node, a custom checkpoint of `bytes` per writer.
Params base(int nodes, double bytes_per_writer)
{
  Params p;
  p.cluster.nodes               = nodes;
  p.workload.preset             = "custom";
  p.workload.ckpt_bytes         = bytes_per_writer * nodes;
  p.workload.tp                 = 1;
  p.workload.pp                 = 1;
  p.workload.dp                 = nodes;
  p.workload.ranks_per_node     = 1;
  p.workload.request            = "fixed";
  p.workload.request_bytes      = 64 * MiB;
  p.client.direct_write_lat     = 0;
  p.client.direct_read_lat      = 0;
  p.client.buffered_write_cost  = 0;
  p.client.buffered_read_cost   = 0;
  p.client.direct_write_stream_bw = 1e15;
  p.client.direct_read_stream_bw  = 1e15;
  p.sim.progress                = false;
  p.training.replicas           = 1;
  p.training.work               = 86400;
  return p;
}

void one_disk(Params& p, double write_bw, double read_bw)
{
  p.fs.oss          = 1;
  p.fs.osts_per_oss = 1;
  p.fs.stripe_count = 1;
  p.fs.ost_write_bw = write_bw;
  p.fs.ost_read_bw  = read_bw;
}

} // namespace

TEST(Analytic, OneClientOneDiskIsSizeOverBandwidth)
{
  test::make_engine();
  Params p = base(1, 10 * GiB);
  one_disk(p, 2e9, 3e9);
  p.policy.policies = {"direct"};
  RunResult rr = run_simulation(p);
  ASSERT_EQ(rr.policies.size(), 1u);
  EXPECT_NEAR(rr.policies[0].write_s, 10 * GiB / 2e9, 1e-3 * 10 * GiB / 2e9);
  EXPECT_NEAR(rr.policies[0].restore_s, 10 * GiB / 3e9, 1e-3 * 10 * GiB / 3e9);
}

TEST(Analytic, LocalDiskIsSizeOverBandwidth)
{
  test::make_engine();
  Params p = base(1, 4 * GiB);
  p.fs.kind         = "local";
  p.fs.ost_write_bw = 1.5e9;
  p.fs.ost_read_bw  = 2.5e9;
  p.policy.policies = {"direct"};
  RunResult rr = run_simulation(p);
  EXPECT_NEAR(rr.policies[0].write_s, 4 * GiB / 1.5e9, 1e-3 * 4 * GiB / 1.5e9);
  EXPECT_NEAR(rr.policies[0].restore_s, 4 * GiB / 2.5e9, 1e-3 * 4 * GiB / 2.5e9);
}

TEST(Analytic, NClientsShareOneOst)
{
  test::make_engine();
  const int n = 8;
  Params p = base(n, 2 * GiB);
  one_disk(p, 4e9, 4e9);
  p.policy.policies = {"direct"};
  RunResult rr = run_simulation(p);
  double expect = n * 2 * GiB / 4e9; // the OST is the bottleneck, shared fairly
  EXPECT_NEAR(rr.policies[0].write_s, expect, 1e-3 * expect);
  EXPECT_NEAR(rr.policies[0].write_gbps, 4.0, 4e-3);
}

TEST(Analytic, StripingAddsOstBandwidth)
{
  test::make_engine();
  Params p = base(1, 8 * GiB);
  p.fs.oss          = 2;
  p.fs.osts_per_oss = 4;
  p.fs.stripe_count = 8;
  p.fs.ost_write_bw = 1e9;
  p.policy.policies = {"direct"};
  RunResult rr = run_simulation(p);
  EXPECT_NEAR(rr.policies[0].write_s, 8 * GiB / 8e9, 1e-2 * 8 * GiB / 8e9);
}

TEST(Analytic, SlowNicBoundsTheFlow)
{
  test::make_engine();
  Params p = base(1, 8 * GiB);
  p.fs.oss              = 2;
  p.fs.osts_per_oss     = 2;
  p.fs.stripe_count     = 4;
  p.fs.ost_write_bw     = 4e9;
  p.cluster.nics_per_node = 1;
  p.cluster.nic_bw      = 2e9;
  p.policy.policies     = {"direct"};
  RunResult rr = run_simulation(p);
  EXPECT_NEAR(rr.policies[0].write_s, 8 * GiB / 2e9, 1e-2 * 8 * GiB / 2e9);
}

TEST(Analytic, SmallDirectRequestsPayTheirLatency)
{
  test::make_engine();
  Params p = base(1, 1 * GiB);
  p.fs.kind                 = "local";
  p.fs.ost_write_bw         = 2e9;
  p.workload.request_bytes  = 64 * 1024;
  p.client.direct_write_lat = 50e-6;
  p.policy.policies         = {"direct"};
  RunResult rr = run_simulation(p);
  double reqs   = GiB / (64 * 1024);
  double expect = reqs * 50e-6 + GiB / 2e9;
  EXPECT_NEAR(rr.policies[0].write_s, expect, 1e-3 * expect);
}

// One client writing 1 GiB direct to a local 2 GB/s disk with Hybrid-IO's
// parallel engine (1 MiB chunks, 8 in flight, 100 us each, 0.5 GB/s per stream).
Params chunked_direct(double request_bytes)
{
  Params p = base(1, 1 * GiB);
  p.fs.kind                       = "local";
  p.fs.ost_write_bw               = 2e9;
  p.workload.request_bytes        = request_bytes;
  p.client.direct_write_lat       = 100e-6;
  p.client.direct_write_stream_bw = 0.5e9;
  p.client.direct_chunk           = 1 * MiB;
  p.client.direct_queue_depth     = 8;
  p.policy.policies               = {"direct"};
  return p;
}

TEST(Analytic, ChunkedDirectRequestsOverlapTheirChunks)
{
  // Hybrid-IO's parallel engine: a 16 MiB request goes out as 16 chunks of 1 MiB, 8 in flight:
  // two latencies per request, and a stream of 8 x the per-request bound (here the disk's).
  test::make_engine();
  RunResult rr = run_simulation(chunked_direct(16 * MiB));
  double expect = (GiB / (16 * MiB)) * 2 * 100e-6 + GiB / std::min(2e9, 8 * 0.5e9);
  EXPECT_NEAR(rr.policies[0].write_s, expect, 1e-3 * expect);
}

TEST(Analytic, DirectRequestsBelowTwoChunksGoOutWhole)
{
  test::make_engine();
  RunResult rr = run_simulation(chunked_direct(1 * MiB));
  double expect = (GiB / MiB) * 100e-6 + GiB / 0.5e9;
  EXPECT_NEAR(rr.policies[0].write_s, expect, 1e-3 * expect);
}

TEST(Analytic, BufferedWriteIsCopyThenFsync)
{
  test::make_engine();
  Params p = base(1, 2 * GiB);
  p.fs.kind               = "local";
  p.fs.ost_write_bw       = 1e9;
  p.client.copy_bw_write  = 4e9;
  p.cache.eager           = "off";
  p.policy.policies       = {"buffered"};
  RunResult rr = run_simulation(p);
  // 2 GiB stays below the background threshold: nothing is written back before fsync.
  double expect = 2 * GiB / 4e9 + 2 * GiB / 1e9;
  EXPECT_NEAR(rr.policies[0].write_s, expect, 1e-3 * expect);
  EXPECT_EQ(rr.policies[0].throttled_bytes, 0.0);
}

TEST(Analytic, EagerWritebackOverlapsCopyAndWriteback)
{
  test::make_engine();
  Params p = base(1, 8 * GiB);
  one_disk(p, 1e9, 1e9);
  p.client.copy_bw_write = 4e9;
  p.sim.chunk_bytes      = 64 * MiB;
  p.policy.policies      = {"buffered"};
  RunResult rr = run_simulation(p);
  // Pipelined: the disk runs all along, plus at most the first chunk's copy.
  double lower = 8 * GiB / 1e9;
  EXPECT_GE(rr.policies[0].write_s, lower * 0.999);
  EXPECT_LE(rr.policies[0].write_s, lower + 2 * 64 * MiB / 4e9 + 1e-3);
}

TEST(Analytic, SmallDirtyLimitThrottlesWriters)
{
  test::make_engine();
  Params p = base(1, 8 * GiB);
  p.fs.kind              = "local";
  p.fs.ost_write_bw      = 1e9;
  p.client.copy_bw_write = 4e9;
  p.cache.eager          = "off";
  p.cluster.node_memory  = 6 * GiB;
  p.cluster.app_memory   = 2 * GiB;   // 4 GiB for the cache, dirty limit 0.8 GiB
  p.policy.policies      = {"buffered"};
  RunResult rr = run_simulation(p);
  EXPECT_GT(rr.policies[0].throttled_bytes, 1 * GiB); // the flusher writes back the rest
  // Throttled writers wait for the disk: never faster than the disk alone.
  EXPECT_GE(rr.policies[0].write_s, 8 * GiB / 1e9 * 0.999);
}

TEST(Analytic, HybridSwitchesOnRequestSize)
{
  test::make_engine();
  Params p = base(1, 1 * GiB);
  p.fs.kind         = "local";
  p.policy.policies = {"hybrid"};
  p.workload.request       = "torchsave";
  p.workload.ts_large      = 4 * MiB;   // >= 2 MiB: direct
  p.workload.ts_small      = 512 * 1024; // below every threshold of the core, the stream's 1 MiB too: buffered
  p.workload.ts_small_frac = 0.25;
  RunResult rr = run_simulation(p);
  EXPECT_NEAR(rr.policies[0].direct_share, 0.75, 1e-9);
  EXPECT_NEAR(rr.policies[0].write_rule_bytes[HIO_RULE_SMALL], 0.25 * GiB, 1e-6 * GiB);
}

// 1 MiB records, below the 2 MiB write threshold, go direct once they form a sequential stream
// (the core's `sequential` rule); only the first four requests of the file are not a stream yet.
TEST(Analytic, HybridSendsASequentialStreamDirect)
{
  test::make_engine();
  Params p = base(1, 1 * GiB);
  p.fs.kind         = "local";
  p.policy.policies = {"hybrid"};
  p.workload.request       = "torchsave";
  p.workload.ts_large      = 4 * MiB;
  p.workload.ts_small      = 1 * MiB;
  p.workload.ts_small_frac = 0.25;
  RunResult rr = run_simulation(p);
  EXPECT_NEAR(rr.policies[0].direct_share, 1.0, 1e-9);
  EXPECT_NEAR(rr.policies[0].write_rule_bytes[HIO_RULE_WRITE_SIZE], 4 * 4 * MiB, 1e-6 * GiB); // the first four
  EXPECT_NEAR(rr.policies[0].write_rule_bytes[HIO_RULE_SEQUENTIAL], GiB - 4 * 4 * MiB, 1e-6 * GiB);
  // Reads have no stream rule: 1 MiB and 4 MiB reads stay below the 8 MiB read threshold.
  EXPECT_NEAR(rr.policies[0].read_rule_bytes[HIO_RULE_SMALL], GiB, 1e-6 * GiB);
}

// Memory pressure (here: 85 % of the node's memory is the application's) divides the thresholds
// by four: 512 KiB writes, below every threshold otherwise, go direct.
TEST(Analytic, HybridUnderMemoryPressureLowersTheThreshold)
{
  test::make_engine();
  Params p = base(1, 1 * GiB);
  p.fs.kind                = "local";
  p.policy.policies        = {"hybrid"};
  p.workload.request_bytes = 512 * 1024;
  p.cluster.node_memory    = 10 * GiB;
  p.cluster.app_memory     = 8.5 * GiB;
  RunResult rr = run_simulation(p);
  EXPECT_NEAR(rr.policies[0].direct_share, 1.0, 1e-9);
  EXPECT_NEAR(rr.policies[0].write_rule_bytes[HIO_RULE_PRESSURE], GiB, 1e-6 * GiB);
}

// A hybrid read of a range the page cache holds stays buffered (the core's `read_cached` rule) and
// runs at the copy bandwidth: 16 MiB records written through the cache (write thresholds raised),
// restored warm; 16 MiB reads would otherwise go direct.
TEST(Analytic, HybridReadsCachedDataFromTheCache)
{
  test::make_engine();
  Params p = base(1, 2 * GiB);
  p.fs.kind                          = "local";
  p.fs.ost_read_bw                   = 1e9;
  p.client.copy_bw_read              = 8e9;
  p.workload.request_bytes           = 16 * MiB;
  p.workload.cold_restore            = false;
  p.policy.core.write_threshold      = 1ull << 40;
  p.policy.core.stream_threshold     = 1ull << 40;
  p.policy.policies                  = {"hybrid"};
  RunResult rr = run_simulation(p);
  EXPECT_NEAR(rr.policies[0].direct_share, 0.0, 1e-9);
  EXPECT_NEAR(rr.policies[0].read_rule_bytes[HIO_RULE_READ_CACHED], 2 * GiB, 1e-6 * GiB);
  EXPECT_NEAR(rr.policies[0].restore_s, 2 * GiB / 8e9, 1e-3 * 2 * GiB / 8e9);
}

TEST(Analytic, WarmRestoreReadsFromCache)
{
  test::make_engine();
  Params p = base(1, 2 * GiB);
  p.fs.kind               = "local";
  p.fs.ost_read_bw        = 1e9;
  p.client.copy_bw_read   = 8e9;
  p.workload.cold_restore = false;
  p.policy.policies       = {"buffered"};
  RunResult rr = run_simulation(p);
  EXPECT_NEAR(rr.policies[0].restore_s, 2 * GiB / 8e9, 1e-3 * 2 * GiB / 8e9);
}
