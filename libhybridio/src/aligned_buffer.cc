// aligned_buffer.cc - see aligned_buffer.h.
#include "aligned_buffer.h"

#include <cstdlib>
#include <utility>

namespace hybridio {

AlignedBuffer::AlignedBuffer(size_t size, size_t alignment) {
  void* p = nullptr;
  if (size && posix_memalign(&p, alignment, size) == 0) {
    data_ = static_cast<char*>(p);
    size_ = size;
  }
}

AlignedBuffer::~AlignedBuffer() { free(data_); }

AlignedBuffer::AlignedBuffer(AlignedBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

AlignedBuffer& AlignedBuffer::operator=(AlignedBuffer&& other) noexcept {
  if (this != &other) {
    free(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace hybridio
