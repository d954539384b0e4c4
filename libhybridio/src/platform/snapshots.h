// snapshots.h - a value read on every request and changed rarely (the
// policy, the engine settings), published as immutable snapshots: a reader
// takes the current one with one acquire load and no lock; publish() swaps
// a new one in whole.  Earlier snapshots are never freed, because a reader
// may still be using one; they stay chained, so they remain reachable.
// Nothing here throws: it serves the C API and the shim.
#pragma once

#include <atomic>
#include <mutex>
#include <new>

namespace hybridio {

template <typename T>
class Snapshots {
 public:
  Snapshots() = default;
  Snapshots(const Snapshots&) = delete;
  Snapshots& operator=(const Snapshots&) = delete;

  // The current value; nullptr before anything was published.
  const T* current() const { return current_.load(std::memory_order_acquire); }

  // Publishes a value that outlives every reader (a static, or a member of
  // an object never destroyed) without allocating.
  void publish_permanent(const T* value) noexcept { current_.store(value, std::memory_order_release); }

  // Publishes a copy of `value`; false, with the current value kept, when
  // there is no memory for it.
  bool publish(const T& value) noexcept {
    Node* next = new (std::nothrow) Node{value, nullptr};
    if (!next) return false;
    std::lock_guard<std::mutex> lock(mu_);
    next->previous = head_;
    head_ = next;
    current_.store(&next->value, std::memory_order_release);
    return true;
  }

 private:
  struct Node {
    T value;
    const Node* previous;
  };
  std::mutex mu_;
  const Node* head_ = nullptr;
  std::atomic<const T*> current_{nullptr};
};

}  // namespace hybridio
