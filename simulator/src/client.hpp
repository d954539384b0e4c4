/* client: the I/O a GPU node's threads do under each policy. Every request class of every step
 * is decided by libhybridio's policy core (policy.hpp) with the facts the model has: its size and
 * file offset (records back to back), the file's sequential stream, the page cache's state of the
 * range and its memory pressure; the decision's path (and, for a direct body with an unaligned
 * head or tail, its cut) says how the bytes move. Buffered requests pay a per-call
 * cost and a per-thread copy into the page cache (an Exec bounded by the copy bandwidth on a
 * host whose speed is the node's memory bandwidth); direct requests pay a per-request latency
 * and move data straight to storage, no faster than one thread's direct stream; dontcache copies, then writes back and drops at once.
 * Optional client mechanisms (off by default, set by calibration from a Hybrid-IO bench report):
 * the library's parallel engine (a direct request of >= 2 chunks goes out as chunks, several in
 * flight), a bound on a thread's direct stream with all its requests in flight, and a readahead
 * window beyond which an uncached buffered read waits for its own fetch instead of overlapping it.
 * A thread's file is processed in chunks of sim/chunk-bytes: a chunk of n requests costs n
 * per-request costs plus one transfer, so activities stay few whatever the request size.
 * The threads of one host (its writers, one file each, equal shards) run in lockstep as one
 * actor over a file group: copies and direct streams are bounded by per-thread bandwidth times
 * the thread count, per-request costs are paid once (the threads pay them in parallel).
 * One ClientModel per simulation; its methods run inside actors on the client's host. */
#pragma once
#include "page_cache.hpp"
#include "params.hpp"
#include "policy.hpp"
#include "storage.hpp"
#include "workload.hpp"

#include <memory>
#include <set>
#include <vector>

namespace hiosim {

struct ThreadStats {
  double bytes_direct   = 0;
  double bytes_buffered = 0; // buffered and dontcache
  double bytes_cache_hit = 0;
  double bytes_by_rule[HIO_RULE_COUNT] = {}; // the policy core's rule that decided the bytes
};

class ClientModel {
public:
  ClientModel(const Params& p, Storage& storage);
  /* Starts one flusher daemon per node; call from inside the simulation. */
  void start_flushers();
  /* Cold caches: drops every clean block on every node. */
  void drop_caches();

  /* The threads of `node` each write `bytes` of their file of `group` with the request mix,
   * then fsync. Stats count the bytes of all threads. */
  ThreadStats write_file(int node, int group, double bytes, const std::vector<RequestClass>& mix, Policy pol);
  /* The threads read their files back. */
  ThreadStats read_file(int node, int group, double bytes, const std::vector<RequestClass>& mix, Policy pol);
  /* Async checkpoint: phase 1 copies each GPU's shard to pinned host memory (blocks training). */
  void async_snapshot(double bytes);
  /* Async checkpoint: phase 2 persists the pinned copies with direct I/O, several requests in flight. */
  void async_persist(int node, int group, double bytes);

  PageCache& cache(int node) { return *caches_.at(node); }
  /* The threads of group `file` write one shared file (disjoint regions): their buffered writes
   * serialise on the file (one copy at a time, each call in turn) and the policy core is told how
   * many writers the file has; direct writes stay parallel. */
  void set_shared_file(int file, bool shared);
  /* Caps the simulated steps per thread and file (0: chunks of sim/chunk-bytes). */
  void set_max_steps(int steps) { max_steps_ = steps; }
  bool eager() const { return eager_; }

private:
  /* A stretch of one step of a thread's file that takes one path: `calls` calls of `request`
   * bytes each move `bytes` (per thread) at `offset`. */
  struct Piece {
    Path path;
    hio_rule rule;
    double offset;
    double bytes;
    double request;
    double calls;
    bool bounce; // direct body staged through an aligned buffer
  };
  /* A thread's file as the library's File sees it: whole requests issued so far, back to back. */
  struct Stream {
    uint64_t position = 0; // file offset of the next request
    uint64_t issued   = 0; // requests so far: the next one's sequential predecessors
  };
  /* Decides the requests of one step's request class and cuts it into pieces. */
  std::vector<Piece> plan_part(Policy pol, Op op, int node, int file, double offset, double part, double request,
                               double file_bytes, Stream& stream);
  void write_piece(int node, int file, const Piece& pc);
  /* Returns the bytes (per thread) served from the page cache. */
  double read_piece(int node, int file, const Piece& pc);
  double chunk_for(double bytes) const;
  void copy(double bytes, double bw);
  void direct_io(int node, int group, double offset, double bytes, double req, bool write, int depth);

  const Params& p_;
  Storage& storage_;
  bool eager_;
  int max_steps_ = 0;
  std::vector<std::unique_ptr<PageCache>> caches_;
  std::set<int> shared_files_;
};

} // namespace hiosim
