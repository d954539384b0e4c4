// verify_pattern.cc - see verify_pattern.h.
#include "verify_pattern.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>

namespace hybridio::bench {
namespace {
constexpr uint64_t kSector = 512;

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}
}  // namespace

PatternBuffer::PatternBuffer(uint64_t capacity, uint64_t misalign, uint64_t key) : capacity_(capacity), key_(key) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, capacity + misalign + 64) != 0) return;
  base_ = static_cast<char*>(p);
  data_ = base_ + misalign;
  set_key(key);
}

PatternBuffer::~PatternBuffer() { free(base_); }

void PatternBuffer::set_key(uint64_t key) {
  key_ = key;
  for (int i = 0; i < 64; i += 8) {
    uint64_t v = mix(key + 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(i + 1)) | 0x0101010101010101ULL;
    memcpy(pattern_ + i, &v, 8);
  }
  for (size_t i = 0; i < sizeof line_; i += 64) memcpy(line_ + i, pattern_, 64);
  for (uint64_t i = 0; i < capacity_; i += 64) memcpy(data_ + i, pattern_, std::min<uint64_t>(64, capacity_ - i));
  stamped_len_ = 0;
}

void PatternBuffer::refresh() {
  if (!clobbered_) return;
  for (uint64_t i = 0; i < capacity_; i += sizeof line_)
    memcpy(data_ + i, line_, std::min<uint64_t>(sizeof line_, capacity_ - i));
  clobbered_ = false;
  stamped_len_ = 0;
}

void PatternBuffer::restore_stamps() {
  uint64_t first = (stamped_off_ + kSector - 1) / kSector * kSector;
  for (uint64_t o = first; o + 8 <= stamped_off_ + stamped_len_; o += kSector) {
    uint64_t at = o - stamped_off_;
    memcpy(data_ + at, pattern_ + (o % 64), 8);
  }
  stamped_len_ = 0;
}

void PatternBuffer::stamp_for(uint64_t offset, uint64_t len) {
  refresh();
  restore_stamps();
  uint64_t first = (offset + kSector - 1) / kSector * kSector;
  for (uint64_t o = first; o + 8 <= offset + len; o += kSector) {
    uint64_t v = o ^ key_;
    memcpy(data_ + (o - offset), &v, 8);
  }
  stamped_off_ = offset;
  stamped_len_ = len;
}

bool PatternBuffer::check(const char* buf, uint64_t offset, uint64_t len, std::string* why) const {
  uint64_t at = 0;
  while (at < len) {
    uint64_t o = offset + at;
    if (o % kSector == 0 && at + 8 <= len) {
      uint64_t v;
      memcpy(&v, buf + at, 8);
      if (v != (o ^ key_)) {
        char b[160];
        snprintf(b, sizeof b, "offset %" PRIu64 ": block header says %" PRIu64 ", expected %" PRIu64, o,
                 v ^ key_, o);
        *why = b;
        return false;
      }
      at += 8;
      continue;
    }
    // Bytes up to the next sector start are pattern bytes.
    uint64_t next = (o / kSector + 1) * kSector;
    uint64_t n = std::min(len - at, next - o);
    if (memcmp(buf + at, line_ + (o % 64), n) != 0) {
      for (uint64_t k = 0; k < n; ++k)
        if (buf[at + k] != line_[(o % 64) + k]) {
          char b[160];
          snprintf(b, sizeof b, "offset %" PRIu64 ": byte 0x%02x, expected 0x%02x", o + k,
                   static_cast<unsigned char>(buf[at + k]), static_cast<unsigned char>(line_[(o % 64) + k]));
          *why = b;
          return false;
        }
    }
    at += n;
  }
  return true;
}

}  // namespace hybridio::bench
