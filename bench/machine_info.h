// machine_info.h - what a benchmark result was measured on: CPU, memory,
// kernel, the filesystem of the test directory with its mount options,
// the block device under it, the writeback limits, and whether the
// filesystem accepts O_DIRECT and RWF_DONTCACHE.  Read from /proc and
// /sys; unknown fields stay empty (or -1), never guessed.
#pragma once

#include <cstdint>
#include <string>

#include "json_out.h"

namespace hybridio::bench {

struct MachineInfo {
  std::string cpu_model;
  long cpus = 0;
  uint64_t memory_bytes = 0;
  std::string kernel;
  std::string hostname;
  // The filesystem holding the benchmark directory.
  std::string fs_type, mount_point, mount_options, device;
  std::string device_model;       // /sys/block/DEV/device/model, when present
  long logical_block_bytes = -1;  // queue/logical_block_size
  long rotational = -1;           // queue/rotational
  long read_ahead_kb = -1;        // queue/read_ahead_kb
  long dirty_ratio = -1, dirty_background_ratio = -1;
  long long dirty_bytes = -1;
  // Probed by creating a scratch file in the directory.
  bool o_direct = false;
  std::string o_direct_error;  // why not, when not
  bool rwf_dontcache = false;
  std::string rwf_dontcache_error;
  uint64_t free_bytes = 0;     // statfs f_bavail * f_bsize
};

// Probes everything for `directory` (which must exist).
MachineInfo probe_machine(const std::string& directory);

// The dirty-page limit in bytes (dirty_bytes, or dirty_ratio % of memory); 0 if unknown.
uint64_t dirty_limit_bytes(const MachineInfo& m);

// Writes the "machine" object (the caller has opened nothing for it).
void write_machine_json(JsonWriter& w, const MachineInfo& m, uint64_t file_bytes);

// One line for the table header: "ext4 (rw,relatime) on /dev/vda, Linux 6.18, 2 CPUs, 24.0 GiB".
std::string machine_summary(const MachineInfo& m);

}  // namespace hybridio::bench
