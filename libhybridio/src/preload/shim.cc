// shim.cc - see shim.h.
#include "preload/shim.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio_ext.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "file/file.h"
#include "io/drop_behind.h"
#include "io/uring_engine.h"
#include "platform/fork_order.h"
#include "platform/log.h"
#include "platform/monotonic_clock.h"
#include "platform/private_fd.h"
#include "platform/proc_files.h"
#include "preload/exact_call.h"
#include "preload/path_rules.h"
#include "preload/real_libc.h"
#include "probe/memory_headroom.h"
#include "runtime/runtime.h"

namespace hybridio::preload {
namespace {

__thread bool t_inside __attribute__((tls_model("initial-exec"))) = false;
std::atomic<uint64_t> g_candidate[2] = {UINT64_MAX, UINT64_MAX};  // [read], [write]
// What g_candidate held before a seccomp call (before_sandbox), restored
// if the call fails.
uint64_t g_candidate_before_sandbox[2] = {UINT64_MAX, UINT64_MAX};
std::atomic<bool> g_passthrough{false};
std::atomic<pid_t> g_pid{0};
PathRules* g_rules = nullptr;

// Inodes the program has memory-mapped: their I/O stays in the page cache.
std::mutex g_mapped_mu;
std::vector<std::pair<dev_t, ino_t>>* g_mapped = nullptr;

// Set when a mapping could not be recorded (no memory): every file is then
// treated as mapped, the safe answer.
std::atomic<bool> g_mapped_unknown{false};

bool is_mapped(dev_t dev, ino_t ino) {
  if (g_mapped_unknown.load(std::memory_order_relaxed)) return true;
  std::lock_guard<std::mutex> lock(g_mapped_mu);
  for (const auto& m : *g_mapped)
    if (m.first == dev && m.second == ino) return true;
  return false;
}

// fork(2), at their levels of the one order (fork_order.h).
void mapped_prepare() { g_mapped_mu.lock(); }
void mapped_parent() { g_mapped_mu.unlock(); }
void mapped_child() {
  g_mapped_mu.unlock();
  if (!g_passthrough.load(std::memory_order_relaxed)) g_pid.store(getpid());
}
void install_fork_handlers_of_the_shim() {
  ForkHandlers exact;
  exact.prepare = exact_call_atfork_prepare;
  exact.parent = exact_call_atfork_parent;
  exact.child = exact_call_atfork_child;
  install_fork_handlers(ForkLevel::kExactCalls, exact);
  ForkHandlers mapped;
  mapped.prepare = mapped_prepare;
  mapped.parent = mapped_parent;
  mapped.child = mapped_child;
  install_fork_handlers(ForkLevel::kMappedFiles, mapped);
}

// The smallest request worth a look (hio_policy_smallest_offcache), at
// least a page: every request looked at pays for fstat, fcntl(F_GETFL) and
// getpid (lookup()), about 3.5 us on a VM, which halved the rate of cached
// 64 KiB reads when reads shared the writes' 64 KiB threshold although none
// of them could leave the page cache.
uint64_t compute_candidate(const hio_policy_config& p, bool write) {
  const uint64_t lowest = hio_policy_smallest_offcache(&p, write ? HIO_OP_WRITE : HIO_OP_READ);
  return lowest == UINT64_MAX ? lowest : std::max<uint64_t>(lowest, 4096);
}

// glibc's libio.h _IO_IN_BACKUP: the stream is reading from its ungetc
// pushback area (not in the public struct_FILE.h).
constexpr int kStdioInBackup = 0x100;
// glibc's libio.h _IO_CURRENTLY_PUTTING: the buffer holds bytes being written.
constexpr int kStdioCurrentlyPutting = 0x800;

TrackedRef classify(int fd) {
  FdTable& table = fd_table();
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    table.set_ignored(fd);
    return TrackedRef();
  }
  // The kernel's pseudo filesystems answer each call themselves (a sysfs
  // read returns at most a page): left to libc, whatever path led there.
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0 || kernel_pseudo_fs(static_cast<unsigned long>(fs.f_type))) {
    table.set_ignored(fd);
    return TrackedRef();
  }
  int flags = real().fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & (O_DIRECT | O_PATH))) {  // the caller's own O_DIRECT is left alone
    table.set_ignored(fd);
    return TrackedRef();
  }
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if ((n > 0 && (path[n] = '\0', !g_rules->allows(path))) || opted_out(fd)) {
    table.set_ignored(fd);
    return TrackedRef();
  }
  File* file = nullptr;
  if (File::adopt(Runtime::get(), fd, false, &file) != 0) {
    table.set_ignored(fd);
    return TrackedRef();
  }
  if (is_mapped(st.st_dev, st.st_ino)) file->set_mapped(true);
  Tracked* t = new (std::nothrow) Tracked{file, st.st_dev, st.st_ino, flags, {1}};
  if (!t) {
    delete file;
    return TrackedRef();
  }
  table.set_tracked(fd, t);
  return table.acquire(fd);
}

