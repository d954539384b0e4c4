// report.h - what `hybridio bench` (and its checkpoint workload) found:
// one row per job, policy and direction with every repeat kept, printed
// as a table on stdout and written as JSON (schema hybridio-bench/1,
// docs/bench.schema.json).  Rows that could not be measured are kept as
// skipped rows with the reason, never as numbers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "io_runner.h"
#include "json_out.h"
#include "latency.h"
#include "machine_info.h"

namespace hybridio::bench {

inline constexpr const char* kBenchSchema = "hybridio-bench/1";

struct RunSample {
  double seconds = 0, usr_s = 0, sys_s = 0, slowest_thread_s = 0;
  uint64_t bytes = 0, ios = 0;
  uint64_t all_bytes = 0;  // both directions: CPU time is per GB of everything moved
  int64_t page_cache_growth = 0;  // what the run left in the page cache (io_runner.h)
  MemoryEvents memory;            // what the run met in memory (io_runner.h)
  double gbps() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
  // Page cache left per byte moved in the row's direction (1: all of it cached).
  double cache_per_byte() const { return bytes ? static_cast<double>(page_cache_growth) / bytes : 0; }
  double iops() const { return seconds > 0 ? ios / seconds : 0; }
};

struct ResultRow {
  std::string job, policy, engine;
  hio_op op = HIO_OP_WRITE;  // direction: "read" or "write" in the report
  std::string pattern;       // sequential, random, mixed, checkpoint
  uint64_t bs_bytes = 0;
  unsigned threads = 1;
  std::string status = "ok"; // ok, skipped, failed
  std::string reason;        // why skipped or failed
  std::vector<std::string> notes;
  std::vector<RunSample> runs;
  std::vector<hio_stats> run_stats;  // per run, for the median run's counters
  LatencyHistogram latency;          // every call of every run
};

// Adds a run's outcome for direction `op` to a row.
void add_run(ResultRow* row, const RunOutcome& run, hio_op op);

struct Report {
  std::string kind = "bench";   // bench or checkpoint
  std::vector<std::string> argv;
  MachineInfo machine;
  uint64_t file_bytes = 0;      // bytes per file (for hybridio-sim calibrate)
  std::string cold;             // how caches were dropped: drop_caches, fadvise, none
  std::vector<ResultRow> rows;
  std::function<void(JsonWriter&)> write_settings;  // the "jobs" / "checkpoint" settings
  std::function<void(JsonWriter&)> write_extra;     // more top-level members, optional
};

// The readable table (stdout).  `title` lines go above each job's rows.
void print_table(FILE* out, const Report& r, const std::function<std::string(const std::string& job)>& title);

// The JSON document.
std::string report_json(const Report& r);

// Writes the JSON to `path` ("-": stdout); false with the reason on stderr.
bool write_report_json(const Report& r, const std::string& path);

// The run whose GB/s is the median (lower middle for even counts): the run
// whose counters and memory figures a row shows.
size_t median_run(const ResultRow& row);

// Median over repeats of the row's GB/s, or 0.
double median_gbps(const ResultRow& row);

// `row`'s rate over `other`'s in every round both ran (run i of a row ran
// in round i): how many, and their min, median and max.  The machine
// drifts from round to round, and within a round the two ran close together.
struct RoundRatios {
  size_t rounds = 0;
  double min = 0, median = 0, max = 0;
};
RoundRatios round_ratios(const ResultRow& row, const ResultRow& other);

}  // namespace hybridio::bench
