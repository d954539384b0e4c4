// fsize_limit.cc - see fsize_limit.h.
#include "platform/fsize_limit.h"

#include <sys/resource.h>

#include <algorithm>

namespace hybridio {

uint64_t fsize_allowance(uint64_t offset, uint64_t want) {
  rlimit rl{};
  if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return want;
  const uint64_t limit = rl.rlim_cur;
  return offset >= limit ? 0 : std::min<uint64_t>(want, limit - offset);
}

}  // namespace hybridio
