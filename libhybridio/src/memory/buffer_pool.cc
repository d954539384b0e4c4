// buffer_pool.cc - see buffer_pool.h.
#include "memory/buffer_pool.h"

#include <numa.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>

#include "platform/private_mappings.h"

namespace hybridio {
namespace {

constexpr size_t kHugePage = 2 << 20;  // x86-64 and arm64 (4 KiB base pages) PMD size
constexpr uint32_t kRecentMs = 100;    // the headroom sample's age for keeping a released buffer

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

BufferPool::BufferPool(size_t max_cached, HeadroomFn headroom) : max_cached_(max_cached), headroom_(headroom) {
  // numa_available() must be called before any other libnuma function.  On
  // one node there is nothing to place: plain aligned memory, no mbind.
  numa_ = numa_available() >= 0 && numa_max_node() > 0;
}

BufferPool::~BufferPool() {
  for (const Cached& c : free_) free_memory(c.data, c.size);
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

size_t BufferPool::mapped_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mapped_;
}

uint64_t BufferPool::allocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocations_;
}

void BufferPool::free_memory(char* data, size_t size) { unmap_private(data, size); }

size_t BufferPool::retention_bound(uint64_t headroom, size_t cached) const {
  return static_cast<size_t>(std::min<uint64_t>(max_cached_, (headroom + cached) / 4));
}

void BufferPool::trim_locked(uint64_t headroom) {
  const size_t bound = retention_bound(headroom, cached_);
  size_t n = 0;
  for (; n < free_.size() && cached_ > bound; ++n) {
    free_memory(free_[n].data, free_[n].size);
    cached_ -= free_[n].size;
    mapped_ -= free_[n].size;
  }
  free_.erase(free_.begin(), free_.begin() + static_cast<std::ptrdiff_t>(n));
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
        cached_ -= c.size;
        free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  if (!b.data_) {
    // Fresh memory while buffers of other sizes are kept: where memory is
    // short, they go first.  Then the headroom as it is now, not as it was
    // up to kRecentMs ago: threads starting together each take their slots
    // within that time (the sample costs tens of microseconds, the first
    // touch of a 1 MiB buffer milliseconds).
    const uint64_t recent = headroom_(kRecentMs);
    {
      std::lock_guard<std::mutex> lock(mu_);
      trim_locked(recent);
    }
    const uint64_t headroom = headroom_(0);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (mapped_ + size > (headroom + mapped_) / 2) return b;
    }
    // Out of the program's address ranges (private_mappings.h); 2 MiB
    // aligned from a huge page up, so that THP can back it.
    char* p = map_private(size, size >= kHugePage ? kHugePage : page);
    if (!p) return b;
    if (numa_) numa_tonode_memory(p, size, node);  // before the first touch below
    // Physically contiguous memory is fewer DMA segments per request: on
    // virtio-blk a 4 MiB direct read into 4 KiB pages scattered over 700
    // runs went at 2.2 GB/s, into 35-66 runs at 3.5-3.8.  Transparent huge
    // pages give 2 MiB runs where the kernel has them (THP "madvise" or
    // "always"); elsewhere this is a no-op.
    if (size >= kHugePage) madvise(p, size, MADV_HUGEPAGE);
    // Fault the pages in now, on this thread's node, not in the middle of an I/O.
    memset(p, 0, size);
    b.data_ = p;
    b.size_ = size;
    b.node_ = node;
    std::lock_guard<std::mutex> lock(mu_);
    ++allocations_;
    mapped_ += size;
  }
  b.pool_ = this;
  return b;
}

void BufferPool::release(PoolBuffer& b) {
  const uint64_t headroom = headroom_(kRecentMs);  // procfs and cgroupfs reads: not under the lock
  // Under RLIMIT_AS or RLIMIT_DATA every byte kept is address space the
  // program cannot map: nothing is kept.
  if (headroom_ == memory_headroom_bytes && address_space_limited()) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Cached& c : free_) free_memory(c.data, c.size);
    mapped_ -= cached_ + b.size_;
    cached_ = 0;
    free_.clear();
    free_memory(b.data_, b.size_);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t bound = retention_bound(headroom, cached_);
    // Called from destructors: a full free list (no memory to grow it) frees
    // the buffer instead of throwing.
    if (cached_ + b.size_ <= bound && free_.size() < free_.capacity()) {
      free_.push_back({b.data_, b.size_, b.node_});
      cached_ += b.size_;
      return;
    }
    if (cached_ + b.size_ <= bound) {
      try {
        free_.push_back({b.data_, b.size_, b.node_});
        cached_ += b.size_;
        return;
      } catch (const std::bad_alloc&) {
      }
    }
    mapped_ -= b.size_;
  }
  free_memory(b.data_, b.size_);
}

}  // namespace hybridio