// Still the same open file, with the same status flags, as when classified?
bool still_valid(int fd, const Tracked& t) {
  struct stat st;
  return fstat(fd, &st) == 0 && st.st_dev == t.dev && st.st_ino == t.ino &&
         real().fcntl(fd, F_GETFL) == t.status_flags;
}

}  // namespace

Guard::Guard() : entered_(!t_inside) { t_inside = true; }
Guard::~Guard() {
  if (entered_) t_inside = false;
}

bool passthrough() { return g_passthrough.load(std::memory_order_relaxed); }

bool before_sandbox() {
  Guard guard;
  if (g_passthrough.exchange(true)) return false;
  const bool was_on = g_candidate[0].load() != UINT64_MAX || g_candidate[1].load() != UINT64_MAX;
  for (int w = 0; w < 2; ++w) g_candidate_before_sandbox[w] = g_candidate[w].exchange(UINT64_MAX);
  if (!was_on) return true;
  const int saved = errno;
  drop_behind_stop();
  discard_calling_thread_ring();
  Runtime::get().write_exit_stats();
  errno = saved;
  return true;
}

void after_sandbox(bool turned_on, bool entered) {
  if (!turned_on || entered) return;
  const bool was_on = g_candidate_before_sandbox[0] != UINT64_MAX || g_candidate_before_sandbox[1] != UINT64_MAX;
  if (was_on) Runtime::get().rearm_exit_stats();
  for (int w = 0; w < 2; ++w) g_candidate[w].store(g_candidate_before_sandbox[w]);
  g_passthrough.store(false);
}

uint64_t candidate_size(bool write) { return g_candidate[write].load(std::memory_order_relaxed); }

bool is_ignored(int fd) { return fd_table().state(fd) == SlotState::kIgnored; }


bool in_vfork_child() { return getpid() != g_pid.load(std::memory_order_relaxed); }

// Write-behind completes writes after the call returns: it cannot keep
// POSIX semantics when calls the shim does not see (fsync, ftruncate,
// copy_file_range, another process's read...) must see every byte, so under
// the shim it is refused, with one line on stderr.  The library's API keeps
// it, with the contract in write_behind.h.
void refuse_deferred_modes() {
  Runtime::get();  // publishes the configured engine settings
  EngineSettings e = engine_settings();
  if (!e.write_behind) return;
  HIO_WARN("HYBRIDIO_WRITE_BEHIND not available under the LD_PRELOAD shim (it cannot keep POSIX semantics there); "
           "writes complete within each call");
  e.write_behind = false;
  set_engine_settings(e);
}

// "Seccomp:" of /proc/self/status: 0 none, 1 strict, 2 filter; 0 when it
// cannot be read.
int seccomp_mode_at_start() {
  char status[4096];
  uint64_t mode = 0;
  if (!read_small_file("/proc/self/status", status, sizeof status) || !line_number(status, "Seccomp:", &mode))
    return 0;
  return static_cast<int>(mode);
}

void initialize() {
  Guard guard;
  resolve_real();
  set_transparent_mode(true);
  g_pid.store(getpid());
  const int seccomp = seccomp_mode_at_start();
  if (seccomp == 1) {
    g_passthrough.store(true);
    return;
  }
  if (seccomp == 2) HIO_DEBUG("started under a seccomp filter: calls it refuses fall back to the program's own");
  // Without memory for its tables (or the settings) the shim stays off:
  // the candidate sizes keep their "never" value and every call goes to libc.
  try {
    refuse_deferred_modes();
    g_mapped = new std::vector<std::pair<dev_t, ino_t>>();
    g_rules = new PathRules(getenv("HYBRIDIO_INCLUDE"), getenv("HYBRIDIO_EXCLUDE"));
  } catch (const std::bad_alloc&) {
    return;
  }
  install_fork_handlers_of_the_shim();
  for (bool write : {false, true})
    g_candidate[write].store(compute_candidate(Runtime::get().policy(), write), std::memory_order_release);
}

TrackedRef lookup(int fd) {
  FdTable& table = fd_table();
  const SlotState state = table.state(fd);
  // A descriptor already left alone (pipe, socket, terminal, ...) costs no
  // system call; reading the table is harmless in a vfork child too, and
  // passing to libc is always safe there.
  if (state == SlotState::kIgnored || passthrough() || in_vfork_child()) return TrackedRef();
  switch (state) {
    case SlotState::kIgnored:
      return TrackedRef();
    case SlotState::kTracked: {
      TrackedRef ref = table.acquire(fd);
      if (ref && still_valid(fd, *ref.operator->())) return ref;
      break;  // closed behind our back and reused, or flags changed: look again
    }
    case SlotState::kUnknown:
      break;
  }
  return classify(fd);
}

