// checkpoint_job.cc - see checkpoint_job.h.
#include "checkpoint_job.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_options.h"
#include "checkpoint_presets.h"
#include "decision_summary.h"
#include "hybridio_internal/settings_text.h"
#include "io_runner.h"
#include "machine_info.h"
#include "measure_loop.h"
#include "memory_cgroup.h"
#include "option_table.h"
#include "report.h"

namespace hybridio::bench {
namespace {

constexpr unsigned kDefaultMaxRanks = 8;

std::vector<std::string> policy_names(const std::vector<hio_mode>& v) {
  std::vector<std::string> out;
  for (hio_mode m : v) out.push_back(hio_mode_name(m));
  return out;
}

const std::vector<OptionSpec<CheckpointOptions>>& checkpoint_option_table() {
  using O = CheckpointOptions;
  static const std::vector<OptionSpec<O>> table = {
      {"dir", "DIR", "directory for the shard files",
       [](O& o, const std::string& v) { o.directory = v; return !v.empty(); },
       [](const O& o) { return OptValue::str(o.directory); }},
      {"preset", "MODEL", "llama3-8b|llama3-70b|llama3-405b|llama3-1t (MLPerf Storage checkpointing sizes)",
       [](O& o, const std::string& v) { o.preset = v; return find_preset(v) != nullptr; },
       [](const O& o) { return OptValue::str(o.preset); }},
      {"size", "SIZE",
       "bytes of all shards together; sets --scale (K/M/G/T suffixes); auto: twice the dirty-page limit, "
       "clamped to the free space of --dir",
       [](O& o, const std::string& v) {
         if (v == "auto") return o.size = 0, true;
         return internal::parse_size(v, &o.size) && o.size >= (1 << 20);
       },
       [](const O& o) { return o.size ? OptValue::size(static_cast<double>(o.size)) : OptValue::str("auto"); }},
      {"scale", "FRACTION", "fraction (0-1] of each full shard's records to write, instead of --size",
       [](O& o, const std::string& v) {
         char* end;
         o.scale = strtod(v.c_str(), &end);
         return *end == '\0' && !v.empty() && o.scale > 0 && o.scale <= 1;
       },
       [](const O& o) { return OptValue::num(o.scale); }},
      {"ranks", "N", "shards written at once, one thread each (0: the preset's ranks, at most 8)",
       [](O& o, const std::string& v) { return parse_count(v, 0, 1024, &o.ranks); },
       [](const O& o) { return OptValue::num(o.ranks); }},
      {"bs", "SIZE", "largest bytes per call; larger records take several calls",
       [](O& o, const std::string& v) {
         return internal::parse_size(v, &o.block_size) && o.block_size >= 4096 && o.block_size <= (1ULL << 30) &&
                o.block_size % 64 == 0;
       },
       [](const O& o) { return OptValue::size(static_cast<double>(o.block_size)); }},
      {"buffer-offset", "BYTES", "misalign the caller's buffer by this many bytes (0-4095)",
       [](O& o, const std::string& v) { return internal::parse_size(v, &o.buffer_offset) && o.buffer_offset < 4096; },
       [](const O& o) { return OptValue::size(static_cast<double>(o.buffer_offset)); }},
      {"policy", "LIST", "comma-separated policies, or all",
       [](O& o, const std::string& v) { return parse_policy_list(v, &o.policies); },
       [](const O& o) { return OptValue::strings(policy_names(o.policies)); }},
      {"repeat", "N", "runs per policy, interleaved and rotated; the table shows medians",
       [](O& o, const std::string& v) { return parse_count(v, 1, 1000, &o.repeat); },
       [](const O& o) { return OptValue::num(o.repeat); }},
      {"memory-limit", "SIZE",
       "run inside a memory cgroup of SIZE, as a container or a memory-limited node would (root); the "
       "report adds limit hits, memory stalls and OOM kills per policy",
       [](O& o, const std::string& v) { return internal::parse_size(v, &o.memory_limit) && o.memory_limit >= (64 << 20); },
       [](const O& o) { return OptValue::size(static_cast<double>(o.memory_limit)); }},
      {"dataset", "SIZE",
       "read a dataset file of SIZE into the page cache before every write, as a data loader's files are; "
       "the report says how much of it each policy's write left cached and how fast it re-reads",
       [](O& o, const std::string& v) { return internal::parse_size(v, &o.dataset) && o.dataset >= (1 << 20); },
       [](const O& o) { return OptValue::size(static_cast<double>(o.dataset)); }},
      {"json", "FILE", "also write the results as JSON (schema hybridio-bench/1), '-' for stdout",
       [](O& o, const std::string& v) { o.json_path = v; return !v.empty(); },
       [](const O& o) { return OptValue::str(o.json_path); }},
      {"no-drop-caches", nullptr, "restore without dropping cached pages first",
       [](O& o, const std::string& v) {
         bool b;
         if (!parse_flag(v, &b)) return false;
         o.drop_caches = !b;
         return true;
       },
       [](const O& o) { return OptValue::yes(!o.drop_caches); }},
      {"no-warm-up", nullptr,
       "skip the untimed page-cache memory warm-up before every write and restore (see docs/bench.md)",
       [](O& o, const std::string& v) {
         bool b;
         if (!parse_flag(v, &b)) return false;
         o.warm_up = !b;
         return true;
       },
       [](const O& o) { return OptValue::yes(!o.warm_up); }},
      {"no-verify", nullptr, "skip checking the restored bytes",
       [](O& o, const std::string& v) {
         bool b;
         if (!parse_flag(v, &b)) return false;
         o.verify = !b;
         return true;
       },
       [](const O& o) { return OptValue::yes(!o.verify); }},
  };
  return table;
}

void usage(FILE* out, const char* prog) {
  fprintf(out,
          "usage: %s [options]\n\n"
          "Every rank (a thread) writes its shard of a model checkpoint laid out like torch.save\n"
          "(header, pickle, then one record per tensor: bf16 weights and fp32 Adam state,\n"
          "14 bytes per parameter), fsync included; then the shards are restored cold and\n"
          "checked; under each policy, interleaved.  The time of a write or restore is the\n"
          "slowest rank's.\n\noptions:\n",
          prog);
  print_option_help(out, checkpoint_option_table(), CheckpointOptions{});
  fprintf(out, "\npresets (MLPerf Storage v2.0 checkpointing):\n");
  for (const ModelPreset& p : model_presets())
    fprintf(out, "  %-12s %-12s %8.0f GiB over %4u ranks\n", p.name, p.label, p.mlperf_bytes / double(1ULL << 30),
            p.mlperf_ranks);
  fprintf(out, "\nThe library's own settings (HYBRIDIO_WRITE_THRESHOLD, ...) apply to the hybrid policy;\n"
               "see `hybridio config` and docs/bench.md.\n");
}

std::string shard_path(const CheckpointOptions& o, unsigned rank) {
  char b[64];
  snprintf(b, sizeof b, "/hybridio-ckpt.%d.rank%03u.pt", static_cast<int>(getpid()), rank);
  return o.directory + b;
}

uint64_t rank_key(unsigned rank) { return 0xc4ec4b01d0000000ULL + rank * 0x10001ULL; }

// --dataset: a file of a data loader's, kept in the page cache (or not)
// while checkpoints are written.
struct DatasetSample {
  double kept = 0;   // share of its pages still cached after the write
  double gbps = 0;   // re-read speed right after
};

// Reads `path` whole through the page cache; the GB/s, or 0 on failure.
double read_whole(const std::string& path, std::vector<char>& buf) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t total = 0;
  for (ssize_t n; (n = read(fd, buf.data(), buf.size())) > 0;) total += static_cast<uint64_t>(n);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  close(fd);
  return s > 0 ? total / s / 1e9 : 0;
}

// Puts the dataset in the page cache as a reader in this process's memory
// cgroup would: its cached pages are dropped first, so that the read
// charges them to this cgroup, not to the one that first cached them.
void load_dataset(const std::string& path, std::vector<char>& buf) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
  read_whole(path, buf);
}

