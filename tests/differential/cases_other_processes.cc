// cases_other_processes.cc - what other processes, and the program's own
// leases, signals, descriptors and forks, can tell of a program that streams
// large reads (issue 58, items 0-4).
//
// "Another process" here is a process without the shim: hio_diff re-runs
// itself (`hio_diff --plain-helper ...`, run_plain_helper()) through a raw
// execve with LD_PRELOAD taken out of its environment.  Every wait is
// bounded (alarm in the waiting process), so that a stall shows as a line
// that differs from plain, never as a hang.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "diff_case.h"
#include "io_helpers.h"

extern char** environ;

namespace hio_diff {
namespace {

constexpr size_t kCall = 8 * kMiB;

// A file of `size` bytes of pattern `tag`, written back and out of the page
// cache, so that every mode reads it off the cache.
bool make_cold_file(const std::string& path, size_t size, uint32_t tag) {
  if (!make_pattern_file(path, size, tag)) return false;
  int fd = raw_open(path, O_RDONLY);
  if (fd < 0) return false;
  syscall(SYS_fdatasync, fd);
  syscall(SYS_fadvise64, fd, 0, 0, POSIX_FADV_DONTNEED);
  raw_close(fd);
  return true;
}

// Reads `calls` calls of kCall from `off` on; true when each read returned
// the file's pattern in full.
bool stream(int fd, char* buf, off_t off, int calls, uint32_t tag) {
  for (int i = 0; i < calls; ++i, off += static_cast<off_t>(kCall)) {
    ssize_t n = pread(fd, buf, kCall, off);
    if (n != static_cast<ssize_t>(kCall) || !has_pattern(buf, kCall, tag, static_cast<uint64_t>(off))) return false;
  }
  return true;
}

void on_alarm(int) {}

// Starts hio_diff again without the shim, as `hio_diff --plain-helper
// args...`, and waits for it: how it ended.
std::string run_plain_helper(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid < 0) return "fork-failed";
  if (pid == 0) {
    std::vector<char*> argv;
    static char self[] = "hio_diff", flag[] = "--plain-helper";
    argv.push_back(self);
    argv.push_back(flag);
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<char*> env;
    for (char** e = environ; *e; ++e)
      if (strncmp(*e, "LD_PRELOAD=", 11) != 0) env.push_back(*e);
    env.push_back(nullptr);
    syscall(SYS_execve, "/proc/self/exe", argv.data(), env.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return "wait-failed";
  return how_ended(status);
}

// Another process opens `path` for writing (O_NONBLOCK when asked), with
// `seconds` to do it: prints KEY=<result of the open>.
std::string other_open(const std::string& key, const std::string& path, bool nonblock, int seconds) {
  return run_plain_helper({"open-write", key, path, nonblock ? "1" : "0", std::to_string(seconds)});
}

}  // namespace

int plain_helper_main(int argc, char** argv) {
  // hio_diff --plain-helper open-write KEY PATH NONBLOCK SECONDS
  if (argc == 7 && strcmp(argv[2], "open-write") == 0) {
    if (getenv("LD_PRELOAD")) return 3;  // the helper must run without the shim
    struct sigaction sa {};
    sa.sa_handler = on_alarm;  // no SA_RESTART: a blocked open returns EINTR
    sigaction(SIGALRM, &sa, nullptr);
    alarm(static_cast<unsigned>(atoi(argv[6])));
    const int flags = O_WRONLY | (argv[5][0] == '1' ? O_NONBLOCK : 0);
    const long fd = syscall(SYS_openat, AT_FDCWD, argv[4], flags);
    const int err = errno;
    alarm(0);
    Transcript out;
    out.put(argv[3], fd >= 0 ? std::string("opened") : rv(fd, err));
    if (fd >= 0) raw_close(static_cast<int>(fd));
    return 0;
  }
  return 2;
}

// Item 1: a process without the shim opens the file O_WRONLY|O_NONBLOCK
// between a program's large reads of it, and gets a descriptor at once.
HIO_DIFF_CASE(other_open_nonblock, "58.1",
              "another process (no shim) opens O_WRONLY|O_NONBLOCK a file streamed in 8 MiB reads") {
  constexpr size_t kFile = 64 * kMiB;
  const std::string path = opt.path("streamed");
  if (!make_cold_file(path, kFile, 3)) return harness_failure("make_cold_file");
  Mapping buf(kCall);
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0 || !buf.ok()) return harness_failure("open/mmap");
  out.put("first_reads", stream(fd, buf.data(), 0, 3, 3));
  out.put("helper", other_open("other_open", path, true, 5));
  out.put("rest_reads", stream(fd, buf.data(), 3 * kCall, 5, 3));
  out.put("helper2", other_open("other_open_again", path, true, 5));
  out.put("close", rv(close(fd), errno));
  out.put("digest", file_digest(path));
  return kRan;
}

// Item 1: the streaming process is stopped (SIGSTOP) between its reads;
// another process's blocking O_WRONLY open returns at once.
HIO_DIFF_CASE(other_open_reader_stopped, "58.1",
              "the streaming process is stopped; another process (no shim) opens O_WRONLY within 5 s") {
  constexpr size_t kFile = 64 * kMiB;
  const std::string path = opt.path("stopped");
  if (!make_cold_file(path, kFile, 4)) return harness_failure("make_cold_file");
  pid_t reader = fork();
  if (reader < 0) return harness_failure("fork");
  if (reader == 0) {
    Mapping buf(kCall);
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0 || !buf.ok() || !stream(fd, buf.data(), 0, 3, 4)) _exit(1);
    raise(SIGSTOP);
    const bool rest = stream(fd, buf.data(), 3 * kCall, 5, 4);
    close(fd);
    _exit(rest ? 0 : 2);
  }
  int status = 0;
  while (waitpid(reader, &status, WUNTRACED) < 0)
    if (errno != EINTR) return harness_failure("waitpid");
  out.put("reader_stopped", WIFSTOPPED(status) ? 1 : 0);
  out.put("helper", other_open("other_open_blocking", path, false, 5));
  kill(reader, SIGCONT);
  while (waitpid(reader, &status, 0) < 0)
    if (errno != EINTR) return harness_failure("waitpid");
  out.put("reader", how_ended(status));
  out.put("digest", file_digest(path));
  return kRan;
}

