// ring_loop.h - the one place the engine hands prepared io_uring entries to
// the kernel and collects their completions, with one error policy.
//
// The parallel direct engine (uring_engine.cc), the write-behind writer
// (write_behind.cc) and the shim's
// pinned requests (pinned_request.cc) prepare entries with io_uring_get_sqe()
// as they like; RingLoop submits them, waits, and hands each completion to
// the caller's callback `on_completion(user_data, res)`.
//
// Error policy for a failing io_uring_enter (submit, wait, or both):
//  - EINTR: retried at once.
//  - EAGAIN, EBUSY (the kernel is short of request memory, or the
//    completion queue is overflowing): what has completed is reaped, which
//    frees room, and the call is retried; while nothing is in flight (so
//    nothing will free anything) at most kBusyRetries times, 1 ms apart,
//    after which it counts as any other error.
//  - Anything else (the ring's registered index or descriptor gone, ...):
//    the ring cannot take work.  Entries prepared but not yet taken by the
//    kernel are withdrawn from the submission queue and handed to the
//    callback as failed with that errno; the kernel still owns the entries
//    in flight, and may still be moving data into their buffers, so the loop
//    waits for every one of them (entering the ring without submitting,
//    past sys().ring_enter when that fails, 1 ms apart) and hands them on
//    as usual.
//    Only then does it return -errno.  No buffer is ever released while the
//    kernel may still write into it; the request reports the errno.
//
// Submissions are made, and completions waited for, by the calling thread.
//
// Every entry into the ring goes through sys().ring_enter (syscall_table.h),
// so a test can inject each of these.  One RingLoop per user of a ring, used
// by one thread at a time; the ring may be handed from user to user only
// while nothing of the first is in flight.  Allocates nothing.
#pragma once

#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "platform/syscall_table.h"

namespace hybridio {

class RingLoop {
 public:
  // Attempts with nothing in flight while the ring answers EAGAIN/EBUSY.
  static constexpr int kBusyRetries = 200;

  RingLoop() = default;
  explicit RingLoop(io_uring* ring) : ring_(ring) {}

  // Another ring (or none); nothing of this loop may be in flight.
  void reset(io_uring* ring) {
    ring_ = ring;
    submitted_ = reaped_ = 0;
  }
  io_uring* ring() const { return ring_; }
  // An entry to prepare (nullptr: the submission queue is full).
  io_uring_sqe* get_sqe() { return io_uring_get_sqe(ring_); }
  // Entries taken by the kernel and not yet completed (a completion left
  // in the ring by an earlier user never makes it negative).  The loop
  // counts what its own entries took: a thread's ring can have two loops
  // at once (a pinned request's and the engine's inside it).
  unsigned in_flight() const { return reaped_ < submitted_ ? submitted_ - reaped_ : 0; }
  // Entries prepared and not yet taken by the kernel.
  unsigned unsubmitted() const { return ring_ ? io_uring_sq_ready(ring_) : 0; }
  bool idle() const { return in_flight() == 0 && unsubmitted() == 0; }

  // Hands the prepared entries to the kernel without waiting, and hands
  // on what has already completed.  0 (busy: they stay prepared and go
  // with the next call), or -errno after the policy above.
  template <class F>
  int submit(F&& on_completion) {
    for (;;) {
      if (unsubmitted() == 0) return 0;
      const int rc = enter(0, true);
      reap(on_completion);
      if (rc >= 0 || rc == -EAGAIN || rc == -EBUSY) return 0;
      if (rc != -EINTR) return fail(-rc, on_completion);
    }
  }

  // Submits the prepared entries and waits until at least one completion
  // has been handed on; returns at once when nothing is prepared or in
  // flight.  0, or -errno after the policy above.
  template <class F>
  int pump(F&& on_completion) {
    int busy = 0;
    for (;;) {
      if (reap(on_completion) > 0) return 0;
      if (idle()) return 0;
      const int rc = enter(1, unsubmitted() > 0);
      if (rc >= 0 || rc == -EINTR) continue;
      if (rc == -EAGAIN || rc == -EBUSY) {
        if (reap(on_completion) > 0) return 0;
        if (in_flight() > 0) {
          // Completions will come: wait for one without submitting.
          const int w = enter(1, false);
          if (w < 0 && w != -EINTR && w != -EAGAIN && w != -EBUSY) return fail(-w, on_completion);
          continue;
        }
        if (++busy <= kBusyRetries) {
          usleep(1000);
          continue;
        }
      }
      return fail(-rc, on_completion);
    }
  }

 private:
  // One entry into the ring; counts what the kernel took.
  int enter(unsigned wait_nr, bool submit) {
    const int rc = sys().ring_enter(ring_, wait_nr, submit);
    if (rc > 0 && submit) submitted_ += static_cast<unsigned>(rc);
    return rc;
  }

  // Hands on every completion that is ready; how many.
  template <class F>
  unsigned reap(F& on_completion) {
    io_uring_cqe* cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(ring_, head, cqe) {
      ++seen;
      on_completion(io_uring_cqe_get_data64(cqe), cqe->res);
    }
    if (seen) {
      io_uring_cq_advance(ring_, seen);
      reaped_ += seen;
    }
    return seen;
  }

  // The ring failed with `err`: withdraw what the kernel has not taken,
  // wait for what it has, then report.
  template <class F>
  int fail(int err, F& on_completion) {
    uint64_t user_data;
    while (withdraw_one(&user_data)) on_completion(user_data, -err);
    while (in_flight() > 0) {
      if (reap(on_completion) > 0) continue;
      const int rc = enter(1, false);
      if (rc < 0 && rc != -EINTR) {
        // A thread's ring (DEFER_TASKRUN, uring_engine.cc) posts completions
        // only when its thread enters it for them: once more, past the
        // failing entry point, then 1 ms apart.
        io_uring_get_events(ring_);
        if (io_uring_cq_ready(ring_) == 0) usleep(1000);
      }
    }
    return -err;
  }

  // Takes back the last prepared entry that the kernel has not taken.
  bool withdraw_one(uint64_t* user_data);

  io_uring* ring_ = nullptr;
  unsigned submitted_ = 0;
  unsigned reaped_ = 0;
};

}  // namespace hybridio
