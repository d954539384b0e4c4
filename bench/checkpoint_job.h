// checkpoint_job.h - the checkpoint workload (`hybridio bench checkpoint`,
// also `hybridio checkpoint`, the README's main job): every rank (a
// thread) writes its shard of a model checkpoint laid out like torch.save
// (checkpoint_presets.h), fsync included, then the shards are restored
// cold and every byte is checked; under each policy, interleaved; the
// slowest rank is reported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "machine_info.h"
#include "option_table.h"

namespace hybridio::bench {

struct CheckpointOptions {
  std::string directory = ".";
  std::string preset = "llama3-8b";
  // All shards together, when --scale is not given; 0: twice the dirty-page
  // limit (where checkpoints live: writeback cannot hide them), clamped to
  // the free space (auto_checkpoint_size).
  uint64_t size = 0;
  double scale = 0;            // fraction of a full shard's records kept; 0: from --size
  unsigned ranks = 0;          // shards written at once; 0: the preset's ranks, at most 8
  uint64_t block_size = 64ULL << 20;  // largest call; larger records take several calls
  uint64_t buffer_offset = 0;  // misalignment of the caller's buffer, in bytes
  std::vector<hio_mode> policies = {HIO_MODE_BUFFERED, HIO_MODE_DIRECT, HIO_MODE_DONTCACHE, HIO_MODE_HYBRID};
  unsigned repeat = 3;
  bool drop_caches = true;
  bool warm_up = true;         // same page-cache memory state before every phase (io_runner.h)
  bool verify = true;
  uint64_t memory_limit = 0;   // run inside a memory cgroup of this many bytes (memory_cgroup.h); 0: none
  uint64_t dataset = 0;        // bytes of a dataset file read into the cache before every write; 0: none
  std::string json_path;
};

// Parses the options (argv after the command word) and runs the job.
// Returns 0, or prints one error to stderr and returns non-zero.
int checkpoint_command(int argc, char** argv, const char* prog);

// The rows of the option table --help lists (for the man pages).
std::vector<OptionDoc> checkpoint_option_docs();

// The default --size on a machine: 2 x the dirty limit (4 GiB if unknown),
// at most 80 % of the free bytes less 1 GiB, at least 256 MiB.
uint64_t auto_checkpoint_size(const MachineInfo& m, uint64_t extra_bytes);

int run_checkpoint_job(const CheckpointOptions& options, const std::vector<std::string>& argv, const char* prog);

}  // namespace hybridio::bench
