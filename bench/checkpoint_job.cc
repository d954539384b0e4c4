// checkpoint_job.cc - see checkpoint_job.h.
#include "checkpoint_job.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "progress.h"

namespace hybridio::bench {
namespace {

double cpu_now() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Every 4 KiB of the checkpoint starts with its own file offset, so a
// restore that returns the wrong bytes is caught cheaply.
void stamp(char* block, uint64_t len, uint64_t offset) {
  for (uint64_t at = 0; at + 8 <= len; at += 4096) {
    uint64_t v = offset + at;
    memcpy(block + at, &v, 8);
  }
}

bool stamped(const char* block, uint64_t len, uint64_t offset) {
  for (uint64_t at = 0; at + 8 <= len; at += 4096) {
    uint64_t v;
    memcpy(&v, block + at, 8);
    if (v != offset + at) return false;
  }
  return true;
}

void set_policy(hio_mode mode) {
  hio_policy_config c;
  hio_policy_get(&c);
  c.mode = mode;
  hio_policy_set(&c);
}

void collect_paths(PhaseResult* r, hio_op op) {
  hio_stats s;
  hio_stats_get(&s);
  r->direct_bytes = s.bytes[op][HIO_PATH_DIRECT];
  r->dontcache_bytes = s.bytes[op][HIO_PATH_DONTCACHE];
}

// Drops the file's pages (and the whole page cache when permitted).
std::string make_cold(const std::string& path, bool global) {
  std::string how = "fadvise";
  if (global) {
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      if (write(fd, "3", 1) == 1) how = "drop_caches";
      close(fd);
    }
  }
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
  return how;
}

int write_phase(const CheckpointOptions& o, const std::string& path, char* buf, Progress& progress,
                PhaseResult* r) {
  hio_file* f = nullptr;
  int err = hio_open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644, &f);
  if (err) {
    fprintf(stderr, "hybridio checkpoint: cannot create %s: %s\n", path.c_str(), strerror(-err));
    return err;
  }
  hio_stats_reset();
  double t0 = wall_now(), c0 = cpu_now();
  for (uint64_t off = 0; off < o.size; off += o.block_size) {
    uint64_t len = std::min(o.block_size, o.size - off);
    stamp(buf, len, off);
    ssize_t n = hio_pwrite(f, buf, len, static_cast<off_t>(off));
    if (n != static_cast<ssize_t>(len)) {
      fprintf(stderr, "hybridio checkpoint: write of %s at %llu failed: %s\n", path.c_str(),
              static_cast<unsigned long long>(off), n < 0 ? strerror(static_cast<int>(-n)) : "short write");
      hio_close(f);
      return n < 0 ? static_cast<int>(n) : -EIO;
    }
    progress.advance(len);
  }
  err = hio_fsync(f);  // a checkpoint is written when it is durable
  int cerr = hio_close(f);
  r->seconds = wall_now() - t0;
  r->cpu_seconds = cpu_now() - c0;
  r->bytes = o.size;
  collect_paths(r, HIO_OP_WRITE);
  if (err || cerr) {
    fprintf(stderr, "hybridio checkpoint: fsync/close of %s failed: %s\n", path.c_str(),
            strerror(-(err ? err : cerr)));
    return err ? err : cerr;
  }
  return 0;
}

int restore_phase(const CheckpointOptions& o, const std::string& path, char* buf, Progress& progress,
                  PhaseResult* r) {
  hio_file* f = nullptr;
  int err = hio_open(path.c_str(), O_RDONLY, 0, &f);
  if (err) {
    fprintf(stderr, "hybridio checkpoint: cannot open %s: %s\n", path.c_str(), strerror(-err));
    return err;
  }
  hio_stats_reset();
  double t0 = wall_now(), c0 = cpu_now();
  for (uint64_t off = 0; off < o.size; off += o.block_size) {
    uint64_t len = std::min(o.block_size, o.size - off);
    ssize_t n = hio_pread(f, buf, len, static_cast<off_t>(off));
    if (n != static_cast<ssize_t>(len) || (o.verify && !stamped(buf, len, off))) {
      fprintf(stderr, "hybridio checkpoint: restore of %s at %llu %s\n", path.c_str(),
              static_cast<unsigned long long>(off),
              n < 0 ? strerror(static_cast<int>(-n)) : n != static_cast<ssize_t>(len) ? "came back short"
                                                                                    : "returned wrong data");
      hio_close(f);
      return -EIO;
    }
    progress.advance(len);
  }
  hio_close(f);
  r->seconds = wall_now() - t0;
  r->cpu_seconds = cpu_now() - c0;
  r->bytes = o.size;
  collect_paths(r, HIO_OP_READ);
  return 0;
}

