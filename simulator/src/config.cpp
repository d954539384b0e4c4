/* config: the --cfg flags of hybridio-sim, description files, validation.
 * All flags are string flags parsed here, so that a bad value yields one error naming the field
 * and where it came from (command line or file:line) instead of a generic SimGrid parse error. */
#include "config.hpp"
#include "units.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <xbt/config.hpp>
#include <xbt/log.h>

#include <fstream>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <sstream>

XBT_LOG_NEW_DEFAULT_CATEGORY(hio_config, "hybridio-sim configuration");

namespace hiosim {
namespace {

using Setter = std::function<void(Params&, const std::string&)>;

struct FlagSpec {
  const char* name;
  const char* def;
  const char* desc;
  Setter set;
};

int to_int(const std::string& v, int min)
{
  size_t used = 0;
  long x;
  try {
    x = std::stol(trim(v), &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("expected an integer, got '" + v + "'");
  }
  if (used != trim(v).size())
    throw std::invalid_argument("expected an integer, got '" + v + "'");
  if (x < min)
    throw std::invalid_argument("must be >= " + std::to_string(min) + ", got " + v);
  return static_cast<int>(x);
}

double to_double(const std::string& v, double min, double max)
{
  size_t used = 0;
  double x;
  try {
    x = std::stod(trim(v), &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("expected a number, got '" + v + "'");
  }
  if (used != trim(v).size())
    throw std::invalid_argument("expected a number, got '" + v + "'");
  if (x < min || x > max)
    throw std::invalid_argument("must be within [" + std::to_string(min) + ", " + std::to_string(max) + "], got " + v);
  return x;
}

bool to_bool(const std::string& v)
{
  if (v == "1" || v == "yes" || v == "on" || v == "true")
    return true;
  if (v == "0" || v == "no" || v == "off" || v == "false")
    return false;
  throw std::invalid_argument("expected yes/no, got '" + v + "'");
}

std::string one_of(const std::string& v, std::initializer_list<const char*> allowed)
{
  std::string list;
  for (const char* a : allowed) {
    if (v == a)
      return v;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw std::invalid_argument("expected one of " + list + ", got '" + v + "'");
}

double positive(double x, const std::string& v)
{
  if (x <= 0)
    throw std::invalid_argument("must be > 0, got '" + v + "'");
  return x;
}

uint64_t size_at_least(const std::string& v, uint64_t min)
{
  uint64_t x = parse_size(v);
  if (x < min)
    throw std::invalid_argument("must be >= " + std::to_string(min) + ", got '" + v + "'");
  return x;
}

uint32_t percent(const std::string& v)
{
  int x = to_int(v, 0);
  if (x > 100)
    throw std::invalid_argument("must be a percentage from 0 to 100, got '" + v + "'");
  return static_cast<uint32_t>(x);
}

// A default of the policy core, as text that lives as long as the flag table.
const char* core_default(uint64_t bytes)
{
  static std::list<std::string> texts;
  return texts.emplace_back(format_size(bytes)).c_str();
}

const char* core_number(uint32_t n)
{
  static std::list<std::string> texts;
  return texts.emplace_back(std::to_string(n)).c_str();
}

// The table drives flag declaration, parsing, --help and the echoed settings.
const std::vector<FlagSpec>& specs()
{
  static const hio_policy_config core = core_policy_defaults();
  static const std::vector<FlagSpec> table = {
      // cluster
      {"cluster/nodes", "0", "GPU nodes (0: as many as the parallel layout needs)",
       [](Params& p, const std::string& v) { p.cluster.nodes = to_int(v, 0); }},
      {"cluster/gpus-per-node", "8", "GPUs per node", [](Params& p, const std::string& v) { p.cluster.gpus_per_node = to_int(v, 1); }},
      {"cluster/nics", "4", "network interfaces per node", [](Params& p, const std::string& v) { p.cluster.nics_per_node = to_int(v, 1); }},
      {"cluster/nic-bw", "50GBps", "bandwidth of one node NIC", [](Params& p, const std::string& v) { p.cluster.nic_bw = positive(parse_bandwidth(v), v); }},
      {"cluster/topology", "star", "network: star (every host on one switch, optional shared core) or fat-tree",
       [](Params& p, const std::string& v) { p.cluster.topology = one_of(v, {"star", "fat-tree"}); }},
      {"cluster/core-bw", "0", "star: bandwidth of the shared core crossed by every client flow (0: non-blocking)",
       [](Params& p, const std::string& v) { p.cluster.core_bw = parse_bandwidth(v); }},
      {"cluster/link-latency", "2us", "latency of each network link", [](Params& p, const std::string& v) { p.cluster.link_latency = parse_duration(v); }},
      {"cluster/leaf-ports", "16", "fat-tree: hosts per leaf switch", [](Params& p, const std::string& v) { p.cluster.leaf_ports = to_int(v, 1); }},
      {"cluster/spine-uplinks", "8", "fat-tree: uplinks of each leaf switch (oversubscription = leaf-ports x nic / uplinks x switch-link-bw)",
       [](Params& p, const std::string& v) { p.cluster.spine_uplinks = to_int(v, 1); }},
      {"cluster/switch-link-bw", "100GBps", "fat-tree: bandwidth of every switch link",
       [](Params& p, const std::string& v) { p.cluster.switch_link_bw = positive(parse_bandwidth(v), v); }},
      {"cluster/memory", "2TiB", "host memory per node", [](Params& p, const std::string& v) { p.cluster.node_memory = positive(parse_bytes(v), v); }},
      {"cluster/app-memory", "1TiB", "host memory used by the training processes (not available to the page cache)",
       [](Params& p, const std::string& v) { p.cluster.app_memory = parse_bytes(v); }},
      {"cluster/memory-limit", "0", "container memory limit on each node's page cache (cgroup memory.max less the job's own memory; 0: none): "
       "buffered writes beyond it reclaim and stall, direct ones do not",
       [](Params& p, const std::string& v) { p.cluster.memory_limit = parse_bytes(v); }},
      {"cluster/mem-bw", "200GBps", "node memory bandwidth shared by all copies", [](Params& p, const std::string& v) { p.cluster.mem_bw = positive(parse_bandwidth(v), v); }},
      {"cluster/d2h-bw", "25GBps", "per GPU, device to host copy bandwidth (async checkpoint phase 1)",
       [](Params& p, const std::string& v) { p.cluster.d2h_bw = positive(parse_bandwidth(v), v); }},
      // file system
      {"fs/kind", "lustre", "lustre (OSS nodes with OST disks, striping) or local (one disk per client, no network)",
       [](Params& p, const std::string& v) { p.fs.kind = one_of(v, {"lustre", "local"}); }},
      {"fs/oss", "8", "object storage servers", [](Params& p, const std::string& v) { p.fs.oss = to_int(v, 1); }},
      {"fs/osts-per-oss", "4", "OST disks per OSS", [](Params& p, const std::string& v) { p.fs.osts_per_oss = to_int(v, 1); }},
      {"fs/oss-nic-bw", "50GBps", "network bandwidth of one OSS", [](Params& p, const std::string& v) { p.fs.oss_nic_bw = positive(parse_bandwidth(v), v); }},
      {"fs/ost-write-bw", "4GBps", "write bandwidth of one OST (or of the local disk)",
       [](Params& p, const std::string& v) { p.fs.ost_write_bw = positive(parse_bandwidth(v), v); }},
      {"fs/ost-read-bw", "5GBps", "read bandwidth of one OST (or of the local disk)",
       [](Params& p, const std::string& v) { p.fs.ost_read_bw = positive(parse_bandwidth(v), v); }},
      {"fs/stripe-count", "4", "OSTs each file is striped over (-1: all)",
       [](Params& p, const std::string& v) { p.fs.stripe_count = v == "-1" ? -1 : to_int(v, 1); }},
      {"fs/stripe-size", "1MiB", "stripe size", [](Params& p, const std::string& v) { p.fs.stripe_size = positive(parse_bytes(v), v); }},
      // client
      {"client/copy-bw-write", "1.65GBps", "per thread copy bandwidth into the page cache (buffered write)",
       [](Params& p, const std::string& v) { p.client.copy_bw_write = positive(parse_bandwidth(v), v); }},
      {"client/copy-bw-read", "2.1GBps", "per thread copy bandwidth out of the page cache (buffered read)",
       [](Params& p, const std::string& v) { p.client.copy_bw_read = positive(parse_bandwidth(v), v); }},
      {"client/buffered-write-cost", "5us", "fixed cost of one buffered write call",
       [](Params& p, const std::string& v) { p.client.buffered_write_cost = parse_duration(v); }},
      {"client/copy-bw-write-uncached", "0",
       "per thread rate of uncached (RWF_DONTCACHE) writes, their writeback included: the kernel starts it as each "
       "call returns and drops the pages, so it overlaps the next copies and no fresh page is allocated; 0: "
       "client/copy-bw-write",
       [](Params& p, const std::string& v) { p.client.copy_bw_write_uncached = parse_bandwidth(v); }},
      {"client/uncached-write-cost", "-1", "fixed cost of one uncached write call; negative: client/buffered-write-cost",
       [](Params& p, const std::string& v) { p.client.uncached_write_cost = v.rfind('-', 0) == 0 ? -1 : parse_duration(v); }},
      {"client/buffered-read-cost", "5us", "fixed cost of one buffered read call",
       [](Params& p, const std::string& v) { p.client.buffered_read_cost = parse_duration(v); }},
      {"client/direct-write-latency", "0.88ms", "fixed cost of one direct write request (what makes small direct I/O slow)",
       [](Params& p, const std::string& v) { p.client.direct_write_lat = parse_duration(v); }},
      {"client/direct-read-latency", "1ms", "fixed cost of one direct read request",
       [](Params& p, const std::string& v) { p.client.direct_read_lat = parse_duration(v); }},
      {"client/direct-write-stream-bw", "9.3GBps", "upper bound of one thread's direct write stream (request pipeline, DMA)",
       [](Params& p, const std::string& v) { p.client.direct_write_stream_bw = positive(parse_bandwidth(v), v); }},
      {"client/direct-read-stream-bw", "9GBps", "upper bound of one thread's direct read stream",
       [](Params& p, const std::string& v) { p.client.direct_read_stream_bw = positive(parse_bandwidth(v), v); }},
      {"client/direct-chunk", "0",
       "a direct request of at least two chunks goes out as chunks of this size, client/direct-queue-depth in flight "
       "(the Hybrid-IO library's parallel io_uring engine); 0: every request goes out whole",
       [](Params& p, const std::string& v) { p.client.direct_chunk = parse_bytes(v); }},
      {"client/direct-queue-depth", "8", "with client/direct-chunk: chunks of one request in flight",
       [](Params& p, const std::string& v) { p.client.direct_queue_depth = to_int(v, 1); }},
      {"client/direct-write-queue-bw", "0",
       "upper bound of one thread's direct write stream with all its requests in flight (the device at that request "
       "size and depth); 0: none",
       [](Params& p, const std::string& v) { p.client.direct_write_queue_bw = parse_bandwidth(v); }},
      {"client/direct-read-queue-bw", "0", "the same for direct reads",
       [](Params& p, const std::string& v) { p.client.direct_read_queue_bw = parse_bandwidth(v); }},
      {"client/readahead", "0",
       "readahead window: an uncached buffered read of at most this size overlaps its copy with the fetch of the "
       "next data; a larger one waits for its own fetch, then copies; 0: always overlapped",
       [](Params& p, const std::string& v) { p.client.readahead = parse_bytes(v); }},
      {"client/readahead-bw", "0",
       "the fastest one thread's buffered read stream is fetched from storage (the kernel's readahead keeps only "
       "its window in flight, so it may fetch slower than the disk serves direct reads); 0: the disk alone",
       [](Params& p, const std::string& v) { p.client.readahead_bw = parse_bandwidth(v); }},
      {"client/writeback-request", "4MiB", "size of one page cache writeback request (Lustre RPC)",
       [](Params& p, const std::string& v) { p.client.writeback_req = positive(parse_bytes(v), v); }},
      {"client/writeback-inflight", "8", "writeback requests in flight per node",
       [](Params& p, const std::string& v) { p.client.writeback_inflight = to_int(v, 1); }},
      // page cache
      {"pagecache/dirty-ratio", "0.2", "dirty share of available memory above which writers are throttled",
       [](Params& p, const std::string& v) { p.cache.dirty_ratio = to_double(v, 0.001, 1); }},
      {"pagecache/background-ratio", "0.1", "dirty share above which the flusher writes back",
       [](Params& p, const std::string& v) { p.cache.background_ratio = to_double(v, 0, 1); }},
      {"pagecache/flush-interval", "5s", "flusher wake-up period", [](Params& p, const std::string& v) { p.cache.flush_interval = positive(parse_duration(v), v); }},
      {"pagecache/dirty-expire", "30s", "age after which dirty data is written back", [](Params& p, const std::string& v) { p.cache.dirty_expire = parse_duration(v); }},
      {"pagecache/eager-writeback", "auto", "write dirty data back as soon as it is written, as the Lustre client does (auto: on for lustre)",
       [](Params& p, const std::string& v) { p.cache.eager = one_of(v, {"auto", "on", "off"}); }},
      // policies
      {"policy/list", "buffered,direct,dontcache,hybrid,async", "policies to compare: buffered, direct, dontcache, hybrid, async",
       [](Params& p, const std::string& v) {
         p.policy.policies.clear();
         for (const auto& x : split(v, ','))
           p.policy.policies.push_back(one_of(x, {"buffered", "direct", "dontcache", "hybrid", "async"}));
         if (p.policy.policies.empty())
           throw std::invalid_argument("needs at least one policy");
       }},
      // hybrid: the tunables of libhybridio's policy core, named as the library's settings, with
      // the core's own defaults (hio_policy_config_defaults)
      {"policy/write-threshold", core_default(core.write_threshold), "hybrid: writes of at least this size go direct",
       [](Params& p, const std::string& v) { p.policy.core.write_threshold = size_at_least(v, 1); }},
      {"policy/read-threshold", core_default(core.read_threshold), "hybrid: reads of at least this size go direct",
       [](Params& p, const std::string& v) { p.policy.core.read_threshold = size_at_least(v, 1); }},
      {"policy/sync-write-threshold", core_default(core.sync_write_threshold),
       "hybrid: O_SYNC/O_DSYNC writes of at least this size go direct",
       [](Params& p, const std::string& v) { p.policy.core.sync_write_threshold = size_at_least(v, 1); }},
      {"policy/stream-threshold", core_default(core.stream_threshold),
       "hybrid: writes of a sequential stream of at least this size go direct",
       [](Params& p, const std::string& v) { p.policy.core.stream_threshold = size_at_least(v, 1); }},
      {"policy/stream-min-run", core_number(core.stream_min_run), "hybrid: sequential predecessors that make a stream",
       [](Params& p, const std::string& v) { p.policy.core.stream_min_run = static_cast<uint32_t>(to_int(v, 0)); }},
      {"policy/dontcache-threshold", core_default(core.dontcache_threshold),
       "hybrid: requests of at least this size that cannot go direct go uncached",
       [](Params& p, const std::string& v) { p.policy.core.dontcache_threshold = size_at_least(v, 1); }},
      {"policy/pressure-high", core_number(core.pressure_high), "hybrid: memory pressure (0-100) that lowers the thresholds",
       [](Params& p, const std::string& v) { p.policy.core.pressure_high = percent(v); }},
      {"policy/cached-percent", core_number(core.cached_percent), "hybrid: reads stay buffered when this much of the range is cached",
       [](Params& p, const std::string& v) { p.policy.core.cached_percent = percent(v); }},
      {"policy/dirty-percent", core_number(core.dirty_percent), "hybrid: writes stay buffered when this much of the range is dirty",
       [](Params& p, const std::string& v) { p.policy.core.dirty_percent = percent(v); }},
      {"policy/min-body-percent", core_number(core.min_body_percent), "hybrid: a split must leave this much of the request direct",
       [](Params& p, const std::string& v) { p.policy.core.min_body_percent = percent(v); }},
      {"policy/dontcache", "yes", "RWF_DONTCACHE works on the files (the library's default: used where supported)",
       [](Params& p, const std::string& v) { p.policy.dontcache_ok = to_bool(v); }},
      {"policy/async-request", "8MiB", "async: direct request size of the persist phase",
       [](Params& p, const std::string& v) { p.policy.async_request = positive(parse_bytes(v), v); }},
      {"policy/async-depth", "4", "async: direct requests in flight per writer in the persist phase",
       [](Params& p, const std::string& v) { p.policy.async_depth = to_int(v, 1); }},
      // workload
      {"workload/kind", "checkpoint", "checkpoint (write + restore of a model) or bench (workload/bench-threads threads on one client, per block size)",
       [](Params& p, const std::string& v) { p.workload.kind = one_of(v, {"checkpoint", "bench"}); }},
      {"workload/preset", "llama3-70b", "MLPerf Storage checkpoint preset: llama3-8b, llama3-70b, llama3-405b, llama3-1t, custom",
       [](Params& p, const std::string& v) { p.workload.preset = one_of(v, {"llama3-8b", "llama3-70b", "llama3-405b", "llama3-1t", "custom"}); }},
      {"workload/params", "0", "model parameters, e.g. 70e9 (0: preset's)", [](Params& p, const std::string& v) { p.workload.params = to_double(v, 0, 1e16); }},
      {"workload/bytes-per-param", "14", "checkpoint bytes per parameter (BF16 weights + FP32 master + Adam)",
       [](Params& p, const std::string& v) { p.workload.bytes_per_param = to_double(v, 0.1, 1000); }},
      {"workload/checkpoint-bytes", "0", "checkpoint size (0: preset's published size, or params x bytes-per-param)",
       [](Params& p, const std::string& v) { p.workload.ckpt_bytes = parse_bytes(v); }},
      {"workload/tp", "0", "tensor parallel degree (0: preset's)", [](Params& p, const std::string& v) { p.workload.tp = to_int(v, 0); }},
      {"workload/pp", "0", "pipeline parallel degree (0: preset's)", [](Params& p, const std::string& v) { p.workload.pp = to_int(v, 0); }},
      {"workload/dp", "0", "data parallel degree (0: preset's)", [](Params& p, const std::string& v) { p.workload.dp = to_int(v, 0); }},
      {"workload/ranks-per-node", "8", "ranks per node", [](Params& p, const std::string& v) { p.workload.ranks_per_node = to_int(v, 1); }},
      {"workload/writers", "all", "which ranks write: all (fully sharded) or replica (one data-parallel replica)",
       [](Params& p, const std::string& v) { p.workload.writers = one_of(v, {"all", "replica"}); }},
      {"workload/request", "torchsave", "writer request sizes: torchsave (large tensor records + small records) or fixed",
       [](Params& p, const std::string& v) { p.workload.request = one_of(v, {"torchsave", "fixed"}); }},
      {"workload/request-bytes", "4MiB", "fixed: request size", [](Params& p, const std::string& v) { p.workload.request_bytes = positive(parse_bytes(v), v); }},
      {"workload/torchsave-large", "64MiB", "torchsave: size of a large tensor record", [](Params& p, const std::string& v) { p.workload.ts_large = positive(parse_bytes(v), v); }},
      {"workload/torchsave-small", "64KiB", "torchsave: size of a small record", [](Params& p, const std::string& v) { p.workload.ts_small = positive(parse_bytes(v), v); }},
      {"workload/torchsave-small-fraction", "0.01", "torchsave: fraction of the bytes in small records",
       [](Params& p, const std::string& v) { p.workload.ts_small_frac = to_double(v, 0, 1); }},
      {"workload/cold-restore", "yes", "restore on nodes with an empty page cache (after a failure)",
       [](Params& p, const std::string& v) { p.workload.cold_restore = to_bool(v); }},
      {"workload/bench-sizes", "4KiB,64KiB,1MiB,16MiB", "bench: block sizes", [](Params& p, const std::string& v) { p.workload.bench_sizes = parse_bytes_list(v); }},
      {"workload/bench-threads", "1", "bench: threads (processes) on the client, each writing and reading bench-bytes",
       [](Params& p, const std::string& v) { p.workload.bench_threads = to_int(v, 1); }},
      {"workload/bench-shared-file", "no",
       "bench: the threads write one shared file (IOR N-1): buffered writers serialise on the file's lock and "
       "the copy into its cache, direct writers meet only at the storage; the policy core sees the writers",
       [](Params& p, const std::string& v) { p.workload.bench_shared = to_bool(v); }},
      {"workload/bench-bytes", "256MiB", "bench: bytes per thread (its file or its region of the shared file)", [](Params& p, const std::string& v) { p.workload.bench_bytes = positive(parse_bytes(v), v); }},
      // training
      {"training/iteration", "10s", "time of one training iteration", [](Params& p, const std::string& v) { p.training.iteration = positive(parse_duration(v), v); }},
      {"training/interval", "30min", "compute time between checkpoints", [](Params& p, const std::string& v) { p.training.interval = positive(parse_duration(v), v); }},
      {"training/work", "30d", "compute time of the whole training run", [](Params& p, const std::string& v) { p.training.work = positive(parse_duration(v), v); }},
      {"training/node-mtbf", "6300h", "mean time between failures of one node (Llama 3 on 16k GPUs: about 6300 h)",
       [](Params& p, const std::string& v) { p.training.node_mtbf = positive(parse_duration(v), v); }},
      {"training/restart", "5min", "time to reschedule and initialise after a failure, before the restore",
       [](Params& p, const std::string& v) { p.training.restart = parse_duration(v); }},
      {"training/seed", "42", "seed of the failure draws", [](Params& p, const std::string& v) { p.training.seed = to_int(v, 0); }},
      {"training/replicas", "20", "Monte Carlo training runs averaged per policy", [](Params& p, const std::string& v) { p.training.replicas = to_int(v, 1); }},
      {"training/checkpoint-cost", "-1", "if >= 0: checkpoint cost in seconds, replacing the simulated one (validation)",
       [](Params& p, const std::string& v) { p.training.ckpt_cost = v == "-1" ? -1 : parse_duration(v); }},
      {"training/restore-cost", "-1", "if >= 0: restore cost in seconds, replacing the simulated one",
       [](Params& p, const std::string& v) { p.training.restore_cost = v == "-1" ? -1 : parse_duration(v); }},
      // simulation
      {"sim/chunk-bytes", "256MiB", "bytes a writer moves per simulated step (bounds activities; the model's granularity)",
       [](Params& p, const std::string& v) { p.sim.chunk_bytes = positive(parse_bytes(v), v); }},
      {"sim/node-group", "0",
       "GPU nodes represented by one simulated host, their NICs, memory and threads summed (0: auto: 1 up to 64 nodes, else 16 hosts)",
       [](Params& p, const std::string& v) { p.sim.node_group = to_int(v, 0); }},
      {"sim/max-steps", "8", "with grouped hosts (sim/node-group > 1): at most this many chunks per thread and file",
       [](Params& p, const std::string& v) { p.sim.max_steps = to_int(v, 1); }},
      {"sim/progress", "yes", "progress on stderr during long runs (only when stderr is a terminal)",
       [](Params& p, const std::string& v) { p.sim.progress = to_bool(v); }},
  };
  return table;
}

// Declares every flag with SimGrid once, at static initialisation, so `--cfg=` finds them.
struct FlagRegistry {
  std::vector<std::unique_ptr<simgrid::config::Flag<std::string>>> flags;
  std::map<std::string, std::string, std::less<>> origin; // where a value came from, for errors
  FlagRegistry()
  {
    for (const auto& s : specs())
      flags.push_back(std::make_unique<simgrid::config::Flag<std::string>>(s.name, s.desc, s.def));
  }
};

FlagRegistry& registry()
{
  static FlagRegistry r;
  return r;
}
const FlagRegistry& g_force_registration = registry();

const FlagSpec* find_spec(const std::string& name)
{
  for (const auto& s : specs())
    if (name == s.name)
      return &s;
  return nullptr;
}

std::string origin_of(const std::string& name)
{
  auto it = registry().origin.find(name);
  if (it != registry().origin.end())
    return it->second;
  return simgrid::config::is_default(name.c_str()) ? "default" : "--cfg";
}

} // namespace

bool is_model_flag(const std::string& name)
{
  return find_spec(name) != nullptr;
}

void set_flag(const std::string& name, const std::string& value)
{
  if (not is_model_flag(name))
    throw ConfigError("unknown field '" + name + "'");
  simgrid::config::set_as_string(name.c_str(), value);
}

void load_description_file(const std::string& path)
{
  std::ifstream in(path);
  if (not in)
    throw ConfigError("cannot open description file '" + path + "'");
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    lineno++;
    auto hash = line.find('#');
    if (hash != std::string::npos)
      line.resize(hash);
    line = trim(line);
    if (line.empty())
      continue;
    auto eq = line.find('=');
    std::string where = path + " line " + std::to_string(lineno);
    if (eq == std::string::npos)
      throw ConfigError(where + ": expected 'field = value', got '" + line + "'");
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    const FlagSpec* spec = find_spec(key);
    if (spec == nullptr)
      throw ConfigError(where + ": unknown field '" + key + "' (hybridio-sim --help lists the fields)");
    if (value.empty())
      throw ConfigError(where + ": field '" + key + "' has no value");
    try {
      Params scratch;
      spec->set(scratch, value); // type check now, so the error names this line
    } catch (const std::invalid_argument& e) {
      throw ConfigError(where + ": field '" + key + "': " + e.what());
    }
    // A flag given on the command line wins over the file.
    if (simgrid::config::is_default(key.c_str()) || registry().origin.count(key) != 0) {
      simgrid::config::set_as_string(key.c_str(), value);
      registry().origin[key] = where;
    }
  }
}

Params params_from_config()
{
  Params p;
  for (const auto& s : specs()) {
    const std::string& value = simgrid::config::get_value<std::string>(s.name);
    try {
      s.set(p, value);
    } catch (const std::invalid_argument& e) {
      throw ConfigError("field '" + std::string(s.name) + "' (" + origin_of(s.name) + "): " + e.what());
    }
  }
  auto fail = [](const char* field, const std::string& why) {
    throw ConfigError("field '" + std::string(field) + "' (" + origin_of(field) + "): " + why);
  };
  int total_osts = p.fs.oss * p.fs.osts_per_oss;
  if (p.fs.stripe_count > total_osts)
    fail("fs/stripe-count", "is " + std::to_string(p.fs.stripe_count) + " but there are only " +
                                std::to_string(total_osts) + " OSTs (fs/oss x fs/osts-per-oss)");
  if (p.cluster.app_memory >= p.cluster.node_memory)
    fail("cluster/app-memory", "leaves no memory for the page cache (must be below cluster/memory)");
  if (p.cache.background_ratio > p.cache.dirty_ratio)
    fail("pagecache/background-ratio", "must not exceed pagecache/dirty-ratio");
  if (p.workload.preset == "custom" && p.workload.params <= 0 && p.workload.ckpt_bytes <= 0)
    fail("workload/preset", "custom needs workload/params or workload/checkpoint-bytes");
  if (p.workload.preset == "custom" && (p.workload.tp == 0 || p.workload.pp == 0 || p.workload.dp == 0))
    fail("workload/preset", "custom needs workload/tp, workload/pp and workload/dp");
  return p;
}

std::vector<std::pair<std::string, std::string>> all_flags()
{
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : specs())
    out.emplace_back(s.name, simgrid::config::get_value<std::string>(s.name));
  return out;
}

std::vector<std::pair<std::string, std::string>> non_default_flags()
{
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& s : specs())
    if (simgrid::config::get_value<std::string>(s.name) != s.def)
      out.emplace_back(s.name, simgrid::config::get_value<std::string>(s.name));
  return out;
}

std::string flags_help()
{
  std::ostringstream os;
  std::string group;
  for (const auto& s : specs()) {
    std::string name(s.name);
    std::string g = name.substr(0, name.find('/'));
    if (g != group) {
      os << "\n  [" << g << "]\n";
      group = g;
    }
    os << "    --cfg=" << name << ":" << s.def << "\n        " << s.desc << "\n";
  }
  return os.str();
}

std::string option_value(const std::vector<std::string>& args, size_t& i, const std::string& opt)
{
  const std::string& a = args[i];
  if (a.size() > opt.size() && a[opt.size()] == '=')
    return a.substr(opt.size() + 1);
  if (i + 1 >= args.size())
    throw ConfigError("option " + opt + " needs a value");
  return args[++i];
}

} // namespace hiosim
