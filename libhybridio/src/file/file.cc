// file.cc - see file.h: a File's life (open, adopt, the O_DIRECT twin,
// close) and its public calls.  The decision is decide.cc's, the execution
// paths execute.cc's.
#include "file/file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <new>

#include "file/buffered_io.h"
#include "io/drop_behind.h"
#include "io/lease_guard.h"
#include "memory/checked_copy.h"
#include "platform/log.h"
#include "platform/monotonic_clock.h"
#include "platform/private_fd.h"
#include "platform/syscall_table.h"

namespace hybridio {
namespace {

// Whether the file's pages are written back to a device: not on tmpfs,
// ramfs or hugetlbfs, where the page cache is the file and drop-behind
// would only cost.
bool has_writeback(int fd) {
  struct statfs st;
  if (fstatfs(fd, &st) != 0) return false;
  switch (static_cast<uint64_t>(st.f_type)) {
    case TMPFS_MAGIC:
    case RAMFS_MAGIC:
    case HUGETLBFS_MAGIC:
      return false;
    default:
      return true;
  }
}

}  // namespace

File::File(FileContext& ctx, int fd, bool owns_fd, int open_flags)
    : ctx_(ctx), fd_(fd), owns_fd_(owns_fd), open_flags_(open_flags), align_(query_dio_alignment(fd)),
      has_writeback_(has_writeback(fd)), wb_(ctx.stats()) {
  if (align_.mem_align == 0 || align_.offset_align == 0) no_direct_.store(true);
}

File::~File() { close(); }

int File::open(FileContext& ctx, const char* path, int flags, mode_t mode, File** out) {
  int fd = sys().open(path, flags | O_CLOEXEC, mode);
  if (fd < 0) return -errno;
  int err = adopt(ctx, fd, true, out);
  if (err) sys().close(fd);
  return err;
}

int File::adopt(FileContext& ctx, int fd, bool owns_fd, File** out) {
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return -errno;
  struct stat st;
  if (sys().fstat(fd, &st) != 0) return -errno;
  if (!S_ISREG(st.st_mode)) return -EINVAL;
  File* f = new (std::nothrow) File(ctx, fd, owns_fd, flags);
  if (!f) return -ENOMEM;
  if (Learner* learner = f->ctx_.learner()) f->learn_.attach(learner->filesystem(st.st_dev, fd), fd, &f->ctx_.stats());
  *out = f;
  return 0;
}

int File::direct_fd() {
  int dfd = direct_fd_.load(std::memory_order_acquire);
  if (dfd >= 0) return dfd;
  std::lock_guard<std::mutex> lock(twin_mu_);
  if ((dfd = direct_fd_.load(std::memory_order_relaxed)) >= 0) return dfd;
  if (no_direct_.load()) return -1;
  // The twin is an open of the inode, which would break a lease the
  // program holds on its descriptor: none then; this request takes the
  // page cache, and the next asks again (lease_guard.h).
  struct stat own;
  if (sys().fstat(fd_, &own) != 0 || lease_held(fd_, own.st_dev, own.st_ino)) return -1;
  // Re-open the same inode through /proc: the caller's descriptor keeps its
  // flags untouched (F_GETFL shows nothing new) and the twin is ours alone.
  int access = open_flags_ & O_ACCMODE;
  int flags = access | O_DIRECT | O_CLOEXEC | (open_flags_ & (O_SYNC | O_DSYNC));
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd_);
  dfd = sys().open(path, flags, 0);
  struct stat a, b;
  if (dfd >= 0 && (sys().fstat(fd_, &a) != 0 || sys().fstat(dfd, &b) != 0 || a.st_dev != b.st_dev ||
                   a.st_ino != b.st_ino)) {
    sys().close(dfd);
    dfd = -1;
    errno = ESTALE;
  }
  if (dfd < 0) {
    HIO_INFO("fd %d: O_DIRECT twin refused (%s); using buffered I/O for this file", fd_,
             strerror(errno));
    ctx_.stats().add(ctx_.stats().direct_open_refused);
    no_direct_.store(true);
    return -1;
  }
  dfd = adopt_private_fd(dfd, this);
  if (dfd < 0) return -1;  // no memory to keep it: this request takes the page cache
  direct_fd_.store(dfd, std::memory_order_release);
  return dfd;
}

void File::forget_direct_fd(int fd) {
  // The program closed (or replaced) our twin: drop it without closing;
  // the next direct request opens a new one.  Queued writes on it finish
  // first, before the number can be reused for another file.
  wb_.wait_all();
  int expected = fd;
  if (direct_fd_.compare_exchange_strong(expected, -1)) release_private_fd(fd);
}

ssize_t File::transfer(hio_op op, char* buf, size_t len, uint64_t offset, const Plan* plan) {
  // Nothing reads or overwrites a range while a queued write of it is pending.
  if (!wb_.idle()) wb_.wait_overlap(offset, len);
  if (op != HIO_OP_WRITE) return route(describe(op, buf, len, offset), buf, true, plan);
  // The contention signal: how many threads are writing this file right now.
  const uint32_t writers = writers_.fetch_add(1, std::memory_order_relaxed) + 1;
  hio_request req = describe(op, buf, len, offset);
  req.writers = writers;
  ssize_t n = route(req, buf, true, plan);
  writers_.fetch_sub(1, std::memory_order_relaxed);
  return n;
}

ssize_t File::execute_plan(const Plan& plan, void* buf, size_t len, uint64_t offset) {
  if (len > SSIZE_MAX) len = SSIZE_MAX;
  return transfer(plan.req.op, static_cast<char*>(buf), len, offset, &plan);
}