// The share of `path`'s pages in the page cache (mincore), 0 on failure.
double cached_share(const std::string& path, uint64_t bytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  void* map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return 0;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((bytes + page - 1) / page);
  uint64_t in = 0;
  if (mincore(map, bytes, resident.data()) == 0)
    for (unsigned char r : resident) in += r & 1;
  munmap(map, bytes);
  return resident.empty() ? 0 : double(in) / resident.size();
}

// Writes the dataset file (untimed, once); "" or why not.
std::string make_dataset(const std::string& path, uint64_t bytes, std::vector<char>& buf) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot create " + path + ": " + strerror(errno);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<char>(i * 131 + 7);
  for (uint64_t at = 0; at < bytes;) {
    const ssize_t n = pwrite(fd, buf.data(), std::min<uint64_t>(buf.size(), bytes - at), static_cast<off_t>(at));
    if (n <= 0) {
      close(fd);
      return "cannot write " + path + ": " + strerror(n < 0 ? errno : ENOSPC);
    }
    at += static_cast<uint64_t>(n);
  }
  return fsync(fd) == 0 && close(fd) == 0 ? "" : "cannot write " + path + ": " + strerror(errno);
}

// Under --dataset: per policy, the medians over the runs.
void print_dataset_table(FILE* out, uint64_t bytes, const std::vector<hio_mode>& policies,
                         const std::vector<std::vector<DatasetSample>>& samples) {
  fprintf(out, "\ndataset of %s read into the page cache before every write; after the write, median:\n",
          internal::format_size(bytes).c_str());
  fprintf(out, "%-10s %14s %16s\n", "policy", "still cached", "re-read GB/s");
  for (size_t k = 0; k < policies.size(); ++k) {
    if (samples[k].empty()) continue;
    std::vector<double> kept, gbps;
    for (const DatasetSample& d : samples[k]) kept.push_back(d.kept), gbps.push_back(d.gbps);
    std::sort(kept.begin(), kept.end());
    std::sort(gbps.begin(), gbps.end());
    fprintf(out, "%-10s %13.0f%% %16.3f\n", hio_mode_name(policies[k]), 100 * kept[kept.size() / 2],
            gbps[gbps.size() / 2]);
  }
}

