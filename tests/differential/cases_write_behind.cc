// cases_write_behind.cc - what a write that has returned guarantees (items
// 13-16).  After write() returns the bytes are the kernel's: visible to any
// read, mmap or truncate, kept if the process is killed, and the errors
// (ENOSPC, EFBIG) were reported by that write.  These cases run in every
// mode; they matter most under HYBRIDIO_WRITE_BEHIND=on, where the engine
// returns once a write is staged.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {
namespace {

// In a child: writes `total` bytes of pattern `tag` in 8 MiB write()s,
// optionally fsyncs, then SIGKILLs itself.
std::string write_then_die(const std::string& path, size_t total, uint32_t tag, bool sync) {
  return run_in_child([&] {
    Mapping buf(8 * kMiB);
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || !buf.ok()) return 2;
    for (size_t at = 0; at < total; at += 8 * kMiB) {
      fill_pattern(buf.data(), 8 * kMiB, tag, at);
      if (write(fd, buf.data(), 8 * kMiB) != static_cast<ssize_t>(8 * kMiB)) return 3;
    }
    if (sync && fsync(fd) != 0) return 4;
    kill(getpid(), SIGKILL);
    return 5;
  });
}

volatile sig_atomic_t g_usr1_handled = 0;
void on_usr1(int) { g_usr1_handled = 1; }

}  // namespace

HIO_DIFF_CASE(wb_fsync_kill, "13", "a child writes 48 MiB (fsync, or not) and SIGKILLs itself: all 48 MiB are in the file") {
  const std::string synced = opt.path("synced"), unsynced = opt.path("unsynced");
  out.put("synced.ended", write_then_die(synced, 48 * kMiB, 90, true));
  out.put("synced.size", file_size(synced));
  out.put("synced.content_ok", file_has_pattern(synced, 0, 48 * kMiB, 90, 0));
  out.put("unsynced.ended", write_then_die(unsynced, 48 * kMiB, 91, false));
  out.put("unsynced.size", file_size(unsynced));
  out.put("unsynced.content_ok", file_has_pattern(unsynced, 0, 48 * kMiB, 91, 0));
  return kRan;
}

HIO_DIFF_CASE(wb_truncate, "13", "large writes, ftruncate smaller, stat/read; write past the end, ftruncate larger") {
  const std::string path = opt.path("truncated");
  Mapping buf(8 * kMiB + 13);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (!buf.ok() || fd < 0) return harness_failure("open/mmap");
  fill_pattern(buf.data(), buf.size(), 92, 0);
  for (int i = 0; i < 3; ++i) out.put("write" + std::to_string(i), rv(write(fd, buf.data(), buf.size())));
  out.put("ftruncate_small", rv(ftruncate(fd, 10 * kMiB + 7)));
  out.put("size1", file_size(path));
  out.put("pread_tail", rv(pread(fd, buf.data(), 8 * kMiB, 6 * kMiB)));
  out.put("digest1", file_digest(path));
  fill_pattern(buf.data(), buf.size(), 93, 0);
  out.put("pwrite_beyond", rv(pwrite(fd, buf.data(), 4 * kMiB + 1, 20 * kMiB)));
  out.put("size2", file_size(path));
  out.put("ftruncate_large", rv(ftruncate(fd, 40 * kMiB)));
  out.put("write_after", rv(write(fd, buf.data(), 2 * kMiB)));
  out.put("pos", rv(lseek(fd, 0, SEEK_CUR)));
  out.put("ftruncate_mid", rv(ftruncate(fd, 21 * kMiB + 5)));
  out.put("fsync", rv(fsync(fd)));
  out.put("close", rv(close(fd)));
  out.put("digest2", file_digest(path));
  return kRan;
}