namespace {

int sleeping_clone(void*) {
  // Holds copies of its parent's descriptors until killed.
  for (;;) pause();
  return 0;
}

}  // namespace

// Item 1: a reader that exits leaving a clone() child (a copy of its
// descriptor table); another process's O_WRONLY open returns at once.
HIO_DIFF_CASE(other_open_after_clone, "58.1",
              "a reader exits leaving a clone() child; another process (no shim) opens O_WRONLY within 5 s") {
  constexpr size_t kFile = 64 * kMiB;
  const std::string path = opt.path("cloned");
  if (!make_cold_file(path, kFile, 5)) return harness_failure("make_cold_file");
  int pipefd[2];
  if (pipe(pipefd) != 0) return harness_failure("pipe");
  pid_t reader = fork();
  if (reader < 0) return harness_failure("fork");
  if (reader == 0) {
    Mapping buf(kCall);
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0 || !buf.ok() || !stream(fd, buf.data(), 0, 3, 5)) _exit(1);
    static char stack[64 * 1024];
    // A plain clone: the child gets a copy of the descriptor table, and
    // its exit signal goes to nobody that waits (it is killed below).
    const pid_t child = clone(sleeping_clone, stack + sizeof stack, 0, nullptr);
    if (child < 0) _exit(3);
    if (write(pipefd[1], &child, sizeof child) != sizeof child) _exit(4);
    _exit(0);  // the descriptor stays open in the clone
  }
  close(pipefd[1]);
  pid_t child = -1;
  const bool got = read(pipefd[0], &child, sizeof child) == sizeof child;
  close(pipefd[0]);
  int status = 0;
  while (waitpid(reader, &status, 0) < 0)
    if (errno != EINTR) return harness_failure("waitpid");
  out.put("reader", how_ended(status));
  out.put("clone_started", got && child > 0 ? 1 : 0);
  out.put("helper", other_open("other_open_blocking", path, false, 5));
  if (got && child > 0) kill(child, SIGKILL);
  out.put("digest", file_digest(path));
  return kRan;
}

