// verify_pattern.h - the bytes every benchmark file holds, so that a read
// (or a read-back after writing) can prove it got exactly the right ones.
//
// Content is a function of the file offset: every 512-byte-aligned file
// offset o starts with the 8-byte word o ^ key (key: per job and file, so
// a block from another file or position is caught), and every other byte
// is a 64-byte pattern derived from the key.  Offsets of I/O must be
// multiples of 64 (the pattern's phase is then always 0).
//
// A PatternBuffer is one thread's I/O buffer: filled once (first touch
// once), re-stamped per write in O(len / 512).  Not thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace hybridio::bench {

class PatternBuffer {
 public:
  // `capacity` bytes usable at data(), which is `misalign` bytes past a
  // 4 KiB-aligned address.
  PatternBuffer(uint64_t capacity, uint64_t misalign, uint64_t key);
  ~PatternBuffer();
  PatternBuffer(const PatternBuffer&) = delete;
  PatternBuffer& operator=(const PatternBuffer&) = delete;

  bool ok() const { return base_ != nullptr; }
  char* data() { return data_; }
  uint64_t capacity() const { return capacity_; }
  void set_key(uint64_t key);  // refills the pattern

  // Reads into data() clobber the pattern: call this after one, and the
  // next stamp_for rewrites the bytes it needs.
  void mark_clobbered() { clobbered_ = true; }
  // Rewrites the pattern now if it was clobbered (before a timed run).
  void refresh();

  // Makes data()[0, len) hold the content of file offset `offset`.
  void stamp_for(uint64_t offset, uint64_t len);

  // Checks `len` bytes at `buf` against the content of file offset
  // `offset`; on a mismatch, writes where and what into *why.
  bool check(const char* buf, uint64_t offset, uint64_t len, std::string* why) const;

 private:
  void restore_stamps();
  char* base_ = nullptr;
  char* data_ = nullptr;
  uint64_t capacity_;
  uint64_t key_;
  char pattern_[64];
  char line_[640];  // the pattern repeated: one memcmp per sector
  uint64_t stamped_off_ = 0, stamped_len_ = 0;  // last stamp_for, to undo
  bool clobbered_ = false;
};

}  // namespace hybridio::bench