HIO_DIFF_CASE(wb_read_after_write, "13", "large write, then small preads, another fd and a new mmap see the bytes at once") {
  const std::string path = opt.path("fresh");
  Mapping buf(16 * kMiB + 5);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (!buf.ok() || fd < 0) return harness_failure("open/mmap");
  fill_pattern(buf.data(), buf.size(), 94, 0);
  out.put("write", rv(write(fd, buf.data(), buf.size())));
  const off_t probes[] = {0, 4095, 1 << 20, 8 * (1 << 20) + 3, 16 * (1 << 20) - 95};
  int other = open(path.c_str(), O_RDONLY);
  for (off_t at : probes) {
    char a[100] = {}, b[100] = {}, c[100] = {};
    ssize_t na = pread(fd, a, sizeof a, at);
    ssize_t nb = pread(other, b, sizeof b, at);
    ssize_t nc = raw_pread(fd, c, sizeof c, at);
    out.put("probe." + std::to_string(at), std::to_string(na) + " " + std::to_string(nb) + " " + std::to_string(nc) +
                                               " ok=" + std::to_string(has_pattern(a, 100, 94, at) &&
                                                                       has_pattern(b, 100, 94, at) &&
                                                                       has_pattern(c, 100, 94, at)));
  }
  void* m = mmap(nullptr, buf.size(), PROT_READ, MAP_SHARED, other, 0);
  out.put("mmap_ok", m != MAP_FAILED && has_pattern(m, buf.size(), 94, 0));
  if (m != MAP_FAILED) munmap(m, buf.size());
  return kRan;
}

HIO_DIFF_CASE(wb_order, "13", "two overlapping large writes in sequence (pwrite, then write on a dup): the newer wins") {
  const std::string path = opt.path("ordered");
  Mapping a(12 * kMiB), b(12 * kMiB);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (!a.ok() || !b.ok() || fd < 0) return harness_failure("open/mmap");
  fill_pattern(a.data(), a.size(), 95, 0);
  fill_pattern(b.data(), b.size(), 96, 0);
  out.put("pwrite_a", rv(pwrite(fd, a.data(), 12 * kMiB, 1000)));
  out.put("pwrite_b", rv(pwrite(fd, b.data(), 12 * kMiB, 5 * kMiB + 3)));
  out.put("newer_wins", file_has_pattern(path, 5 * kMiB + 3, 12 * kMiB, 96, 0) &&
                            file_has_pattern(path, 1000, 5 * kMiB + 3 - 1000, 95, 0));
  int copy = dup(fd);
  out.put("seek", rv(lseek(fd, 3 * kMiB, SEEK_SET)));
  out.put("write_a", rv(write(fd, a.data() + 1, 8 * kMiB - 1)));
  out.put("seek_copy", rv(lseek(copy, 4 * kMiB, SEEK_SET)));
  out.put("write_b_on_dup", rv(write(copy, b.data(), 4 * kMiB + 1)));
  out.put("pos", rv(lseek(fd, 0, SEEK_CUR)));
  out.put("digest", file_digest(path));
  return kRan;
}

HIO_DIFF_CASE(wb_enospc, "14", "write 189 MiB into a 64 MiB filesystem: errors come from the same calls as plain (needs --small-fs)") {
  if (opt.small_fs.empty()) return out.skip("needs root to mount a small loop filesystem");
  const std::string path = opt.small_fs + "/filling";
  constexpr size_t kStep = 9 * kMiB;
  Mapping buf(kStep);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!buf.ok() || fd < 0) return harness_failure("open/mmap");
  // The outcomes in order, repeats folded: "full,short,ENOSPC".
  std::string outcomes;
  size_t accepted = 0;
  for (size_t at = 0; at < 189 * kMiB; at += kStep) {
    fill_pattern(buf.data(), kStep, 97, at);
    ssize_t r = write(fd, buf.data(), kStep);
    std::string what = r == static_cast<ssize_t>(kStep) ? "full" : r >= 0 ? "short" : errno_name(errno);
    if (r > 0) accepted += static_cast<size_t>(r);
    if (outcomes.size() < what.size() || outcomes.compare(outcomes.size() - what.size(), what.size(), what) != 0)
      outcomes += (outcomes.empty() ? "" : ",") + what;
  }
  out.put("outcomes", outcomes);
  out.put("accepted_over_32m", accepted > 32 * kMiB);
  out.put("pos_is_accepted", lseek(fd, 0, SEEK_CUR) == static_cast<off_t>(accepted));
  out.put("fsync", rv(fsync(fd)));
  out.put("close", rv(close(fd)));
  out.put("size_is_accepted", file_size(path) == static_cast<long long>(accepted));
  out.put("accepted_intact", file_has_pattern(path, 0, accepted, 97, 0));
  return kRan;
}

