// train_job.h - the training workload (`hybridio bench train`), modelled on
// MLPerf Storage's training workloads (the DLIO benchmark): a dataset of
// sample files written once, then read for E epochs in a shuffled order by
// N readers while an accelerator computes on every batch
// (train_epochs.h); under each policy, interleaved over the repeats, each
// variant started from the same memory state (the cache dropped, the
// page-cache memory warm-up); per policy and epoch GB/s, the page-cache hit
// rate and accelerator utilisation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "option_table.h"

namespace hybridio::bench {

// A workload of MLPerf Storage v1.0/v2.0's training suite, with the sizes
// and the per-batch computation time of its H100 configuration
// (mlcommons/storage configs/dlio/workload/*_h100.yaml).
struct TrainPreset {
  const char* name;
  const char* label;
  uint64_t sample_bytes;      // record_length_bytes (the mean)
  unsigned samples_per_file;  // num_samples_per_file
  unsigned batch;             // batch_size
  unsigned read_threads;      // reader.read_threads
  double computation_time_s;  // train.computation_time, per batch
  double au_min;              // metric.au: the utilisation a run must reach to pass
  unsigned mlperf_files;      // num_files_train of the config (before scaling to a cluster)
  const char* format;
};

const std::vector<TrainPreset>& train_presets();
const TrainPreset* find_train_preset(const std::string& name);  // nullptr if unknown

struct TrainOptions {
  std::string directory = ".";
  std::string preset = "unet3d";
  uint64_t sample_size = 0;       // 0: the preset's
  unsigned samples_per_file = 0;  // 0: the preset's (1 when --sample-size is given)
  uint64_t dataset = 0;           // bytes; 0: from --dataset-x-budget, --files or auto
  double dataset_x_budget = 0;    // the dataset as a multiple of the memory budget
  unsigned files = 0;
  unsigned readers = 0;  // 0: the preset's read threads
  bool processes = false;
  unsigned epochs = 3;
  unsigned batch = 0;     // 0: the preset's
  double compute_ms = 0;  // per batch; < 0: the preset's
  uint64_t memory_limit = 0;
  std::vector<hio_mode> policies = {HIO_MODE_BUFFERED, HIO_MODE_DIRECT, HIO_MODE_DONTCACHE, HIO_MODE_HYBRID};
  unsigned repeat = 3;
  uint64_t seed = 1;
  bool drop_caches = true;
  bool warm_up = true;
  bool verify = true;
  std::string json_path;
};

// The dataset a run reads, from the options and the machine.
struct TrainSizing {
  uint64_t sample_bytes = 0, stride = 0;  // stride: sample_bytes rounded up to 64
  unsigned samples_per_file = 1;
  unsigned files = 0;
  uint64_t budget = 0;   // --memory-limit, else MemAvailable
  uint64_t dataset = 0;  // files x samples x sample_bytes (read per epoch)
  uint64_t file_bytes = 0;
  unsigned readers = 0, batch = 0;
  double compute_s = 0;
};

// Default dataset (no --dataset, --dataset-x-budget or --files): a quarter
// of the budget, at most 2 GiB, so that the built-in run is short.
inline constexpr uint64_t kTrainAutoDatasetMax = 2ULL << 30;

// Sizes the run; false with one line in *error (e.g. a dataset of no file).
// `mem_available` is the machine's MemAvailable (the budget without a limit).
bool size_train_run(const TrainOptions& o, uint64_t mem_available, TrainSizing* s, std::string* error);

// Parses the options (argv after "train") and runs the workload: 0
// measured, 1 a run failed, 2 bad usage or a run that could not start.
int train_command(int argc, char** argv, const char* prog);

// The rows of the option table --help lists (for the man pages).
std::vector<OptionDoc> train_option_docs();

// Parses the command line into *o; 0, 1 (--help) or 2 with *error (option_table.h).
int parse_train_options(int argc, char** argv, TrainOptions* o, std::string* error);

}  // namespace hybridio::bench
