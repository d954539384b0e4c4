// io_runner.cc - see io_runner.h.
#include "io_runner.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "clock.h"

namespace hybridio::bench {
namespace {

struct ThreadState {
  uint64_t bytes[2] = {0, 0}, ios[2] = {0, 0};
  LatencyHistogram latency[2];
  double seconds = 0;
  double end = 0;  // absolute, now_s()
  std::string error;
};

std::string describe(const char* what, const std::string& path, uint64_t off, ssize_t n, uint64_t len) {
  char b[512];
  snprintf(b, sizeof b, "%s of %" PRIu64 " bytes at %" PRIu64 " in %s %s", what, len, off, path.c_str(),
           n < 0 ? strerror(static_cast<int>(-n)) : "came back short");
  return b;
}

}  // namespace

RunOutcome run_threads(const std::vector<ThreadPlan>& plans, const RunConfig& cfg) {
  RunOutcome out;
  const size_t n = plans.size();
  std::vector<ThreadState> st(n);
  std::vector<void*> handles(n, nullptr);
  for (size_t t = 0; t < n; ++t) {
    int err = cfg.engine->open(plans[t].path.c_str(), plans[t].open_flags, &handles[t]);
    if (err) {
      out.error = "cannot open " + plans[t].path + ": " + strerror(-err);
      for (size_t k = 0; k < t; ++k) cfg.engine->close(handles[k]);
      return out;
    }
  }
  std::atomic<bool> go{false}, stop{false};
  std::atomic<uint64_t> progress_bytes{0};
  std::atomic<size_t> running{n};
  double deadline_s = cfg.runtime;

  auto body = [&](size_t t) {
    const ThreadPlan& p = plans[t];
    ThreadState& s = st[t];
    void* h = handles[t];
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    double t0 = now_s();
    bool wrote = false;
    std::string why;
    for (const IoUnit& u : p.units) {
      if (stop.load(std::memory_order_relaxed)) break;
      if (deadline_s > 0 && now_s() - t0 >= deadline_s) break;
      ssize_t r;
      if (u.op == HIO_OP_WRITE) {
        p.buffer->stamp_for(u.offset, u.len);
        uint64_t a = now_ns();
        r = cfg.engine->pwrite(h, p.buffer->data(), u.len, static_cast<off_t>(u.offset));
        if (r == static_cast<ssize_t>(u.len) && cfg.fsync_each) {
          int e = cfg.engine->fsync(h);
          if (e) r = e;
        }
        s.latency[HIO_OP_WRITE].add(now_ns() - a);
        wrote = true;
      } else {
        uint64_t a = now_ns();
        r = cfg.engine->pread(h, p.buffer->data(), u.len, static_cast<off_t>(u.offset));
        p.buffer->mark_clobbered();
        s.latency[HIO_OP_READ].add(now_ns() - a);
        if (r == static_cast<ssize_t>(u.len) && cfg.verify_reads &&
            !p.buffer->check(p.buffer->data(), u.offset, u.len, &why)) {
          s.error = "verify: " + p.path + ": " + why;
          stop = true;
          break;
        }
      }
      if (r != static_cast<ssize_t>(u.len)) {
        s.error = describe(u.op == HIO_OP_WRITE ? "write" : "read", p.path, u.offset, r, u.len);
        stop = true;
        break;
      }
      s.bytes[u.op] += u.len;
      ++s.ios[u.op];
      progress_bytes.fetch_add(u.len, std::memory_order_relaxed);
    }
    if (wrote && cfg.fsync_end && s.error.empty()) {
      int e = cfg.engine->fsync(h);  // a write counts as done when it is durable
      if (e) s.error = "fsync of " + p.path + ": " + strerror(-e);
    }
    s.end = now_s();
    s.seconds = s.end - t0;
    running.fetch_sub(1);
  };

  for (const ThreadPlan& p : plans) p.buffer->refresh();  // not inside the timing
  double u0, s0, u1, s1;
  hio_stats_reset();
  std::vector<std::thread> threads;
  for (size_t t = 0; t < n; ++t) threads.emplace_back(body, t);
  const int64_t cached_before = page_cache_bytes();
  const MemoryEvents memory_before = memory_events_now(cfg.cgroup);
  cpu_times(&u0, &s0, false);
  double t0 = now_s();
  go.store(true, std::memory_order_release);
  uint64_t shown = 0;
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(cfg.progress ? 20 : 5));
    uint64_t b = progress_bytes.load(std::memory_order_relaxed);
    if (cfg.progress) cfg.progress->advance(b - shown);
    shown = b;
  }
  for (auto& th : threads) th.join();
  // Wall time: from the start signal to the last thread's end (not to
  // when this thread noticed).
  double last = t0;
  for (const ThreadState& s : st) last = std::max(last, s.end);
  out.seconds = last - t0;
  cpu_times(&u1, &s1, false);
  if (cfg.progress) cfg.progress->advance(progress_bytes.load() - shown);
  for (size_t t = 0; t < n; ++t) {
    int e = cfg.engine->close(handles[t]);
    if (e && st[t].error.empty()) st[t].error = "close of " + plans[t].path + ": " + strerror(-e);
  }
  out.page_cache_growth = page_cache_bytes() - cached_before;
  out.memory = memory_events_now(cfg.cgroup).since(memory_before);
  hio_stats_get(&out.stats);
  out.usr_s = u1 - u0;
  out.sys_s = s1 - s0;
  for (size_t t = 0; t < n; ++t) {
    for (int op = 0; op < 2; ++op) {
      out.bytes[op] += st[t].bytes[op];
      out.ios[op] += st[t].ios[op];
      out.latency[op].merge(st[t].latency[op]);
    }
    out.thread_seconds.push_back(st[t].seconds);
    out.slowest_thread_s = std::max(out.slowest_thread_s, st[t].seconds);
    if (out.error.empty() && !st[t].error.empty()) out.error = st[t].error;
  }
  return out;
}