void File::finish_passthrough(const Plan& plan, uint64_t bytes) {
  // The caller executed it (the shim's exact calls through the cache or
  // uncached; a direct plan goes to execute_plan, whose route traces it).
  trace(plan.req, plan.decision);
  if (plan.started_ns) learn_.observe(plan.req, plan.decision, bytes, monotonic_ns() - plan.started_ns, true);
  stream_.extend(plan.req.offset, plan.req.length);
  Stats& s = ctx_.stats();
  s.count_rule(plan.decision.rule, plan.req.length);
  s.count_request(plan.req.op, plan.decision.path);
  s.count_bytes(plan.req.op, plan.decision.path, bytes);
}

void File::note_dontcache_refused() {
  if (!dontcache_refused_.exchange(true)) ctx_.stats().add(ctx_.stats().dontcache_refused);
}

bool File::bounces_read(const char* buf, size_t len, uint64_t offset) {
  return len >= kBouncedReadMin && slow_copy_distance(offset, reinterpret_cast<uintptr_t>(buf));
}

bool File::drops_behind(uint64_t len) const {
  // Hybrid's own uncached writes only: the dontcache policy is the kernel's
  // RWF_DONTCACHE, the fixed policy hybrid is measured against.
  return ctx_.policy().mode == HIO_MODE_HYBRID && has_writeback_ && !(open_flags_ & O_APPEND) &&
         drop_behind_wanted(len, ctx_.file_settings().drop_behind);
}

void File::release_thread_staging() { release_thread_buffers(); }

ssize_t File::pread(void* buf, size_t len, uint64_t offset) {
  if (len > SSIZE_MAX) len = SSIZE_MAX;
  return transfer(HIO_OP_READ, static_cast<char*>(buf), len, offset);
}

ssize_t File::pwrite(const void* buf, size_t len, uint64_t offset) {
  if (len > SSIZE_MAX) len = SSIZE_MAX;
  // The engine never writes into the caller's buffer on the write path.
  return transfer(HIO_OP_WRITE, const_cast<char*>(static_cast<const char*>(buf)), len, offset);
}

ssize_t File::read(void* buf, size_t len) {
  std::lock_guard<std::mutex> lock(position_mu_);
  off_t pos = lseek(fd_, 0, SEEK_CUR);
  if (pos < 0) return -errno;
  ssize_t n = pread(buf, len, static_cast<uint64_t>(pos));
  if (n > 0 && lseek(fd_, pos + n, SEEK_SET) < 0) return -errno;
  return n;
}

ssize_t File::write(const void* buf, size_t len) {
  std::lock_guard<std::mutex> lock(position_mu_);
  if (open_flags_ & O_APPEND) {
    wb_.wait_all();  // the kernel picks the offset: it may be anywhere queued writes land
    // The kernel picks the offset and moves the position atomically.
    hio_request req = describe(HIO_OP_WRITE, static_cast<const char*>(buf), len, 0);
    hio_decision d;
    hio_policy_decide(&ctx_.policy(), &req, &d);
    ctx_.stats().count_rule(d.rule, len);
    ctx_.stats().count_request(HIO_OP_WRITE, d.path);
    ssize_t n = sys().write(fd_, buf, len);
    if (n < 0) return -errno;
    ctx_.stats().count_bytes(HIO_OP_WRITE, HIO_PATH_BUFFERED, static_cast<uint64_t>(n));
    return n;
  }
  off_t pos = lseek(fd_, 0, SEEK_CUR);
  if (pos < 0) return -errno;
  ssize_t n = pwrite(buf, len, static_cast<uint64_t>(pos));
  if (n > 0 && lseek(fd_, pos + n, SEEK_SET) < 0) return -errno;
  return n;
}

int File::sync(bool data_only) {
  // Direct writes bypassed the cache but not the device's volatile cache or
  // the inode's size update: one fsync on any descriptor covers both paths.
  ctx_.stats().add(ctx_.stats().fsyncs);
  wb_.wait_all();
  const uint64_t started = learn_.attached() ? monotonic_ns() : 0;
  int rc = data_only ? sys().fdatasync(fd_) : sys().fsync(fd_);
  rc = rc == 0 ? 0 : -errno;
  // The flush is what the writes since the last one still owed.
  if (started && rc == 0) learn_.flush(monotonic_ns() - started);
  // A queued write that failed is reported here, once (as writeback errors are).
  int deferred = wb_.take_error();
  return deferred ? -deferred : rc;
}

void File::note_sync(uint64_t ns) {
  ctx_.stats().add(ctx_.stats().fsyncs);
  learn_.flush(ns);
}

int File::truncate(uint64_t length) {
  wb_.wait_all();
  return sys().ftruncate(fd_, static_cast<off_t>(length)) == 0 ? 0 : -errno;
}

void File::set_mapped(bool mapped) {
  if (mapped) {
    wb_.wait_all();  // a mapping sees the file, not the queue
  }
  mapped_.store(mapped, std::memory_order_relaxed);
}

int File::close() {
  wb_.wait_all();
  const int deferred = wb_.take_error();
  int dfd = direct_fd_.exchange(-1);
  if (dfd >= 0) {
    release_private_fd(dfd);
    sys().close(dfd);
  }
  int rc = 0;
  if (owns_fd_ && fd_ >= 0) {
    const uint64_t started = learn_.attached() ? monotonic_ns() : 0;
    rc = sys().close(fd_);
    rc = rc == 0 || errno == EINTR ? 0 : -errno;  // Linux always releases the fd, even on EINTR
    if (started) learn_.flush(monotonic_ns() - started);  // what close flushed
  }
  fd_ = -1;
  return deferred ? -deferred : rc;
}

}  // namespace hybridio
