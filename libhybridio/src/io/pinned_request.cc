// pinned_request.cc - see pinned_request.h.
#include "io/pinned_request.h"

#include <fcntl.h>
#include <liburing.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "io/lease_guard.h"
#include "platform/syscall_table.h"

#include "io/uring_engine.h"

namespace hybridio {
namespace {

constexpr unsigned kPinnedSlot = 0;  // the program's open file
constexpr unsigned kTwinSlot = 1;    // its O_DIRECT twin, for one request
static_assert(kTwinSlot < kPinnedSlots, "the thread ring has a slot for each");

// A transfer the kernel asks to retry (-EAGAIN, -EINTR) is resubmitted, as a
// blocking system call would have retried it; bounded, so that a file that
// keeps answering -EAGAIN reports it rather than spinning.
constexpr int kRetries = 64;

// The most one transfer carries (the kernel would cut a larger one at
// MAX_RW_COUNT; callers loop).
constexpr size_t kMaxTransfer = 1u << 30;

thread_local PinnedRequest* t_current = nullptr;

}  // namespace

PinnedRequest* PinnedRequest::current() { return t_current; }

int PinnedRequest::twin_slot() { return static_cast<int>(kTwinSlot); }

PinnedRequest::~PinnedRequest() { end(); }

io_uring_sqe* PinnedRequest::next_sqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(ring_);
  if (!sqe) {  // never expected: every call submits what it prepared
    loop_.submit([this](uint64_t, int res) {
      if (in_flight_.active) note_completion(res);
    });
    sqe = io_uring_get_sqe(ring_);
  }
  return sqe;
}

int PinnedRequest::run(unsigned count, int* results) {
  for (unsigned i = 0; i < count; ++i) results[i] = -ECANCELED;
  unsigned seen = 0;
  auto on_completion = [&](uint64_t index, int res) {
    if (index < count) results[index] = res;
    ++seen;
  };
  while (seen < count && !loop_.idle())
    if (int rc = loop_.pump(on_completion); rc < 0) return rc;
  return 0;
}

int PinnedRequest::begin(int fd, int status_flags, dev_t dev, ino_t ino) {
  ring_ = transparent_mode() ? calling_thread_ring() : nullptr;
  if (!ring_ || t_current) return -EOPNOTSUPP;
  loop_.reset(ring_);
  fd_ = fd;
  status_flags_ = status_flags;
  dev_ = dev;
  ino_ = ino;
  pinned_fds_[0] = fd;
  io_uring_sqe* sqe = next_sqe();
  io_uring_prep_files_update(sqe, pinned_fds_, 1, kPinnedSlot);
  io_uring_sqe_set_data64(sqe, 0);
  int res;
  int rc = run(1, &res);
  if (rc < 0) return rc;
  if (res < 0) return res;  // -EBADF: not an open descriptor
  pinned_ = true;
  t_current = this;
  return 0;
}

void PinnedRequest::end() {
  if (!pinned_) return;
  if (in_flight_.active) finish_direct();  // never leave with the kernel still using the caller's memory
  unsigned count = 0;
  if (twin_) {
    io_uring_sqe* sqe = next_sqe();
    io_uring_prep_close_direct(sqe, kTwinSlot);
    io_uring_sqe_set_data64(sqe, count++);
  }
  pinned_fds_[0] = -1;
  io_uring_sqe* sqe = next_sqe();
  io_uring_prep_files_update(sqe, pinned_fds_, 1, kPinnedSlot);
  io_uring_sqe_set_data64(sqe, count++);
  int results[2];
  run(count, results);
  if (twin_) twin_closed(true);
  pinned_ = twin_ = direct_read_ = false;
  t_current = nullptr;
}

void PinnedRequest::prep_transfer(unsigned slot, hio_op op, char* buf, size_t len, uint64_t offset, int rwf) {
  io_uring_sqe* sqe = next_sqe();
  if (op == HIO_OP_READ)
    io_uring_prep_read(sqe, static_cast<int>(slot), buf, static_cast<unsigned>(len), offset);
  else
    io_uring_prep_write(sqe, static_cast<int>(slot), buf, static_cast<unsigned>(len), offset);
  sqe->flags |= IOSQE_FIXED_FILE;
  sqe->rw_flags = rwf;
  io_uring_sqe_set_data64(sqe, 0);
}

