// train_job.cc - see train_job.h.
#include "train_job.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_engine.h"
#include "bench_options.h"
#include "decision_summary.h"
#include "hybridio_internal/settings_text.h"
#include "io_runner.h"
#include "machine_info.h"
#include "measure_loop.h"
#include "memory_cgroup.h"
#include "report.h"
#include "train_epochs.h"

namespace hybridio::bench {
namespace {

std::vector<std::string> policy_names(const std::vector<hio_mode>& v) {
  std::vector<std::string> out;
  for (hio_mode m : v) out.push_back(hio_mode_name(m));
  return out;
}

bool parse_double(const std::string& v, double lo, double hi, double* out) {
  char* end;
  const double d = strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(d >= lo && d <= hi)) return false;
  *out = d;
  return true;
}

bool parse_flag_into(const std::string& v, bool* out, bool invert) {
  bool b;
  if (!parse_flag(v, &b)) return false;
  *out = invert ? !b : b;
  return true;
}

const std::vector<OptionSpec<TrainOptions>>& train_option_table() {
  using O = TrainOptions;
  static const std::vector<OptionSpec<O>> table = {
      {"dir", "DIR", "directory for the sample files",
       [](O& o, const std::string& v) {
         o.directory = v;
         return !v.empty();
       },
       [](const O& o) { return OptValue::str(o.directory); }},
      {"preset", "MODEL",
       "unet3d|resnet50 (MLPerf Storage training: sample size, samples per file, batch, readers)",
       [](O& o, const std::string& v) {
         o.preset = v;
         return find_train_preset(v) != nullptr;
       },
       [](const O& o) { return OptValue::str(o.preset); }},
      {"sample-size", "SIZE",
       "bytes per sample instead of the preset's (then one sample per file unless --samples-per-file)",
       [](O& o, const std::string& v) {
         return internal::parse_size(v, &o.sample_size) && o.sample_size >= 4096 &&
                o.sample_size <= (1ULL << 30);
       },
       [](const O& o) {
         return o.sample_size ? OptValue::size(static_cast<double>(o.sample_size)) : OptValue::str("preset");
       }},
      {"samples-per-file", "N", "samples (records) per file, 1-100000; 0: the preset's",
       [](O& o, const std::string& v) { return parse_count(v, 0, 100000, &o.samples_per_file); },
       [](const O& o) { return OptValue::num(o.samples_per_file); }},
      {"dataset", "SIZE",
       "bytes read per epoch (whole files); auto: a quarter of the memory budget, at most 2G",
       [](O& o, const std::string& v) {
         if (v == "auto") return o.dataset = 0, true;
         return internal::parse_size(v, &o.dataset) && o.dataset >= 4096;
       },
       [](const O& o) {
         return o.dataset ? OptValue::size(static_cast<double>(o.dataset)) : OptValue::str("auto");
       }},
      {"dataset-x-budget", "K",
       "the dataset as K times the memory budget (--memory-limit, else MemAvailable), 0.01-64",
       [](O& o, const std::string& v) { return parse_double(v, 0.01, 64, &o.dataset_x_budget); },
       [](const O& o) { return OptValue::num(o.dataset_x_budget); }},
      {"files", "N", "number of files instead of --dataset (1-1000000)",
       [](O& o, const std::string& v) { return parse_count(v, 1, 1000000, &o.files); },
       [](const O& o) { return OptValue::num(o.files); }},
      {"readers", "N", "reader threads (or processes), 1-256; 0: the preset's read threads",
       [](O& o, const std::string& v) { return parse_count(v, 0, 256, &o.readers); },
       [](const O& o) { return OptValue::num(o.readers); }},
      {"processes", nullptr, "readers are processes forked every epoch (a DataLoader's workers), not threads",
       [](O& o, const std::string& v) { return parse_flag_into(v, &o.processes, false); },
       [](const O& o) { return OptValue::yes(o.processes); }},
      {"epochs", "E", "passes over the dataset, each in a new shuffled order, 1-1000",
       [](O& o, const std::string& v) { return parse_count(v, 1, 1000, &o.epochs); },
       [](const O& o) { return OptValue::num(o.epochs); }},
      {"batch", "B", "samples per batch, 1-100000; 0: the preset's",
       [](O& o, const std::string& v) { return parse_count(v, 0, 100000, &o.batch); },
       [](const O& o) { return OptValue::num(o.batch); }},
      {"compute", "MS",
       "accelerator time per batch in milliseconds (a sleep), 0-100000, or preset (its H100 "
       "computation_time)",
       [](O& o, const std::string& v) {
         if (v == "preset") return o.compute_ms = -1, true;
         return parse_double(v, 0, 100000, &o.compute_ms);
       },
       [](const O& o) { return o.compute_ms < 0 ? OptValue::str("preset") : OptValue::num(o.compute_ms); }},
      {"memory-limit", "SIZE",
       "run inside a memory cgroup of SIZE (root); it is then the memory budget; the report adds limit hits, "
       "memory stalls and OOM kills",
       [](O& o, const std::string& v) {
         return internal::parse_size(v, &o.memory_limit) && o.memory_limit >= (64 << 20);
       },
       [](const O& o) { return OptValue::size(static_cast<double>(o.memory_limit)); }},
      {"policy", "LIST", "comma-separated policies, or all",
       [](O& o, const std::string& v) { return parse_policy_list(v, &o.policies); },
       [](const O& o) { return OptValue::strings(policy_names(o.policies)); }},
      {"repeat", "N", "runs per policy, interleaved and rotated; the tables show medians",
       [](O& o, const std::string& v) { return parse_count(v, 1, 1000, &o.repeat); },
       [](const O& o) { return OptValue::num(o.repeat); }},
      {"seed", "N", "seed of the per-epoch shuffles (the same for every policy and round)",
       [](O& o, const std::string& v) {
         char* end;
         o.seed = strtoull(v.c_str(), &end, 10);
         return !v.empty() && *end == '\0' && v[0] != '-';
       },
       [](const O& o) { return OptValue::num(static_cast<double>(o.seed)); }},
      {"json", "FILE", "also write the results as JSON (schema hybridio-bench/1), '-' for stdout",
       [](O& o, const std::string& v) {
         o.json_path = v;
         return !v.empty();
       },
       [](const O& o) { return OptValue::str(o.json_path); }},
      {"no-drop-caches", nullptr, "start every variant without dropping cached pages first",
       [](O& o, const std::string& v) { return parse_flag_into(v, &o.drop_caches, true); },
       [](const O& o) { return OptValue::yes(!o.drop_caches); }},
      {"no-warm-up", nullptr,
       "skip the untimed page-cache memory warm-up before every variant (see docs/bench.md)",
       [](O& o, const std::string& v) { return parse_flag_into(v, &o.warm_up, true); },
       [](const O& o) { return OptValue::yes(!o.warm_up); }},
      {"no-verify", nullptr, "do not check the bytes of every read",
       [](O& o, const std::string& v) { return parse_flag_into(v, &o.verify, true); },
       [](const O& o) { return OptValue::yes(!o.verify); }},
  };
  return table;
}

void usage(FILE* out, const char* prog) {
  fprintf(out,
          "usage: %s [options]\n\n"
          "A training job's reads, after MLPerf Storage's training workloads (DLIO): sample files\n"
          "written once, then read for --epochs epochs, every sample once per epoch in a new\n"
          "shuffled order, by --readers readers, while the accelerator computes --compute ms on\n"
          "each batch; under each policy, interleaved, every variant started cold from the same\n"
          "memory state.  Per policy and epoch: GB/s, the page-cache hit rate of the reads and\n"
          "the accelerator utilisation (compute time over epoch time, as MLPerf Storage has it).\n\n"
          "options:\n",
          prog);
  print_option_help(out, train_option_table(), TrainOptions{});
  fprintf(out, "\npresets (MLPerf Storage training, H100 configuration):\n");
  for (const TrainPreset& p : train_presets())
    fprintf(out, "  %-9s %-28s %9.1f KiB x %4u per file, batch %u, %u readers, %.0f ms per batch\n", p.name,
            p.label, p.sample_bytes / 1024.0, p.samples_per_file, p.batch, p.read_threads,
            1000 * p.computation_time_s);
  fprintf(out, "\nExit status: 0 measured, 1 a run failed (an I/O error, a wrong byte), 2 bad usage.\n");
}

uint64_t mem_available_bytes() {
  FILE* f = fopen("/proc/meminfo", "re");
  if (!f) return 0;
  char line[256];
  unsigned long long kb = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
  fclose(f);
  return kb * 1024;
}

// Every variant starts with an empty re-use history (hio_reuse_forget), as
// the cache drop starts it with a cold page cache: the repetitions after the
// first must not find their first epoch read already, nor count earlier
// variants' reads in the data read recently.  -ENOENT (no history kept) is
// as good.
void forget_earlier_reads() { hio_reuse_forget(); }

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// "2.15 GiB", or "32.0 MiB" below a GiB.
std::string gib(uint64_t b) {
  char s[32];
  if (b < (1ULL << 30))
    snprintf(s, sizeof s, "%.1f MiB", b / double(1 << 20));
  else
    snprintf(s, sizeof s, "%.2f GiB", b / double(1ULL << 30));
  return s;
}

// One policy's trials: the epochs of every round it ran.
using PolicyEpochs = std::vector<std::vector<EpochResult>>;

// GB/s of epochs [from, end) of one trial together.
double epochs_gbps(const std::vector<EpochResult>& t, size_t from) {
  double s = 0, b = 0;
  for (size_t e = from; e < t.size(); ++e) s += t[e].seconds, b += static_cast<double>(t[e].bytes);
  return s > 0 ? b / s / 1e9 : 0;
}

void print_epoch_table(FILE* out, const std::vector<hio_mode>& policies,
                       const std::vector<PolicyEpochs>& runs, unsigned epochs, bool compute,
                       const char* method) {
  fprintf(
      out,
      "\nper epoch, median [min-max] over the rounds; hit rate: share of the bytes in the page cache when\n"
      "their read was issued (%s); AU: accelerator utilisation (compute / epoch time, first batch's wait "
      "left out);\n"
      "the library's routing of the epoch's bytes in the round of the median GB/s\n",
      method);
  fprintf(out, "%-10s %5s %21s %9s %7s %8s %8s %8s\n", "policy", "epoch", "GB/s median [min-max]", "hit rate",
          "AU", "buffered", "direct", "dontcache");
  for (size_t k = 0; k < policies.size(); ++k) {
    if (runs[k].empty()) continue;
    for (unsigned e = 0; e < epochs; ++e) {
      std::vector<double> g, h, au;
      std::vector<const EpochResult*> of_round;
      for (const auto& t : runs[k]) {
        if (e >= t.size()) continue;
        g.push_back(t[e].gbps());
        h.push_back(t[e].hit_rate());
        au.push_back(t[e].au());
        of_round.push_back(&t[e]);
      }
      if (g.empty()) continue;
      // The routing of the round whose GB/s is the median (lower middle), so that the shares add up.
      std::sort(of_round.begin(), of_round.end(),
                [](const EpochResult* a, const EpochResult* b) { return a->gbps() < b->gbps(); });
      const EpochResult& mid = *of_round[(of_round.size() - 1) / 2];
      double all = 0, share[HIO_PATH_COUNT];
      for (int p = 0; p < HIO_PATH_COUNT; ++p) all += static_cast<double>(mid.path_bytes[p]);
      for (int p = 0; p < HIO_PATH_COUNT; ++p) share[p] = all > 0 ? mid.path_bytes[p] / all : 0;
      char gb[64], aus[16];
      snprintf(gb, sizeof gb, "%.3f [%.3f-%.3f]", median(g), *std::min_element(g.begin(), g.end()),
               *std::max_element(g.begin(), g.end()));
      if (compute)
        snprintf(aus, sizeof aus, "%.1f%%", 100 * median(au));
      else
        snprintf(aus, sizeof aus, "-");
      fprintf(out, "%-10s %5u %21s %8.1f%% %7s %7.0f%% %7.0f%% %8.0f%%\n", hio_mode_name(policies[k]), e + 1,
              gb, 100 * median(h), aus, 100 * share[HIO_PATH_BUFFERED], 100 * share[HIO_PATH_DIRECT],
              100 * share[HIO_PATH_DONTCACHE]);
    }
  }
}

// Hybrid against the fixed policies: epoch 1 against the best of them,
// epochs 2+ against buffered (the page cache's re-use), by medians.
void print_train_headline(FILE* out, const std::vector<hio_mode>& policies,
                          const std::vector<PolicyEpochs>& runs, unsigned epochs) {
  double hybrid1 = 0, hybrid2 = 0, best1 = 0, buffered2 = 0, best2 = 0;
  hio_mode best1_mode = HIO_MODE_BUFFERED, best2_mode = HIO_MODE_BUFFERED;
  for (size_t k = 0; k < policies.size(); ++k) {
    if (runs[k].empty()) continue;
    std::vector<double> first, later;
    for (const auto& t : runs[k]) {
      if (t.empty()) continue;
      first.push_back(t[0].gbps());
      if (t.size() > 1) later.push_back(epochs_gbps(t, 1));
    }
    const double g1 = median(first), g2 = median(later);
    if (policies[k] == HIO_MODE_HYBRID) {
      hybrid1 = g1, hybrid2 = g2;
      continue;
    }
    if (policies[k] == HIO_MODE_BUFFERED) buffered2 = g2;
    if (g1 > best1) best1 = g1, best1_mode = policies[k];
    if (g2 > best2) best2 = g2, best2_mode = policies[k];
  }
  if (hybrid1 > 0 && best1 > 0)
    fprintf(out, "hybrid epoch 1 vs the best fixed policy: x%.2f (best: %s, %.2f GB/s)\n", hybrid1 / best1,
            hio_mode_name(best1_mode), best1);
  if (epochs > 1 && hybrid2 > 0 && best2 > 0) {
    char later[32], vs_buffered[48] = "";
    snprintf(later, sizeof later, epochs == 2 ? "epoch 2" : "epochs 2-%u", epochs);
    if (buffered2 > 0 && best2_mode != HIO_MODE_BUFFERED)
      snprintf(vs_buffered, sizeof vs_buffered, ", vs buffered: x%.2f", hybrid2 / buffered2);
    fprintf(out, "hybrid %s vs the best fixed policy: x%.2f (best: %s, %.2f GB/s)%s\n", later,
            hybrid2 / best2, hio_mode_name(best2_mode), best2, vs_buffered);
  }
}

void write_epoch_json(JsonWriter& w, const EpochResult& r, unsigned epoch) {
  w.begin_object()
      .field("epoch", epoch)
      .field("seconds", r.seconds)
      .field("bytes", r.bytes)
      .field("samples", r.samples)
      .field("gbps", r.gbps())
      .field("hit_rate", r.hit_rate())
      .field("compute_s", r.compute_s)
      .field("first_batch_wait_s", r.first_batch_wait_s)
      .field("au", r.au())
      .field("verified_bytes", r.verified_bytes);
  w.begin_object("bytes_by_path");
  for (int p = 0; p < HIO_PATH_COUNT; ++p) w.field(hio_path_name(static_cast<hio_path>(p)), r.path_bytes[p]);
  w.end_object().end_object();
}

}  // namespace

