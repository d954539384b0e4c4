/* calibration_test: the bench JSON reader and the fit recover known parameters. */
#include "calibration.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>

using namespace hiosim;

namespace {

std::string write_tmp(const std::string& body)
{
  static int n = 0;
  std::string path = ::testing::TempDir() + "bench-" + std::to_string(n++) + ".json";
  std::ofstream(path) << body;
  return path;
}

} // namespace

TEST(Calibration, ReaderAcceptsTheSchemaAndIgnoresOtherKeys)
{
  auto path = write_tmp(R"({"schema": "hybridio-bench/1", "machine": {"kernel": "6.1", "file_bytes": 1048576},
    "results": [{"rw": "write", "policy": "direct", "bs_bytes": 4096, "gbps_median": 0.1, "p99_us": 12},
                {"rw": "read", "policy": "hybrid", "bs_bytes": 8388608, "gbps_median": 3.5}]})");
  BenchFile bf = read_bench_json(path);
  ASSERT_EQ(bf.points.size(), 2u);
  EXPECT_EQ(bf.points[1].policy, "hybrid");
  EXPECT_EQ(bf.points[0].bs, 4096);
  EXPECT_EQ(bf.file_bytes, 1048576);
}

TEST(Calibration, ReaderNamesTheBadField)
{
  auto bad_schema = write_tmp(R"({"schema": "other/2", "results": []})");
  EXPECT_THROW(read_bench_json(bad_schema), std::runtime_error);
  auto bad_rw = write_tmp(R"({"schema": "hybridio-bench/1", "results": [{"rw": "append", "policy": "direct",
    "bs_bytes": 4096, "gbps_median": 1}]})");
  try {
    read_bench_json(bad_rw);
    FAIL() << "accepted rw=append";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("results[0]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'rw'"), std::string::npos) << e.what();
  }
  auto truncated = write_tmp(R"({"schema": "hybridio-bench/1", "results": [)");
  EXPECT_THROW(read_bench_json(truncated), std::runtime_error);
}

TEST(Calibration, ReaderDecodesEscapesAndNonAsciiText)
{
  // A result finds its job by name: the name is escaped one way in "results" (\u escapes, a
  // surrogate pair for U+1F600) and written as UTF-8 in "jobs"; the job's iodepth reaches the
  // fit only when both decode to the same text. The policy is spelled with an escape too.
  auto path = write_tmp(R"({"schema": "hybridio-bench/1",
    "machine": {"hostname": "h\n\"\\\u0001", "file_bytes": 8388608},
    "jobs": [{"name": "j\n\"1\"\\ é中😀", "settings": {"iodepth": 4}}],
    "results": [{"job": "j\n\"1\"\\ \u00e9\u4e2d\ud83d\ude00", "rw": "write", "policy": "\u0068ybrid",
                 "bs_bytes": 8388608, "gbps_median": 2.0, "gbps_min": null,
                 "notes": ["\u0001"], "counters": {"bytes": {"direct": 3, "buffered": 1},
                 "uring_requests": 1, "uring_chunks": 8}}]})");
  BenchFile bf = read_bench_json(path);
  ASSERT_EQ(bf.points.size(), 1u);
  EXPECT_EQ(bf.points[0].policy, "hybrid");
  EXPECT_EQ(bf.points[0].direct_share, 0.75);
  EXPECT_EQ(bf.direct_chunk, 1048576);
  EXPECT_EQ(bf.direct_queue_depth, 4) << "the job's name did not decode to the same text in both places";
}

TEST(Calibration, FitRecoversSyntheticParameters)
{
  const double lat = 40e-6, bw = 3e9, cost = 2e-6, per_byte = 1 / 5e9 + 1 / 3e9;
  FitSetup setup;
  setup.writeback_req      = 1048576;
  setup.writeback_inflight = 8;
  std::vector<BenchPoint> pts;
  for (double bs : {4096.0, 65536.0, 1048576.0, 16777216.0}) {
    pts.push_back({"write", "direct", bs, bs / (lat + bs / bw) / 1e9});
    pts.push_back({"read", "direct", bs, bs / (lat + bs / bw) / 1e9});
    double wb = lat / (setup.writeback_req * setup.writeback_inflight);
    pts.push_back({"write", "buffered", bs, 1 / (cost / bs + per_byte + wb) / 1e9});
    pts.push_back({"read", "buffered", bs, 1 / (cost / bs + 1 / 2e9) / 1e9}); // copy (2 GB/s) below the disk
  }
  Calibration c = fit_calibration(pts, {4096, 65536, 1048576, 16777216}, setup);
  EXPECT_NEAR(c.direct_write_lat, lat, 1e-3 * lat);
  EXPECT_NEAR(c.direct_write_bw, bw, 1e-3 * bw);
  EXPECT_EQ(c.direct_write_queue_bw, 0); // no chunked request: no bound beyond the stream
  EXPECT_NEAR(c.direct_read_bw, bw, 1e-3 * bw);
  EXPECT_NEAR(c.disk_read_bw, bw, 1e-3 * bw); // the larger of direct (3) and copy (2 GB/s)
  EXPECT_NEAR(c.buffered_write_cost, cost, 1e-3 * cost);
  EXPECT_NEAR(1 / c.copy_write_bw, per_byte, 1e-3 * per_byte); // copy, pages and writeback together
  EXPECT_NEAR(c.buffered_read_cost, cost, 1e-3 * cost);
  EXPECT_NEAR(c.copy_read_bw, 2e9, 1e-3 * 2e9);
}

