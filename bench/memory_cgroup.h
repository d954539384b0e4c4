// memory_cgroup.h - runs this process under a memory limit, as a container
// or a memory-limited node would, and reads what the limit did to it.
//
// A fresh memory cgroup gets the limit and the process moves into it (all
// its threads; the page cache it fills is charged to it).  cgroup v2 where
// the unified hierarchy has the memory controller (memory.max), else v1
// (/sys/fs/cgroup/memory, memory.limit_in_bytes).  Memory stalls come from
// pressure stall information: the cgroup's own memory.pressure on v2, or,
// under v1, a v2 cgroup made beside it in the unified hierarchy (PSI is
// kept per cgroup there even without the memory controller), else the
// machine's /proc/pressure/memory.  The destructor moves the process back
// and removes the cgroups.  Needs root.
#pragma once

#include <cstdint>
#include <string>

namespace hybridio::bench {

struct MemoryEvents {
  uint64_t limit_hits = 0;  // times usage reached the limit (v1 memory.failcnt, v2 memory.events max)
  uint64_t oom_kills = 0;   // processes the OOM killer ended in the cgroup
  double stall_s = 0;       // time some task waited for memory (PSI "some" total)
  MemoryEvents since(const MemoryEvents& before) const;
};

class MemoryCgroup {
 public:
  MemoryCgroup() = default;
  ~MemoryCgroup();
  MemoryCgroup(const MemoryCgroup&) = delete;
  MemoryCgroup& operator=(const MemoryCgroup&) = delete;

  // Creates the cgroup with `limit` bytes and moves this process into it.
  // "" or why not (not root, no memory controller, a write refused).
  std::string enter(uint64_t limit);
  bool active() const { return !memory_dir_.empty(); }
  // "cgroup v1 /sys/fs/cgroup/memory/hybridio-checkpoint.123".
  std::string describe() const;

  // The counters now (cumulative; subtract with since()).
  MemoryEvents read() const;

 private:
  void leave();

  std::string memory_dir_;   // where the limit is
  std::string pressure_dir_; // where memory.pressure is ("" : the machine's)
  std::string parent_memory_procs_, parent_pressure_procs_;
  bool v2_ = false;
};

// The machine's memory stall time (/proc/pressure/memory "some" total), or
// 0 where PSI is off.
double machine_memory_stall_s();

// What a run meets in memory now: `cgroup`'s counters when it runs under
// one, else the machine's stall time alone (cumulative; subtract with
// since()).
MemoryEvents memory_events_now(const MemoryCgroup* cgroup);

}  // namespace hybridio::bench
