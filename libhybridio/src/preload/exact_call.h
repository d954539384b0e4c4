// exact_call.h - runs one intercepted read or write of a tracked file so
// that the program sees exactly what its own system call would have given.
//
// The call is planned by the policy first (File::plan; the plan of a call
// with one buffer may be an exploration of another path, and is followed
// all the same), then executed in the cheapest way that keeps every POSIX
// property:
//  - buffered: the same call, made to the kernel as it was asked;
//  - uncached: one preadv2/pwritev2 with RWF_DONTCACHE on the program's
//    own descriptor (offset -1 when the call uses the file position), so
//    positions, O_APPEND, RLIMIT_FSIZE, short counts and EFAULT are the
//    kernel's own;
//  - direct, and a read through the cache of 256 KiB or more into memory
//    the kernel copies slowly to from the cache (File::bounces_read: the
//    engine reads it into its bounce buffer in pieces and copies it on):
//    an exact section, the only place where one call becomes several
//    kernel requests (a buffered head and tail, a direct body, pieces):
//      * cancellation is held off and every signal blocked until the call
//        is complete, as a system call runs to completion before a handler;
//      * a lock per inode (striped) makes the call atomic against the
//        process's other accelerated calls: writers exclusive, readers
//        shared, as the inode lock serialises writes in the kernel;
//      * RLIMIT_FSIZE is applied first: a write that crosses the limit is
//        shortened, one that starts beyond it is left to the kernel, which
//        raises SIGXFSZ and fails with EFBIG;
//      * a call at the file position reserves its range with one atomic
//        lseek(SEEK_CUR) before any byte moves (the kernel serialises it
//        against every other user of the open file, in any thread, signal
//        handler or process) and gives back what it did not use;
//      * the pieces run inside a PinnedRequest (pinned_request.h): on the
//        open file the descriptor referred to when the call began, with an
//        O_DIRECT twin that never takes a descriptor number;
//      * a bad buffer is found by the kernel: a direct piece that fails
//        with EFAULT is redone through the page cache, which moves exactly
//        the bytes before the fault, as the plain call would.
// What remains different is listed in docs/preload.md.
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>

#include "platform/fsize_limit.h"
#include "preload/fd_table.h"

namespace hybridio::preload {

// The most one read or write moves on Linux (MAX_RW_COUNT).
constexpr size_t kMaxRwCount = 0x7ffff000;

// RLIMIT_FSIZE, shared with the engine's direct paths (fsize_limit.h).
using hybridio::fsize_allowance;

// Runs the call on tracked file `t` behind descriptor `fd`: `count`
// elements of `iov` (already checked: 1..IOV_MAX, total `total` bytes,
// no overflow) at offset `at`, or at the file position when `at` < 0.
// Returns false when the call is not taken (the caller passes it to libc
// unchanged); else stores the result (bytes or -errno) in *out.
bool exact_call(const TrackedRef& t, int fd, bool write, const iovec* iov, int count, off_t at, size_t total,
                ssize_t* out);

// fork(2): no child may inherit an inode lock held by a thread that does
// not exist in it.
void exact_call_atfork_prepare();
void exact_call_atfork_parent();
void exact_call_atfork_child();

}  // namespace hybridio::preload
