// memory_cgroup.cc - see memory_cgroup.h.
#include "memory_cgroup.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace hybridio::bench {
namespace {

constexpr const char* kUnified = "/sys/fs/cgroup";          // a pure v2 machine
constexpr const char* kUnifiedHybrid = "/sys/fs/cgroup/unified";  // systemd's hybrid layout
constexpr const char* kV1Memory = "/sys/fs/cgroup/memory";

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "" or why the write failed.
std::string write_file(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  if (!out) return "cannot write " + value + " to " + path + ": " + strerror(errno);
  return "";
}

// The number after `key` in a "key value" or "key=value" file, or 0.
uint64_t keyed_value(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string word;
  while (in >> word)
    if (word == key) {
      uint64_t v = 0;
      in >> v;
      return v;
    }
  return 0;
}

// PSI "some ... total=N" (microseconds) of a pressure file, in seconds.
double pressure_some_s(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("some ", 0) == 0) {
      const size_t at = line.find("total=");
      if (at != std::string::npos) return std::stod(line.substr(at + 6)) / 1e6;
    }
  return 0;
}

bool controller_listed(const std::string& dir, const char* controller) {
  std::istringstream in(read_file(dir + "/cgroup.controllers"));
  std::string c;
  while (in >> c)
    if (c == controller) return true;
  return false;
}

// The v2 root this machine has, or "".
std::string unified_root() {
  if (exists(std::string(kUnified) + "/cgroup.controllers")) return kUnified;
  if (exists(std::string(kUnifiedHybrid) + "/cgroup.controllers")) return kUnifiedHybrid;
  return "";
}

}  // namespace

MemoryEvents MemoryEvents::since(const MemoryEvents& before) const {
  MemoryEvents d;
  d.limit_hits = limit_hits - before.limit_hits;
  d.oom_kills = oom_kills - before.oom_kills;
  d.stall_s = stall_s - before.stall_s;
  return d;
}

double machine_memory_stall_s() { return pressure_some_s("/proc/pressure/memory"); }

MemoryEvents memory_events_now(const MemoryCgroup* cgroup) {
  if (cgroup) return cgroup->read();
  MemoryEvents e;
  e.stall_s = machine_memory_stall_s();
  return e;
}

MemoryCgroup::~MemoryCgroup() { leave(); }

std::string MemoryCgroup::enter(uint64_t limit) {
  if (geteuid() != 0) return "a memory limit needs root (it makes a memory cgroup)";
  const std::string name = "hybridio-checkpoint." + std::to_string(getpid());
  const std::string v2 = unified_root();
  std::string why;
  if (!v2.empty() && controller_listed(v2, "memory")) {
    v2_ = true;
    memory_dir_ = v2 + "/" + name;
    pressure_dir_ = memory_dir_;
    parent_memory_procs_ = v2 + "/cgroup.procs";
    // The controller must be enabled for the root's children.
    write_file(v2 + "/cgroup.subtree_control", "+memory");
    if (mkdir(memory_dir_.c_str(), 0755) != 0) why = "cannot make " + memory_dir_ + ": " + strerror(errno);
    if (why.empty()) why = write_file(memory_dir_ + "/memory.max", std::to_string(limit));
  } else if (exists(std::string(kV1Memory) + "/memory.limit_in_bytes")) {
    memory_dir_ = std::string(kV1Memory) + "/" + name;
    parent_memory_procs_ = std::string(kV1Memory) + "/cgroup.procs";
    if (mkdir(memory_dir_.c_str(), 0755) != 0) why = "cannot make " + memory_dir_ + ": " + strerror(errno);
    if (why.empty()) why = write_file(memory_dir_ + "/memory.limit_in_bytes", std::to_string(limit));
    // Stall time per cgroup from the unified hierarchy, where there is one.
    if (why.empty() && !v2.empty() && mkdir((v2 + "/" + name).c_str(), 0755) == 0) {
      pressure_dir_ = v2 + "/" + name;
      parent_pressure_procs_ = v2 + "/cgroup.procs";
    }
  } else {
    return "no memory cgroup controller here (neither cgroup v2 with memory nor v1 at " + std::string(kV1Memory) + ")";
  }
  const std::string pid = std::to_string(getpid());
  if (why.empty()) why = write_file(memory_dir_ + "/cgroup.procs", pid);
  if (why.empty() && !pressure_dir_.empty() && pressure_dir_ != memory_dir_ &&
      !write_file(pressure_dir_ + "/cgroup.procs", pid).empty()) {
    rmdir(pressure_dir_.c_str());
    pressure_dir_.clear();
  }
  if (!why.empty()) leave();
  return why;
}

std::string MemoryCgroup::describe() const {
  return std::string(v2_ ? "cgroup v2 " : "cgroup v1 ") + memory_dir_ +
         (pressure_dir_.empty() ? ", memory stalls of the whole machine" : "");
}

MemoryEvents MemoryCgroup::read() const {
  MemoryEvents e;
  if (v2_) {
    const std::string events = read_file(memory_dir_ + "/memory.events");
    e.limit_hits = keyed_value(events, "max");
    e.oom_kills = keyed_value(events, "oom_kill");
  } else if (!memory_dir_.empty()) {
    e.limit_hits = std::strtoull(read_file(memory_dir_ + "/memory.failcnt").c_str(), nullptr, 10);
    e.oom_kills = keyed_value(read_file(memory_dir_ + "/memory.oom_control"), "oom_kill");
  }
  e.stall_s = pressure_dir_.empty() ? machine_memory_stall_s() : pressure_some_s(pressure_dir_ + "/memory.pressure");
  return e;
}

void MemoryCgroup::leave() {
  const std::string pid = std::to_string(getpid());
  if (!pressure_dir_.empty() && pressure_dir_ != memory_dir_) {
    write_file(parent_pressure_procs_, pid);
    rmdir(pressure_dir_.c_str());
  }
  if (!memory_dir_.empty()) {
    write_file(parent_memory_procs_, pid);
    // The page cache charged to it moves to the parent (v1) or is
    // reparented (v2) when the directory goes.
    rmdir(memory_dir_.c_str());
  }
  memory_dir_.clear();
  pressure_dir_.clear();
}

}  // namespace hybridio::bench
