/* storage: striping of files over OSTs and pipelined transfers through network and disks. */
#include "storage.hpp"

#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <map>

XBT_LOG_NEW_DEFAULT_CATEGORY(hio_storage, "hybridio-sim Lustre-like storage");

namespace sg4 = simgrid::s4u;

namespace hiosim {

void wait_all(std::vector<sg4::ActivityPtr>& acts)
{
  // Waiting in completion order: in 3.32 an activity that ends before its wait() stays on the
  // actor's activity list, and every later completion scans that list (quadratic slowdown).
  while (not acts.empty()) {
    ssize_t i = sg4::Activity::wait_any(acts);
    acts.erase(acts.begin() + i);
  }
}

Storage::Storage(const Params& p, const Platform& pf) : p_(p), pf_(pf)
{
  int n = static_cast<int>(pf.osts.size());
  stripe_count_ = (p.fs.stripe_count < 0 || p.fs.stripe_count > n) ? n : p.fs.stripe_count;
}

int Storage::create_group(int client, int files)
{
  int id = static_cast<int>(groups_.size());
  std::vector<Layout> g;
  int n = static_cast<int>(pf_.osts.size());
  for (int i = 0; i < files; i++, next_file_++) {
    if (p_.fs.kind == "local")
      g.push_back({client, client, 1});
    else // consecutive files start on consecutive stripe groups, as Lustre's round-robin allocator
      g.push_back({client, static_cast<int>((next_file_ * stripe_count_) % n), stripe_count_});
  }
  groups_.push_back(std::move(g));
  return id;
}

std::vector<std::pair<int, double>> Storage::split_by_ost(int group, double offset, double bytes) const
{
  int n = static_cast<int>(pf_.osts.size());
  std::vector<double> per_ost(n, 0.0);
  double s = p_.fs.stripe_size;
  for (const Layout& f : groups_.at(group)) {
    if (f.count == 1) {
      per_ost[f.first_ost] += bytes;
    } else if (bytes >= 8.0 * s * f.count) {
      // Many full stripe rounds: the split is even to within one stripe per OST.
      for (int k = 0; k < f.count; k++)
        per_ost[(f.first_ost + k) % n] += bytes / f.count;
    } else {
      double pos = offset;
      double end = offset + bytes;
      while (pos < end) {
        double unit     = std::floor(pos / s);
        double unit_end = std::min(end, (unit + 1) * s);
        per_ost[(f.first_ost + static_cast<long long>(unit) % f.count) % n] += unit_end - pos;
        pos = unit_end;
      }
    }
  }
  std::vector<std::pair<int, double>> out;
  for (int k = 0; k < n; k++)
    if (per_ost[k] > 0)
      out.emplace_back(k, per_ost[k]);
  return out;
}

void Storage::start_transfer(int client, int file, double offset, double bytes, bool write, double stream_bw,
                             std::vector<sg4::ActivityPtr>& acts)
{
  if (bytes < 1.0)
    return;
  double total = bytes * group_size(file);
  auto op = write ? sg4::Io::OpType::WRITE : sg4::Io::OpType::READ;
  std::map<int, double> per_oss;
  for (auto [ost, b] : split_by_ost(file, offset, bytes)) {
    acts.push_back(pf_.osts[ost]->io_init(static_cast<sg_size_t>(std::llround(std::max(1.0, b))), op)->start());
    if (pf_.ost_oss[ost] >= 0)
      per_oss[pf_.ost_oss[ost]] += b;
  }
  sg4::Host* c = pf_.clients[client];
  for (auto [oss, b] : per_oss) {
    sg4::Host* s = pf_.oss[oss];
    auto comm = sg4::Comm::sendto_init(); // the rate must be set before the hosts in 3.32
    if (stream_bw > 0)
      comm->set_rate(stream_bw * b / total);
    comm->set_source(write ? c : s)->set_destination(write ? s : c);
    comm->set_payload_size(static_cast<uint64_t>(std::llround(std::max(1.0, b))));
    acts.push_back(comm->start());
  }
}

void Storage::transfer(int client, int file, double offset, double bytes, bool write, double stream_bw)
{
  std::vector<sg4::ActivityPtr> acts;
  start_transfer(client, file, offset, bytes, write, stream_bw, acts);
  wait_all(acts);
}

} // namespace hiosim
