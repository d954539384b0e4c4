/* client: the I/O a GPU node's threads do under each policy. Buffered requests pay a per-call
 * cost and a per-thread copy into the page cache (an Exec bounded by the copy bandwidth on a
 * host whose speed is the node's memory bandwidth); direct requests pay a per-request latency
 * and move data straight to storage, no faster than one thread's direct stream; dontcache copies, then writes back and drops at once.
 * A thread's file is processed in chunks of sim/chunk-bytes: a chunk of n requests costs n
 * per-request costs plus one transfer, so activities stay few whatever the request size.
 * One ClientModel per simulation; its methods run inside actors on the client's host. */
#pragma once
#include "page_cache.hpp"
#include "params.hpp"
#include "policy.hpp"
#include "storage.hpp"
#include "workload.hpp"

#include <memory>
#include <vector>

namespace hiosim {

struct ThreadStats {
  double bytes_direct   = 0;
  double bytes_buffered = 0;
  double bytes_cache_hit = 0;
};

class ClientModel {
public:
  ClientModel(const Params& p, Storage& storage);
  /* Starts one flusher daemon per node; call from inside the simulation. */
  void start_flushers();
  /* Cold caches: drops every clean block on every node. */
  void drop_caches();

  /* One thread writes `bytes` of a new file from `node` with the request mix, then fsyncs. */
  ThreadStats write_file(int node, int file, double bytes, const std::vector<RequestClass>& mix, Policy pol);
  /* One thread reads the file back. */
  ThreadStats read_file(int node, int file, double bytes, const std::vector<RequestClass>& mix, Policy pol);
  /* Async checkpoint: phase 1 copies the GPU shard to pinned host memory (blocks training). */
  void async_snapshot(double bytes);
  /* Async checkpoint: phase 2 persists the pinned copy with direct I/O, several requests in flight. */
  void async_persist(int node, int file, double bytes);

  PageCache& cache(int node) { return *caches_.at(node); }
  bool eager() const { return eager_; }

private:
  void copy(double bytes, double bw);
  void direct_io(int node, int file, double offset, double bytes, double req, bool write, int depth);

  const Params& p_;
  Storage& storage_;
  bool eager_;
  std::vector<std::unique_ptr<PageCache>> caches_;
};

} // namespace hiosim
