// checkpoint_job.h - the main job: write a checkpoint-sized file and
// restore it cold, under each policy, interleaved, and report throughput
// and CPU cost side by side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"

namespace hybridio::bench {

struct CheckpointOptions {
  std::string directory = ".";
  uint64_t size = 4ULL << 30;       // bytes per checkpoint file
  uint64_t block_size = 4ULL << 20; // bytes per write/read call
  uint64_t buffer_offset = 0;       // misalignment of the caller's buffer, in bytes
  std::vector<hio_mode> policies = {HIO_MODE_BUFFERED, HIO_MODE_DIRECT, HIO_MODE_DONTCACHE,
                                    HIO_MODE_HYBRID};
  unsigned repeat = 1;
  bool drop_caches = true;
  bool verify = true;
  std::string json_path;
};

struct PhaseResult {
  double seconds = 0;
  double cpu_seconds = 0;  // user + system of this process
  uint64_t bytes = 0;
  uint64_t direct_bytes = 0;
  uint64_t dontcache_bytes = 0;
  double gbps() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
  double cpu_per_gb() const { return bytes ? cpu_seconds / (bytes / 1e9) : 0; }
};

struct PolicyRuns {
  hio_mode policy;
  std::vector<PhaseResult> writes, restores;
};

// Runs the job; returns 0, or prints one error to stderr and returns non-zero.
int run_checkpoint_job(const CheckpointOptions& options);

}  // namespace hybridio::bench
