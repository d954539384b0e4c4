/* policy: the I/O policies the simulator compares and the per-request decision they make.
 * buffered, direct, dontcache and hybrid are libhybridio's modes, and every request is decided by
 * libhybridio's own policy core (hybridio/policy.h, hio_policy_decide), with a request built the
 * way the library's File::describe() and File::decide() build it, from what the model knows
 * (docs/simulator.md lists which facts the model supplies and what it assumes for the others).
 * async is the model's two-phase checkpoint (copy to host memory, then persist with direct I/O),
 * handled by the client model; its restore reads as mode direct does.
 * Pure functions, no SimGrid; safe to call from any actor. */
#pragma once
#include "params.hpp"

#include <hybridio/policy.h>

#include <cstdint>
#include <functional>
#include <string>

namespace hiosim {

enum class Policy { Buffered, Direct, Dontcache, Hybrid, Async };
enum class Path { Buffered, Direct, Dontcache };
enum class Op { Write, Read };

Policy parse_policy(const std::string& name); // throws std::invalid_argument
const char* policy_name(Policy p);
const char* path_name(Path p);
Path path_of(hio_path p);
/* The library mode a simulated policy runs the core in (async: direct, for its restore). */
hio_mode mode_of(Policy p);

/* What the model knows about one request of a thread's file when the request is decided. */
struct RequestFacts {
  Op op             = Op::Write;
  uint64_t offset   = 0; // where the workload issues it (records laid back to back)
  uint64_t length   = 0;
  uint64_t file_size = 0; // the file's size (reads never pass it in the model)
  uint32_t seq_run  = 0; // sequential predecessors in the file's stream
  uint32_t writers  = 1; // threads writing this file at once (one file per writer: 1)
  bool dontcache_ok = true; // RWF_DONTCACHE works on the file
};

/* The page-cache model's answers, asked only when the library would ask. */
struct CacheFacts {
  /* Share (0-1) of the range in the cache and dirty in it; called when the first decision is direct. */
  std::function<void(double& cached, double& dirty)> probe;
  /* Memory pressure 0-100, the library's formula (PageCache::pressure). */
  std::function<uint32_t()> pressure;
};

/* The core's configuration for `pol`: the simulator's hybrid tunables with the mode set. */
hio_policy_config policy_config(Policy pol, const PolicyParams& pp);

/* Decides one request with hio_policy_decide(), as libhybridio's File::decide() does: pressure is
 * sampled only for a hybrid request that pressure could push over a threshold; a request headed
 * direct is probed (cache state) and decided again. `req_out`, if given, receives the request as
 * finally decided (with the probe's page counts). */
hio_decision decide_request(const hio_policy_config& cfg, const RequestFacts& f, const CacheFacts& cache,
                            hio_request* req_out = nullptr);

/* The path of a request of `size` bytes well into a sequential stream through a file nobody else
 * uses, cache empty, no memory pressure: what a steady sequential benchmark of `pol` takes. */
Path stream_path(Policy pol, const PolicyParams& pp, Op op, uint64_t size);

} // namespace hiosim
