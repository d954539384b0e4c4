/* storage: the Lustre-like file system. Files are striped over OSTs (stripe count and size,
 * start OST round-robin over files); moving a byte range starts, per OSS, one network flow and,
 * per OST, one disk I/O at the same time and waits for all: a fluid model of a pipelined stream
 * whose rate is set by the slowest resource. With fs/kind=local a file lives on its client's
 * disk. The unit of transfer is a file group: the files that the threads of one simulated host
 * write in lockstep (one file per thread); moving [offset, offset + bytes) of a group moves that
 * range of every member file, summed per OST and per OSS, so activities stay bounded by the
 * number of OSTs whatever the number of threads. Methods block the calling actor. */
#pragma once
#include "params.hpp"
#include "platform.hpp"

#include <simgrid/s4u.hpp>
#include <vector>

namespace hiosim {

class Storage {
public:
  Storage(const Params& p, const Platform& pf);
  /* Creates a group of `files` files written from `client`; returns the group id. */
  int create_group(int client, int files);
  int group_size(int group) const { return static_cast<int>(groups_.at(group).size()); }
  /* Starts moving [offset, offset + bytes) of every file of `file` (a group) between `client`
   * and the OSTs; appends the activities to `acts`. `stream_bw` > 0 caps the network rate. */
  void start_transfer(int client, int file, double offset, double bytes, bool write, double stream_bw,
                      std::vector<simgrid::s4u::ActivityPtr>& acts);
  /* Blocking version. */
  void transfer(int client, int file, double offset, double bytes, bool write, double stream_bw);
  /* Bytes of [offset, offset + bytes) of every member file that land on each OST. */
  std::vector<std::pair<int, double>> split_by_ost(int file, double offset, double bytes) const;
  const Platform& platform() const { return pf_; }

private:
  struct Layout {
    int client;
    int first_ost;
    int count;
  };
  const Params& p_;
  const Platform& pf_;
  std::vector<std::vector<Layout>> groups_;
  long long next_file_ = 0;
  int stripe_count_;
};

void wait_all(std::vector<simgrid::s4u::ActivityPtr>& acts);

} // namespace hiosim
