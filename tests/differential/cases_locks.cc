// cases_locks.cc - POSIX record locks survive the shim's private descriptors
// (item 1).  Closing any descriptor of a file drops all of the process's
// POSIX locks on it, so a private O_DIRECT twin that the shim closes (on
// F_SETFL, at exec through O_CLOEXEC, ...) would silently unlock the file.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {
namespace {

constexpr off_t kLockLen = 100;

// Asks from another process (a new open of the file) whether `owner` holds
// a lock on [0, kLockLen): 1 held, 0 free, -1 the check itself failed.
int lock_held_by(const std::string& path, pid_t owner) {
  std::string ended = run_in_child([&] {
    int fd = raw_open(path, O_RDWR);
    struct flock fl = {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = 0;
    fl.l_len = kLockLen;
    if (fd < 0 || syscall(SYS_fcntl, fd, F_GETLK, &fl) != 0) return 2;
    return fl.l_type != F_UNLCK && fl.l_pid == owner ? 1 : 0;
  });
  return ended == "exit=1" ? 1 : ended == "exit=0" ? 0 : -1;
}

int lock_range(int fd) {
  struct flock fl = {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = kLockLen;
  return fcntl(fd, F_SETLK, &fl);
}

// Large requests, and the status-flag changes that make the shim look at
// the descriptor again, each followed by a check of the lock.
void exercise(Transcript& out, int fd, const std::string& path, const Mapping& buf) {
  char* p = buf.data();
  const pid_t self = getpid();
  out.put("write.large", rv(write(fd, p + 1, 8 * kMiB - 1)));
  out.put("held.after_write", lock_held_by(path, self));
  int flags = fcntl(fd, F_GETFL);
  out.put("setfl.nonblock", rv(fcntl(fd, F_SETFL, flags | O_NONBLOCK)));
  out.put("write.nonblock", rv(write(fd, p, 4 * kMiB + 123)));
  out.put("held.after_nonblock", lock_held_by(path, self));
  out.put("setfl.append_on", rv(fcntl(fd, F_SETFL, flags | O_APPEND)));
  out.put("write.append", rv(write(fd, p, 2 * kMiB + 7)));
  out.put("held.after_append_on", lock_held_by(path, self));
  out.put("setfl.append_off", rv(fcntl(fd, F_SETFL, flags)));
  out.put("pwrite.large", rv(pwrite(fd, p, 6 * kMiB, 1000)));
  out.put("pread.large", rv(pread(fd, p, 8 * kMiB, 4096)));
  out.put("pos", rv(lseek(fd, 0, SEEK_CUR)));
  out.put("held.after_append_off", lock_held_by(path, self));
  out.put("digest", file_digest(path));
}

}  // namespace

HIO_DIFF_CASE(locks_setfl, "1a", "fcntl(F_SETLK) lock held across large writes and F_SETFL (O_NONBLOCK, O_APPEND)") {
  const std::string path = opt.path("locked");
  Mapping buf(8 * kMiB);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || !buf.ok()) return harness_failure("open/mmap");
  fill_pattern(buf.data(), buf.size(), 1, 0);
  out.put("write.first", rv(write(fd, buf.data(), 4 * kMiB + 123)));
  out.put("setlk", rv(lock_range(fd)));
  out.put("held.after_setlk", lock_held_by(path, getpid()));
  exercise(out, fd, path, buf);
  out.put("lock_held", lock_held_by(path, getpid()));
  return kRan;
}

HIO_DIFF_CASE(locks_lockf, "1c", "lockf(F_LOCK) lock held across large writes and F_SETFL") {
  const std::string path = opt.path("locked");
  Mapping buf(8 * kMiB);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || !buf.ok()) return harness_failure("open/mmap");
  fill_pattern(buf.data(), buf.size(), 2, 0);
  out.put("write.first", rv(write(fd, buf.data(), 4 * kMiB + 123)));
  out.put("lseek", rv(lseek(fd, 0, SEEK_SET)));
  out.put("lockf", rv(lockf(fd, F_LOCK, kLockLen)));
  out.put("held.after_lockf", lock_held_by(path, getpid()));
  exercise(out, fd, path, buf);
  out.put("lock_held", lock_held_by(path, getpid()));
  return kRan;
}

HIO_DIFF_CASE(locks_exec, "1b", "fcntl lock held across large I/O and execv of a program that keeps the descriptor") {
  const std::string path = opt.path("locked");
  Mapping buf(8 * kMiB);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || !buf.ok()) return harness_failure("open/mmap");
  fill_pattern(buf.data(), buf.size(), 3, 0);
  out.put("setlk", rv(lock_range(fd)));
  out.put("write.large", rv(write(fd, buf.data() + 3, 8 * kMiB - 3)));
  out.put("pread.large", rv(pread(fd, buf.data(), 4 * kMiB, 512)));
  out.put("lock_held_before_exec", lock_held_by(path, getpid()));
  std::string fd_text = std::to_string(fd);
  char* args[] = {const_cast<char*>("hio_diff"), const_cast<char*>("--exec-check"), fd_text.data(),
                  const_cast<char*>(path.c_str()), nullptr};
  execv("/proc/self/exe", args);
  return harness_failure("execv /proc/self/exe");
}

// The exec'd image: same process, same descriptor, the shim (if any) loaded afresh.
int locks_exec_check(int argc, char** argv) {
  if (argc != 4) return harness_failure("--exec-check FD PATH");
  Transcript out;
  const int fd = atoi(argv[2]);
  const std::string path = argv[3];
  out.put("lock_held_after_exec", lock_held_by(path, getpid()));
  Mapping buf(8 * kMiB);
  if (!buf.ok()) return harness_failure("mmap");
  fill_pattern(buf.data(), buf.size(), 4, 0);
  out.put("exec.write.large", rv(write(fd, buf.data(), 8 * kMiB)));
  out.put("exec.pread.large", rv(pread(fd, buf.data(), 8 * kMiB, 100)));
  out.put("lock_held_after_exec_io", lock_held_by(path, getpid()));
  int flags = fcntl(fd, F_GETFL);
  out.put("exec.setfl", rv(fcntl(fd, F_SETFL, flags | O_NONBLOCK)));
  out.put("exec.pwrite.large", rv(pwrite(fd, buf.data(), 3 * kMiB + 5, 333)));
  out.put("lock_held_after_exec_setfl", lock_held_by(path, getpid()));
  out.put("digest", file_digest(path));
  return kRan;
}

}  // namespace hio_diff
