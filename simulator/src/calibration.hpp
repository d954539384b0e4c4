/* calibration: reads a hybridio-bench/1 JSON (schema, machine, results[] of {rw, policy,
 * bs_bytes, gbps_median}), fits the client model's per-request costs and bandwidths on some
 * block sizes, and predicts the others with the simulator (one client, one local disk).
 * Fitted forms, per request of size b on one thread:
 *   direct:          time = latency + b / min(stream_bw, queue_bw)                (one request)
 *                    time = n/d x latency + b / min(queue_bw, d x stream_bw)     (Hybrid-IO's
 *                    parallel engine: b >= 2 chunks goes out as n chunks, d = min(depth, n) in flight)
 *   buffered write:  1/throughput = cost / b + per-byte cost (copy, page allocation and the
 *                    writeback at the end fsync together: one measurement cannot separate them)
 *   uncached write:  the same form, fitted on the report's dontcache rows when it has them
 *   buffered read:   1/throughput = cost / b + 1 / min(copy_bw, fetch_bw)          (b <= readahead:
 *                    the fetch of the next data overlaps the copy; fetch_bw is the kernel's
 *                    readahead, which may be slower than the disk serves direct reads)
 *                    1/throughput = cost / b + 1 / copy_bw + 1 / fetch_bw          (b > readahead:
 *                    the read waits for its own data)
 * Linear least squares minimising relative error where the form is linear; the direct form
 * with chunked requests is fitted as a whole (Nelder-Mead on relative error). The parallel
 * engine's chunk size and depth come from the report's counters; the readahead window from
 * machine.filesystem.read_ahead_kb. */
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
  double direct_share = -1; // share of the bytes the library sent direct (counters), when known
  double uncached_share = -1; // ... and uncached (RWF_DONTCACHE)
  std::vector<double> runs = {}; // GB/s of each repeat in the report's order (runs[].gbps), when present
};

struct BenchFile {
  std::vector<BenchPoint> points;
  double file_bytes = 0; // machine.file_bytes if present
  /* Hybrid-IO's parallel direct engine, when the report shows it at work (results' counters
   * uring_chunks / uring_requests): the chunk size and the chunks in flight (jobs' iodepth
   * setting, the library's default 8 when 0). 0 when the file has no such counters (fio). */
  double direct_chunk     = 0;
  int direct_queue_depth  = 0;
  double readahead        = 0; // machine.filesystem.read_ahead_kb in bytes, 0 if absent
};

/* Throws std::runtime_error naming the result index and key that is wrong. `stat` picks the
 * throughput key: "median" (gbps_median, required) or "max" (gbps_max, the best repetition). */
BenchFile read_bench_json(const std::string& path, const std::string& stat = "median");

/* The client mechanisms the fit assumes (from the report, or the model's defaults). */
struct FitSetup {
  double writeback_req   = 4194304;
  int writeback_inflight = 8;
  double chunk           = 0; // the parallel engine's chunk, 0: requests go out whole
  int queue_depth        = 8;
  double readahead       = 0; // 0: buffered reads always overlap fetch and copy
};

struct Calibration {
  double direct_write_lat = 0, direct_write_bw = 0, direct_write_queue_bw = 0, disk_write_bw = 0;
  double direct_read_lat = 0, direct_read_bw = 0, direct_read_queue_bw = 0, disk_read_bw = 0;
  double buffered_write_cost = 0, copy_write_bw = 0;
  double buffered_read_cost = 0, copy_read_bw = 0;
  double readahead_bw = 0; // the buffered read stream's fetch where it is slower than the disk (0: it is not)
  // Uncached writes, when the report has dontcache write rows at two fit sizes or more (else 0):
  // the form of buffered writes, fitted on their own (their writeback overlaps the next copies).
  double uncached_write_cost = 0, copy_write_uncached_bw = 0;
};

/* Seconds for one direct request of `bs` bytes under the direct form above (queue_bw 0: none). */
double direct_request_time(double bs, double lat, double stream_bw, double queue_bw, const FitSetup& setup);

/* Fits on the points whose block size is in `fit_sizes`; throws if a path lacks two sizes. */
Calibration fit_calibration(const std::vector<BenchPoint>& pts, const std::vector<double>& fit_sizes,
                            const FitSetup& setup);

/* `hybridio-sim calibrate ...`; the SimGrid Engine must exist. Returns the exit status. */
int cmd_calibrate(std::vector<std::string>& args);

} // namespace hiosim
