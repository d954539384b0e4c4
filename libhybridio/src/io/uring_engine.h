// uring_engine.h - the parallel direct engine: one large direct body cut
// into chunks that are in flight together, through io_uring.
//
// A body of `len` bytes at `offset` is cut into chunks of `chunk_size`
// bytes; up to `queue_depth` of them are submitted at once on the calling
// thread's own ring (thread_local: no locking, no cross-thread wakeups).
// The call returns when every submitted chunk has completed.  The result is
// the contiguous prefix that was transferred, exactly as one synchronous
// call would report it: the first failed chunk ends the prefix with its
// errno; the first short chunk (EOF, a full device) ends it with the bytes
// it did move.  Chunks after the end are not submitted once the end is
// known; those already in flight are waited for.  A write whose later
// chunks landed and extended the file past the reported prefix is cut back
// to what it reports (see docs/architecture.md).
//
// Misaligned caller memory ("bounce") goes through the thread's aligned
// staging slots (from the NUMA-local BufferPool, registered with the ring
// as fixed buffers when the kernel allows): chunk k+1 is copied while chunk
// k is in flight.
//
// io_uring may be unavailable (an old kernel: ENOSYS; the
// kernel.io_uring_disabled sysctl or a seccomp profile: EPERM; no memory
// for the rings).  That is detected once per process, counted
// (uring_unavailable), and the callers use synchronous submission instead.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "hybridio/policy.h"
#include "io/engine_settings.h"

struct io_uring;

namespace hybridio {

class Stats;

// The engine's settings (EngineSettings, engine_settings.h:
// HYBRIDIO_QUEUE_DEPTH, HYBRIDIO_CHUNK_SIZE, HYBRIDIO_URING,
// HYBRIDIO_WRITE_BEHIND, HYBRIDIO_WRITE_BEHIND_LIMIT, HYBRIDIO_READ_AHEAD),
// changeable at run time with hio_engine_set().  They are published as one
// immutable snapshot: engine_settings() is one atomic load and a copy, from
// any thread, and never sees half of an update.  Until the runtime
// publishes the configured ones (publish_first_engine_settings()), the
// defaults.
EngineSettings engine_settings();
// Publishes the first snapshot without allocating: `first` outlives every
// reader (the runtime's copy of the configuration).  Called once, before
// any set_engine_settings().
void publish_first_engine_settings(const EngineSettings* first);
// Replaces the snapshot for all files.  The values are within the limits
// of their rows in the settings table: the caller clamps them
// (clamp_engine_settings(), runtime/config.h).
void set_engine_settings(const hio_engine_config& s);

// The counters the engine counts into what belongs to no one request (the
// process's io_uring detection: uring_unavailable): the runtime's, set when
// it starts; before that, such counts are not kept.
void set_engine_stats(Stats* stats);

// Transparent mode, set once by the LD_PRELOAD shim before any I/O: the
// program must not be able to tell the engine is there, so the engine
// opens no descriptor of its own for its requests.  Each thread's ring is then reached only
// through its registered index (its descriptor is closed right after
// setup) and carries kPinnedSlots fixed-file slots, which the requests of
// pinned_request.h use for the program's open file and its O_DIRECT twin.
// A kernel without registered rings (before 5.18) or sparse file tables
// (before 5.19) makes io_uring unusable in this mode: requests then stay
// on the program's own descriptor, through the page cache.
void set_transparent_mode(bool on);
bool transparent_mode();
constexpr unsigned kPinnedSlots = 2;

// The most chunks in flight per request (HYBRIDIO_QUEUE_DEPTH's bound):
// the engine's per-request bookkeeping is sized by it, so the I/O path
// allocates nothing.
constexpr unsigned kMaxQueueDepth = 256;

struct ChunkedResult {
  uint64_t done = 0;  // contiguous prefix transferred
  int error = 0;      // errno that ended the prefix (0: complete, or short)
};

// Whether io_uring works in this process (detected once; counted when not).
bool uring_usable();

// Transfers [offset, offset + len) between `buf` and the O_DIRECT
// descriptor `fd` with chunks in flight together.  Requires uring_usable().
// `offset` and `len` are multiples of the device alignment; `buf` is
// aligned unless `bounce`.  `len` must be at least 2 chunks to be worth it.
// `fixed_file`: `fd` is a fixed-file slot of the calling thread's ring (a
// PinnedRequest's twin under the shim); reads only (writes there go one
// transfer at a time, so that a file grows in order), copies out of
// staging slots stop at the end of the caller's memory (checked_copy.h),
// and a chunk the kernel asks to retry ends the prefix instead.
ChunkedResult parallel_direct(hio_op op, int fd, char* buf, uint64_t len, uint64_t offset,
                              bool bounce, const EngineSettings& settings, Stats& stats, bool fixed_file = false);

// For a thread that keeps its own chunks in flight across requests (the
// write-behind writer, write_behind.cc): the calling thread's ring, with
// kMaxQueueDepth entries, or nullptr when io_uring is unusable.  Only the
// calling thread may use it, and never with a parallel_direct() call of
// its own in progress.
io_uring* calling_thread_ring();
// Closes the calling thread's ring (nothing of it may be in flight): after
// it refused to enter (ring_loop.h), the next use opens a fresh one.
void discard_calling_thread_ring();
// Gives the calling thread's staging slots back to the pool (nothing of the
// ring may be in flight); the next misaligned body takes them again.
void release_calling_thread_buffers();

// A ring of the calling thread's own that no descriptor number shows, as
// the thread's ring under the shim: `slots` sparse fixed-file slots, the
// ring reached through its registered index (drop_behind.h's worker).
// 0 or -errno (-EOPNOTSUPP: a kernel before 5.19).  Closed with
// close_fdless_ring(); a forked child must not use its parent's.
int open_fdless_ring(io_uring* ring, unsigned depth, unsigned slots);
void close_fdless_ring(io_uring* ring);
// Whether the kernel behind such a ring knows every operation in `ops`.
bool fdless_ring_supports(io_uring* ring, std::initializer_list<int> ops);

// Unmaps and closes a ring, never closing a descriptor number that the
// program has closed and reused meanwhile.
void close_ring(io_uring* ring);

// What a completed chunk transferred (bytes or -errno), as one blocking
// system call would have reported it: `res` from its completion, passed
// through the completion hook (below) when one is set, and -EAGAIN/-EINTR
// retried synchronously on `buf` (counted in uring_retries) unless `fd` < 0
// (a fixed file: nothing to retry on; the result stands).
int chunk_result(hio_op op, int fd, char* buf, uint64_t len, uint64_t offset, int res, Stats& stats);

// Testing: called with each chunk's completion result (bytes or -errno)
// before the engine interprets it; returns the result to use.  A hook can
// turn a completed chunk into a failure, a short transfer or -EAGAIN (which
// the engine retries synchronously, as the kernel would).  nullptr: none.
using CompletionHook = int (*)(hio_op op, uint64_t offset, uint64_t len, int res);
void set_completion_hook(CompletionHook hook);

// Testing: forget the detection result and the calling thread's ring.
void reset_uring_detection_for_testing();

}  // namespace hybridio