const std::vector<TrainPreset>& train_presets() {
  // mlcommons/storage configs/dlio/workload/unet3d_h100.yaml and resnet50_h100.yaml.
  static const std::vector<TrainPreset> presets = {
      {"unet3d", "3D U-Net (KiTS19, npz)", 146600628, 1, 7, 4, 0.323, 0.90, 168,
       "one sample per file, read whole with one call (np.load)"},
      {"resnet50", "ResNet-50 (ImageNet, TFRecord)", 114660, 1251, 400, 8, 0.224, 0.90, 1024,
       "records in larger files, one call per record"},
  };
  return presets;
}

const TrainPreset* find_train_preset(const std::string& name) {
  for (const TrainPreset& p : train_presets())
    if (name == p.name) return &p;
  return nullptr;
}

bool size_train_run(const TrainOptions& o, uint64_t mem_available, TrainSizing* s, std::string* error) {
  const TrainPreset& p = *find_train_preset(o.preset);
  const int given = (o.dataset ? 1 : 0) + (o.dataset_x_budget > 0 ? 1 : 0) + (o.files ? 1 : 0);
  if (given > 1) {
    *error = "give one of --dataset, --dataset-x-budget and --files";
    return false;
  }
  s->sample_bytes = o.sample_size ? o.sample_size : p.sample_bytes;
  s->stride = (s->sample_bytes + 63) / 64 * 64;  // the verify pattern's offsets are multiples of 64
  s->samples_per_file = o.samples_per_file ? o.samples_per_file : (o.sample_size ? 1 : p.samples_per_file);
  s->file_bytes = s->stride * s->samples_per_file;
  s->budget = o.memory_limit ? o.memory_limit : mem_available;
  s->readers = o.readers ? o.readers : p.read_threads;
  s->batch = o.batch ? o.batch : p.batch;
  s->compute_s = o.compute_ms < 0 ? p.computation_time_s : o.compute_ms / 1000;
  if (o.files) {
    s->files = o.files;
  } else {
    double target = static_cast<double>(o.dataset);
    if (o.dataset_x_budget > 0) {
      if (!s->budget) {
        *error =
            "--dataset-x-budget: the memory budget is unknown here (no MemAvailable); give --memory-limit";
        return false;
      }
      target = o.dataset_x_budget * static_cast<double>(s->budget);
    }
    if (!given)
      target = static_cast<double>(
          std::min<uint64_t>(s->budget ? s->budget / 4 : kTrainAutoDatasetMax, kTrainAutoDatasetMax));
    const double per_file = static_cast<double>(s->sample_bytes) * s->samples_per_file;
    const double n = std::round(target / per_file);
    if (n < 1) {
      *error = "the dataset (" + internal::format_size(static_cast<uint64_t>(target)) +
               ") is smaller than one file of " + internal::format_size(static_cast<uint64_t>(per_file)) +
               "; use --files, --sample-size or --samples-per-file";
      return false;
    }
    if (n > 1000000) {
      *error =
          "the dataset would need more than 1000000 files; use a larger --sample-size or --samples-per-file";
      return false;
    }
    s->files = static_cast<unsigned>(n);
  }
  const uint64_t samples = static_cast<uint64_t>(s->files) * s->samples_per_file;
  if (samples > 0xffffffffULL) {
    *error = "more than 2^32 samples";
    return false;
  }
  s->dataset = samples * s->sample_bytes;
  return true;
}

