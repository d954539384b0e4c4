/* page_cache: one node's Linux page cache after the WRENCH model (Do et al., 2021), in plain S4U.
 * Data is held in blocks (one per written or read chunk) kept on two LRU lists, active and
 * inactive (active at most twice inactive), each with a dirty flag and the time it became dirty.
 * Writers copy at memory speed while dirty data stays under dirty_ratio x available memory;
 * beyond it they write back the oldest dirty blocks themselves (throttling). A flusher actor
 * wakes every flush_interval and writes back blocks dirty for longer than dirty_expire and the
 * oldest ones while dirty data exceeds background_ratio; in eager mode (the Lustre client sends
 * full RPCs as soon as it can) it writes back every dirty block at once. Eviction takes clean
 * inactive blocks first. Blocks written with dontcache are written back at once and dropped.
 * Methods block the calling actor and must run inside the simulation; one object per node,
 * shared by the node's actors (S4U actors are cooperative, so no data race is possible). */
#pragma once
#include "params.hpp"

#include <simgrid/s4u.hpp>

#include <functional>
#include <list>
#include <map>
#include <memory>
#include <vector>

namespace hiosim {

class PageCache {
public:
  struct Block {
    int file;
    double offset;
    double bytes;
    bool dirty        = false;
    double dirty_since = 0;
    bool writeback    = false; // being written back
    bool drop_after   = false; // dontcache: drop once clean
    bool active       = false;
    std::list<Block*>::iterator pos;
  };
  /* Writes the blocks back to storage, blocking; provided by the client model. */
  using Writeback = std::function<void(const std::vector<Block*>&)>;

  /* `capacity`: memory the cache may use; `total_memory`: the node's memory (for pressure). */
  PageCache(const CacheParams& cp, double capacity, double total_memory, bool eager, Writeback wb);

  /* Makes room for `bytes` of new dirty data: evicts clean blocks, and throttles the caller
   * (it writes back dirty data itself) while the dirty limit would be exceeded. */
  void reserve_dirty(double bytes);
  void add_dirty(int file, double offset, double bytes, bool dontcache);
  /* Shares (0-1) of [offset, offset + bytes) of each of the `threads` files of group `file` that
   * are cached and dirty, at the model's granularity (blocks that start in the range); does not
   * count as an access, like cachestat(2). */
  void range_state(int file, double offset, double bytes, double threads, double& cached, double& dirty) const;
  /* Marks the blocks that start in the range as re-accessed (moves them to the active list). */
  void touch_range(int file, double offset, double bytes);
  /* Memory pressure 0-100 by the policy core's formula (hio_policy_pressure() in policy.h): the larger
   * of dirty (and writeback) data as a share of the dirty limit and the share of memory that is
   * not available (all cached data counts as available, as MemAvailable counts file pages).
   * No PSI: the model has no stall accounting. */
  uint32_t pressure() const;
  void add_clean(int file, double offset, double bytes);
  /* Writes back every dirty block of `file` and waits for those the flusher is writing. */
  void fsync(int file);
  /* Forgets everything clean (echo 3 > drop_caches); dirty data must have been synced. */
  void drop_clean();
  /* Body of the node's flusher daemon. */
  void flusher_loop();

  double dirty() const { return dirty_; }
  double cached() const { return cached_; }
  double capacity() const { return capacity_; }
  double written_back() const { return written_back_; }
  double throttled_bytes() const { return throttled_; }

private:
  void insert(std::unique_ptr<Block> b);
  void remove(Block* b);
  void touch(Block* b);
  void balance();
  bool evict_one();
  void make_room(double bytes);
  void write_back(const std::vector<Block*>& blocks); // marks, writes, cleans, notifies
  std::vector<Block*> oldest_dirty(double bytes, bool only_expired, double now);

  CacheParams cp_;
  double capacity_;
  double total_memory_;
  bool eager_;
  Writeback wb_;
  std::map<std::pair<int, long long>, std::unique_ptr<Block>> blocks_;
  std::list<Block*> active_, inactive_; // front = least recently used
  std::list<Block*> dirty_order_;       // dirty blocks by the time they became dirty
  double dirty_        = 0;
  double cached_       = 0;
  double active_bytes_ = 0;
  double written_back_ = 0;
  double throttled_    = 0;
  int urgent_          = 0; // dontcache blocks waiting for writeback
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr dirty_cv_; // new dirty data, for the flusher
  simgrid::s4u::ConditionVariablePtr clean_cv_; // a writeback finished
};

} // namespace hiosim
