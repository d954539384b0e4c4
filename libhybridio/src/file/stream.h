// stream.h - the sequential stream of one open file: where its previous
// request ended and how many requests in a row continued the one before.
// That count is the policy's seq_run fact (hio_request, policy.h).
//
// Thread-safe, and racy by design: concurrent callers may interleave its
// two relaxed atomics, which only weakens a heuristic, never correctness.
#pragma once

#include <atomic>
#include <cstdint>

namespace hybridio {

class SequentialStream {
 public:
  // The seq_run of a request starting at `offset`, without moving the
  // stream on (a plan looks, its execution moves).
  uint32_t peek(uint64_t offset) const {
    return end_.load(std::memory_order_relaxed) == offset ? run_.load(std::memory_order_relaxed) + 1 : 0;
  }

  // Records a request of [offset, offset + len); returns its seq_run: how
  // many requests in a row it continues (0: it starts a stream).
  uint32_t extend(uint64_t offset, uint64_t len) {
    const uint64_t prev_end = end_.exchange(offset + len, std::memory_order_relaxed);
    const uint32_t run = prev_end == offset ? run_.load(std::memory_order_relaxed) + 1 : 0;
    run_.store(run, std::memory_order_relaxed);
    return run;
  }

 private:
  std::atomic<uint64_t> end_{~0ULL};  // where the previous request ended (~0: none yet)
  std::atomic<uint32_t> run_{0};      // sequential predecessors of the next request
};

}  // namespace hybridio
