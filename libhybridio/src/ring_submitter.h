// ring_submitter.h - hands a ring's prepared entries to the kernel from a
// thread of the library's own (hybridio-sq), for requests that outlive the
// program's call that made them (the read-ahead window's reads).
//
// Why: the completion of an io_uring request runs as task work of the
// thread that submitted it, and until it has run the kernel flags that
// thread with TIF_NOTIFY_SIGNAL, which signal_pending() counts as a pending
// signal.  A program thread that submitted a read still in flight when its
// call returned then sees a "signal" in its next system calls: a long read
// of /dev/zero or /dev/urandom stops early and comes back short (the
// differential case restore_stream_dev_zero: up to 5 of 32 such reads
// short with the window's reads submitted by the program's thread).
// Submitted here, the task work is this thread's: it waits in a futex,
// which the flag interrupts and the kernel restarts after running it, and
// nothing of it reaches the program.  Waiting for the completions may
// happen on any thread (an io_uring_enter that submits nothing does not
// make its caller a submitter).
//
// Asynchronous: request() returns at once, and the entries are the
// thread's until done().  A synchronous hand-over cost 55-60 us per
// submission on the development VM (two wake-ups of an idle vCPU) where the
// caller's own io_uring_enter costs 0.2, and 1 MiB reads through the window
// ran at 0.96 of the caller's own submissions.  The caller prepares no new
// entry in the ring and takes none back before done() (wait_done()); the
// completion queue stays its own meanwhile (the thread does not touch it).
// The thread enters the ring with sys().ring_enter(ring, 0, true)
// (syscall_table.h), so tests inject its failures as for any other entry.
//
// The ring must be one any thread may enter (a descriptor of the process,
// not one registered with a thread: open_shared_ring()).
#pragma once

#include <liburing.h>

#include <atomic>

namespace hybridio {

// Starts the submitter thread if the process has none; false when it
// cannot run (no memory, no thread), and then nobody may rely on it.
bool ring_submitter_ready();

// Runs `fn(arg)` on the submitter thread and returns its result (0 or
// -errno); -EAGAIN when there is no such thread.  Synchronous: two wake-ups.
// For opening a ring that outlives the program's call: the thread that
// creates a ring is one the kernel sends task work to when the ring is torn
// down, flagged as a pending signal like a completion, so a program thread
// that opened one would see a "signal" in a system call after its close
// (measured: 20 of 20 closes cut a later read of /dev/zero short).  Waiting
// on a ring, and closing it, attach no thread.
int call_on_submitter_thread(int (*fn)(void*), void* arg);

// One ring's hand-overs to the submitter thread.  One user thread at a
// time (the ring's owner, under its own lock).  fork(): a child's copy of
// a parent's RemoteRing is never done; the child uses rings of its own.
class RemoteRing {
 public:
  RemoteRing() = default;
  ~RemoteRing() { wait_done(); }
  RemoteRing(const RemoteRing&) = delete;
  RemoteRing& operator=(const RemoteRing&) = delete;

  // Asks the thread to hand what is prepared in `ring` to the kernel, and
  // returns at once (nothing more is asked while a request is not done).
  // false: no submitter thread; nothing was asked.
  bool request(io_uring* ring);
  // Whether the thread is done with what was asked (or nothing was).
  bool done() const { return !busy_.load(std::memory_order_acquire); }
  // Waits until done().
  void wait_done();
  // After done(): the errno of the thread's last entry into the ring when
  // it failed (negative), else 0; taken once.
  int take_error();

 private:
  friend class Submitter;
  io_uring* ring_ = nullptr;
  int (*call_)(void*) = nullptr;  // instead of entering the ring: call_on_submitter_thread()
  void* call_arg_ = nullptr;
  RemoteRing* next_ = nullptr;   // in the thread's queue
  std::atomic<bool> busy_{false};
  int error_ = 0;                // written by the thread before busy_ clears
};

}  // namespace hybridio