int64_t page_cache_bytes() {
  FILE* f = fopen("/proc/meminfo", "re");
  if (!f) return 0;
  char line[256];
  long long kb = 0;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "Cached: %lld kB", &kb) == 1) break;
  fclose(f);
  return static_cast<int64_t>(kb) * 1024;
}

std::string drop_caches(const std::vector<std::string>& files) {
  std::string how = "fadvise";
  sync();
  // HYBRIDIO_BENCH_COLD=files: only the job's own files, for runs beside
  // other work (the test suite: a global drop empties the cache another
  // test has just filled on purpose).
  const char* scope = getenv("HYBRIDIO_BENCH_COLD");
  const bool whole_machine = !scope || strcmp(scope, "files") != 0;
  int fd = whole_machine ? open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC) : -1;
  if (fd >= 0) {
    if (write(fd, "3", 1) == 1) how = "drop_caches";
    close(fd);
  }
  for (const std::string& f : files) {
    int ffd = open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (ffd < 0) continue;
    fdatasync(ffd);
    posix_fadvise(ffd, 0, 0, POSIX_FADV_DONTNEED);
    close(ffd);
  }
  return how;
}

std::string warm_page_cache_memory(const std::string& dir, uint64_t bytes) {
  char name[64];
  snprintf(name, sizeof name, "/.hybridio-warm-up.%d", static_cast<int>(getpid()));
  std::string path = dir + name;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return "cannot create " + path + ": " + strerror(errno);
  unlink(path.c_str());  // the pages stay until the descriptor is closed
  std::string why;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) why = std::string("ftruncate: ") + strerror(errno);
  constexpr size_t kChunk = 8u << 20;
  std::vector<char> buf(why.empty() ? kChunk : 0);
  for (uint64_t at = 0; at < bytes && why.empty(); at += kChunk) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, bytes - at));
    ssize_t r = pread(fd, buf.data(), n, static_cast<off_t>(at));
    if (r != static_cast<ssize_t>(n)) why = "read: " + std::string(r < 0 ? strerror(errno) : "short");
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  close(fd);  // frees the file and any page left
  return why;
}

void set_library_policy(hio_mode mode, unsigned queue_depth) {
  hio_policy_config c;
  hio_policy_get(&c);
  c.mode = mode;
  hio_policy_set(&c);
  if (queue_depth > 0) {
    hio_engine_config e;
    hio_engine_get(&e);
    e.queue_depth = queue_depth;
    hio_engine_set(&e);
  }
}

bool verify_file_range(const std::string& path, uint64_t offset, uint64_t len, uint64_t bs,
                       const PatternBuffer& pattern, std::string* why) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *why = "cannot open " + path + ": " + strerror(errno);
    return false;
  }
  std::vector<char> buf(bs);
  bool ok = true;
  for (uint64_t at = 0; at < len && ok; at += bs) {
    uint64_t n = std::min(bs, len - at);
    ssize_t r = pread(fd, buf.data(), n, static_cast<off_t>(offset + at));
    if (r != static_cast<ssize_t>(n)) {
      *why = describe("read-back", path, offset + at, r < 0 ? -errno : r, n);
      ok = false;
    } else if (!pattern.check(buf.data(), offset + at, n, why)) {
      *why = path + ": " + *why;
      ok = false;
    }
  }
  close(fd);
  return ok;
}

bool corrupt_byte(const std::string& path, uint64_t offset) {
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  char c;
  bool ok = pread(fd, &c, 1, static_cast<off_t>(offset)) == 1;
  c = static_cast<char>(c ^ 0x01);
  ok = ok && pwrite(fd, &c, 1, static_cast<off_t>(offset)) == 1 && fsync(fd) == 0;
  close(fd);
  return ok;
}

}  // namespace hybridio::bench
