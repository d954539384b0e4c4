/* simulation: the controller of one run (see simulation.hpp). */
#include "simulation.hpp"
#include "client.hpp"
#include "platform.hpp"
#include "progress.hpp"
#include "storage.hpp"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <chrono>
#include <memory>

XBT_LOG_NEW_DEFAULT_CATEGORY(hio_sim, "hybridio-sim run controller");

namespace sg4 = simgrid::s4u;

namespace hiosim {
namespace {

struct Phase {
  double start = 0;
  double end   = 0;
};

// The writers of one simulated host: they run in lockstep over one file group.
struct HostWriters {
  int host;
  int threads;
  double bytes; // per thread
  int group = -1;
};

std::vector<HostWriters> group_writers(const CheckpointPlan& plan, int node_group)
{
  std::vector<HostWriters> out;
  for (const auto& w : plan.writers) {
    int host = w.node / node_group;
    if (out.empty() || out.back().host != host)
      out.push_back({host, 0, w.bytes});
    out.back().threads++;
  }
  return out;
}

// Runs `body(i)` in one actor per host with writers and waits for all of them.
template <class F>
void run_threads(const Platform& pf, const std::vector<HostWriters>& hosts, const char* what, F body)
{
  std::vector<sg4::ActorPtr> actors;
  actors.reserve(hosts.size());
  for (size_t i = 0; i < hosts.size(); i++)
    actors.push_back(sg4::Actor::create(std::string(what) + "-" + std::to_string(hosts[i].host),
                                        pf.clients[hosts[i].host], [&body, i] { body(i); }));
  for (auto& a : actors)
    a->join();
}

void checkpoint_policies(const Params& p, const Platform& pf, Storage& st, ClientModel& cm, RunResult& rr,
                         Progress& prog, int node_group)
{
  const auto& plan = rr.plan;
  auto hosts = group_writers(plan, node_group);
  cm.start_flushers();
  for (const auto& name : p.policy.policies) {
    Policy pol = parse_policy(name);
    PolicyResult res;
    res.policy = name;
    for (auto& h : hosts)
      h.group = st.create_group(h.host, h.threads);
    double t0 = sg4::Engine::get_clock();
    double direct = 0, total = 0;
    prog.phase(name + " write", plan.bytes);
    if (pol == Policy::Async) {
      run_threads(pf, hosts, "snapshot", [&](size_t i) { cm.async_snapshot(hosts[i].bytes); });
      res.write_s = sg4::Engine::get_clock() - t0;
      run_threads(pf, hosts, "persist", [&](size_t i) {
        cm.async_persist(hosts[i].host, hosts[i].group, hosts[i].bytes);
        prog.add(hosts[i].bytes * hosts[i].threads);
      });
      res.durable_s = sg4::Engine::get_clock() - t0;
      direct = total = plan.bytes;
    } else {
      run_threads(pf, hosts, "writer", [&](size_t i) {
        auto s = cm.write_file(hosts[i].host, hosts[i].group, hosts[i].bytes, plan.requests, pol);
        direct += s.bytes_direct;
        total += s.bytes_direct + s.bytes_buffered;
        for (int r = 0; r < HIO_RULE_COUNT; r++)
          res.write_rule_bytes[r] += s.bytes_by_rule[r];
        prog.add(hosts[i].bytes * hosts[i].threads);
      });
      res.write_s = res.durable_s = sg4::Engine::get_clock() - t0;
    }
    res.direct_share = total > 0 ? direct / total : 0;
    for (size_t n = 0; n < pf.clients.size(); n++)
      res.throttled_bytes += cm.cache(static_cast<int>(n)).throttled_bytes();
    if (p.workload.cold_restore)
      cm.drop_caches();
    prog.phase(name + " restore", plan.bytes);
    double t1 = sg4::Engine::get_clock();
    run_threads(pf, hosts, "reader", [&](size_t i) {
      auto s = cm.read_file(hosts[i].host, hosts[i].group, hosts[i].bytes, plan.requests, pol);
      for (int r = 0; r < HIO_RULE_COUNT; r++)
        res.read_rule_bytes[r] += s.bytes_by_rule[r];
      prog.add(hosts[i].bytes * hosts[i].threads);
    });
    res.restore_s = sg4::Engine::get_clock() - t1;
    cm.drop_caches(); // the next policy starts from a clean state
    res.write_gbps = plan.bytes / res.durable_s / 1e9;
    res.read_gbps  = plan.bytes / res.restore_s / 1e9;
    res.frac_peak  = plan.bytes / res.durable_s / pf.peak_write_bw;
    XBT_INFO("%s: write %.3f s (durable %.3f s), restore %.3f s", name.c_str(), res.write_s, res.durable_s,
             res.restore_s);
    rr.policies.push_back(res);
  }
}

void bench_policies(const Params& p, const Platform& pf, Storage& st, ClientModel& cm, RunResult& rr)
{
  (void)pf;
  cm.start_flushers();
  WorkloadParams w = p.workload;
  w.request = "fixed";
  for (double bs : p.workload.bench_sizes) {
    w.request_bytes = bs;
    auto mix = request_mix(w);
    for (const auto& name : p.policy.policies) {
      Policy pol = parse_policy(name);
      if (pol == Policy::Async)
        continue;
      int file = st.create_group(0, w.bench_threads);
      cm.set_shared_file(file, w.bench_shared && w.bench_threads > 1);
      double t0 = sg4::Engine::get_clock();
      cm.write_file(0, file, w.bench_bytes, mix, pol);
      double tw = sg4::Engine::get_clock() - t0;
      cm.drop_caches(); // fio invalidates the file's cache before reading
      double t1 = sg4::Engine::get_clock();
      cm.read_file(0, file, w.bench_bytes, mix, pol);
      double tr = sg4::Engine::get_clock() - t1;
      cm.drop_caches();
      double all = w.bench_bytes * w.bench_threads;
      rr.bench.push_back({"write", name, bs, all / tw / 1e9});
      rr.bench.push_back({"read", name, bs, all / tr / 1e9});
    }
  }
}

} // namespace

RunResult run_simulation(const Params& p)
{
  auto wall0 = std::chrono::steady_clock::now();
  RunResult rr;
  bool bench = p.workload.kind == "bench";
  if (not bench)
    rr.plan = make_checkpoint_plan(p);
  rr.nodes = bench ? 1 : rr.plan.nodes;
  rr.gpus  = rr.nodes * p.cluster.gpus_per_node;
  rr.system_mtbf = p.training.node_mtbf / rr.nodes;
  bool given_costs = p.training.ckpt_cost >= 0 && p.training.restore_cost >= 0;

  if (given_costs && not bench) {
    // Validation mode: the costs are given, no I/O is simulated.
    PolicyResult res;
    res.policy = "given";
    res.write_s = res.durable_s = p.training.ckpt_cost;
    res.restore_s = p.training.restore_cost;
    rr.policies.push_back(res);
  } else {
    // Auto grouping: every node simulated up to 64 nodes, beyond that 16 simulated hosts. The
    // solver's cost grows with concurrent flows (each host reaches every OST), and identical
    // nodes behave alike: 2048 nodes in groups of 32 or of 128 give the same times.
    int group = p.sim.node_group > 0 ? p.sim.node_group : (rr.nodes <= 64 ? 1 : (rr.nodes + 15) / 16);
    rr.node_group = group;
    Platform pf = build_platform(p, rr.nodes, group);
    rr.peak_write = pf.peak_write_bw;
    rr.peak_read  = pf.peak_read_bw;
    Storage st(p, pf);
    ClientModel cm(p, st);
    if (group > 1)
      cm.set_max_steps(p.sim.max_steps);
    Progress prog(p.sim.progress);
    sg4::Actor::create("controller", pf.clients[0], [&] {
      if (bench)
        bench_policies(p, pf, st, cm, rr);
      else
        checkpoint_policies(p, pf, st, cm, rr, prog, group);
    });
    sg4::Engine::get_instance()->run();
    prog.done();
  }
  for (auto& res : rr.policies) {
    TrainingInput in;
    in.work        = p.training.work;
    in.interval    = p.training.interval;
    in.ckpt_block  = p.training.ckpt_cost >= 0 ? p.training.ckpt_cost : res.write_s;
    in.ckpt_durable = p.training.ckpt_cost >= 0 ? p.training.ckpt_cost : res.durable_s;
    in.restart     = p.training.restart;
    in.restore     = p.training.restore_cost >= 0 ? p.training.restore_cost : res.restore_s;
    in.system_mtbf = rr.system_mtbf;
    in.gpus        = rr.gpus;
    in.seed        = static_cast<uint64_t>(p.training.seed);
    in.replicas    = p.training.replicas;
    if (not bench)
      res.training = simulate_training(in);
  }
  rr.sim_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return rr;
}

} // namespace hiosim
