// aligned_buffer.h - an owned block of memory aligned for direct I/O, out
// of the program's address ranges (private_mappings.h).
//
// Move-only; not shared between threads unless the owner synchronises.
#pragma once

#include <cstddef>

namespace hybridio {

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Maps `size` zeroed bytes aligned to `alignment` (a power of two; at least
  // a page is used).  On failure the buffer is empty (data() == nullptr); it
  // never throws.
  AlignedBuffer(size_t size, size_t alignment);
  ~AlignedBuffer();
  AlignedBuffer(AlignedBuffer&& other) noexcept;
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept;
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  char* data() const { return data_; }
  size_t size() const { return size_; }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace hybridio
