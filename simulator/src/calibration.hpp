/* calibration: reads a hybridio-bench/1 JSON (schema, machine, results[] of {rw, policy,
 * bs_bytes, gbps_median}), fits the client model's per-request costs and bandwidths on some
 * block sizes, and predicts the others with the simulator (one client, one local disk).
 * Fitted forms, per request of size b on one thread at queue depth 1:
 *   direct:          time = latency + b / stream_bw              (write and read)
 *   buffered write:  1/throughput = cost / b + 1 / copy_bw + writeback per byte (end fsync)
 *   buffered read:   1/throughput = cost / b + 1 / min(copy_bw, disk_bw) (readahead overlap)
 * Each is a linear least-squares fit minimising relative error. A direct stream at queue
 * depth 1 may be slower than the device under readahead, so the read disk bandwidth is the
 * larger of the two fitted rates. */
#pragma once
#include <string>
#include <vector>

namespace hiosim {

struct BenchPoint {
  std::string rw;
  std::string policy;
  double bs     = 0;
  double gbps   = 0;  // the statistic used (gbps_median unless told otherwise)
  double spread = -1; // (gbps_max - gbps_min) / gbps_median when the file has them
};

struct BenchFile {
  std::vector<BenchPoint> points;
  double file_bytes = 0; // machine.file_bytes if present
};

/* Throws std::runtime_error naming the result index and key that is wrong. `stat` picks the
 * throughput key: "median" (gbps_median, required) or "max" (gbps_max, the best repetition). */
BenchFile read_bench_json(const std::string& path, const std::string& stat = "median");

struct Calibration {
  double direct_write_lat = 0, direct_write_bw = 0, disk_write_bw = 0;
  double direct_read_lat = 0, direct_read_bw = 0, disk_read_bw = 0;
  double buffered_write_cost = 0, copy_write_bw = 0;
  double buffered_read_cost = 0, copy_read_bw = 0;
};

/* Fits on the points whose block size is in `fit_sizes`; throws if a path lacks two sizes. */
Calibration fit_calibration(const std::vector<BenchPoint>& pts, const std::vector<double>& fit_sizes,
                            double writeback_req, int writeback_inflight);

/* `hybridio-sim calibrate ...`; the SimGrid Engine must exist. Returns the exit status. */
int cmd_calibrate(std::vector<std::string>& args);

} // namespace hiosim