TEST(Calibration, FitRecoversChunkedDirectAndReadahead)
{
  // The Hybrid-IO library's engine (1 MiB chunks, 8 in flight) and an 8 MiB readahead window.
  FitSetup setup;
  setup.chunk       = 1048576;
  setup.queue_depth = 8;
  setup.readahead   = 8388608;
  const double lat = 70e-6, stream = 1.6e9, queue = 2.4e9, cost = 1.8e-6, copy = 5.5e9, fetch = 3.2e9;
  std::vector<BenchPoint> pts;
  for (double bs : {4096.0, 65536.0, 1048576.0, 16777216.0}) {
    pts.push_back({"write", "direct", bs, bs / direct_request_time(bs, lat, stream, queue, setup) / 1e9});
    pts.push_back({"read", "direct", bs, bs / direct_request_time(bs, lat, stream, queue, setup) / 1e9});
    pts.push_back({"write", "buffered", bs, 1 / (cost / bs + 1 / copy) / 1e9});
    double per_byte = bs > setup.readahead ? 1 / copy + 1 / fetch : 1 / fetch;
    pts.push_back({"read", "buffered", bs, 1 / (cost / bs + per_byte) / 1e9});
  }
  Calibration c = fit_calibration(pts, {4096, 65536, 1048576, 16777216}, setup);
  EXPECT_NEAR(c.direct_read_lat, lat, 0.02 * lat);
  EXPECT_NEAR(c.direct_read_bw, stream, 0.02 * stream);
  EXPECT_NEAR(c.direct_read_queue_bw, queue, 0.02 * queue);
  EXPECT_NEAR(c.buffered_read_cost, cost, 1e-3 * cost);
  EXPECT_NEAR(c.disk_read_bw, fetch, 1e-3 * fetch);
  EXPECT_NEAR(c.copy_read_bw, copy, 1e-3 * copy);
  EXPECT_EQ(c.readahead_bw, 0) << "the buffered stream fetches as fast as direct reads: the disk's pace";
  EXPECT_EQ(c.copy_write_uncached_bw, 0) << "no dontcache rows: nothing fitted";
}

TEST(Calibration, FitTellsTheReadaheadPaceAndUncachedWritesApart)
{
  // A buffered read stream fetched at 2.0 GB/s where direct reads reach 2.8 with 8 chunks in
  // flight: that is the readahead's pace, and the disk stays at what direct reads reach.
  // Uncached writes: a call cost and a rate of their own, faster than buffered writes + fsync.
  FitSetup setup;
  setup.chunk       = 1048576;
  setup.queue_depth = 8;
  setup.readahead   = 8388608;
  const double lat = 60e-6, stream = 3.3e9, queue = 2.8e9, cost = 1.2e-6, fetch = 2.0e9;
  const double buffered_write = 2.4e9, uncached_cost = 3e-6, uncached = 3.4e9;
  std::vector<BenchPoint> pts;
  for (double bs : {4096.0, 65536.0, 1048576.0, 4194304.0}) {
    pts.push_back({"write", "direct", bs, bs / direct_request_time(bs, lat, stream, queue, setup) / 1e9});
    pts.push_back({"read", "direct", bs, bs / direct_request_time(bs, lat, stream, queue, setup) / 1e9});
    pts.push_back({"write", "buffered", bs, 1 / (cost / bs + 1 / buffered_write) / 1e9});
    pts.push_back({"write", "dontcache", bs, 1 / (uncached_cost / bs + 1 / uncached) / 1e9});
    pts.push_back({"read", "buffered", bs, 1 / (cost / bs + 1 / fetch) / 1e9});
  }
  Calibration c = fit_calibration(pts, {4096, 65536, 1048576, 4194304}, setup);
  EXPECT_NEAR(c.readahead_bw, fetch, 1e-3 * fetch);
  EXPECT_NEAR(c.disk_read_bw, c.direct_read_queue_bw, 1e-9 * queue);
  EXPECT_NEAR(c.direct_read_queue_bw, queue, 0.02 * queue);
  EXPECT_NEAR(c.uncached_write_cost, uncached_cost, 1e-3 * uncached_cost);
  EXPECT_NEAR(c.copy_write_uncached_bw, uncached, 0.01 * uncached);  // less the writeback share per byte
  EXPECT_NEAR(c.copy_write_bw, buffered_write, 0.01 * buffered_write);
}