// Item 2: the program's own write lease while it reads the file in 8 MiB
// calls, with SIGIO's default disposition: the reads return, the lease is
// kept, and it can be taken again.
HIO_DIFF_CASE(own_write_lease, "58.2",
              "the program's write lease (default SIGIO) while it reads in 8 MiB calls; F_GETLEASE, F_SETLEASE again") {
  constexpr size_t kFile = 64 * kMiB;
  const std::string path = opt.path("leased");
  if (!make_cold_file(path, kFile, 6)) return harness_failure("make_cold_file");
  for (int access : {O_RDONLY, O_RDWR}) {
    const std::string a = access == O_RDONLY ? "rdonly" : "rdwr";
    const std::string ended = run_in_child([&]() -> int {
      signal(SIGIO, SIG_DFL);
      alarm(20);  // a stalled read ends the child with SIGALRM
      Mapping buf(kCall);
      int fd = open(path.c_str(), access);
      if (fd < 0 || !buf.ok()) return 10;
      out.put(a + ".setlease", rv(fcntl(fd, F_SETLEASE, F_WRLCK), errno));
      out.put(a + ".getlease", rv(fcntl(fd, F_GETLEASE), errno));
      for (int i = 0; i < 8; ++i) {
        const off_t off = static_cast<off_t>(i) * static_cast<off_t>(kCall);
        const ssize_t n = pread(fd, buf.data(), kCall, off);
        out.put(a + ".read." + std::to_string(i),
                rv(n, errno) + (n == static_cast<ssize_t>(kCall) && has_pattern(buf.data(), kCall, 6, off) ? ":ok" : ":bad"));
      }
      out.put(a + ".getlease_after", rv(fcntl(fd, F_GETLEASE), errno));
      out.put(a + ".unlock", rv(fcntl(fd, F_SETLEASE, F_UNLCK), errno));
      out.put(a + ".setlease_again", rv(fcntl(fd, F_SETLEASE, F_WRLCK), errno));
      out.put(a + ".getlease_again", rv(fcntl(fd, F_GETLEASE), errno));
      out.put(a + ".unlock_again", rv(fcntl(fd, F_SETLEASE, F_UNLCK), errno));
      close(fd);
      return 0;
    });
    out.put(a + ".child", ended);
  }
  return kRan;
}

namespace {

struct SigwaitState {
  sigset_t set;
  std::atomic<int> got{0};
  std::atomic<int> with_value{0};
};

void* sigwait_thread(void* p) {
  auto* s = static_cast<SigwaitState*>(p);
  const timespec limit = {5, 0};
  while (s->got.load() < 20) {
    siginfo_t info;
    const int sig = sigtimedwait(&s->set, &info, &limit);
    if (sig < 0) {
      if (errno == EINTR) continue;
      break;  // 5 s without one: the rest were lost
    }
    s->got.fetch_add(1);
    if (info.si_code == SI_QUEUE && info.si_value.sival_int == 58) s->with_value.fetch_add(1);
  }
  return nullptr;
}

}  // namespace

// Item 3: a thread receives with sigwait every kill() and sigqueue() of
// SIGRTMAX-3 while another thread streams large reads.
HIO_DIFF_CASE(sigwait_rtmax3, "58.3",
              "a sigwait thread receives 10 kill()s and 10 sigqueue()s of SIGRTMAX-3 while a thread streams reads") {
  constexpr size_t kFile = 64 * kMiB;
  const std::string path = opt.path("signals");
  if (!make_cold_file(path, kFile, 7)) return harness_failure("make_cold_file");
  const std::string ended = run_in_child([&]() -> int {
    SigwaitState s;
    sigemptyset(&s.set);
    sigaddset(&s.set, SIGRTMAX - 3);
    pthread_sigmask(SIG_BLOCK, &s.set, nullptr);  // before any thread: every thread blocks it
    int fd = open(path.c_str(), O_RDONLY);
    Mapping buf(kCall);
    if (fd < 0 || !buf.ok()) return 10;
    std::atomic<int> reads{0};
    std::atomic<bool> ok{true};
    std::thread reader([&] {
      for (int pass = 0; pass < 3; ++pass)
        for (int i = 0; i < static_cast<int>(kFile / kCall); ++i) {
          if (!stream(fd, buf.data(), static_cast<off_t>(i) * static_cast<off_t>(kCall), 1, 7)) ok = false;
          reads.fetch_add(1);
        }
    });
    while (reads.load() < 3) sched_yield();  // into the stream
    pthread_t waiter;
    pthread_create(&waiter, nullptr, sigwait_thread, &s);
    for (int i = 0; i < 10; ++i) {
      kill(getpid(), SIGRTMAX - 3);
      union sigval v;
      v.sival_int = 58;
      sigqueue(getpid(), SIGRTMAX - 3, v);
      const timespec gap = {0, 2 * 1000 * 1000};
      nanosleep(&gap, nullptr);
    }
    pthread_join(waiter, nullptr);
    reader.join();
    out.put("received", s.got.load());
    out.put("queued_with_value", s.with_value.load());
    out.put("reads_ok", ok.load() ? 1 : 0);
    close(fd);
    return 0;
  });
  out.put("child", ended);
  return kRan;
}

