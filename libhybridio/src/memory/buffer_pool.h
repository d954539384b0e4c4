// buffer_pool.h - aligned I/O buffers on the NUMA node of the thread that
// asks for them, kept for reuse.
//
// Direct I/O and the staging (bounce, write-behind) buffers want memory that
// is page aligned, already faulted in (first touch of fresh memory is the
// slowest thing a copy can meet: a page fault per page), on
// the node of the CPU that copies into it and out of the program's address
// ranges (private_mappings.h).  The pool hands out page-aligned buffers
// bound with libnuma to the caller's node (numa_tonode_memory) when the
// machine reports NUMA; released buffers are kept per node and size, up to
// a bound, and handed out again.
//
// Pool memory is anonymous and nothing reclaims it, so it is taken only from
// what the process may still take (memory_headroom.h): a fresh buffer is
// refused (an empty one: every caller has a way without it) when the pool
// would then hold more than half of what the process could take with the
// pool's memory given back, and the kept buffers shrink with it.  In a
// memory cgroup of 128 MiB, a checkpoint restore of 8 ranks had 64 MiB of
// staging slots and 52 MiB of other staging blocks mapped in 100 ms, and was
// OOM-killed now and then.
//
// Thread-safe.  Works on single-node machines and when numa_available() < 0
// (then everything is "node 0").
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "probe/memory_headroom.h"

namespace hybridio {

class BufferPool;

// A buffer from the pool; returns itself to the pool when destroyed.  Move-only.
class PoolBuffer {
 public:
  PoolBuffer() = default;
  ~PoolBuffer() { reset(); }
  PoolBuffer(PoolBuffer&& o) noexcept
      : pool_(std::exchange(o.pool_, nullptr)), data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)), node_(o.node_) {}
  PoolBuffer& operator=(PoolBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      pool_ = std::exchange(o.pool_, nullptr);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      node_ = o.node_;
    }
    return *this;
  }
  PoolBuffer(const PoolBuffer&) = delete;
  PoolBuffer& operator=(const PoolBuffer&) = delete;

  char* data() const { return data_; }
  size_t size() const { return size_; }
  int node() const { return node_; }
  explicit operator bool() const { return data_ != nullptr; }
  void reset();

 private:
  friend class BufferPool;
  BufferPool* pool_ = nullptr;
  char* data_ = nullptr;
  size_t size_ = 0;
  int node_ = 0;
};

class BufferPool {
 public:
  // The process-wide pool (never destroyed).
  static BufferPool& get();

  // How much more memory the process may take, sampled at most `max_age_ms`
  // ago (memory_headroom_bytes).
  using HeadroomFn = uint64_t (*)(uint32_t max_age_ms);

  // Released buffers are kept for reuse up to `max_cached` bytes, and up to
  // a quarter of what the process could still take if the pool gave back
  // what it keeps (`headroom` plus the kept bytes).
  explicit BufferPool(size_t max_cached = 80u << 20, HeadroomFn headroom = memory_headroom_bytes);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A page-aligned buffer of `size` bytes (rounded up to whole pages) on the
  // calling thread's node, faulted in; empty on allocation failure, and
  // when fresh memory would take the pool past its share of the headroom.
  PoolBuffer acquire(size_t size);

  // Whether buffers are placed per node (libnuma reports NUMA with more than
  // one node), and the node of the calling thread (0 when not).
  bool numa() const { return numa_; }
  int current_node() const;
  size_t cached_bytes() const;
  size_t mapped_bytes() const;  // handed out and kept
  uint64_t allocations() const;  // buffers newly allocated (not reused)

 private:
  friend class PoolBuffer;
  void release(PoolBuffer& b);
  static void free_memory(char* data, size_t size);
  // The most bytes worth keeping with `headroom` left and `cached` kept.
  size_t retention_bound(uint64_t headroom, size_t cached) const;
  // Under mu_: frees kept buffers, oldest first, down to the bound.
  void trim_locked(uint64_t headroom);

  struct Cached {
    char* data;
    size_t size;
    int node;
  };
  const size_t max_cached_;
  const HeadroomFn headroom_;
  bool numa_ = false;
  mutable std::mutex mu_;
  std::vector<Cached> free_;
  size_t cached_ = 0;
  size_t mapped_ = 0;
  uint64_t allocations_ = 0;
};

}  // namespace hybridio