const PhaseResult& median(std::vector<PhaseResult> v, std::vector<PhaseResult>* keep) {
  std::sort(v.begin(), v.end(), [](const PhaseResult& a, const PhaseResult& b) { return a.gbps() < b.gbps(); });
  *keep = v;
  return (*keep)[keep->size() / 2];
}

std::string filesystem_of(const std::string& dir) {
  std::ifstream mounts("/proc/self/mounts");
  std::string dev, mnt, type, opts, best_type, best_mnt;
  char real[4096];
  std::string target = realpath(dir.c_str(), real) ? real : dir;
  while (mounts >> dev >> mnt >> type >> opts) {
    std::string rest;
    std::getline(mounts, rest);
    if (target.compare(0, mnt.size(), mnt) == 0 && mnt.size() >= best_mnt.size()) {
      best_mnt = mnt;
      best_type = type + " on " + dev + " (" + opts + ")";
    }
  }
  return best_type.empty() ? "unknown" : best_type;
}

void print_table(const CheckpointOptions& o, const std::vector<PolicyRuns>& runs, const std::string& cold) {
  printf("\nCheckpoint %.2f GiB in %s requests, fsync included; restore cold (%s); median of %u run%s\n",
         o.size / double(1ULL << 30), o.block_size >= (1 << 20) ? (std::to_string(o.block_size >> 20) + " MiB").c_str()
                                                                : (std::to_string(o.block_size >> 10) + " KiB").c_str(),
         cold.c_str(), o.repeat, o.repeat == 1 ? "" : "s");
  printf("%-10s %12s %14s %9s %12s %14s %9s\n", "policy", "write GB/s", "write CPU s/GB", "direct %",
         "restore GB/s", "restore CPU s/GB", "direct %");
  double base_w = 0, base_r = 0;
  for (const PolicyRuns& p : runs) {
    std::vector<PhaseResult> ws, rs;
    const PhaseResult& w = median(p.writes, &ws);
    const PhaseResult& r = median(p.restores, &rs);
    if (p.policy == HIO_MODE_BUFFERED) {
      base_w = w.gbps();
      base_r = r.gbps();
    }
    printf("%-10s %12.2f %14.3f %8.0f%% %12.2f %16.3f %8.0f%%\n", hio_mode_name(p.policy), w.gbps(),
           w.cpu_per_gb(), 100.0 * w.direct_bytes / std::max<uint64_t>(w.bytes, 1), r.gbps(),
           r.cpu_per_gb(), 100.0 * r.direct_bytes / std::max<uint64_t>(r.bytes, 1));
  }
  if (base_w > 0 && base_r > 0) {
    for (const PolicyRuns& p : runs) {
      if (p.policy != HIO_MODE_HYBRID) continue;
      std::vector<PhaseResult> ws, rs;
      printf("hybrid vs buffered: write x%.2f, restore x%.2f\n", median(p.writes, &ws).gbps() / base_w,
             median(p.restores, &rs).gbps() / base_r);
    }
  }
}