ssize_t PinnedRequest::transfer(unsigned slot, hio_op op, char* buf, size_t len, uint64_t offset, int rwf) {
  len = std::min<size_t>(len, kMaxTransfer);
  for (int attempt = 0;; ++attempt) {
    prep_transfer(slot, op, buf, len, offset, rwf);
    int res;
    int rc = run(1, &res);
    if (rc < 0) return rc;
    // RWF_NOWAIT asks to be told -EAGAIN: that is the answer, not a retry.
    const bool retry = res == -EINTR || (res == -EAGAIN && !(rwf & RWF_NOWAIT));
    if (retry && attempt < kRetries) continue;
    return res;
  }
}

ssize_t PinnedRequest::buffered(hio_op op, char* buf, size_t len, uint64_t offset, int rwf) {
  return pinned_ ? transfer(kPinnedSlot, op, buf, len, offset, rwf) : -EBADF;
}

void PinnedRequest::finish_reads(uint64_t eof) {
  if (!direct_read_ || !pinned_) return;
  char byte;
  buffered(HIO_OP_READ, &byte, 1, eof, 0);
  direct_read_ = false;
}

int PinnedRequest::open_twin() {
  if (twin_) return 0;
  if (!pinned_) return -EBADF;
  if (twin_error_) return twin_error_;
  // The twin keeps what the program's open file has that changes the
  // result: its access mode, synchronous-write flags, and O_NOATIME (a read
  // through the twin must not update the access time when the program's
  // own read would not).
  int flags = (status_flags_ & (O_ACCMODE | O_SYNC | O_DSYNC | O_NOATIME)) | O_DIRECT | O_LARGEFILE;  // no O_CLOEXEC: a fixed slot has none (EINVAL)
  // The twin is an open of the inode, which would break the program's
  // lease: none while one is held or being set (lease_guard.h).
  if (!twin_may_open(fd_, dev_, ino_, true)) return twin_error_ = -EAGAIN;
  snprintf(twin_path_, sizeof twin_path_, "/proc/self/fd/%d", fd_);
  io_uring_sqe* sqe = next_sqe();
  io_uring_prep_openat_direct(sqe, AT_FDCWD, twin_path_, flags, 0, kTwinSlot);
  io_uring_sqe_set_data64(sqe, 0);
  int res;
  int rc = run(1, &res);
  if (rc < 0 || res < 0) {
    // A ring that failed has waited for its entries (ring_loop.h): the
    // open is not in flight either way.
    twin_closed(true);
    return twin_error_ = rc < 0 ? rc : res;
  }
  twin_ = true;
  // The open went through the descriptor number: if it names another file
  // now, the twin is not of the pinned file and must not be written.
  struct stat st;
  if (sys().fstat(fd_, &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) {
    sqe = next_sqe();
    io_uring_prep_close_direct(sqe, kTwinSlot);
    io_uring_sqe_set_data64(sqe, 0);
    run(1, &res);
    twin_ = false;
    twin_closed(true);
    return twin_error_ = -ESTALE;
  }
  return 0;
}

int PinnedRequest::start_direct(hio_op op, char* buf, size_t len, uint64_t offset) {
  if (!twin_ || in_flight_.active) return -EBADF;
  len = std::min<size_t>(len, kMaxTransfer);
  prep_transfer(kTwinSlot, op, buf, len, offset, 0);
  in_flight_ = {true, op, buf, len, offset, false, 0};
  // A busy ring keeps it prepared: finish_direct() submits it.  A ring that
  // refuses work has given it its result (ring_loop.h): reported here.
  if (int rc = loop_.submit([this](uint64_t, int res) { note_completion(res); }); rc < 0) {
    in_flight_.active = false;
    return rc;
  }
  return 0;
}

void PinnedRequest::note_completion(int res) {
  in_flight_.completed = true;
  in_flight_.res = res;
}

ssize_t PinnedRequest::finish_direct() {
  if (!in_flight_.active) return -EBADF;
  // Never returns while the kernel may still be using the caller's memory:
  // the ring loop waits for what is in flight even when the ring fails.
  while (!in_flight_.completed && !loop_.idle()) {
    if (int rc = loop_.pump([this](uint64_t, int res) { note_completion(res); }); rc < 0 && !in_flight_.completed)
      note_completion(rc);
  }
  const InFlight done = in_flight_;
  in_flight_.active = false;
  const int res = done.completed ? done.res : -ECANCELED;
  if (res == -EAGAIN || res == -EINTR) return direct(done.op, done.buf, done.len, done.offset);
  return res;
}

ssize_t PinnedRequest::direct(hio_op op, char* buf, size_t len, uint64_t offset) {
  return twin_ ? transfer(kTwinSlot, op, buf, len, offset, 0) : -EBADF;
}

}  // namespace hybridio
