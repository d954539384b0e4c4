// file_model.h - the exerciser's reference: the bytes a plain POSIX file
// would hold after the same operations.  Holes and extensions read as
// zeros, as they do in the file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace hybridio::exerciser {

class FileModel {
 public:
  uint64_t size() const { return bytes_.size(); }
  const char* data() const { return bytes_.data(); }

  void write(uint64_t offset, const char* src, uint64_t len) {
    if (bytes_.size() < offset + len) bytes_.resize(offset + len, 0);
    memcpy(bytes_.data() + offset, src, len);
  }
  void truncate(uint64_t size) { bytes_.resize(size, 0); }
  // Zeros [offset, offset + len) within the current size (hole punching).
  void zero(uint64_t offset, uint64_t len) {
    if (offset >= bytes_.size()) return;
    uint64_t end = std::min<uint64_t>(offset + len, bytes_.size());
    memset(bytes_.data() + offset, 0, end - offset);
  }
  // Grows the size to at least `size` (fallocate without KEEP_SIZE).
  void extend(uint64_t size) {
    if (bytes_.size() < size) bytes_.resize(size, 0);
  }

  // Offset of the first byte of `got` (read at `offset`) that differs from
  // the model, or -1 when all `len` match.
  int64_t first_difference(const char* got, uint64_t offset, uint64_t len) const {
    if (memcmp(got, bytes_.data() + offset, len) == 0) return -1;
    uint64_t at = 0;
    while (got[at] == bytes_[offset + at]) ++at;
    return static_cast<int64_t>(offset + at);
  }

 private:
  std::vector<char> bytes_;
};

}  // namespace hybridio::exerciser
