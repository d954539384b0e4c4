// stale_reader.cc - a restore-like read stream against an adversary: this
// process streams a file with 4 MiB sequential reads (through the library's
// C API, or with plain pread, which the LD_PRELOAD shim intercepts when it
// is preloaded) while stale_writer, a separate process without the library
// or the shim, keeps overwriting, truncating, extending and punching the
// file.  Every read is checked against the writer's log (stale_log.h): no
// byte older than a change that returned before the read began.
//
// Usage: stale_reader --api library|plain --writer PATH --dir DIR
//                     [--seconds N] [--fork]
// --fork: fork once in the middle of a stream; the child keeps
// streaming (and checking) with the same descriptor.
// SIGIO and every realtime signal have counting handlers: none may run.
// Prints one summary line; exit 0 when no stale byte was seen and no
// handler ran, 1 on a stale byte, 2 on a setup failure.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hybridio/hybridio.h"
#include "stale_log.h"

extern char** environ;

using namespace hybridio::adversarial;

namespace {

constexpr uint64_t kRead = 4 << 20;

double now_s() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Signals the program would see: SIGIO and every realtime signal (the
// library's lease notifications must reach none of its handlers).
std::atomic<int> g_signals_seen{0};
void count_signal(int) { g_signals_seen.fetch_add(1); }

[[noreturn]] void die(const char* what) {
  perror(what);
  exit(2);
}

struct Reader {
  bool library = false;
  hio_file* file = nullptr;
  int fd = -1;
  ssize_t pread(void* buf, size_t len, off_t off) {
    if (library) return hio_pread(file, buf, len, off);
    ssize_t n = ::pread(fd, buf, len, off);
    return n < 0 ? -errno : n;
  }
};

struct Totals {
  uint64_t reads = 0, bytes = 0, stale = 0;
};

// One read of [off, off + kRead), checked.  Returns bytes read (0 at EOF).
ssize_t checked_read(Reader& r, StaleLog* log, uint64_t* buf, uint64_t off, Totals& t) {
  uint64_t floor[kBlocks];
  const uint64_t first = off / kBlock, last = (off + kRead) / kBlock;
  for (uint64_t b = first; b < last && b < kBlocks; ++b) floor[b] = log->floor[b].load();
  const ssize_t n = r.pread(buf, kRead, static_cast<off_t>(off));
  if (n < 0) {
    fprintf(stderr, "read at %llu: %s\n", static_cast<unsigned long long>(off), strerror(static_cast<int>(-n)));
    exit(2);
  }
  const uint64_t newest = log->seq.load();
  ++t.reads;
  t.bytes += static_cast<uint64_t>(n);
  for (uint64_t i = 0; i < static_cast<uint64_t>(n) / 8; ++i) {
    const uint64_t b = (off + i * 8) / kBlock;
    const uint64_t w = buf[i];
    const bool ok = w == 0 ? log->zeroed[b].load() >= floor[b] : (w >= floor[b] && w <= newest);
    if (!ok) {
      if (t.stale < 10) {
        uint64_t bad = 0;  // words of the block in this read that are wrong
        for (uint64_t j = i; j < static_cast<uint64_t>(n) / 8 && (off + j * 8) / kBlock == b; ++j)
          bad += buf[j] == w;
        fprintf(stderr,
                "stale byte: read of %llu at %llu returned %lld; offset %llu (block %llu) holds %llu "
                "(%llu words alike), floor %llu, zeroed %llu\n",
                static_cast<unsigned long long>(kRead), static_cast<unsigned long long>(off), static_cast<long long>(n),
                static_cast<unsigned long long>(off + i * 8), static_cast<unsigned long long>(b),
                static_cast<unsigned long long>(w), static_cast<unsigned long long>(bad),
                static_cast<unsigned long long>(floor[b]), static_cast<unsigned long long>(log->zeroed[b].load()));
      }
      ++t.stale;
      i = (b + 1) * kBlock / 8 - off / 8 - 1;  // one report per block
    }
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  std::string api, writer, dir;
  double seconds = 6;
  bool do_fork = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--api" && i + 1 < argc) api = argv[++i];
    else if (a == "--writer" && i + 1 < argc) writer = argv[++i];
    else if (a == "--dir" && i + 1 < argc) dir = argv[++i];
    else if (a == "--seconds" && i + 1 < argc) seconds = atof(argv[++i]);
    else if (a == "--fork") do_fork = true;
    else {
      fprintf(stderr, "usage: stale_reader --api library|plain --writer PATH --dir DIR [--seconds N] [--fork]\n");
      return 2;
    }
  }
  if ((api != "library" && api != "plain") || writer.empty() || dir.empty()) return 2;
  const std::string path = dir + "/restore.bin", log_path = dir + "/restore.log";

  struct sigaction sa{};
  sa.sa_handler = count_signal;
  sa.sa_flags = SA_RESTART;
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; ++sig) sigaction(sig, &sa, nullptr);
  sigaction(SIGIO, &sa, nullptr);

  int lfd = open(log_path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (lfd < 0 || ftruncate(lfd, sizeof(StaleLog)) != 0) die("log");
  auto* log = static_cast<StaleLog*>(mmap(nullptr, sizeof(StaleLog), PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0));
  if (log == MAP_FAILED) die("mmap log");
  close(lfd);

  // The writer runs without the shim: LD_PRELOAD is left out of its environment.
  std::vector<char*> env;
  for (char** e = environ; *e; ++e)
    if (strncmp(*e, "LD_PRELOAD=", 11) != 0) env.push_back(*e);
  env.push_back(nullptr);
  char* wargv[] = {const_cast<char*>(writer.c_str()), const_cast<char*>(path.c_str()),
                   const_cast<char*>(log_path.c_str()), nullptr};
  pid_t wpid;
  if (posix_spawn(&wpid, writer.c_str(), nullptr, nullptr, wargv, env.data()) != 0) die("spawn writer");
  while (!log->ready.load()) usleep(1000);

  Reader r;
  r.library = api == "library";
  if (r.library) {
    if (hio_open(path.c_str(), O_RDONLY, 0, &r.file) != 0) die("hio_open");
  } else if ((r.fd = open(path.c_str(), O_RDONLY)) < 0) {
    die("open");
  }
  uint64_t* buf = nullptr;
  if (posix_memalign(reinterpret_cast<void**>(&buf), 4096, kRead) != 0) die("memalign");

  Totals t;
  const double end = now_s() + seconds;
  pid_t child = -1;
  bool forked = false;
  int dropper = open(path.c_str(), O_RDONLY);
  while (now_s() < end) {
    // Cold passes: what the last pass left in the cache is dropped.
    posix_fadvise(dropper, 0, 0, POSIX_FADV_DONTNEED);
    for (uint64_t off = 0; now_s() < end; off += kRead) {
      if (checked_read(r, log, buf, off, t) <= 0) break;
      // Twelve quiet reads: a window has served some of them, in a forked
      // child (from the seventh on) too.
      if (off == 11 * kRead) log->go.store(1);
      if (do_fork && !forked && off == 6 * kRead) {  // well into a pipelined stream
        forked = true;
        child = fork();
        if (child < 0) die("fork");
        if (child == 0) forked = true;  // the child keeps streaming from here
      }
    }
  }
  if (child == 0) {
    fprintf(stderr, "child: reads %llu, stale %llu, signals %d\n", static_cast<unsigned long long>(t.reads),
            static_cast<unsigned long long>(t.stale), g_signals_seen.load());
    _exit(t.stale ? 1 : (g_signals_seen.load() ? 4 : (t.reads ? 0 : 3)));
  }
  int child_status = 0;
  if (child > 0 && waitpid(child, &child_status, 0) != child) die("wait child");
  log->go.store(1);
  log->stop.store(1);
  int wstatus = 0;
  if (waitpid(wpid, &wstatus, 0) != wpid) die("wait writer");

  hio_stats s{};
  if (r.library) {
    hio_stats_get(&s);
    hio_close(r.file);
  } else {
    close(r.fd);
  }
  printf("api %s: reads %llu (%llu MiB), stale %llu; writer: %llu writes, %llu truncates, %llu punches; "
         "direct reads %llu MiB%s\n",
         api.c_str(), static_cast<unsigned long long>(t.reads), static_cast<unsigned long long>(t.bytes >> 20),
         static_cast<unsigned long long>(t.stale), static_cast<unsigned long long>(log->writes.load()),
         static_cast<unsigned long long>(log->truncates.load()), static_cast<unsigned long long>(log->punches.load()),
         static_cast<unsigned long long>(s.bytes[HIO_OP_READ][HIO_PATH_DIRECT] >> 20),
         r.library ? "" : " (library counters: see the shim's stats)");
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    fprintf(stderr, "writer failed (status %d)\n", wstatus);
    return 2;
  }
  if (child > 0 && (!WIFEXITED(child_status) || WEXITSTATUS(child_status) != 0)) {
    fprintf(stderr, "forked child failed (status %d)\n", child_status);
    return 1;
  }
  if (t.stale) return 1;
  if (g_signals_seen.load()) {
    fprintf(stderr, "the program's handlers saw %d signals (SIGIO or realtime)\n", g_signals_seen.load());
    return 1;
  }
  if (log->writes.load() == 0 || log->truncates.load() == 0 || log->punches.load() == 0) {
    fprintf(stderr, "the writer did not change the file in every way\n");
    return 2;
  }
  return 0;
}
