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
  for (auto& a : acts)
    a->wait();
  acts.clear();
}

Storage::Storage(const Params& p, const Platform& pf) : p_(p), pf_(pf)
{
  int n = static_cast<int>(pf.osts.size());
  stripe_count_ = (p.fs.stripe_count < 0 || p.fs.stripe_count > n) ? n : p.fs.stripe_count;
}

int Storage::create_file(int client)
{
  int id = static_cast<int>(files_.size());
  if (p_.fs.kind == "local") {
    files_.push_back({client, client, 1});
  } else {
    int n = static_cast<int>(pf_.osts.size());
    // Consecutive files start on consecutive stripe groups, as Lustre's round-robin allocator.
    files_.push_back({client, static_cast<int>((static_cast<long long>(id) * stripe_count_) % n), stripe_count_});
  }
  return id;
}

std::vector<std::pair<int, double>> Storage::split_by_ost(int file, double offset, double bytes) const
{
  const Layout& f = files_.at(file);
  int n = static_cast<int>(pf_.osts.size());
  std::vector<std::pair<int, double>> out;
  if (f.count == 1) {
    out.emplace_back(f.first_ost, bytes);
    return out;
  }
  double s = p_.fs.stripe_size;
  std::vector<double> per(f.count, 0.0);
  if (bytes >= 8.0 * s * f.count) {
    // Many full stripe rounds: the split is even to within one stripe per OST.
    for (auto& x : per)
      x = bytes / f.count;
  } else {
    double pos = offset;
    double end = offset + bytes;
    while (pos < end) {
      double unit = std::floor(pos / s);
      double unit_end = std::min(end, (unit + 1) * s);
      per[static_cast<long long>(unit) % f.count] += unit_end - pos;
      pos = unit_end;
    }
  }
  for (int k = 0; k < f.count; k++)
    if (per[k] > 0)
      out.emplace_back((f.first_ost + k) % n, per[k]);
  return out;
}

void Storage::start_transfer(int client, int file, double offset, double bytes, bool write, double stream_bw,
                             std::vector<sg4::ActivityPtr>& acts)
{
  if (bytes < 1.0)
    return;
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
      comm->set_rate(stream_bw * b / bytes);
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
