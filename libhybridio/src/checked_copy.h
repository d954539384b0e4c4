// checked_copy.h - copies between the caller's memory and the engine's own
// without trusting the caller's memory.
//
// The kernel does the copy (process_vm_readv/writev on this process), so a
// page that is not mapped, not readable (into_engine) or not writable ends
// the copy where a system call on that memory would have stopped, instead
// of a SIGSEGV inside the library.  It pins every page of the caller's
// range and copies page by page: on the development VM 4.0-4.4 GB/s out of
// blocks just read with O_DIRECT, where memcpy copies 6.6-8.2 (about 8 against
// 20-30 with both ranges in the CPU's cache).  Under the shim this copy is
// what bounds read-ahead streams there (docs/performance.md, thirtieth
// session): a memcpy read 1.33x faster, a read of a memfd no faster.
#pragma once

#include <cstddef>

namespace hybridio {

// Copies `len` bytes between the engine's buffer `engine` and the caller's
// `user`, in the direction given; returns the bytes copied (< len when the
// caller's memory ends).
size_t copy_checked(char* engine, char* user, size_t len, bool into_engine);

}  // namespace hybridio
