// fsize_limit.h - RLIMIT_FSIZE, as the kernel applies it to one write.
//
// A write that crosses the limit moves the bytes below it; one that starts
// at or beyond it fails with EFBIG and raises SIGXFSZ, once.  Where one
// call becomes several kernel requests (the engine's direct paths, the
// shim's exact calls), the request is cut at the limit first, so that no
// piece of it raises a SIGXFSZ the plain call would not have raised, and a
// request that starts at or beyond it is left to one system call.
//
// Thread-safety: any thread; one getrlimit(2) per call.
#pragma once

#include <cstdint>

namespace hybridio {

// How far a write at `offset` may go under RLIMIT_FSIZE: `want`, less when
// it crosses the limit, 0 when it starts at or beyond it (the kernel must
// then raise SIGXFSZ itself).
uint64_t fsize_allowance(uint64_t offset, uint64_t want);

}  // namespace hybridio
