/* params: every model parameter of hybridio-sim as plain values, grouped by concern.
 * Filled from --cfg flags and description files by config.cpp; tests may fill it directly.
 * Units: bytes, bytes per second, seconds. */
#pragma once
#include <hybridio/policy.h>

#include <string>
#include <vector>

namespace hiosim {

struct ClusterParams {
  int nodes             = 0;   // 0: as many as the parallel layout needs
  int gpus_per_node     = 8;
  int nics_per_node     = 4;
  double nic_bw         = 50e9;  // per NIC (400 Gb/s)
  std::string topology  = "star"; // star | fat-tree
  double core_bw        = 0;     // star: shared core link, 0 = non-blocking
  double link_latency   = 2e-6;
  int leaf_ports        = 16;    // fat-tree: hosts per leaf switch
  int spine_uplinks     = 8;     // fat-tree: uplinks per leaf switch
  double switch_link_bw = 100e9; // fat-tree: every switch link
  double node_memory    = 2199023255552.0; // 2 TiB
  double app_memory     = 1099511627776.0; // memory used by the training processes
  double memory_limit   = 0;      // container (cgroup) limit on a node's page cache, 0: none
  double mem_bw         = 200e9;  // node memory bandwidth shared by all copies
  double d2h_bw         = 25e9;   // per GPU, device to pinned host memory
};

struct FsParams {
  std::string kind    = "lustre"; // lustre | local (one disk attached to each client)
  int oss             = 8;
  int osts_per_oss    = 4;
  double oss_nic_bw   = 50e9;
  double ost_write_bw = 4e9;
  double ost_read_bw  = 5e9;
  int stripe_count    = 4;
  double stripe_size  = 1048576;
};

struct ClientParams {
  double copy_bw_write      = 1.65e9; // per thread, user buffer -> page cache
  double copy_bw_read       = 2.1e9;  // per thread, page cache -> user buffer
  double buffered_write_cost = 5e-6;  // per buffered write call
  double copy_bw_write_uncached = 0;   // per thread, uncached (RWF_DONTCACHE) writes; 0: copy_bw_write
  double uncached_write_cost = -1;     // per uncached write call; < 0: buffered_write_cost
  double buffered_read_cost = 5e-6;   // per buffered read call
  double direct_write_lat   = 0.88e-3; // per direct request (fit of Lustre's DIO table)
  double direct_read_lat    = 1.0e-3;
  double direct_write_stream_bw = 9.3e9; // one thread's direct stream: request pipeline limit
  double direct_read_stream_bw  = 9.0e9;
  double direct_chunk       = 0;       // Hybrid-IO's parallel engine: requests of >= 2 chunks go as chunks (0: whole)
  int direct_queue_depth    = 8;       // chunks of one request in flight
  double direct_write_queue_bw = 0;    // one thread's direct stream with all its requests in flight (0: no bound)
  double direct_read_queue_bw  = 0;
  double readahead          = 0;       // buffered reads larger than this wait for their own fetch (0: never)
  double readahead_bw       = 0;       // one thread's buffered read stream fetches at most this fast (0: the disk)
  double writeback_req      = 4194304; // writeback RPC size
  int writeback_inflight    = 8;       // writeback RPCs in flight per node
};

struct CacheParams {
  double dirty_ratio      = 0.20;
  double background_ratio = 0.10;
  double flush_interval   = 5;
  double dirty_expire     = 30;
  std::string eager       = "auto"; // auto (on for lustre, off for local) | on | off
};

/* The library's policy core decides every request (policy.hpp); its tunables and their defaults
 * are the core's own (hio_policy_config_defaults), set per field by the policy/ flags. */
inline hio_policy_config core_policy_defaults()
{
  hio_policy_config c;
  hio_policy_config_defaults(&c);
  return c;
}

struct PolicyParams {
  std::vector<std::string> policies = {"buffered", "direct", "dontcache", "hybrid", "async"};
  hio_policy_config core = core_policy_defaults(); // mode is set per simulated policy
  bool dontcache_ok      = true;      // RWF_DONTCACHE works (library default: dontcache on)
  double async_request   = 8388608;   // async persist: direct request size
  int async_depth        = 4;         // async persist: requests in flight per writer
};

struct WorkloadParams {
  std::string kind       = "checkpoint"; // checkpoint | bench
  std::string preset     = "llama3-70b"; // llama3-8b|llama3-70b|llama3-405b|llama3-1t|custom
  double params          = 0;            // 0: preset's
  double bytes_per_param = 14;
  double ckpt_bytes      = 0;            // 0: preset's published size, or params x bytes_per_param
  int tp = 0, pp = 0, dp = 0;            // 0: preset's
  int ranks_per_node     = 8;
  std::string writers    = "all";        // all (fully sharded) | replica (one data-parallel replica)
  std::string request    = "torchsave";  // torchsave | fixed
  double request_bytes   = 4194304;      // fixed request size
  double ts_large        = 67108864;     // torchsave: large tensor record
  double ts_small        = 65536;        // torchsave: small record (norms, biases, pickle)
  double ts_small_frac   = 0.01;         // torchsave: fraction of bytes in small records
  bool cold_restore      = true;         // restore on nodes whose page cache is empty
  std::vector<double> bench_sizes = {4096, 65536, 1048576, 16777216};
  double bench_bytes     = 268435456;      // per thread
  int bench_threads      = 1;            // bench: threads (processes) of the one client, in lockstep
  bool bench_shared      = false;        // bench: the threads write disjoint regions of one shared file
};

struct TrainingParams {
  double iteration   = 10;          // seconds per iteration
  double interval    = 1800;        // compute seconds between checkpoints
  double work        = 30 * 86400;  // compute seconds of the whole run
  double node_mtbf   = 6300 * 3600.0; // per node (Llama 3: 419 unexpected stops, 54 d, 2048 nodes)
  double restart     = 300;         // reschedule + init, before restore
  long seed          = 42;
  int replicas       = 20;          // Monte Carlo runs averaged per policy
  double ckpt_cost   = -1;          // >= 0 overrides the simulated checkpoint cost
  double restore_cost = -1;         // >= 0 overrides the simulated restore cost
};

struct SimParams {
  double chunk_bytes = 268435456; // bytes a writer moves per simulated step
  int node_group     = 0;         // GPU nodes per simulated host (0: auto, 1 up to 64 nodes, then 16 hosts)
  int max_steps      = 8;         // with grouped hosts: steps per thread and file at most
  bool progress      = true;      // progress on stderr, only when it is a terminal
};

struct Params {
  ClusterParams cluster;
  FsParams fs;
  ClientParams client;
  CacheParams cache;
  PolicyParams policy;
  WorkloadParams workload;
  TrainingParams training;
  SimParams sim;
};

} // namespace hiosim
