// checkpoint_presets.h - model checkpoints after MLPerf Storage v2.0's
// checkpointing workload: Llama 3 8B / 70B / 405B / 1T at 14 bytes per
// parameter (2 bytes of bf16 weights + 12 bytes of fp32 Adam state:
// master copy, exp_avg, exp_avg_sq), sharded over the preset's ranks.
//
// A shard is laid out the way torch.save lays out a zip archive: a small
// archive header and a pickle record, then for every tensor a 64-byte
// local header and its data (64-byte aligned), then the central
// directory.  The model's shapes only set the proportions: record sizes
// are scaled so that a full shard set is exactly MLPerf's size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hybridio::bench {

struct ModelPreset {
  const char* name;
  const char* label;
  uint64_t mlperf_bytes;  // the whole checkpoint, all ranks
  unsigned mlperf_ranks;
  unsigned layers;
  uint64_t hidden, ffn, kv, vocab;
};

const std::vector<ModelPreset>& model_presets();
const ModelPreset* find_preset(const std::string& name);  // nullptr if unknown

struct Record {
  uint64_t offset, len;
  bool data;  // a tensor's bytes (false: header, pickle, directory)
};

struct ShardLayout {
  std::vector<Record> records;
  uint64_t bytes = 0;            // file size
  uint64_t full_shard_bytes = 0; // one rank's shard of the whole checkpoint
  unsigned tensors_kept = 0, tensors_total = 0;
};

// One rank's shard, keeping about `fraction` (0..1] of its tensor bytes:
// whole records at their real sizes, spread over the model (not just its
// first layers).
ShardLayout shard_layout(const ModelPreset& p, double fraction);

}  // namespace hybridio::bench
