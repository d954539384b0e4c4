// make_dirs.h - `mkdir -p` for the library's own directories (the learned
// state, the re-use history).
#pragma once

#include <sys/types.h>

namespace hybridio {

// Creates `dir` and each missing parent with `mode` (less the umask).
// 0 when `dir` exists afterwards, else -errno.  Allocates nothing.
int make_dirs(const char* dir, mode_t mode);

}  // namespace hybridio
