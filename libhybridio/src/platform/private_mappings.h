// private_mappings.h - anonymous memory for the library's own buffers, kept
// out of the address ranges the program uses.
//
// The kernel places a new mapping in the highest free gap that fits, and
// that is often a range the program has just unmapped.  A buffer of ours
// there makes the program's stale pointer valid again: a write(2) from a
// buffer whose tail the program unmapped copies our bytes where the kernel
// would have stopped with a short count (the differential bad_buffer_tail
// case caught a staging buffer there), and a read(2) into it overwrites our
// data instead of failing with EFAULT.
//
// So the buffers live in a region of their own, far below the mapping the
// process had when the region was first used (the program's mappings grow
// down from above it, or up from far below), each one taken with
// MAP_FIXED_NOREPLACE: nothing is reserved, no address space is charged to
// RLIMIT_AS before a buffer needs it, and a range someone else holds is
// skipped.  Freed ranges are reused first fit.  Where the region cannot be
// had (a small address space, a pre-4.17 kernel that ignores the flag and
// keeps missing the hint), buffers fall back to an ordinary mmap.
//
// Thread-safe; not async-signal-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hybridio {

// `size` bytes (rounded up to whole pages) of zero-filled, read-write,
// private anonymous memory aligned to `alignment` (a power of two; at least
// a page); nullptr when no memory can be had.
char* map_private(size_t size, size_t alignment);

// Returns memory from map_private(size, ...) or map_private_file(fd, size)
// (the same `size`).
void unmap_private(char* data, size_t size);

// The first `size` bytes of the file behind `fd`, mapped shared and
// read-write in the same region as map_private()'s buffers (the descriptor
// may be closed afterwards); nullptr when it cannot be mapped.
char* map_private_file(int fd, size_t size);

// Whether [data, data+size) lies in the private region (for tests).
bool in_private_region(const void* data, size_t size);

}  // namespace hybridio
