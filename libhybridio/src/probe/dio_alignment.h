// dio_alignment.h - what alignment O_DIRECT needs for one open file.
#pragma once

#include <cstdint>

namespace hybridio {

struct DioAlignment {
  uint32_t mem_align = 0;     // buffer address alignment; 0 = unknown
  uint32_t offset_align = 0;  // file offset and length alignment; 0 = unknown
  bool from_statx = false;    // true when STATX_DIOALIGN answered
};

// statx(STATX_DIOALIGN) (Linux 6.1+).  When the filesystem does not report
// it, falls back to the logical block size of the file's block device
// (sysfs), and to 4096 bytes for both when even that is unknown: 4096 is a
// multiple of every common logical block size, so it is always sufficient
// if the file supports O_DIRECT at all.  A filesystem that reports
// STATX_DIOALIGN with zeros does not support O_DIRECT: both stay 0.
DioAlignment query_dio_alignment(int fd);

}  // namespace hybridio