// Under --memory-limit: what the limit did to each policy (median run).
void print_memory_table(FILE* out, const Report& report, uint64_t limit, const std::string& where) {
  fprintf(out, "\nunder a memory limit of %s (%s), median run:\n", internal::format_size(limit).c_str(), where.c_str());
  fprintf(out, "%-10s %-5s %8s %12s %14s %10s\n", "policy", "rw", "GB/s", "limit hits", "memory stall", "OOM kills");
  for (const ResultRow& row : report.rows) {
    if (row.runs.empty()) continue;
    const RunSample& m = row.runs[median_run(row)];
    fprintf(out, "%-10s %-5s %8.3f %12llu %12.2f s %10llu\n", row.policy.c_str(),
            row.op == HIO_OP_WRITE ? "write" : "read", m.gbps(), static_cast<unsigned long long>(m.memory.limit_hits),
            m.memory.stall_s, static_cast<unsigned long long>(m.memory.oom_kills));
  }
}

// The headline the README's main job prints: hybrid against the best fixed
// policy of each phase, and against the page cache alone (buffered); then,
// per phase, why hybrid routed its bytes as it did (its median run).
template <typename RowOf>
void print_headline(FILE* out, const std::vector<hio_mode>& policies, RowOf row_of) {
  struct PhaseResult {
    double hybrid = 0, buffered = 0, best = 0;
    hio_mode best_mode = HIO_MODE_BUFFERED;
    const ResultRow* hybrid_row = nullptr;
    const ResultRow* best_row = nullptr;
  } phase[2];
  for (hio_op op : {HIO_OP_WRITE, HIO_OP_READ}) {
    PhaseResult& r = phase[op];
    for (size_t k = 0; k < policies.size(); ++k) {
      const ResultRow& row = row_of(k, op);
      if (row.runs.empty()) continue;
      const double gbps = median_gbps(row);
      if (policies[k] == HIO_MODE_HYBRID) {
        r.hybrid = gbps;
        r.hybrid_row = &row;
        continue;
      }
      if (policies[k] == HIO_MODE_BUFFERED) r.buffered = gbps;
      if (gbps > r.best) r.best = gbps, r.best_mode = policies[k], r.best_row = &row;
    }
  }
  const PhaseResult &w = phase[HIO_OP_WRITE], &rd = phase[HIO_OP_READ];
  if (w.hybrid > 0 && rd.hybrid > 0 && w.best > 0 && rd.best > 0) {
    fprintf(out, "hybrid vs the best fixed policy: write x%.2f (best: %s, %.2f GB/s), restore x%.2f (best: %s, %.2f GB/s)\n",
            w.hybrid / w.best, hio_mode_name(w.best_mode), w.best, rd.hybrid / rd.best, hio_mode_name(rd.best_mode),
            rd.best);
    // The machine drifts from round to round (20 % within one job on the
    // development VM): the same ratio within each round drifts less.
    const RoundRatios wr = round_ratios(*w.hybrid_row, *w.best_row), rr = round_ratios(*rd.hybrid_row, *rd.best_row);
    if (wr.rounds > 1 && rr.rounds > 1)
      fprintf(out, "  round by round (median [min-max] of %zu): write x%.2f [%.2f-%.2f], restore x%.2f [%.2f-%.2f]\n",
              std::min(wr.rounds, rr.rounds), wr.median, wr.min, wr.max, rr.median, rr.min, rr.max);
  }
  if (w.hybrid > 0 && rd.hybrid > 0 && w.buffered > 0 && rd.buffered > 0)
    fprintf(out, "hybrid vs buffered: write x%.2f, restore x%.2f\n", w.hybrid / w.buffered, rd.hybrid / rd.buffered);
  hio_policy_config cfg;
  hio_policy_get(&cfg);
  for (hio_op op : {HIO_OP_WRITE, HIO_OP_READ}) {
    const ResultRow* row = phase[op].hybrid_row;
    if (!row || row->run_stats.size() != row->runs.size()) continue;
    const std::string why = explain_decisions(row->run_stats[median_run(*row)], op, cfg);
    if (!why.empty()) fprintf(out, "why hybrid %s so: %s\n", op == HIO_OP_WRITE ? "wrote" : "restored", why.c_str());
  }
}

}  // namespace

