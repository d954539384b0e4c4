// lease_guard.h - the library's own opens of a program's file never break
// the program's leases (fcntl F_SETLEASE).
//
// Every open of an inode breaks a write lease on it, and an open for
// writing breaks a read lease, whoever makes it - also the library's
// O_DIRECT twins (pinned_request.h, File::direct_fd()) and the drop-behind
// worker's reopen (drop_behind.h).  So each such open asks here first:
//  - twin_may_open() refuses while the program's descriptor holds a lease
//    (F_GETLEASE on it, by system call: what the kernel says, not a cache)
//    or while the inode is marked: the call then goes through the page
//    cache on the program's own descriptor, as plain;
//  - the shim's fcntl(F_SETLEASE) goes through set_lease(), which marks the
//    inode, waits until no open asked for before the mark is still open
//    (twin_closed()), then sets the lease.  F_UNLCK that succeeds unmarks.
// The two sides are a Dekker pair of sequentially consistent atomics: an
// opener counts itself in, then looks for a mark; a lease setter marks,
// then looks at the count.  One of the two sees the other, so no open of
// the library's overlaps a lease the program sets.
// Marks are keyed by a hash of (device, inode); a collision only sends
// another file's calls through the page cache.  A full mark table marks
// every file.  Everything here is async-signal-safe (atomics, system
// calls, nanosleep) and allocates nothing: a lease set from a signal
// handler does not wait for an open of its own thread, which cannot end
// before the handler returns (such an open is counted per thread).
#pragma once

#include <sys/types.h>

namespace hybridio {

// The program's descriptor `fd`, of inode (`dev`, `ino`): true when an
// open of the inode by the library may go ahead now.  Then the caller
// calls twin_closed() with the same `this_thread` once that open is
// closed (`this_thread`: closed by the calling thread, before it returns
// to the program; false: by a library thread, later).
bool twin_may_open(int fd, dev_t dev, ino_t ino, bool this_thread);
void twin_closed(bool this_thread);

// Whether the program's descriptor `fd` of inode (`dev`, `ino`) holds a
// lease, or the inode is marked: for a library open that stays open across
// calls (File::direct_fd()), which is not counted (no F_SETLEASE of the
// library's API waits for it).
bool lease_held(int fd, dev_t dev, ino_t ino);

// fcntl(fd, F_SETLEASE, arg) as the program asked it, made by
// `real_fcntl` (the shim's next fcntl); its result, errno as it left it.
int set_lease(int fd, int arg, int (*real_fcntl)(int, int, ...));

// In a forked child: no open of the library is in flight there.
void lease_guard_after_fork_child();

}  // namespace hybridio
