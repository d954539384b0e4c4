// bench_runner.cc - see bench_runner.h.
#include "bench_runner.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <random>

#include "hybridio_internal/settings_text.h"
#include "measure_loop.h"

namespace hybridio::bench {
namespace {

constexpr uint64_t kMaxUnitsPerThread = 16u << 20;

std::string file_of(const BenchJob& j, unsigned t) {
  if (!j.filename.empty()) return j.filename;
  return j.directory + "/" + j.name + "." + std::to_string(t) + ".0";
}

uint64_t base_of(const BenchJob& j, unsigned t) { return j.filename.empty() ? 0 : uint64_t{t} * j.size; }

uint64_t key_of(const BenchJob& j, unsigned t) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : j.name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h ^ (j.filename.empty() ? (uint64_t{t} + 1) << 40 : 0);
}

std::vector<IoUnit> units_for(const BenchJob& j, unsigned t, unsigned rep) {
  uint64_t count = j.size / j.bs, base = base_of(j, t);
  std::vector<IoUnit> u;
  u.reserve(count);
  std::mt19937_64 rng(0x5eed0000ULL + t * 7919ULL + rep * 104729ULL);
  for (uint64_t i = 0; i < count; ++i) {
    hio_op op = rw_writes(j.rw) ? HIO_OP_WRITE : HIO_OP_READ;
    if (j.rw == RwMode::kReadWrite) op = (rng() % 100) < j.rwmixread ? HIO_OP_READ : HIO_OP_WRITE;
    u.push_back({base + i * j.bs, j.bs, op});
  }
  if (rw_random(j.rw)) std::shuffle(u.begin(), u.end(), rng);  // every block once, in random order
  return u;
}

const char* pattern_of(RwMode m) {
  return m == RwMode::kReadWrite ? "mixed" : rw_random(m) ? "random" : "sequential";
}

// Writes every thread's file or region with the verifiable content (not
// timed), through the library with the direct policy when it can.
std::string lay_out(const BenchJob& j, std::vector<std::unique_ptr<PatternBuffer>>& bufs) {
  set_library_policy(HIO_MODE_DIRECT, 0);
  const EngineOps* e = find_engine("hybridio");
  std::vector<ThreadPlan> plans;
  for (unsigned t = 0; t < j.numjobs; ++t) {
    ThreadPlan p;
    p.path = file_of(j, t);
    p.open_flags = O_WRONLY | O_CREAT;
    p.buffer = bufs[t].get();
    for (uint64_t off = 0; off < j.size; off += j.bs) p.units.push_back({base_of(j, t) + off, j.bs, HIO_OP_WRITE});
    plans.push_back(std::move(p));
  }
  RunConfig cfg;
  cfg.engine = e;
  RunOutcome r = run_threads(plans, cfg);
  return r.error;
}

void prepare_for_write(const BenchJob& j) {
  for (unsigned t = 0; t < (j.filename.empty() ? j.numjobs : 1u); ++t) {
    int fd = open(file_of(j, t).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) continue;  // the run's open reports it
    if (rw_random(j.rw) && ftruncate(fd, static_cast<off_t>(base_of(j, j.numjobs - 1) + j.size)) != 0) {
    }
    close(fd);
  }
}

}  // namespace