uint64_t auto_checkpoint_size(const MachineInfo& m, uint64_t extra_bytes) {
  constexpr uint64_t kMin = 256ULL << 20, kSlack = 1ULL << 30;
  const uint64_t dirty_limit = dirty_limit_bytes(m);
  uint64_t size = dirty_limit ? 2 * dirty_limit : 4ULL << 30;
  if (m.free_bytes) {
    const uint64_t room = m.free_bytes / 10 * 8;
    const uint64_t usable = room > kSlack + extra_bytes ? room - kSlack - extra_bytes : 0;
    size = std::min(size, usable);
  }
  return std::max(size, kMin);
}

std::vector<OptionDoc> checkpoint_option_docs() { return describe_options(checkpoint_option_table(), CheckpointOptions{}); }

int checkpoint_command(int argc, char** argv, const char* prog) {
  CheckpointOptions o;
  std::string error;
  int st = parse_command_line(checkpoint_option_table(), argc, argv, &o, nullptr, &error);
  if (st == 1) {
    usage(stdout, prog);
    return 0;
  }
  if (st == 2) {
    fprintf(stderr, "%s: %s\n", prog, error.c_str());
    return 2;
  }
  std::vector<std::string> words;
  for (const char* w : {"hybridio", "bench", "checkpoint"}) words.push_back(w);
  for (int i = 0; i < argc; ++i) words.push_back(argv[i]);
  return run_checkpoint_job(o, words, prog);
}

