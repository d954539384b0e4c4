// dio_alignment.cc - see dio_alignment.h.
#include "probe/dio_alignment.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U
#endif

namespace hybridio {
namespace {

uint32_t logical_block_size(dev_t dev) {
  // Partitions have no queue/ directory of their own; try the device and its parent.
  const char* suffixes[] = {"queue/logical_block_size", "../queue/logical_block_size"};
  for (const char* suffix : suffixes) {
    char path[128];
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/%s", major(dev), minor(dev), suffix);
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char text[32] = {};
    ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (n > 0) {
      unsigned long v = strtoul(text, nullptr, 10);
      if (v >= 512 && v <= 65536 && (v & (v - 1)) == 0) return static_cast<uint32_t>(v);
    }
  }
  return 0;
}

}  // namespace

DioAlignment query_dio_alignment(int fd) {
  DioAlignment a;
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0) {
    if (stx.stx_mask & STATX_DIOALIGN) {
      a.mem_align = stx.stx_dio_mem_align;
      a.offset_align = stx.stx_dio_offset_align;
      a.from_statx = true;
      return a;
    }
    uint32_t lbs = logical_block_size(makedev(stx.stx_dev_major, stx.stx_dev_minor));
    a.mem_align = a.offset_align = lbs ? lbs : 4096;
    return a;
  }
  a.mem_align = a.offset_align = 4096;
  return a;
}

}  // namespace hybridio
