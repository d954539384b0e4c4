// io_runner.h - one timed run: N threads, each with its own file (or
// region) and its own list of calls, started together through an engine
// (bench_engine.h), with per-call latency, the process's user and system
// CPU time, the library's counters and the slowest thread's time.
// Shared by `hybridio bench` jobs and the checkpoint workload.
//
// Runs are sequential: one run at a time per process (the library's
// counters and policy are process-wide).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench_engine.h"
#include "hybridio/hybridio.h"
#include "latency.h"
#include "memory_cgroup.h"
#include "progress.h"
#include "verify_pattern.h"

namespace hybridio::bench {

struct IoUnit {
  uint64_t offset;
  uint64_t len;
  hio_op op;
};

struct ThreadPlan {
  std::string path;
  int open_flags = 0;          // O_RDONLY / O_WRONLY / O_RDWR (+ O_CREAT): no O_TRUNC, files are prepared
  std::vector<IoUnit> units;   // in issue order
  PatternBuffer* buffer = nullptr;  // this thread's buffer, keyed for its file
};

struct RunConfig {
  const EngineOps* engine = nullptr;
  bool fsync_each = false;     // after every write
  bool fsync_end = true;       // once per thread at the end, inside the timing
  double runtime = 0;          // seconds; 0: run every unit
  bool verify_reads = false;
  Progress* progress = nullptr;
  const MemoryCgroup* cgroup = nullptr;  // the memory limit the run is under, if any
};

struct RunOutcome {
  double seconds = 0;          // start signal to the last thread done (fsync included)
  double usr_s = 0, sys_s = 0; // process CPU time during the run
  uint64_t bytes[2] = {0, 0}, ios[2] = {0, 0};  // [HIO_OP_READ], [HIO_OP_WRITE]
  LatencyHistogram latency[2];
  std::vector<double> thread_seconds;
  double slowest_thread_s = 0;
  hio_stats stats{};
  // The machine's page cache (/proc/meminfo Cached) after the run, files
  // closed, minus before it: what the run left cached.  Whole-machine, so
  // meaningful on a quiet machine.
  int64_t page_cache_growth = 0;
  // What the run met in memory: limit hits and OOM kills of config.cgroup,
  // and the time tasks stalled for memory (its PSI, else the machine's).
  MemoryEvents memory;
  std::string error;           // empty: every call did what it was asked
};

RunOutcome run_threads(const std::vector<ThreadPlan>& plans, const RunConfig& config);

// The machine's page cache in bytes (/proc/meminfo Cached), 0 when unknown.
int64_t page_cache_bytes();

// Drops cached pages: the whole page cache when /proc/sys/vm/drop_caches
// is writable (and HYBRIDIO_BENCH_COLD is not "files"), and each file's
// pages in any case.  Returns how ("drop_caches" or "fadvise").
std::string drop_caches(const std::vector<std::string>& files);

// Brings page-cache memory to the same state before a timed phase, whatever
// ran before it (untimed): `bytes` of page cache are allocated and freed
// again by reading a sparse file of that size through the page cache (no
// device I/O, no disk space on filesystems with holes), dropping its pages
// and deleting it.  Why: on VMs whose freed memory goes back to the host
// (virtio-balloon free page reporting), a page the guest has not used
// recently costs a host fault on first touch (0.3-1 GB/s here), while one
// the page cache freed moments ago is reused at full speed.  Without this,
// a buffered restore reuses the pages its own write filled and
// drop_caches freed, and a policy whose write went direct pays for fresh
// memory.  Anonymous memory does not do (measured: its freed pages go back
// to the host at once).  Returns "" or why it could not (the phase then
// runs anyway).
std::string warm_page_cache_memory(const std::string& dir, uint64_t bytes);

// Sets the library's policy mode; with queue_depth > 0 also its engine queue depth.
void set_library_policy(hio_mode mode, unsigned queue_depth);

// Reads [offset, offset + len) of `path` back with plain pread and checks
// it against `buffer`'s content; false with the first difference in *why.
bool verify_file_range(const std::string& path, uint64_t offset, uint64_t len, uint64_t bs,
                       const PatternBuffer& pattern, std::string* why);

// Flips one byte of `path` at `offset` (testing --verify).
bool corrupt_byte(const std::string& path, uint64_t offset);

}  // namespace hybridio::bench
