// buffer_pool.cc - see buffer_pool.h.
#include "buffer_pool.h"

#include <numa.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace hybridio {
namespace {

constexpr size_t kHugePage = 2 << 20;  // x86-64 and arm64 (4 KiB base pages) PMD size

size_t page_size() {
  static const size_t size = [] {
    long v = sysconf(_SC_PAGESIZE);
    return v > 0 ? static_cast<size_t>(v) : size_t{4096};
  }();
  return size;
}

}  // namespace

void PoolBuffer::reset() {
  if (data_ && pool_) pool_->release(*this);
  data_ = nullptr;
  size_ = 0;
  pool_ = nullptr;
}

BufferPool& BufferPool::get() {
  static BufferPool* pool = new BufferPool();  // never destroyed: thread_local owners may outlive statics
  return *pool;
}

BufferPool::BufferPool(size_t max_cached) : max_cached_(max_cached) {
  // numa_available() must be called before any other libnuma function.  On
  // one node there is nothing to place: plain aligned memory, no mbind.
  numa_ = numa_available() >= 0 && numa_max_node() > 0;
}

BufferPool::~BufferPool() {
  for (const Cached& c : free_) free_memory(c.data, c.size, c.numa);
}

int BufferPool::current_node() const {
  if (!numa_) return 0;
  int cpu = sched_getcpu();
  int node = cpu >= 0 ? numa_node_of_cpu(cpu) : -1;
  return node >= 0 ? node : 0;
}

size_t BufferPool::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

uint64_t BufferPool::allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocations_;
}

void BufferPool::free_memory(char* data, size_t size, bool numa) {
  if (numa)
    numa_free(data, size);
  else
    free(data);
}

PoolBuffer BufferPool::acquire(size_t size) {
  PoolBuffer b;
  if (size == 0) return b;
  const size_t page = page_size();
  size = (size + page - 1) & ~(page - 1);
  const int node = current_node();
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Exact size on this node first, else any node (still better than a fresh first touch).
    for (int pass = 0; pass < 2 && !b.data_; ++pass) {
      for (size_t i = free_.size(); i-- > 0;) {
        const Cached& c = free_[i];
        if (c.size != size || (pass == 0 && c.node != node)) continue;
        b.data_ = c.data;
        b.size_ = c.size;
        b.node_ = c.node;
        b.numa_ = c.numa;
        cached_ -= c.size;
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  if (!b.data_) {
    void* p = nullptr;
    if (numa_) {
      p = numa_alloc_onnode(size, node);  // mmap'ed, page aligned, bound to `node`
      b.numa_ = p != nullptr;
    }
    if (!p && posix_memalign(&p, size >= kHugePage ? kHugePage : page, size) != 0) p = nullptr;
    if (!p) return b;
    // Physically contiguous memory is fewer DMA segments per request: on
    // virtio-blk a 4 MiB direct read into 4 KiB pages scattered over 700
    // runs went at 2.2 GB/s, into 35-66 runs at 3.5-3.8.  Transparent huge
    // pages give 2 MiB runs where the kernel has them (THP "madvise" or
    // "always"); elsewhere this is a no-op.
    if (size >= kHugePage) madvise(p, size, MADV_HUGEPAGE);
    // Fault the pages in now, on this thread's node, not in the middle of an I/O.
    memset(p, 0, size);
    b.data_ = static_cast<char*>(p);
    b.size_ = size;
    b.node_ = node;
    std::lock_guard<std::mutex> lock(mu_);
    ++allocations_;
  }
  b.pool_ = this;
  return b;
}

void BufferPool::release(PoolBuffer& b) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Called from destructors: a full free list (no memory to grow it) frees
    // the buffer instead of throwing.
    if (cached_ + b.size_ <= max_cached_ && free_.size() < free_.capacity()) {
      free_.push_back({b.data_, b.size_, b.node_, b.numa_});
      cached_ += b.size_;
      return;
    }
    if (cached_ + b.size_ <= max_cached_) {
      try {
        free_.push_back({b.data_, b.size_, b.node_, b.numa_});
        cached_ += b.size_;
        return;
      } catch (const std::bad_alloc&) {
      }
    }
  }
  free_memory(b.data_, b.size_, b.numa_);
}

}  // namespace hybridio
