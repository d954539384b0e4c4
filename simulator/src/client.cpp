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
    caches_.push_back(std::make_unique<PageCache>(p.cache, capacity * gpu_nodes, eager_, wb));
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

ThreadStats ClientModel::write_file(int node, int file, double bytes, const std::vector<RequestClass>& mix, Policy pol)
{
  ThreadStats st;
  PageCache& pc  = *caches_[node];
  double threads = storage_.group_size(file);
  double offset  = 0;
  double done    = 0;
  bool buffered_any = false;
  while (done < bytes) {
    double chunk = std::min(chunk_for(bytes), bytes - done);
    for (const auto& rc : mix) {
      double part = chunk * rc.fraction;
      if (part <= 0)
        continue;
      double reqs = std::ceil(part / rc.size - 1e-9);
      Path path   = choose_path(pol, Op::Write, rc.size, false, p_.policy);
      if (path == Path::Direct) {
        direct_io(node, file, offset, part, rc.size, true, 1);
        st.bytes_direct += part * threads;
      } else {
        pc.reserve_dirty(part * threads);
        if (p_.client.buffered_write_cost > 0)
          sg4::this_actor::sleep_for(reqs * p_.client.buffered_write_cost);
        copy(part * threads, p_.client.copy_bw_write * threads);
        pc.add_dirty(file, offset, part * threads, path == Path::Dontcache);
        st.bytes_buffered += part * threads;
        buffered_any = true;
      }
      offset += part;
    }
    done += chunk;
  }
  if (buffered_any)
    pc.fsync(file); // a checkpoint counts once durable
  return st;
}

ThreadStats ClientModel::read_file(int node, int file, double bytes, const std::vector<RequestClass>& mix, Policy pol)
{
  ThreadStats st;
  PageCache& pc  = *caches_[node];
  double threads = storage_.group_size(file);
  double offset  = 0;
  double done    = 0;
  while (done < bytes) {
    double chunk = std::min(chunk_for(bytes), bytes - done);
    for (const auto& rc : mix) {
      double part = chunk * rc.fraction;
      if (part <= 0)
        continue;
      double reqs = std::ceil(part / rc.size - 1e-9);
      bool cached = pol != Policy::Direct && pol != Policy::Async && pc.lookup(file, offset);
      Path path   = choose_path(pol, Op::Read, rc.size, cached, p_.policy);
      if (path == Path::Direct) {
        direct_io(node, file, offset, part, rc.size, false, 1);
        st.bytes_direct += part * threads;
      } else {
        if (p_.client.buffered_read_cost > 0)
          sg4::this_actor::sleep_for(reqs * p_.client.buffered_read_cost);
        if (cached) {
          copy(part * threads, p_.client.copy_bw_read * threads);
          st.bytes_cache_hit += part * threads;
        } else if (p_.client.readahead > 0 && rc.size > p_.client.readahead) {
          // A read larger than the readahead window waits for its own data, then copies it.
          storage_.transfer(node, file, offset, part, false, 0);
          copy(part * threads, p_.client.copy_bw_read * threads);
          if (path == Path::Buffered)
            pc.add_clean(file, offset, part * threads);
        } else {
          // Readahead overlaps the fetch from storage with the copy to the user buffer.
          std::vector<sg4::ActivityPtr> acts;
          storage_.start_transfer(node, file, offset, part, false, 0, acts);
          acts.push_back(
              sg4::this_actor::exec_init(part * threads)->set_bound(p_.client.copy_bw_read * threads)->start());
          wait_all(acts);
          if (path == Path::Buffered)
            pc.add_clean(file, offset, part * threads);
        }
        st.bytes_buffered += part * threads;
      }
      offset += part;
    }
    done += chunk;
  }
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
