/* platform: builds the SimGrid platform of a GPU cluster and its Lustre-like file system.
 * Clients are GPU nodes (host speed = memory bandwidth, so a copy of n bytes is an Exec of n
 * "flops"); at scale one client host stands for a group of identical nodes whose NIC and memory
 * bandwidth it sums (sim/node-group), which keeps the solver's work bounded; OSS hosts carry OST disks; the network is a star (optional shared core link) or a
 * two-level fat tree with a per-host NIC limiter. With fs/kind=local each client has its own disk
 * and there is no network. Call once, after the Engine is created and before it runs. */
#pragma once
#include "params.hpp"

#include <simgrid/s4u.hpp>
#include <vector>

namespace hiosim {

struct Platform {
  std::vector<simgrid::s4u::Host*> clients;
  std::vector<int> client_nodes;              // GPU nodes each client host stands for
  std::vector<simgrid::s4u::Host*> oss;       // empty for fs/kind=local
  std::vector<simgrid::s4u::Disk*> osts;      // lustre: all OSTs; local: one per client
  std::vector<int> ost_oss;                   // OSS index of each OST
  double peak_write_bw = 0;                   // sum of OST (or local disk) write bandwidth
  double peak_read_bw  = 0;
};

/* `nodes` GPU nodes in groups of `group` per client host (the last group may be smaller). */
Platform build_platform(const Params& p, int nodes, int group);

} // namespace hiosim
