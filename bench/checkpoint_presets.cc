// checkpoint_presets.cc - see checkpoint_presets.h.
#include "checkpoint_presets.h"

#include <cmath>

namespace hybridio::bench {
namespace {
constexpr uint64_t kGiB = 1ULL << 30;
uint64_t up64(uint64_t v) { return (v + 63) / 64 * 64; }
}  // namespace

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> all = {
      {"llama3-8b", "Llama3 8B", 105 * kGiB, 8, 32, 4096, 14336, 1024, 128256},
      {"llama3-70b", "Llama3 70B", 912 * kGiB, 64, 80, 8192, 28672, 1024, 128256},
      {"llama3-405b", "Llama3 405B", static_cast<uint64_t>(5.29 * 1024) * kGiB, 512, 126, 16384, 53248, 1024, 128256},
      {"llama3-1t", "Llama3 1T", 18 * 1024 * kGiB, 1024, 128, 25600, 102400, 1024, 128256},
  };
  return all;
}

const ModelPreset* find_preset(const std::string& name) {
  for (const ModelPreset& p : model_presets())
    if (name == p.name) return &p;
  return nullptr;
}

ShardLayout shard_layout(const ModelPreset& p, double fraction) {
  // Parameters per tensor of the whole model.
  std::vector<double> params;
  params.push_back(double(p.vocab) * p.hidden);  // embedding
  for (unsigned l = 0; l < p.layers; ++l) {
    params.push_back(double(p.hidden) * p.hidden);  // q
    params.push_back(double(p.kv) * p.hidden);      // k
    params.push_back(double(p.kv) * p.hidden);      // v
    params.push_back(double(p.hidden) * p.hidden);  // o
    params.push_back(double(p.ffn) * p.hidden);     // gate
    params.push_back(double(p.ffn) * p.hidden);     // up
    params.push_back(double(p.hidden) * p.ffn);     // down
    params.push_back(double(p.hidden));             // attention norm
    params.push_back(double(p.hidden));             // ffn norm
  }
  params.push_back(double(p.hidden));               // final norm
  params.push_back(double(p.vocab) * p.hidden);     // lm head
  double total = 0;
  for (double v : params) total += v;
  // Elements per rank so that all ranks' records add up to MLPerf's bytes.
  double per_param_scale = (double(p.mlperf_bytes) / 14.0 / total) / p.mlperf_ranks;

  ShardLayout s;
  uint64_t off = 0;
  auto add = [&](uint64_t len, bool data) {
    s.records.push_back({off, len, data});
    off += len;
  };
  const unsigned bytes_per_elem[4] = {2, 4, 4, 4};  // bf16 weight, fp32 master, exp_avg, exp_avg_sq
  size_t n_records = params.size() * 4;
  add(64, false);                          // archive header
  add(up64(96 * n_records + 512), false);  // data.pkl: the pickled dict of tensor references
  double acc = 0;
  for (double pv : params) {
    uint64_t elems = static_cast<uint64_t>(std::llround(std::max(1.0, pv * per_param_scale)));
    for (unsigned b : bytes_per_elem) {
      uint64_t len = up64(elems * b);
      s.full_shard_bytes += len + 64;
      ++s.tensors_total;
      acc += fraction * double(len);
      if (fraction >= 1.0 || acc >= double(len) / 2) {  // spread the kept records over the model
        acc -= double(len);
        add(64, false);  // the record's local header
        add(len, true);
        ++s.tensors_kept;
      }
    }
  }
  add(up64(64 * s.tensors_kept + 64), false);  // central directory
  s.bytes = off;
  return s;
}

}  // namespace hybridio::bench
