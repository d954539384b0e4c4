// checked_copy.h - copies between the caller's memory and the engine's own
// without trusting the caller's memory.
//
// The kernel does the copy (process_vm_readv/writev on this process), so a
// page that is not mapped, not readable (into_engine) or not writable ends
// the copy where a system call on that memory would have stopped, instead
// of a SIGSEGV inside the library.  It pins every page of the caller's
// range and copies page by page with the kernel's copy routine.
//
// On some CPUs that routine (`rep movsb`) is about five times slower when
// the destination lies 1-31 bytes past the source modulo a page, which is
// the common case, not a corner: a malloc'd buffer of 128 KiB or more
// starts 16 bytes into a page, the page cache and the engine's staging
// buffers at a page.  Where the process measures that (once, on first
// need: short_distance_copies_slow()), such copies go through a small
// buffer of the thread's own that lies half a page away from both ends;
// elsewhere every copy is direct.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hybridio {

// Whether the destination `to` lies 1-31 bytes past the source `from`
// modulo a page: the distance at which some CPUs copy slowly.  The kernel's
// own buffered read copies out of the page cache from the file offset's
// place in a page.
bool short_copy_distance(uintptr_t from, uintptr_t to);

// Whether this CPU's kernel copy is slow at a short distance: a 256 KiB
// copy at 16 bytes took more than twice as long as one at half a page, best
// of five each.  Measured once per process (about 0.3 ms), on first call;
// false when the measurement cannot be made.
bool short_distance_copies_slow();

// short_copy_distance() on a CPU where short_distance_copies_slow().
bool slow_copy_distance(uintptr_t from, uintptr_t to);

// Tests: makes short_distance_copies_slow() answer `slow` from now on.
void assume_short_distance_copies_slow(bool slow);

// A copy at a slow distance goes through a bounce buffer in pieces of this
// size (256 KiB copied 3.4-3.7 GB/s, 64 KiB 2.9-3.1 with more system calls,
// and larger ones leave the CPU's L2 cache) ...
constexpr size_t kSlowCopyPiece = 256 << 10;
// ... starting this far into a page: half a page from data at `from`, so
// that neither the copy into the bounce buffer nor the copy out of it is at
// a slow distance.  A bounce buffer of a piece and a page holds any piece.
uintptr_t harmless_page_offset(uintptr_t from);

// Copies `len` bytes between the engine's buffer `engine` and the caller's
// `user`, in the direction given; returns the bytes copied (< len when the
// caller's memory ends).
size_t copy_checked(char* engine, char* user, size_t len, bool into_engine);

}  // namespace hybridio