namespace {

// The write half of accel_stdio, with the stream locked and its indicators
// checked: glibc's _IO_new_file_xsputn in the same steps, with its direct
// write of whole buffers made by the engine at the file position.  glibc
// fills the room left in the stream's buffer, flushes the buffer, writes
// the largest multiple of the buffer's size directly (advancing the
// stream's cached offset, as _IO_new_file_write does) and keeps the
// remainder buffered (a buffer under 128 bytes: nothing kept); a short
// write is retried until it fails, and a failure sets the error indicator
// and returns the whole items moved.  The bytes kept in the buffer are
// therefore glibc's own, so a fork or an _exit without fflush writes them
// as often as it would.  `saved` is errno at the call; a call that
// succeeds leaves it so.  Declines (returns (size_t)-1, nothing moved) a
// stream holding bytes read ahead, which glibc would seek back over.
size_t stdio_write(const TrackedRef& t, int fd, const char* data, size_t size, size_t count, FILE* stream,
                   int saved) {
  const size_t total = size * count;
  size_t done = 0;
  if (!(stream->_flags & kStdioCurrentlyPutting)) {
    if (stream->_IO_read_ptr != stream->_IO_read_end) return static_cast<size_t>(-1);
    // Its first byte through stdio puts the stream in writing mode, with
    // the buffer glibc gives it (allocated now if it had none).
    errno = saved;
    if (real().fwrite(data, 1, 1, stream) != 1) return 0;
    done = 1;
  }
  const size_t block = __fbufsize(stream);
  const size_t room = stream->_IO_write_end > stream->_IO_write_ptr
                          ? static_cast<size_t>(stream->_IO_write_end - stream->_IO_write_ptr)
                          : 0;
  const size_t head = std::min(room, total - done);
  errno = saved;
  if (head && real().fwrite(data + done, 1, head, stream) != head) return done / size;
  done += head;
  if (done == total) return count;
  if (fflush(stream) != 0) return done / size;  // errno and the error indicator are fflush's
  const size_t rest = total - done;
  const size_t direct = rest - (block >= 128 ? rest % block : 0);
  size_t moved = 0;
  ssize_t n = 0;
  while (moved < direct) {
    iovec iov{const_cast<char*>(data) + done + moved, direct - moved};
    if (!exact_call(t, fd, true, &iov, 1, -1, iov.iov_len, &n) || n <= 0) break;
    moved += static_cast<size_t>(n);
    if (stream->_offset >= 0) stream->_offset += n;
  }
  done += moved;
  if (n < 0) {
    stream->_flags |= _IO_ERR_SEEN;
    errno = static_cast<int>(-n);
    return done / size;
  }
  // All of it moved, or the engine declined a piece: stdio writes the rest.
  errno = saved;
  return (done + real().fwrite(data + done, 1, total - done, stream)) / size;
}

}  // namespace

size_t accel_stdio(bool write, void* buf, size_t size, size_t count, FILE* stream) {
  const size_t declined = static_cast<size_t>(-1);
  if (size == 0 || count == 0 || count > SIZE_MAX / size) return declined;
  const size_t total = size * count;
  if (total < candidate_size(write)) return declined;
  int fd = fileno(stream);
  if (fd < 0 || fwide(stream, 0) > 0) return declined;
  // The stream's own mode decides, as in glibc: a write on a stream not
  // open for writing fails there with EBADF whatever the descriptor allows.
  // Line-buffered streams keep glibc's own newline handling.
  if (write ? (!__fwritable(stream) || __flbf(stream)) : !__freadable(stream)) return declined;
  const int saved = errno;
  TrackedRef t = lookup(fd);
  errno = saved;
  if (!t || (write && (t->status_flags & O_APPEND))) return declined;

  flockfile(stream);
  // A pushed-back character (ungetc) or a set EOF or error indicator: the
  // repositioning below would lose them; stdio keeps them itself.
  if (feof_unlocked(stream) || ferror_unlocked(stream) || (stream->_flags & kStdioInBackup) ||
      stream->_IO_save_base != nullptr) {
    funlockfile(stream);
    return declined;
  }
  if (write) {
    const size_t items = stdio_write(t, fd, static_cast<const char*>(buf), size, count, stream, saved);
    funlockfile(stream);
    after_accelerated_call();
    if (items == declined) errno = saved;
    return items;
  }
  // Flush what stdio holds, then put the stream and the descriptor at the
  // same place: the engine works on the descriptor, stdio resumes after it.
  off_t pos = -1;
  if (fflush(stream) == 0) pos = ftello(stream);
  if (pos < 0 || fseeko(stream, pos, SEEK_SET) != 0) {
    funlockfile(stream);
    errno = saved;
    return declined;
  }
  // The stream's own loop would move it all, in calls of at most
  // kMaxRwCount bytes: so does this one.
  size_t moved = 0;
  ssize_t n = 0;
  while (moved < total) {
    iovec iov{static_cast<char*>(buf) + moved, total - moved};
    if (!exact_call(t, fd, false, &iov, 1, pos + static_cast<off_t>(moved), iov.iov_len, &n) || n <= 0) break;
    moved += static_cast<size_t>(n);
  }
  fseeko(stream, pos + static_cast<off_t>(moved), SEEK_SET);
  size_t items = moved / size;
  errno = saved;
  if (moved < total) {
    // A partial item, EOF or an error: let stdio itself finish the call, so
    // that its EOF and error indicators and errno come out as they would.
    if (moved % size) fseeko(stream, pos + static_cast<off_t>(items * size), SEEK_SET);
    errno = saved;
    char* rest = static_cast<char*>(buf) + items * size;
    items += real().fread(rest, size, count - items, stream);
  }
  funlockfile(stream);
  after_accelerated_call();
  return items;
}

