// aligned_buffer.cc - see aligned_buffer.h.
#include "memory/aligned_buffer.h"

#include <utility>

#include "platform/private_mappings.h"

namespace hybridio {

AlignedBuffer::AlignedBuffer(size_t size, size_t alignment) {
  data_ = map_private(size, alignment);
  size_ = data_ ? size : 0;
}

AlignedBuffer::~AlignedBuffer() { unmap_private(data_, size_); }

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    unmap_private(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace hybridio