void write_json(const CheckpointOptions& o, const std::vector<PolicyRuns>& runs, const std::string& cold) {
  std::ofstream j(o.json_path);
  utsname u{};
  uname(&u);
  j << "{\n  \"schema\": \"hybridio-checkpoint/1\",\n  \"machine\": {\"kernel\": \"" << u.release
    << "\", \"cpus\": " << sysconf(_SC_NPROCESSORS_ONLN)
    << ", \"memory_bytes\": " << static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE)
    << ", \"filesystem\": \"" << filesystem_of(o.directory) << "\"},\n";
  j << "  \"settings\": {\"size\": " << o.size << ", \"bs\": " << o.block_size << ", \"buffer_offset\": "
    << o.buffer_offset << ", \"repeat\": " << o.repeat << ", \"cold\": \"" << cold << "\"},\n  \"results\": [";
  bool first = true;
  for (const PolicyRuns& p : runs) {
    for (int phase = 0; phase < 2; ++phase) {
      const auto& v = phase ? p.restores : p.writes;
      std::vector<PhaseResult> sorted;
      const PhaseResult& med = median(v, &sorted);
      j << (first ? "\n" : ",\n") << "    {\"policy\": \"" << hio_mode_name(p.policy) << "\", \"rw\": \""
        << (phase ? "read" : "write") << "\", \"bs_bytes\": " << o.block_size
        << ", \"gbps_median\": " << med.gbps() << ", \"gbps_min\": " << sorted.front().gbps()
        << ", \"gbps_max\": " << sorted.back().gbps() << ", \"cpu_s_per_gb\": " << med.cpu_per_gb()
        << ", \"direct_bytes\": " << med.direct_bytes << ", \"dontcache_bytes\": " << med.dontcache_bytes
        << ", \"runs\": " << v.size() << "}";
      first = false;
    }
  }
  j << "\n  ]\n}\n";
}

}  // namespace

int run_checkpoint_job(const CheckpointOptions& o) {
  struct stat st;
  if (stat(o.directory.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "hybridio checkpoint: --dir %s is not a directory\n", o.directory.c_str());
    return 2;
  }
  struct statfs fs{};
  if (statfs(o.directory.c_str(), &fs) == 0 &&
      static_cast<uint64_t>(fs.f_bavail) * fs.f_bsize < o.size + (64ULL << 20)) {
    fprintf(stderr, "hybridio checkpoint: %s has %.1f GiB free, the checkpoint needs %.1f GiB; use --size\n",
            o.directory.c_str(), static_cast<double>(fs.f_bavail) * fs.f_bsize / (1ULL << 30),
            o.size / double(1ULL << 30));
    return 2;
  }
  // One buffer for the whole run, touched once, so no phase pays for fresh memory.
  std::unique_ptr<char, decltype(&free)> raw(nullptr, free);
  void* p = nullptr;
  if (posix_memalign(&p, 1 << 20, o.block_size + o.buffer_offset) != 0) {
    fprintf(stderr, "hybridio checkpoint: cannot allocate a %llu-byte buffer\n",
            static_cast<unsigned long long>(o.block_size));
    return 1;
  }
  raw.reset(static_cast<char*>(p));
  char* buf = raw.get() + o.buffer_offset;
  for (uint64_t i = 0; i < o.block_size; ++i) buf[i] = static_cast<char>(i * 131 + (i >> 12));

  std::string path = o.directory + "/hybridio-checkpoint." + std::to_string(getpid());
  std::vector<PolicyRuns> runs;
  for (hio_mode m : o.policies) runs.push_back({m, {}, {}});
  Progress progress(2 * o.size * o.policies.size() * o.repeat);
  std::string cold = "none";
  // Interleave: every repeat runs every policy, so drift hits all alike, and
  // each repeat starts one policy later, so that none always follows the
  // same neighbour (on VMs, whether page-cache memory was recently freed
  // by the previous run changes buffered throughput a lot).
  for (unsigned rep = 0; rep < o.repeat; ++rep) {
    for (size_t k = 0; k < runs.size(); ++k) {
      PolicyRuns& pr = runs[(k + rep) % runs.size()];
      set_policy(pr.policy);
      progress.set_label(std::string(hio_mode_name(pr.policy)) + " write");
      PhaseResult w, r;
      int err = write_phase(o, path, buf, progress, &w);
      if (!err) {
        if (o.drop_caches) cold = make_cold(path, true);
        progress.set_label(std::string(hio_mode_name(pr.policy)) + " restore");
        err = restore_phase(o, path, buf, progress, &r);
      }
      unlink(path.c_str());
      if (err) {
        progress.finish();
        return 1;
      }
      pr.writes.push_back(w);
      pr.restores.push_back(r);
    }
  }
  progress.finish();
  print_table(o, runs, cold);
  if (!o.json_path.empty()) write_json(o, runs, cold);
  return 0;
}

}  // namespace hybridio::bench