int parse_train_options(int argc, char** argv, TrainOptions* o, std::string* error) {
  return parse_command_line(train_option_table(), argc, argv, o, nullptr, error);
}

std::vector<OptionDoc> train_option_docs() {
  return describe_options(train_option_table(), TrainOptions{});
}

int train_command(int argc, char** argv, const char* prog) {
  TrainOptions o;
  std::string error;
  const int st = parse_train_options(argc, argv, &o, &error);
  if (st == 1) {
    usage(stdout, prog);
    return 0;
  }
  if (st == 2) {
    fprintf(stderr, "%s: %s\n", prog, error.c_str());
    return 2;
  }
  struct stat sb;
  if (stat(o.directory.c_str(), &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    fprintf(stderr, "%s: --dir %s is not a directory\n", prog, o.directory.c_str());
    return 2;
  }
  if (access(o.directory.c_str(), W_OK) != 0) {
    fprintf(stderr, "%s: --dir %s is not writable\n", prog, o.directory.c_str());
    return 2;
  }
  TrainSizing z;
  if (!size_train_run(o, mem_available_bytes(), &z, &error)) {
    fprintf(stderr, "%s: %s\n", prog, error.c_str());
    return 2;
  }
  const TrainPreset& preset = *find_train_preset(o.preset);
  const MachineInfo m = probe_machine(o.directory);
  const uint64_t on_disk = z.file_bytes * z.files;
  if (m.free_bytes && on_disk + (64ULL << 20) > m.free_bytes) {
    fprintf(stderr, "%s: the dataset needs %s in %s, which has %s free\n", prog, gib(on_disk).c_str(),
            o.directory.c_str(), gib(m.free_bytes).c_str());
    return 2;
  }
  if (o.memory_limit && geteuid() != 0) {
    fprintf(stderr, "%s: --memory-limit needs root (it makes a memory cgroup)\n", prog);
    return 2;
  }
  // The reader buffers are shared memory charged to the cgroup and cannot be
  // reclaimed without swap: past half the limit the page cache has no room.
  const uint64_t buffer_bytes = static_cast<uint64_t>(z.readers) * ((z.sample_bytes + 4095) / 4096 * 4096);
  if (o.memory_limit && buffer_bytes > o.memory_limit / 2) {
    fprintf(stderr,
            "%s: the reader buffers (%u x %s) take more than half of --memory-limit=%s; use fewer --readers "
            "or a smaller --sample-size\n",
            prog, z.readers, gib(z.sample_bytes).c_str(), internal::format_size(o.memory_limit).c_str());
    return 2;
  }

  TrainDataset d;
  d.sample_bytes = z.sample_bytes;
  d.stride = z.stride;
  d.samples_per_file = z.samples_per_file;
  for (unsigned f = 0; f < z.files; ++f) {
    char name[96];
    snprintf(name, sizeof name, "/hybridio-train.%d.%06u.sample", static_cast<int>(getpid()), f);
    d.paths.push_back(o.directory + name);
  }
  struct RemoveFiles {
    const std::vector<std::string>& paths;
    ~RemoveFiles() {
      for (const std::string& p : paths) unlink(p.c_str());
    }
  } remove_files{d.paths};
  fprintf(stderr, "%s: writing the dataset: %u files of %s (untimed, once)\n", prog, z.files,
          gib(z.file_bytes).c_str());
  const std::string why = write_train_dataset(d);
  if (!why.empty()) {
    fprintf(stderr, "%s: %s\n", prog, why.c_str());
    return 1;
  }
  const HitMethod hit = probe_hit_method(d.paths[0]);
  // The limit is entered after the dataset is written: the write is not
  // measured, and buffered writes under a cgroup v1 limit on ext4 have
  // livelocked this kernel once (docs/memory.md).  The reader buffers are
  // the job's memory, charged to it.
  MemoryCgroup cgroup;
  if (o.memory_limit) {
    const std::string refused = cgroup.enter(o.memory_limit);
    if (!refused.empty()) {
      fprintf(stderr, "%s: --memory-limit=%s: %s\n", prog, internal::format_size(o.memory_limit).c_str(),
              refused.c_str());
      return 2;
    }
  }
  ReaderBuffers buffers(z.readers, z.sample_bytes);
  if (!buffers.ok()) {
    fprintf(stderr, "%s: cannot allocate %u reader buffers of %s\n", prog, z.readers,
            internal::format_size(z.sample_bytes).c_str());
    return 1;
  }

  EpochPlan ep;
  ep.engine = find_engine("hybridio");
  ep.epochs = o.epochs;
  ep.batch = z.batch;
  ep.readers = z.readers;
  ep.processes = o.processes;
  ep.prefetch = 2 * z.readers;  // PyTorch's DataLoader: prefetch_factor 2 per worker
  ep.compute_s = z.compute_s;
  ep.seed = o.seed;
  ep.verify = o.verify;
  ep.hit = hit;
  ep.buffers = &buffers;

  std::vector<std::string> words = {"hybridio", "bench", "train"};
  for (int i = 0; i < argc; ++i) words.push_back(argv[i]);
  Report report;
  report.kind = "train";
  report.argv = words;
  report.machine = m;
  report.file_bytes = z.file_bytes;
  report.cold = "none";

  MeasurePlan plan;
  plan.prog = prog;
  plan.row.job = "train";
  plan.row.engine = "hybridio";
  plan.row.pattern = "train";
  plan.row.bs_bytes = z.sample_bytes;
  plan.row.threads = z.readers;
  plan.policies = o.policies;
  plan.ops = {HIO_OP_READ};
  plan.repeat = o.repeat;
  plan.files = d.paths;
  plan.drop_caches = o.drop_caches;
  // The same page-cache memory state before every variant (io_runner.h:
  // warm_page_cache_memory), as the checkpoint job has it.
  plan.warm_up_bytes = o.warm_up ? z.dataset : 0;
  plan.warm_up_dir = o.directory;
  plan.bytes_per_trial = z.dataset * o.epochs;
  std::vector<PolicyEpochs> runs(o.policies.size());
  plan.make_trial = [&](hio_mode mode, unsigned) {
    const size_t k =
        static_cast<size_t>(std::find(o.policies.begin(), o.policies.end(), mode) - o.policies.begin());
    Phase ph;
    ph.label = std::string(hio_mode_name(mode)) + " epochs";
    ph.cold = true;
    ph.config.engine = ep.engine;
    if (cgroup.active()) ph.config.cgroup = &cgroup;
    ph.record_as = {HIO_OP_READ};
    ph.run = [&, k](const RunConfig& cfg) {
      forget_earlier_reads();
      std::vector<EpochResult> epochs;
      RunOutcome r = run_epochs(d, ep, cfg, &epochs);
      if (r.error.empty()) runs[k].push_back(std::move(epochs));
      return r;
    };
    Trial t;
    t.phases.push_back(std::move(ph));
    return t;
  };
  const MeasureOutcome measured = measure_policies(plan, m, &report);
  if (report.cold == "fadvise")
    for (auto& row : report.rows)
      row.notes.push_back(
          "only the dataset's pages dropped (fadvise: not root, or HYBRIDIO_BENCH_COLD=files)");

  const double x_budget = z.budget ? double(z.dataset) / double(z.budget) : 0;
  char title[1400];
  snprintf(
      title, sizeof title,
      "Training, %s-like (MLPerf Storage/DLIO): %u file%s x %s, %u sample%s of %s per file (%s);\n"
      "dataset %s per epoch = %.2f x the memory budget (%s: %s); %u reader %s, batch %u, %u epoch%s,\n"
      "a new shuffled order every epoch (seed %llu, the same for every policy); compute %.0f ms per batch;\n"
      "%s; every variant cold (%s)%s; %s",
      preset.name, z.files, z.files == 1 ? "" : "s", gib(z.file_bytes).c_str(), z.samples_per_file,
      z.samples_per_file == 1 ? "" : "s",
      (z.sample_bytes < (1 << 20) ? std::to_string(z.sample_bytes) + " B" : gib(z.sample_bytes)).c_str(),
      z.samples_per_file == 1 ? "one read of the whole file" : "one read per sample", gib(z.dataset).c_str(),
      x_budget, o.memory_limit ? "--memory-limit" : "MemAvailable", gib(z.budget).c_str(), z.readers,
      o.processes ? "processes" : "threads", z.batch, o.epochs, o.epochs == 1 ? "" : "s",
      static_cast<unsigned long long>(o.seed), 1000 * z.compute_s,
      o.verify ? "every byte read checked" : "bytes not checked (--no-verify)",
      o.drop_caches ? report.cold.c_str() : "no drop: --no-drop-caches",
      o.warm_up && measured.warm_up_error.empty() ? ", the same page-cache memory state (warm-up)"
                                                  : ", no warm-up",
      o.repeat > 1 ? ("median [min-max] of " + std::to_string(o.repeat) + " runs, interleaved").c_str()
                   : "one run");
  FILE* out = o.json_path == "-" ? stderr : stdout;  // JSON alone on its stream
  print_table(out, report, [&](const std::string&) { return std::string(title); });
  fprintf(out, "GB/s: every epoch's bytes over their time (compute included); latency: one sample's read.\n");
  print_epoch_table(out, o.policies, runs, o.epochs, z.compute_s > 0, hit_method_name(hit));
  print_train_headline(out, o.policies, runs, o.epochs);
  for (size_t k = 0; k < o.policies.size(); ++k) {
    const ResultRow& row = report.rows[measured.first_row + k];
    if (o.policies[k] != HIO_MODE_HYBRID || row.runs.empty() || row.run_stats.size() != row.runs.size())
      continue;
    hio_policy_config cfg;
    hio_policy_get(&cfg);
    const std::string why_hybrid = explain_decisions(row.run_stats[median_run(row)], HIO_OP_READ, cfg);
    if (!why_hybrid.empty()) fprintf(out, "why hybrid read so: %s\n", why_hybrid.c_str());
  }
  if (cgroup.active()) {
    fprintf(out, "\nunder a memory limit of %s (%s), median run:\n",
            internal::format_size(o.memory_limit).c_str(), cgroup.describe().c_str());
    fprintf(out, "%-10s %12s %14s %10s\n", "policy", "limit hits", "memory stall", "OOM kills");
    for (const ResultRow& row : report.rows) {
      if (row.runs.empty()) continue;
      const RunSample& s = row.runs[median_run(row)];
      fprintf(out, "%-10s %12llu %12.2f s %10llu\n", row.policy.c_str(),
              static_cast<unsigned long long>(s.memory.limit_hits), s.memory.stall_s,
              static_cast<unsigned long long>(s.memory.oom_kills));
    }
  }

  report.write_settings = [&](JsonWriter& w) {
    w.begin_array("jobs").begin_object().field("name", "train").begin_object("settings");
    echo_settings_json(w, train_option_table(), o);
    w.end_object().end_object().end_array();
  };
  report.write_extra = [&](JsonWriter& w) {
    w.begin_object("train");
    w.field("preset", preset.name);
    w.begin_object("mlperf")
        .field("record_bytes", preset.sample_bytes)
        .field("samples_per_file", preset.samples_per_file)
        .field("batch", preset.batch)
        .field("read_threads", preset.read_threads)
        .field("computation_time_s", preset.computation_time_s)
        .field("au_min", preset.au_min)
        .field("files", preset.mlperf_files)
        .field("format", preset.format)
        .end_object();
    w.field("sample_bytes", z.sample_bytes)
        .field("sample_stride_bytes", z.stride)
        .field("samples_per_file", z.samples_per_file)
        .field("files", z.files)
        .field("file_bytes", z.file_bytes)
        .field("dataset_bytes", z.dataset)
        .field("memory_budget_bytes", z.budget)
        .field("memory_budget_is", o.memory_limit ? "memory_limit" : "MemAvailable")
        .field("dataset_x_budget", x_budget)
        .field("readers", z.readers)
        .field_bool("processes", o.processes)
        .field("epochs", o.epochs)
        .field("batch", z.batch)
        .field("batches_per_epoch", (d.samples() + z.batch - 1) / z.batch)
        .field("prefetch_batches", ep.prefetch)
        .field("compute_s_per_batch", z.compute_s)
        .field("seed", static_cast<double>(o.seed))
        .field_bool("verify", o.verify)
        .field("hit_rate_method", hit_method_name(hit))
        .field("memory_warm_up_bytes", o.warm_up && measured.warm_up_error.empty() ? z.dataset : 0);
    w.begin_array("policies");
    for (size_t k = 0; k < o.policies.size(); ++k) {
      const ResultRow& row = report.rows[measured.first_row + k];
      w.begin_object().field("policy", hio_mode_name(o.policies[k])).field("status", row.status);
      w.begin_array("epochs");
      for (unsigned e = 0; e < o.epochs; ++e) {
        std::vector<double> g, h, au;
        for (const auto& t : runs[k])
          if (e < t.size()) g.push_back(t[e].gbps()), h.push_back(t[e].hit_rate()), au.push_back(t[e].au());
        if (g.empty()) continue;
        w.begin_object()
            .field("epoch", e + 1)
            .field("gbps_median", median(g))
            .field("gbps_min", *std::min_element(g.begin(), g.end()))
            .field("gbps_max", *std::max_element(g.begin(), g.end()))
            .field("hit_rate_median", median(h))
            .field("au_median", median(au))
            .end_object();
      }
      w.end_array();
      w.begin_array("runs");
      for (const auto& t : runs[k]) {
        w.begin_array();
        for (size_t e = 0; e < t.size(); ++e) write_epoch_json(w, t[e], static_cast<unsigned>(e + 1));
        w.end_array();
      }
      w.end_array();
      w.end_object();
    }
    w.end_array();
    w.end_object();
  };
  if (!o.json_path.empty() && !write_report_json(report, o.json_path)) return 1;
  return measured.status;
}

}  // namespace hybridio::bench
