/* platform: SimGrid hosts, links, disks and routes of the cluster and the file system. */
#include "platform.hpp"

#include <xbt/log.h>

#include <algorithm>
#include <string>

XBT_LOG_NEW_DEFAULT_CATEGORY(hio_platform, "hybridio-sim platform");

namespace sg4 = simgrid::s4u;

namespace hiosim {
namespace {

int g_group = 1; // nodes per client host, and how many clients there are in total
int g_nodes = 1;

int nodes_of(int host)
{
  return std::min(g_group, g_nodes - host * g_group);
}

sg4::Host* make_client(sg4::NetZone* zone, const Params& p, int i)
{
  return zone->create_host("node-" + std::to_string(i), p.cluster.mem_bw * nodes_of(i))->seal();
}

sg4::Host* make_oss(sg4::NetZone* zone, int i)
{
  return zone->create_host("oss-" + std::to_string(i), 1e12)->seal();
}

void add_osts(Platform& pf, const Params& p)
{
  for (size_t s = 0; s < pf.oss.size(); s++)
    for (int d = 0; d < p.fs.osts_per_oss; d++) {
      auto* disk = pf.oss[s]->create_disk("ost-" + std::to_string(pf.osts.size()), p.fs.ost_read_bw, p.fs.ost_write_bw);
      disk->seal();
      pf.osts.push_back(disk);
      pf.ost_oss.push_back(static_cast<int>(s));
    }
}

void build_star(Platform& pf, const Params& p, int nodes)
{
  auto* zone = sg4::create_star_zone("cluster");
  sg4::Link* core = nullptr;
  if (p.cluster.core_bw > 0)
    core = zone->create_link("core", p.cluster.core_bw)->set_latency(p.cluster.link_latency)->seal();
  double node_bw = p.cluster.nics_per_node * p.cluster.nic_bw; // NICs bonded: one fluid link
  for (int i = 0; i < nodes; i++) {
    auto* h = make_client(zone, p, i);
    auto* nic = zone->create_split_duplex_link(h->get_name() + "-nic", node_bw * nodes_of(i))->set_latency(p.cluster.link_latency)->seal();
    std::vector<sg4::LinkInRoute> route{{nic, sg4::LinkInRoute::Direction::UP}};
    if (core)
      route.emplace_back(core);
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, route, true);
    pf.clients.push_back(h);
  }
  for (int i = 0; i < p.fs.oss; i++) {
    auto* h = make_oss(zone, i);
    auto* nic = zone->create_split_duplex_link(h->get_name() + "-nic", p.fs.oss_nic_bw)->set_latency(p.cluster.link_latency)->seal();
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {{nic, sg4::LinkInRoute::Direction::UP}}, true);
    pf.oss.push_back(h);
  }
  zone->seal();
}

void build_fat_tree(Platform& pf, const Params& p, int nodes)
{
  // Leaves are clients, then OSS, then padding hosts that never communicate.
  unsigned leaves_needed = static_cast<unsigned>(nodes + p.fs.oss);
  unsigned ports = static_cast<unsigned>(p.cluster.leaf_ports);
  unsigned leaf_switches = std::max(1u, (leaves_needed + ports - 1) / ports);
  unsigned uplinks = static_cast<unsigned>(p.cluster.spine_uplinks);
  sg4::FatTreeParams ft(2, {ports, leaf_switches}, {1, uplinks}, {1, 1});
  std::vector<sg4::Host*> leaf_hosts(static_cast<size_t>(ports) * leaf_switches, nullptr);
  double node_bw = p.cluster.nics_per_node * p.cluster.nic_bw;
  auto netpoint = [&](sg4::NetZone* zone, const std::vector<unsigned long>& /*coord*/, unsigned long id) {
    sg4::Host* h;
    if (id < static_cast<unsigned long>(nodes))
      h = make_client(zone, p, static_cast<int>(id));
    else if (id < leaves_needed)
      h = make_oss(zone, static_cast<int>(id - nodes));
    else
      h = zone->create_host("pad-" + std::to_string(id), 1e9)->seal();
    leaf_hosts[id] = h;
    return std::make_pair(h->get_netpoint(), nullptr);
  };
  // The limiter is each host's NIC; the fat tree's own links are the switch links.
  auto limiter = [&](sg4::NetZone* zone, const std::vector<unsigned long>& coord, unsigned long id) -> sg4::Link* {
    // Called for switches too (coord = {level, index}): only leaves (level 0) have a NIC.
    if (not coord.empty() && coord[0] != 0)
      return zone->create_link("sw-limiter-" + std::to_string(coord[0]) + "-" + std::to_string(id), 1e13)->seal();
    double bw = id < static_cast<unsigned long>(nodes) ? node_bw * nodes_of(static_cast<int>(id)) : (id < leaves_needed ? p.fs.oss_nic_bw : 1e12);
    return zone->create_link("limiter-" + std::to_string(id), bw)->seal();
  };
  auto* zone = sg4::create_fatTree_zone("cluster", nullptr, ft, {netpoint, {}, limiter}, p.cluster.switch_link_bw,
                                        p.cluster.link_latency, sg4::Link::SharingPolicy::SPLITDUPLEX);
  zone->seal();
  for (int i = 0; i < nodes; i++)
    pf.clients.push_back(leaf_hosts[i]);
  for (int i = 0; i < p.fs.oss; i++)
    pf.oss.push_back(leaf_hosts[nodes + i]);
}

void build_local(Platform& pf, const Params& p, int nodes)
{
  auto* zone = sg4::create_full_zone("cluster");
  for (int i = 0; i < nodes; i++) {
    auto* h = make_client(zone, p, i);
    auto* disk = h->create_disk("disk-" + std::to_string(i), p.fs.ost_read_bw, p.fs.ost_write_bw);
    disk->seal();
    pf.clients.push_back(h);
    pf.osts.push_back(disk);
    pf.ost_oss.push_back(-1);
  }
  zone->seal();
}

} // namespace

Platform build_platform(const Params& p, int gpu_nodes, int group)
{
  Platform pf;
  g_group   = std::max(1, group);
  g_nodes   = gpu_nodes;
  int nodes = (gpu_nodes + g_group - 1) / g_group; // client hosts
  if (p.fs.kind == "local") {
    build_local(pf, p, nodes);
  } else {
    if (p.cluster.topology == "fat-tree")
      build_fat_tree(pf, p, nodes);
    else
      build_star(pf, p, nodes);
    add_osts(pf, p);
  }
  for (int i = 0; i < nodes; i++)
    pf.client_nodes.push_back(nodes_of(i));
  for (auto* d : pf.osts) {
    pf.peak_write_bw += d->get_write_bandwidth();
    pf.peak_read_bw += d->get_read_bandwidth();
  }
  XBT_INFO("platform: %zu clients, %zu OSS, %zu disks, peak write %.1f GB/s", pf.clients.size(), pf.oss.size(),
           pf.osts.size(), pf.peak_write_bw / 1e9);
  return pf;
}

} // namespace hiosim