void after_accelerated_call() {
  if (!address_space_limited()) return;
  const int saved = errno;
  File::release_thread_staging();
  release_calling_thread_buffers();
  errno = saved;
}

void on_opened(int fd) {
  if (!passthrough() && !in_vfork_child()) fd_table().reset(fd);
}

namespace {

// Runs `wait` (a wait for drop-behind writes, drop_behind.h) with errno
// kept; not from a signal handler that interrupted the shim, which may
// hold the worker's lock.
template <class Wait>
void wait_for_drop_behind(Wait wait) {
  Guard guard;
  if (!guard.entered()) return;
  const int saved = errno;
  wait();
  errno = saved;
}

}  // namespace

void on_close(int fd) {
  if (passthrough() || in_vfork_child()) return;
  if (fd >= 0) {
    const unsigned n = static_cast<unsigned>(fd);
    wait_for_drop_behind([n] { drop_behind_before_close(n, n); });
  }
  if (PrivateFdOwner* owner = private_fd_owner(fd)) owner->forget_direct_fd(fd);
  fd_table().reset(fd);
}

void on_close_range(unsigned first, unsigned last) {
  if (passthrough() || in_vfork_child()) return;
  wait_for_drop_behind([=] { drop_behind_before_close(first, last); });
  forget_private_fds(first, last);
  unsigned top = std::min<unsigned>(last, FdTable::kMaxFd - 1);
  for (unsigned fd = first; fd <= top; ++fd) fd_table().reset(static_cast<int>(fd));
}

void on_replaced(int fd) { on_close(fd); }

void on_mapped(int fd) {
  if (passthrough() || in_vfork_child()) return;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  {
    std::lock_guard<std::mutex> lock(g_mapped_mu);
    for (const auto& m : *g_mapped)
      if (m.first == st.st_dev && m.second == st.st_ino) return;
    try {
      g_mapped->emplace_back(st.st_dev, st.st_ino);
    } catch (const std::bad_alloc&) {
      g_mapped_unknown.store(true, std::memory_order_relaxed);
    }
  }
  const bool every_file = g_mapped_unknown.load(std::memory_order_relaxed);
  fd_table().for_each_tracked([&](int, const TrackedRef& t) {
    if (every_file || (t->dev == st.st_dev && t->ino == st.st_ino)) t->file->set_mapped(true);
  });
}

int timed_sync(int fd, bool data_only) {
  int (*call)(int) = data_only ? real().fdatasync : real().fsync;
  if (passthrough()) return call ? call(fd) : static_cast<int>(syscall(data_only ? SYS_fdatasync : SYS_fsync, fd));
  // The call's time, as the program sees it, includes the wait.
  const uint64_t started = monotonic_ns();
  if (!in_vfork_child()) wait_for_drop_behind([fd] { drop_behind_before_sync(fd); });
  const int r = call ? call(fd) : static_cast<int>(syscall(data_only ? SYS_fdatasync : SYS_fsync, fd));
  if (r != 0) return r;
  // Only a descriptor already tracked: classifying one here would cost a
  // program that syncs files the shim never accelerated.
  Guard guard;
  if (!guard.entered() || in_vfork_child() || fd_table().state(fd) != SlotState::kTracked) return r;
  const uint64_t ns = monotonic_ns() - started;
  const int saved = errno;
  TrackedRef t = fd_table().acquire(fd);
  if (t && still_valid(fd, *t.operator->())) t->file->note_sync(ns);
  errno = saved;
  return r;
}

void before_exit() {
  Guard guard;
  if (!guard.entered() || passthrough() || in_vfork_child()) return;
  drop_behind_drain();
  if (g_candidate[0].load() != UINT64_MAX) Runtime::get().write_exit_stats();
}

}  // namespace hybridio::preload