int run_bench_job(const BenchJob& j, const MachineInfo& m, Report* report) {
  const char* prog = "hybridio bench";
  std::string error;
  if (!validate_job(j, &error)) {
    fprintf(stderr, "%s: %s\n", prog, error.c_str());
    return 2;
  }
  if (j.size / j.bs > kMaxUnitsPerThread) {
    fprintf(stderr, "%s: job %s: %llu calls per thread is too many; use a larger --bs\n", prog, j.name.c_str(),
            static_cast<unsigned long long>(j.size / j.bs));
    return 2;
  }
  uint64_t need = j.size * j.numjobs;
  if (m.free_bytes && need + (64ULL << 20) > m.free_bytes) {
    fprintf(stderr, "%s: job %s needs %s in %s, which has %s free; use a smaller --size or --numjobs\n", prog,
            j.name.c_str(), internal::format_size(need).c_str(), j.filename.empty() ? j.directory.c_str() : j.filename.c_str(),
            internal::format_size(m.free_bytes).c_str());
    return 2;
  }
  const EngineOps* engine = find_engine(j.ioengine);
  std::vector<hio_mode> policies = engine->routes_by_policy ? j.policies : std::vector<hio_mode>{HIO_MODE_BUFFERED};

  std::vector<hio_op> ops;
  if (rw_reads(j.rw)) ops.push_back(HIO_OP_READ);
  if (rw_writes(j.rw)) ops.push_back(HIO_OP_WRITE);

  std::vector<std::unique_ptr<PatternBuffer>> bufs;
  for (unsigned t = 0; t < j.numjobs; ++t) {
    bufs.push_back(std::make_unique<PatternBuffer>(j.bs, j.buffer_offset, key_of(j, t)));
    if (!bufs.back()->ok()) {
      fprintf(stderr, "%s: cannot allocate a %s buffer per thread\n", prog, internal::format_size(j.bs).c_str());
      return 2;
    }
  }
  std::vector<std::string> files;
  for (unsigned t = 0; t < (j.filename.empty() ? j.numjobs : 1u); ++t) files.push_back(file_of(j, t));
  auto cleanup = [&] {
    if (!j.keep_files)
      for (const auto& f : files) unlink(f.c_str());
  };

  if (rw_reads(j.rw)) {
    if (!j.filename.empty()) {
      int fd = open(j.filename.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0) {
        fprintf(stderr, "%s: cannot create %s: %s\n", prog, j.filename.c_str(), strerror(errno));
        return 2;
      }
      close(fd);
    }
    fprintf(stderr, "%s: job %s: laying out %s (not timed)\n", prog, j.name.c_str(), internal::format_size(need).c_str());
    std::string err = lay_out(j, bufs);
    if (!err.empty()) {
      fprintf(stderr, "%s: job %s: cannot lay out the files: %s\n", prog, j.name.c_str(), err.c_str());
      cleanup();
      return 2;
    }
    if (j.inject_corruption >= 0) corrupt_byte(files[0], static_cast<uint64_t>(j.inject_corruption));
  }

  MeasurePlan plan;
  plan.prog = prog;
  plan.context = "job " + j.name + ", ";
  plan.row.job = j.name;
  plan.row.engine = engine->name;
  plan.row.pattern = pattern_of(j.rw);
  plan.row.bs_bytes = j.bs;
  plan.row.threads = j.numjobs;
  if (!engine->routes_by_policy) plan.row.notes.push_back("psync: plain calls, no library");
  plan.policies = policies;
  plan.ops = ops;
  plan.routes_by_policy = engine->routes_by_policy;
  plan.repeat = j.repeat;
  plan.queue_depth = j.iodepth;
  plan.files = files;
  plan.drop_caches = j.drop_caches;
  // A page the guest has not used lately costs a host fault on first touch
  // on a VM with free page reporting: without the warm-up a buffered run
  // was as fast as the memory the previous policy's run had just freed
  // (64 KiB cold reads: buffered 0.62-1.72 GB/s, hybrid's buffered reads
  // after the direct and uncached runs 0.60-0.68).  No run fills more
  // page cache than the machine has (a --runtime job may name any size).
  plan.warm_up_bytes = !j.warm_up ? 0 : m.memory_bytes ? std::min(need, m.memory_bytes) : need;
  plan.warm_up_dir = dir_of(j);
  plan.bytes_per_trial = need;
  plan.make_trial = [&](hio_mode mode, unsigned rep) {
    Phase run;
    run.label = j.name + " " + hio_mode_name(mode);
    for (unsigned t = 0; t < j.numjobs; ++t) {
      ThreadPlan p;
      p.path = file_of(j, t);
      p.open_flags = j.rw == RwMode::kReadWrite ? O_RDWR : rw_writes(j.rw) ? O_WRONLY | O_CREAT : O_RDONLY;
      p.units = units_for(j, t, rep);
      p.buffer = bufs[t].get();
      run.plans.push_back(std::move(p));
    }
    if (rw_writes(j.rw) && j.rw != RwMode::kReadWrite) run.before = [&] { prepare_for_write(j); };
    run.cold = true;  // --drop-caches: before every run
    run.config.engine = engine;
    run.config.fsync_each = j.fsync == FsyncMode::kEach;
    run.config.fsync_end = j.fsync == FsyncMode::kEnd;
    run.config.runtime = j.runtime;
    run.config.verify_reads = j.verify && rw_reads(j.rw);
    run.record_as = ops;
    if (j.verify && rw_writes(j.rw))
      run.check = [&]() -> std::string {
        if (j.inject_corruption >= 0) corrupt_byte(files[0], base_of(j, 0) + static_cast<uint64_t>(j.inject_corruption));
        drop_caches(files);  // read back from the device, not from the cache the writes left
        uint64_t done = j.runtime > 0 ? 0 : j.size;  // a run stopped by --runtime wrote a prefix only
        for (unsigned t = 0; t < j.numjobs && done; ++t) {
          std::string why;
          if (!verify_file_range(file_of(j, t), base_of(j, t), done, j.bs, *bufs[t], &why)) return "verify: " + why;
        }
        return "";
      };
    Trial trial;
    trial.phases.push_back(std::move(run));
    return trial;
  };
  MeasureOutcome measured = measure_policies(plan, m, report);
  const int rc = measured.status;
  auto row_of = [&](size_t pi, hio_op op) -> ResultRow& {
    return report->rows[measured.first_row + pi * ops.size() + (op == ops[0] ? 0 : 1)];
  };
  if (engine->routes_by_policy && !m.o_direct)
    for (size_t pi = 0; pi < policies.size(); ++pi)
      if (policies[pi] == HIO_MODE_HYBRID)
        for (hio_op op : ops) row_of(pi, op).notes.push_back("no O_DIRECT here: hybrid can only choose buffered or dontcache");
  // What the counters say about each measured row.
  for (size_t pi = 0; pi < policies.size(); ++pi)
    for (hio_op op : ops) {
      ResultRow& row = row_of(pi, op);
      if (row.run_stats.empty()) continue;
      const hio_stats& s = row.run_stats.back();
      if (s.direct_open_refused || s.direct_io_refused) row.notes.push_back("O_DIRECT refused: served buffered");
      if (s.dontcache_refused) row.notes.push_back("RWF_DONTCACHE refused: served buffered");
      if (j.runtime > 0) row.notes.push_back("stopped by --runtime");
    }
  if (rw_writes(j.rw) && j.fsync == FsyncMode::kNone) {
    uint64_t limit = dirty_limit_bytes(m);
    if (limit && need < limit)
      for (size_t i = measured.first_row; i < report->rows.size(); ++i)
        if (report->rows[i].op == HIO_OP_WRITE && report->rows[i].status == "ok")
          report->rows[i].notes.push_back("no fsync and under the dirty limit: page-cache speed, not the device's");
  }
  cleanup();
  return rc;
}

}  // namespace hybridio::bench
