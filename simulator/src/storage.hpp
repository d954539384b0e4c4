/* storage: the Lustre-like file system. Files are striped over OSTs (stripe count and size,
 * start OST round-robin over files); moving a byte range starts, per OSS, one network flow and,
 * per OST, one disk I/O at the same time and waits for all: a fluid model of a pipelined stream
 * whose rate is set by the slowest resource. With fs/kind=local a file lives on its client's
 * disk. Methods block the calling actor; they must run inside the simulation. */
#pragma once
#include "params.hpp"
#include "platform.hpp"

#include <simgrid/s4u.hpp>
#include <vector>

namespace hiosim {

class Storage {
public:
  Storage(const Params& p, const Platform& pf);
  /* Creates a file written from `client`; returns its id. */
  int create_file(int client);
  /* Starts moving [offset, offset + bytes) of `file` between `client` and the OSTs; appends the
   * activities to `acts`. `stream_bw` > 0 caps the flow's total network rate. */
  void start_transfer(int client, int file, double offset, double bytes, bool write, double stream_bw,
                      std::vector<simgrid::s4u::ActivityPtr>& acts);
  /* Blocking version. */
  void transfer(int client, int file, double offset, double bytes, bool write, double stream_bw);
  /* Bytes of [offset, offset + bytes) that land on each OST of the file's layout. */
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
  std::vector<Layout> files_;
  int stripe_count_;
};

void wait_all(std::vector<simgrid::s4u::ActivityPtr>& acts);

} // namespace hiosim