// Item 4: no descriptor the program can see while it streams large reads:
// the next open's number, the /proc/self/fd count, F_DUPFD 896, where
// EMFILE comes under RLIMIT_NOFILE, and filling the table after
// close_range(3, ~0U).
HIO_DIFF_CASE(descriptors_while_streaming, "58.4",
              "next open number, /proc/self/fd count, F_DUPFD 896, EMFILE point, close_range then fill, mid-stream") {
  constexpr size_t kFile = 64 * kMiB;
  const std::string path = opt.path("fds");
  if (!make_cold_file(path, kFile, 8)) return harness_failure("make_cold_file");
  const std::string ended = run_in_child([&]() -> int {
    Mapping buf(kCall);
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0 || !buf.ok()) return 10;
    out.put("fd", fd);
    out.put("reads", stream(fd, buf.data(), 0, 3, 8));
    int next = open("/dev/null", O_RDONLY);
    out.put("next_open", next);
    out.put("proc_fd_count", count_open_fds());
    int high = fcntl(fd, F_DUPFD, 896);
    out.put("dupfd_896", high);
    close(high);
    close(next);
    out.put("more_reads", stream(fd, buf.data(), 3 * kCall, 2, 8));
    if (!set_soft_limit(RLIMIT_NOFILE, 64)) return 11;
    std::vector<int> opened;
    int r;
    while ((r = open("/dev/null", O_RDONLY)) >= 0) opened.push_back(r);
    out.put("emfile_after", static_cast<long long>(opened.size()));
    out.put("emfile_errno", errno_name(errno));
    for (int o : opened) close(o);
    opened.clear();
    // Every descriptor from 3 up goes; the program reopens its file, reads
    // on, and fills the table.
    out.put("close_range", rv(syscall(SYS_close_range, 3u, ~0u, 0u), errno));
    fd = open(path.c_str(), O_RDONLY);
    out.put("reopened_fd", fd);
    out.put("reads_after_close_range", stream(fd, buf.data(), 0, 3, 8));
    while ((r = open("/dev/null", O_RDONLY)) >= 0) opened.push_back(r);
    out.put("filled_after_close_range", static_cast<long long>(opened.size()));
    out.put("proc_fd_count_full", count_open_fds() < 0 ? std::string("EMFILE") : std::string("listed"));
    return 0;
  });
  out.put("child", ended);
  return kRan;
}

namespace {

// Item 0: `readers` threads stream 8 MiB preads of a 256 MiB file through
// one descriptor of `access` while the main thread forks 200 children that
// _exit at once.  Ends in a child with a 100 s alarm: a hang is a SIGALRM.
int fork_while_streaming(const Options& opt, Transcript& out, int readers, int access, uint32_t tag) {
  constexpr size_t kFile = 256 * kMiB;
  const std::string path = opt.path("forked");
  if (!make_cold_file(path, kFile, tag)) return harness_failure("make_cold_file");
  const std::string ended = run_in_child([&]() -> int {
    alarm(100);
    int fd = open(path.c_str(), access);
    if (fd < 0) return 10;
    std::atomic<bool> stop{false};
    std::atomic<int> bad{0}, started{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < readers; ++t)
      threads.emplace_back([&, t] {
        Mapping buf(kCall);
        if (!buf.ok()) {
          bad.fetch_add(1);
          return;
        }
        started.fetch_add(1);
        for (uint64_t i = static_cast<uint64_t>(t); !stop.load(); ++i) {
          const off_t off = static_cast<off_t>((i % (kFile / kCall)) * kCall);
          if (!stream(fd, buf.data(), off, 1, tag)) bad.fetch_add(1);
          // A breath between reads: on two busy cores, readers that never
          // sleep starve the forking thread past the alarm, plain too.
          const timespec breath = {0, 200 * 1000};
          nanosleep(&breath, nullptr);
        }
      });
    while (started.load() + bad.load() < readers) sched_yield();
    int forked = 0, exited = 0;
    for (int i = 0; i < 200; ++i) {
      pid_t p = fork();
      if (p == 0) _exit(0);
      if (p < 0) continue;
      ++forked;
      int status = 0;
      while (waitpid(p, &status, 0) < 0 && errno == EINTR) {
      }
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) ++exited;
    }
    stop = true;
    for (auto& th : threads) th.join();
    out.put("forked", forked);
    out.put("exited", exited);
    out.put("bad_reads", bad.load());
    close(fd);
    return 0;
  });
  out.put("child", ended);
  return kRan;
}

}  // namespace

HIO_DIFF_CASE(fork_while_streaming, "58.0",
              "one thread streams 8 MiB preads of a 256 MiB file while the main thread forks 200 children") {
  return fork_while_streaming(opt, out, 1, O_RDONLY, 9);
}

HIO_DIFF_CASE(fork_while_streaming_threads, "58.0",
              "four threads stream 8 MiB preads of a 256 MiB file (O_RDWR) while the main thread forks 200 children") {
  return fork_while_streaming(opt, out, 4, O_RDWR, 10);
}

}  // namespace hio_diff