int run_checkpoint_job(const CheckpointOptions& o, const std::vector<std::string>& argv, const char* prog) {
  struct stat st;
  if (stat(o.directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "%s: --dir %s is not a directory\n", prog, o.directory.c_str());
    return 2;
  }
  if (access(o.directory.c_str(), W_OK) != 0) {
    fprintf(stderr, "%s: --dir %s is not writable\n", prog, o.directory.c_str());
    return 2;
  }
  const ModelPreset& preset = *find_preset(o.preset);
  unsigned ranks = o.ranks ? o.ranks : std::min(preset.mlperf_ranks, kDefaultMaxRanks);
  MachineInfo m = probe_machine(o.directory);
  const uint64_t size = o.size ? o.size : auto_checkpoint_size(m, o.dataset);
  ShardLayout full = shard_layout(preset, 1.0);
  double scale = o.scale > 0 ? o.scale : std::min(1.0, double(size) / (double(full.full_shard_bytes) * ranks));
  ShardLayout layout = shard_layout(preset, scale);
  uint64_t total = layout.bytes * ranks;
  if (m.free_bytes && total + (64ULL << 20) > m.free_bytes) {
    fprintf(stderr, "%s: %s has %.1f GiB free, the checkpoint needs %.1f GiB; use --size or --scale\n", prog,
            o.directory.c_str(), m.free_bytes / double(1ULL << 30), total / double(1ULL << 30));
    return 2;
  }
  uint64_t largest = 0;
  for (const Record& r : layout.records) largest = std::max(largest, r.len);
  uint64_t call = std::min(largest, o.block_size);
  // One buffer per rank for the whole run, touched once, so no phase pays for fresh memory.
  std::vector<std::unique_ptr<PatternBuffer>> bufs;
  for (unsigned r = 0; r < ranks; ++r) {
    bufs.push_back(std::make_unique<PatternBuffer>(call, o.buffer_offset, rank_key(r)));
    if (!bufs.back()->ok()) {
      fprintf(stderr, "%s: cannot allocate a %s buffer per rank\n", prog, internal::format_size(call).c_str());
      return 1;
    }
  }
  // Each rank's calls: records in order, cut at --bs.
  std::vector<IoUnit> units;
  for (const Record& r : layout.records)
    for (uint64_t at = 0; at < r.len; at += call) units.push_back({r.offset + at, std::min(call, r.len - at), HIO_OP_WRITE});
  std::vector<std::string> files;
  for (unsigned r = 0; r < ranks; ++r) files.push_back(shard_path(o, r));

  const std::string dataset_path = o.directory + "/hybridio-dataset." + std::to_string(getpid());
  std::vector<char> dataset_buf(o.dataset ? 4 << 20 : 0);
  std::vector<std::vector<DatasetSample>> dataset_samples(o.policies.size());
  if (o.dataset) {
    if (m.free_bytes && total + o.dataset + (64ULL << 20) > m.free_bytes) {
      fprintf(stderr, "%s: %s has %.1f GiB free, the checkpoint and the dataset need %.1f GiB\n", prog,
              o.directory.c_str(), m.free_bytes / double(1ULL << 30), (total + o.dataset) / double(1ULL << 30));
      return 2;
    }
    const std::string why = make_dataset(dataset_path, o.dataset, dataset_buf);
    if (!why.empty()) {
      unlink(dataset_path.c_str());
      fprintf(stderr, "%s: --dataset: %s\n", prog, why.c_str());
      return 1;
    }
  }
  struct RemoveDataset {
    const std::string& path;
    bool made;
    ~RemoveDataset() {
      if (made) unlink(path.c_str());
    }
  } remove_dataset{dataset_path, o.dataset != 0};

  MemoryCgroup cgroup;
  if (o.memory_limit) {
    const std::string why = cgroup.enter(o.memory_limit);
    if (!why.empty()) {
      fprintf(stderr, "%s: --memory-limit=%s: %s\n", prog, internal::format_size(o.memory_limit).c_str(), why.c_str());
      return 2;
    }
  }

  Report report;
  report.kind = "checkpoint";
  report.argv = argv;
  report.machine = m;
  report.file_bytes = layout.bytes;
  report.cold = "none";

  MeasurePlan plan;
  plan.prog = prog;
  plan.row.job = "checkpoint";
  plan.row.engine = "hybridio";
  plan.row.pattern = "checkpoint";
  plan.row.bs_bytes = call;
  plan.row.threads = ranks;
  plan.policies = o.policies;
  plan.ops = {HIO_OP_WRITE, HIO_OP_READ};
  plan.repeat = o.repeat;
  plan.files = files;
  plan.drop_caches = o.drop_caches;
  plan.remove_files_after_trial = true;
  // Before every write and every restore, the same page-cache memory state
  // for every policy (io_runner.h: warm_page_cache_memory).  Without it, on
  // VMs that hand freed memory back to the host, a buffered restore reuses
  // the pages its own write filled while a policy that wrote direct pays
  // for fresh memory, and the restore comparison measures that instead.
  plan.warm_up_bytes = o.warm_up ? total : 0;
  plan.warm_up_dir = o.directory;
  plan.bytes_per_trial = 2 * total;
  const EngineOps* engine = find_engine("hybridio");
  plan.make_trial = [&](hio_mode mode, unsigned) {
    Phase write;
    write.label = std::string(hio_mode_name(mode)) + " write";
    write.plans.resize(ranks);
    for (unsigned r = 0; r < ranks; ++r) {
      write.plans[r].path = files[r];
      write.plans[r].open_flags = O_WRONLY | O_CREAT | O_TRUNC;
      write.plans[r].units = units;
      write.plans[r].buffer = bufs[r].get();
    }
    write.config.engine = engine;
    write.config.fsync_end = true;  // a checkpoint is written when it is durable
    if (cgroup.active()) write.config.cgroup = &cgroup;
    write.record_as = {HIO_OP_WRITE};
    Phase restore = write;
    if (o.dataset) {
      // Untimed: the dataset is read into the cache right before the write
      // (after the memory warm-up, which would otherwise evict it), and
      // looked at and re-read after it.
      write.last = [&] { load_dataset(dataset_path, dataset_buf); };
      const size_t k = static_cast<size_t>(std::find(o.policies.begin(), o.policies.end(), mode) - o.policies.begin());
      write.check = [&, k] {
        DatasetSample d;
        d.kept = cached_share(dataset_path, o.dataset);
        d.gbps = read_whole(dataset_path, dataset_buf);
        dataset_samples[k].push_back(d);
        return std::string();
      };
    }
    restore.label = std::string(hio_mode_name(mode)) + " restore";
    for (auto& p : restore.plans) {
      p.open_flags = O_RDONLY;
      for (IoUnit& u : p.units) u.op = HIO_OP_READ;
    }
    restore.config.verify_reads = o.verify;
    restore.cold = true;
    restore.record_as = {HIO_OP_READ};
    Trial t;
    t.phases.push_back(std::move(write));
    t.phases.push_back(std::move(restore));
    return t;
  };
  MeasureOutcome measured = measure_policies(plan, m, &report);
  const int rc = measured.status;
  const std::string& warm_up_error = measured.warm_up_error;
  auto row_of = [&](size_t k, hio_op op) -> const ResultRow& {
    return report.rows[measured.first_row + 2 * k + (op == HIO_OP_WRITE ? 0 : 1)];
  };
  if (report.cold == "fadvise")
    for (auto& row : report.rows)
      if (row.op == HIO_OP_READ) row.notes.push_back("not root: only the shards' pages dropped (fadvise)");

  const uint64_t dirty_limit = dirty_limit_bytes(m);
  std::string size_note;
  if (!o.size && o.scale <= 0 && dirty_limit)
    size_note = " (" + internal::format_size(size) + " asked for: " +
                (size >= 2 * dirty_limit ? "twice" : "clamped to the free space; below twice") + " the " +
                internal::format_size(dirty_limit) + " dirty-page limit)";
  char title[1024];
  snprintf(title, sizeof title,
           "Checkpoint %s (MLPerf: %.0f GiB over %u ranks) at scale %.4f: %u rank%s x %.2f GiB shard = %.2f GiB,\n"
           "%u of %u tensor records per shard%s, calls up to %.1f MiB, fsync included; restore %s%s; %s;\n"
           "%s",
           preset.label, preset.mlperf_bytes / double(1ULL << 30), preset.mlperf_ranks, scale, ranks,
           ranks == 1 ? "" : "s", layout.bytes / double(1ULL << 30), total / double(1ULL << 30), layout.tensors_kept,
           layout.tensors_total, size_note.c_str(), call / double(1 << 20),
           o.drop_caches ? "cold (" : "warm", o.drop_caches ? (report.cold + ")").c_str() : "",
           o.repeat > 1 ? ("median [min-max] of " + std::to_string(o.repeat) + " runs").c_str() : "one run",
           o.warm_up ? "before every write and restore, untimed, the same page-cache memory state for every policy "
                       "(a sparse file of the checkpoint's size read and dropped)"
                     : "no page-cache memory warm-up (--no-warm-up): results depend on what ran before");
  FILE* out = o.json_path == "-" ? stderr : stdout;
  print_table(out, report, [&](const std::string&) { return std::string(title); });
  fprintf(out, "GB/s: all ranks' bytes over the time until the slowest rank is done.\n");
  print_headline(out, o.policies, row_of);
  if (cgroup.active()) print_memory_table(out, report, o.memory_limit, cgroup.describe());
  if (o.dataset) print_dataset_table(out, o.dataset, o.policies, dataset_samples);

  report.write_settings = [&](JsonWriter& w) {
    w.begin_array("jobs").begin_object().field("name", "checkpoint").begin_object("settings");
    echo_settings_json(w, checkpoint_option_table(), o);
    w.end_object().end_object().end_array();
  };
  report.write_extra = [&](JsonWriter& w) {
    std::vector<uint64_t> sizes;
    for (const Record& r : layout.records)
      if (r.data) sizes.push_back(r.len);
    std::sort(sizes.begin(), sizes.end());
    w.begin_object("checkpoint")
        .field("preset", preset.name)
        .field("mlperf_bytes", preset.mlperf_bytes)
        .field("mlperf_ranks", preset.mlperf_ranks)
        .field("bytes_per_parameter", 14)
        .field("scale", scale)
        .field("ranks", ranks)
        .field("shard_bytes", layout.bytes)
        .field("full_shard_bytes", full.full_shard_bytes)
        .field("total_bytes", total)
        .field("records_per_shard", static_cast<uint64_t>(layout.records.size()))
        .field("tensor_records_kept", layout.tensors_kept)
        .field("tensor_records_total", layout.tensors_total)
        .field("record_bytes_min", sizes.empty() ? 0 : sizes.front())
        .field("record_bytes_median", sizes.empty() ? 0 : sizes[sizes.size() / 2])
        .field("record_bytes_max", sizes.empty() ? 0 : sizes.back())
        .field("largest_call_bytes", call)
        .field("time_is", "slowest rank (start signal to the last rank's fsync)")
        .field("memory_warm_up_bytes", o.warm_up && warm_up_error.empty() ? total : 0)
        .end_object();
  };
  if (!o.json_path.empty() && !write_report_json(report, o.json_path)) return 1;
  return rc;
}

}  // namespace hybridio::bench
