// bench_options.h - the settings of one `hybridio bench` job and the
// table that declares every option once (option_table.h): the command
// line, job files, --help and the settings echoed in the report all come
// from bench_option_table().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "option_table.h"

namespace hybridio::bench {

enum class RwMode { kRead, kWrite, kRandRead, kRandWrite, kReadWrite };
enum class FsyncMode { kEnd, kEach, kNone };

struct BenchJob {
  std::string name = "job";
  RwMode rw = RwMode::kWrite;
  uint64_t bs = 1 << 20;             // bytes per call
  uint64_t size = 1ULL << 30;        // bytes per thread (its file or its region)
  unsigned numjobs = 1;              // threads
  unsigned iodepth = 0;              // engine queue depth (chunks in flight); 0: library default
  FsyncMode fsync = FsyncMode::kEnd; // end: one fsync per file, inside the timing
  std::string directory = ".";
  std::string filename;              // one shared file (threads take regions), or per-thread files
  double runtime = 0;                // seconds per run; 0: until size is done
  bool verify = false;
  bool drop_caches = true;
  bool warm_up = true;               // page-cache memory warm-up before every run (measure_loop.h)
  unsigned repeat = 3;
  std::vector<hio_mode> policies = {HIO_MODE_BUFFERED, HIO_MODE_DIRECT, HIO_MODE_DONTCACHE, HIO_MODE_HYBRID};
  std::string ioengine = "hybridio";
  unsigned rwmixread = 50;           // --rw=rw: percent of calls that read
  uint64_t buffer_offset = 0;        // misalign the caller's buffer
  bool keep_files = false;
  // Global (command line / [global] only).
  std::string json_path;
  int64_t inject_corruption = -1;    // testing: flip one byte of thread 0's file before verifying
};

const std::vector<OptionSpec<BenchJob>>& bench_option_table();

// The directory the job's files are in (--directory, or --filename's).
std::string dir_of(const BenchJob& j);

const char* rw_name(RwMode m);
bool rw_reads(RwMode m);
bool rw_writes(RwMode m);
bool rw_random(RwMode m);
const char* fsync_name(FsyncMode m);

// "all" or a comma-separated list of policy names.
bool parse_policy_list(const std::string& text, std::vector<hio_mode>* out);

// Checks the combination of settings (bs against size, verify alignment,
// ...); false with one line in *error.
bool validate_job(const BenchJob& job, std::string* error);

}  // namespace hybridio::bench
