// checked_copy.h - copies between the caller's memory and the engine's own
// without trusting the caller's memory.
//
// The kernel does the copy (process_vm_readv/writev on this process), so a
// page that is not mapped, not readable (into_engine) or not writable ends
// the copy where a system call on that memory would have stopped, instead
// of a SIGSEGV inside the library.  It pins every page of the caller's
// range and copies page by page with the kernel's copy routine (`rep movsb`
// on the development VM's AMD EPYC).  That routine is five times slower
// when the destination lies 1-31 bytes past the source modulo a page: 1.5-
// 2.1 GB/s against 8-10 for warm 1 MiB copies, and 1.7-1.8 against 4.5-4.9
// out of blocks just read with O_DIRECT, where memcpy copies 7.4-9.0.  That
// is the common case, not a corner: a malloc'd buffer of 128 KiB or more
// starts 16 bytes into a page, the engine's staging buffers at a page.
// Such copies go through a small buffer of the thread's own that lies half
// a page away from both ends (3.4-3.9 GB/s there); the others are direct.
// Under the shim this copy bounds read-ahead streams (docs/performance.md).
#pragma once

#include <cstddef>
#include <cstdint>

namespace hybridio {

// Whether the kernel copies slowly from an address congruent to `from` to
// one congruent to `to` (modulo a page): the destination lies 1-31 bytes
// past the source.  The kernel's own buffered read copies out of the page
// cache the same way, from the file offset's place in a page.
bool slow_copy_distance(uintptr_t from, uintptr_t to);

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
