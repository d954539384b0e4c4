// make_dirs.cc - see make_dirs.h.
#include "platform/make_dirs.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

namespace hybridio {

int make_dirs(const char* dir, mode_t mode) {
  char path[PATH_MAX];
  const size_t n = strlen(dir);
  if (n == 0) return -ENOENT;
  if (n >= sizeof path) return -ENAMETOOLONG;
  memcpy(path, dir, n + 1);
  for (size_t at = 1; at <= n; ++at) {
    if (at != n && path[at] != '/') continue;
    const char saved = path[at];
    path[at] = '\0';
    const int rc = mkdir(path, mode);
    path[at] = saved;
    if (rc != 0 && errno != EEXIST) return -errno;
  }
  struct stat st;
  if (stat(dir, &st) != 0) return -errno;
  return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

}  // namespace hybridio
