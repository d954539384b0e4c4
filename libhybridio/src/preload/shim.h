// shim.h - the LD_PRELOAD shim's decisions, shared by the wrappers in
// interpose.cc: whether a call may be accelerated, which tracked file it is
// for, and the descriptor life events.  The accelerated read or write
// itself runs in exact_call.h.
//
// Every function here returns -errno on failure (never touching errno);
// the wrappers translate to libc's -1/errno.  A call is accelerated only
// when the shim is initialised, this thread is not already inside the
// shim or the engine (the engine's own pread/pwrite land in the wrappers
// too), the process is not a vfork child sharing its parent's memory, the
// request is large enough that the policy could route it anywhere but the
// page cache, and the descriptor is a tracked regular file.
#pragma once

#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <cstdint>

#include "preload/fd_table.h"

namespace hybridio::preload {

// Per-thread re-entrancy guard: `entered` is false when already inside.
class Guard {
 public:
  Guard();
  ~Guard();
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
  bool entered() const { return entered_; }

 private:
  bool entered_;
};

// The smallest read (write) worth looking at: the smallest the policy in
// effect could send anywhere but the page cache.  Anything smaller goes
// straight to libc, with no system call of the shim's own.  UINT64_MAX
// before initialisation, or under policy "buffered".
uint64_t candidate_size(bool write);

// Initialises the shim (constructor of the preloaded library).  A process
// that starts in seccomp strict mode (/proc/self/status "Seccomp: 1") gets
// the pass-through below from the start; one that starts under a filter
// ("Seccomp: 2") keeps the shim, and every call of its own that the filter
// refuses with an error falls back to the program's own call.
void initialize();

// Pass-through: every wrapper goes straight to libc and the shim makes no
// system call of its own, from here to the end of the process (or of the
// seccomp call that set it, if that call fails).
bool passthrough();
// The program is about to enter a seccomp mode through libc (prctl
// PR_SET_SECCOMP, or syscall(SYS_seccomp) with SECCOMP_SET_MODE_STRICT or
// SECCOMP_SET_MODE_FILTER): pass-through from now on, and everything of
// the shim's own finished first - drop-behind writeback handed to its
// worker, the calling thread's ring closed, HYBRIDIO_STATS and the learned
// costs written - so that the seccomp call comes after all of it, as in
// the program.  Accelerated calls already running in other threads finish
// as they are.  Returns whether this call turned pass-through on; pass
// that to after_sandbox() with the seccomp call's success (a failed call
// turns the shim back on).
bool before_sandbox();
void after_sandbox(bool turned_on, bool entered);

// True in a vfork child, where the shim must not touch shared state.
bool in_vfork_child();

// The tracked file behind `fd`, classifying it on first use; empty when the
// descriptor is not to be accelerated.  Call only inside an entered Guard.
TrackedRef lookup(int fd);

// Whether the descriptor is known to be left alone (no system call).
bool is_ignored(int fd);

// stdio: returns items transferred, or (size_t)-1 when it declined (caller
// then uses the real function).  What it decides is glibc's: the stream's
// own mode (a stream not open for the direction declines, and glibc fails
// it with EBADF), the bytes left in the stream's buffer, the error
// indicator and errno (untouched by a call that succeeds).
size_t accel_stdio(bool write, void* buf, size_t size, size_t count, FILE* stream);

// After an accelerated call (exact_call) on this thread: under RLIMIT_AS or
// RLIMIT_DATA (memory_headroom.h) the thread's staging, bounce and ring
// slot buffers go back, so that the shim holds no buffer between calls.
void after_accelerated_call();

// Descriptor life events.
void on_opened(int fd);
void on_close(int fd);
void on_close_range(unsigned first, unsigned last);
void on_replaced(int fd);  // dup2/dup3 target, F_SETFL
void on_mapped(int fd);
// The program's fsync (fdatasync), as libc makes it, timed: no lock held
// and no signal blocked, a cancellation point as before.  It first waits
// for the drop-behind writes to the file (drop_behind_before_sync).  What a
// successful one took on a tracked file is charged to the writes the shim
// made since the last (learned thresholds, File::note_sync); errno is the
// call's.
int timed_sync(int fd, bool data_only);

// The process is leaving through _exit/_Exit (fork children of fio, for
// one): do what exit() would have done, drop its last drop-behind writes'
// pages (drop_behind.h) and write the stats file.
void before_exit();

}  // namespace hybridio::preload