HIO_DIFF_CASE(wb_fork_while_writing, "15", "one thread writes large records while another forks children that exit at once") {
  const std::string path = opt.path("forked");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Mapping buf(4 * kMiB + 1);
  if (fd < 0 || !buf.ok()) return harness_failure("open/mmap");
  fill_pattern(buf.data(), buf.size(), 98, 0);
  std::atomic<bool> done{false};
  int writes_ok = 0;
  std::thread writer([&] {
    for (int i = 0; i < 24; ++i)
      if (write(fd, buf.data(), buf.size()) == static_cast<ssize_t>(buf.size())) ++writes_ok;
    done = true;
  });
  int forks = 0, clean = 0;
  while (!done.load() || forks < 20) {
    pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid < 0) break;
    int status = 0;
    ++forks;
    if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0) ++clean;
  }
  writer.join();
  out.put("writes_ok", writes_ok);
  out.put("children_clean", forks == clean);
  out.put("size", file_size(path));
  out.put("pos", rv(lseek(fd, 0, SEEK_CUR)));
  return kRan;
}

HIO_DIFF_CASE(wb_fsize_short, "15", "RLIMIT_FSIZE forces a short write: the write itself says so, not a later fsync/close") {
  const std::string path = opt.path("short");
  Mapping buf(8 * kMiB);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || !buf.ok()) return harness_failure("open/mmap");
  fill_pattern(buf.data(), buf.size(), 99, 0);
  signal(SIGXFSZ, SIG_IGN);
  if (!set_soft_limit(RLIMIT_FSIZE, 5 * kMiB + 1000)) return harness_failure("setrlimit");
  out.put("write1", rv(write(fd, buf.data(), 4 * kMiB)));
  out.put("write2", rv(write(fd, buf.data(), 4 * kMiB)));
  out.put("write3", rv(write(fd, buf.data(), 4 * kMiB)));
  out.put("pos", rv(lseek(fd, 0, SEEK_CUR)));
  out.put("fsync", rv(fsync(fd)));
  out.put("close", rv(close(fd)));
  out.put("digest", file_digest(path));
  return kRan;
}

HIO_DIFF_CASE(wb_blocked_signals, "16", "SIGUSR1 blocked in all threads before any I/O stays pending after large writes") {
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  if (pthread_sigmask(SIG_BLOCK, &usr1, nullptr) != 0 || signal(SIGUSR1, on_usr1) == SIG_ERR)
    return harness_failure("sigmask");
  const std::string path = opt.path("blocked");
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return harness_failure("open");
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      Mapping buf(4 * kMiB);
      fill_pattern(buf.data(), buf.size(), 100 + static_cast<uint32_t>(t), 0);
      for (int i = 0; i < 4; ++i)
        if (pwrite(fd, buf.data(), buf.size(), static_cast<off_t>((t * 4 + i) * 4 * kMiB)) == static_cast<ssize_t>(4 * kMiB))
          ++ok;
    });
  for (auto& t : threads) t.join();
  out.put("writes_ok", ok.load());
  out.put("fsync", rv(fsync(fd)));
  kill(getpid(), SIGUSR1);
  usleep(20000);  // time for a thread with SIGUSR1 unblocked to take it
  sigset_t pending;
  sigpending(&pending);
  out.put("pending", sigismember(&pending, SIGUSR1) == 1);
  out.put("handled", static_cast<int>(g_usr1_handled));
  out.put("digest", file_digest(path));
  return kRan;
}

}  // namespace hio_diff
