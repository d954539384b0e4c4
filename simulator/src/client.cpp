/* client: per-thread write and read paths of each policy (see client.hpp). */
#include "client.hpp"

#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <map>

XBT_LOG_NEW_DEFAULT_CATEGORY(hio_client, "hybridio-sim client I/O paths");

namespace sg4 = simgrid::s4u;

namespace hiosim {

ClientModel::ClientModel(const Params& p, Storage& storage) : p_(p), storage_(storage)
{
  eager_ = p.cache.eager == "on" || (p.cache.eager == "auto" && p.fs.kind == "lustre");
  double capacity = p.cluster.node_memory - p.cluster.app_memory;
  if (p.cluster.memory_limit > 0) // a container's limit caps the cache, and the dirty limit with it (cgroup v2)
    capacity = std::min(capacity, p.cluster.memory_limit);
  size_t nodes    = storage.platform().clients.size();
  for (size_t n = 0; n < nodes; n++) {
    int node = static_cast<int>(n);
    int gpu_nodes = storage.platform().client_nodes[n];
    auto wb  = [this, node, gpu_nodes](const std::vector<PageCache::Block*>& blocks) {
      // Writeback requests of writeback-request bytes, writeback-inflight of them at a time:
      // their fixed cost is paid once per in-flight window, the data moves in one flow per block.
      double bytes = 0;
      for (auto* b : blocks)
        bytes += b->bytes; // blocks hold the bytes of every file of their group
      double reqs = std::ceil(bytes / p_.client.writeback_req);
      double lat  = reqs * p_.client.direct_write_lat / (p_.client.writeback_inflight * gpu_nodes);
      if (lat > 0)
        sg4::this_actor::sleep_for(lat);
      // One transfer per file group, not per block: activities stay bounded by the OSTs.
      std::map<int, std::pair<double, double>> per_group; // group -> (first offset, bytes)
      for (auto* b : blocks) {
        auto it = per_group.find(b->file);
        if (it == per_group.end())
          per_group[b->file] = {b->offset, b->bytes};
        else
          it->second.second += b->bytes;
      }
      std::vector<sg4::ActivityPtr> acts;
      for (const auto& [g, ob] : per_group)
        storage_.start_transfer(node, g, ob.first, ob.second / storage_.group_size(g), true, 0, acts);
      wait_all(acts);
    };
    caches_.push_back(
        std::make_unique<PageCache>(p.cache, capacity * gpu_nodes, p.cluster.node_memory * gpu_nodes, eager_, wb));
  }
}

void ClientModel::start_flushers()
{
  const auto& clients = storage_.platform().clients;
  for (size_t n = 0; n < clients.size(); n++) {
    PageCache* pc = caches_[n].get();
    sg4::Actor::create("flusher-" + std::to_string(n), clients[n], [pc] { pc->flusher_loop(); })->daemonize();
  }
}

void ClientModel::drop_caches()
{
  for (auto& c : caches_)
    c->drop_clean();
}

void ClientModel::set_shared_file(int file, bool shared)
{
  if (shared)
    shared_files_.insert(file);
  else
    shared_files_.erase(file);
}

double ClientModel::chunk_for(double bytes) const
{
  // At scale (grouped hosts) a thread takes at most max_steps steps: fewer, larger chunks.
  if (max_steps_ > 0)
    return std::max(p_.sim.chunk_bytes, bytes / max_steps_);
  return p_.sim.chunk_bytes;
}

void ClientModel::copy(double bytes, double bw)
{
  if (bytes <= 0)
    return;
  sg4::this_actor::exec_init(bytes)->set_bound(bw)->start()->wait();
}

void ClientModel::direct_io(int node, int file, double offset, double bytes, double req, bool write, int depth)
{
  // `bytes` per thread; the threads issue their requests in parallel.
  double threads = storage_.group_size(file);
  // Hybrid-IO's parallel engine cuts a request of at least two chunks into chunks, up to
  // queue-depth of them in flight: each chunk is a request of its own, overlapped with the others.
  double chunk = p_.client.direct_chunk;
  if (chunk > 0 && req >= 2 * chunk - 1e-9) {
    depth *= static_cast<int>(std::min<double>(p_.client.direct_queue_depth, std::ceil(req / chunk - 1e-9)));
    req = chunk;
  }
  double reqs = std::ceil(bytes / req - 1e-9);
  double lat  = reqs * (write ? p_.client.direct_write_lat : p_.client.direct_read_lat) / depth;
  if (lat > 0)
    sg4::this_actor::sleep_for(lat);
  // The thread's request pipeline bounds the stream: an Exec of the same bytes, capped at the
  // stream bandwidth, runs alongside the transfer, and the slower of the two sets the time.
  double stream = (write ? p_.client.direct_write_stream_bw : p_.client.direct_read_stream_bw) * depth;
  double queue  = write ? p_.client.direct_write_queue_bw : p_.client.direct_read_queue_bw;
  if (queue > 0)
    stream = std::min(stream, queue);
  stream *= threads;
  std::vector<sg4::ActivityPtr> acts;
  storage_.start_transfer(node, file, offset, bytes, write, 0, acts);
  acts.push_back(sg4::this_actor::exec_init(bytes * threads)->set_bound(stream)->start());
  wait_all(acts);
}

namespace {

/* Visits the request classes of every step of a thread's file in file order: a step of `chunk`
 * bytes holds each class's fraction of it, one class after the other. */
template <class Visit>
void for_each_part(double bytes, double chunk, const std::vector<RequestClass>& mix, Visit visit)
{
  double offset = 0;
  for (double done = 0; done < bytes; done += chunk) {
    double step = std::min(chunk, bytes - done);
    for (const auto& rc : mix) {
      double part = step * rc.fraction;
      if (part <= 0)
        continue;
      visit(offset, part, rc);
      offset += part;
    }
  }
}

void count(ThreadStats& st, Path path, hio_rule rule, double bytes)
{
  (path == Path::Direct ? st.bytes_direct : st.bytes_buffered) += bytes;
  if (rule < HIO_RULE_COUNT)
    st.bytes_by_rule[rule] += bytes;
}

} // namespace

std::vector<ClientModel::Piece> ClientModel::plan_part(Policy pol, Op op, int node, int file, double offset,
                                                       double part, double request, double file_bytes, Stream& stream)
{
  const hio_policy_config cfg = policy_config(pol, p_.policy);
  PageCache& pc  = *caches_[node];
  double threads = storage_.group_size(file);
  double reqs    = std::ceil(part / request - 1e-9);
  uint64_t len   = static_cast<uint64_t>(std::llround(request));
  std::vector<Piece> pieces;
  auto add = [&](Path path, hio_rule rule, double at, double bytes, double req, double calls, bool bounce) {
    if (bytes > 0)
      pieces.push_back({path, rule, at, bytes, req, calls, bounce});
  };
  // The first requests of a file have fewer sequential predecessors than the stream rule asks
  // for: they are decided apart from the rest of the step.
  double first = reqs;
  if (stream.issued < cfg.stream_min_run)
    first = std::min(reqs, static_cast<double>(cfg.stream_min_run - stream.issued));
  double done_reqs = 0;
  for (double n : {first, reqs - first}) {
    if (n <= 0)
      continue;
    double at    = offset + part * done_reqs / reqs;
    double bytes = part * n / reqs;
    RequestFacts f;
    f.op           = op;
    f.offset       = stream.position + static_cast<uint64_t>(done_reqs) * len;
    f.length       = len;
    f.file_size    = static_cast<uint64_t>(std::llround(file_bytes));
    f.seq_run      = static_cast<uint32_t>(std::min<uint64_t>(stream.issued + static_cast<uint64_t>(done_reqs), UINT32_MAX));
    f.dontcache_ok = p_.policy.dontcache_ok;
    f.writers      = shared_files_.count(file) ? static_cast<uint32_t>(threads) : 1;
    CacheFacts cache;
    cache.probe    = [&](double& cached, double& dirty) { pc.range_state(file, at, bytes, threads, cached, dirty); };
    cache.pressure = [&] { return pc.pressure(); };
    hio_request req;
    hio_decision d = decide_request(cfg, f, cache, &req);
    // As File::route(): a direct-bound read of a partly cached range takes what is cached from
    // the cache and decides the rest again (Lustre's cached-first read).
    if (op == Op::Read && d.path == HIO_PATH_DIRECT && d.rule != HIO_RULE_CALLER_DIRECT && req.cached_pages > 0) {
      double cached = 0, dirty = 0;
      pc.range_state(file, at, bytes, threads, cached, dirty);
      double served = std::floor(cached * static_cast<double>(len) / cfg.page_size) * cfg.page_size;
      if (served > 0 && served < static_cast<double>(len)) {
        add(Path::Buffered, d.rule, at, bytes * served / len, served, n, false);
        at += bytes * served / len;
        bytes -= bytes * served / len;
        f.offset += static_cast<uint64_t>(served);
        f.length -= static_cast<uint64_t>(served);
        cache.probe = [](double& c, double& dd) { c = dd = 0; }; // what is left was not cached
        d = decide_request(cfg, f, cache);
      }
    }
    double whole = static_cast<double>(f.length);
    if (d.path == HIO_PATH_DIRECT && d.split) {
      double edges = static_cast<double>(d.head_len + d.tail_len);
      add(Path::Buffered, d.rule, at, bytes * edges / whole, edges, n * ((d.head_len > 0) + (d.tail_len > 0)), false);
      add(Path::Direct, d.rule, at + bytes * edges / whole, bytes * d.body_len / whole,
          static_cast<double>(d.body_len), n, d.bounce);
    } else {
      add(path_of(d.path), d.rule, at, bytes, whole, n, d.path == HIO_PATH_DIRECT && d.bounce);
    }
    done_reqs += n;
  }
  stream.position += static_cast<uint64_t>(reqs) * len;
  stream.issued += static_cast<uint64_t>(reqs);
  return pieces;
}

void ClientModel::write_piece(int node, int file, const Piece& pc)
{
  double threads = storage_.group_size(file);
  if (pc.path == Path::Direct) {
    if (pc.bounce) // the library stages a misaligned body through an aligned buffer
      copy(pc.bytes * threads, p_.client.copy_bw_write * threads);
    direct_io(node, file, pc.offset, pc.bytes, pc.request, true, 1);
    return;
  }
  PageCache& cache = *caches_[node];
  cache.reserve_dirty(pc.bytes * threads);
  // Writers of one shared file take turns (the file's lock): calls and copies one after another.
  double turns = shared_files_.count(file) ? threads : 1;
  const bool uncached = pc.path == Path::Dontcache;
  const double call_cost = uncached && p_.client.uncached_write_cost >= 0 ? p_.client.uncached_write_cost
                                                                            : p_.client.buffered_write_cost;
  const double copy_bw =
      uncached && p_.client.copy_bw_write_uncached > 0 ? p_.client.copy_bw_write_uncached : p_.client.copy_bw_write;
  if (call_cost > 0)
    sg4::this_actor::sleep_for(pc.calls * turns * call_cost);
  copy(pc.bytes * threads, copy_bw * threads / turns);
  cache.add_dirty(file, pc.offset, pc.bytes * threads, uncached);
}

ThreadStats ClientModel::write_file(int node, int file, double bytes, const std::vector<RequestClass>& mix, Policy pol)
{
  ThreadStats st;
  double threads = storage_.group_size(file);
  bool buffered_any = false;
  Stream stream;
  for_each_part(bytes, chunk_for(bytes), mix, [&](double offset, double part, const RequestClass& rc) {
    for (const Piece& pc : plan_part(pol, Op::Write, node, file, offset, part, rc.size, bytes, stream)) {
      write_piece(node, file, pc);
      count(st, pc.path, pc.rule, pc.bytes * threads);
      buffered_any |= pc.path != Path::Direct;
    }
  });
  if (buffered_any)
    caches_[node]->fsync(file); // a checkpoint counts once durable
  return st;
}

double ClientModel::read_piece(int node, int file, const Piece& pc)
{
  if (pc.path == Path::Direct) {
    direct_io(node, file, pc.offset, pc.bytes, pc.request, false, 1);
    return 0;
  }
  PageCache& cache = *caches_[node];
  double threads   = storage_.group_size(file);
  double bw        = p_.client.copy_bw_read * threads;
  if (p_.client.buffered_read_cost > 0)
    sg4::this_actor::sleep_for(pc.calls * p_.client.buffered_read_cost);
  double cached = 0, dirty = 0;
  cache.range_state(file, pc.offset, pc.bytes, threads, cached, dirty);
  double hit = pc.bytes * cached, miss = pc.bytes - hit;
  if (hit > 0) {
    cache.touch_range(file, pc.offset, pc.bytes);
    copy(hit * threads, bw);
  }
  if (miss <= 0)
    return hit;
  // The fetch takes at least what the readahead's own pace allows (client/readahead-bw).
  const double fetch_floor = p_.client.readahead_bw > 0 ? miss / p_.client.readahead_bw : 0;
  const double started     = sg4::Engine::get_clock();
  auto at_readahead_pace   = [&] {
    const double left = started + fetch_floor - sg4::Engine::get_clock();
    if (left > 0)
      sg4::this_actor::sleep_for(left);
  };
  if (p_.client.readahead > 0 && pc.request > p_.client.readahead) {
    // A read larger than the readahead window waits for its own data, then copies it.
    storage_.transfer(node, file, pc.offset, miss, false, 0);
    at_readahead_pace();
    copy(miss * threads, bw);
  } else {
    // Readahead overlaps the fetch from storage with the copy to the user buffer.
    std::vector<sg4::ActivityPtr> acts;
    storage_.start_transfer(node, file, pc.offset, miss, false, 0, acts);
    acts.push_back(sg4::this_actor::exec_init(miss * threads)->set_bound(bw)->start());
    wait_all(acts);
    at_readahead_pace();
  }
  if (pc.path == Path::Buffered && hit <= 0)
    cache.add_clean(file, pc.offset, miss * threads);
  return hit;
}

ThreadStats ClientModel::read_file(int node, int file, double bytes, const std::vector<RequestClass>& mix, Policy pol)
{
  ThreadStats st;
  double threads = storage_.group_size(file);
  // The file's size as its writer's requests, laid back to back, made it.
  double file_size = 0;
  for_each_part(bytes, chunk_for(bytes), mix, [&](double, double part, const RequestClass& rc) {
    file_size += std::ceil(part / rc.size - 1e-9) * static_cast<double>(std::llround(rc.size));
  });
  Stream stream;
  for_each_part(bytes, chunk_for(bytes), mix, [&](double offset, double part, const RequestClass& rc) {
    for (const Piece& pc : plan_part(pol, Op::Read, node, file, offset, part, rc.size, file_size, stream)) {
      st.bytes_cache_hit += read_piece(node, file, pc) * threads;
      count(st, pc.path, pc.rule, pc.bytes * threads);
    }
  });
  return st;
}

void ClientModel::async_snapshot(double bytes)
{
  sg4::this_actor::sleep_for(bytes / p_.cluster.d2h_bw);
}

void ClientModel::async_persist(int node, int file, double bytes)
{
  double done = 0;
  while (done < bytes) {
    double chunk = std::min(chunk_for(bytes), bytes - done);
    direct_io(node, file, done, chunk, p_.policy.async_request, true, p_.policy.async_depth);
    done += chunk;
  }
}

} // namespace hiosim
