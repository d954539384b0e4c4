// machine_info.cc - see machine_info.h.
#include "machine_info.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <climits>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#ifndef RWF_DONTCACHE
#define RWF_DONTCACHE 0x00000080
#endif

namespace hybridio::bench {
namespace {

std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

long read_long(const std::string& path) {
  std::string s = read_line(path);
  if (s.empty()) return -1;
  char* end;
  long v = strtol(s.c_str(), &end, 10);
  return end == s.c_str() ? -1 : v;
}

// /proc/self/mounts escapes spaces etc. as \040.
std::string unescape(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = (s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0');
      o += static_cast<char>(v);
      i += 3;
    } else {
      o += s[i];
    }
  }
  return o;
}

void probe_direct(const std::string& dir, MachineInfo* m) {
  std::string path = dir + "/.hybridio-bench-probe." + std::to_string(getpid());
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    m->o_direct_error = m->rwf_dontcache_error = std::string("cannot create a file: ") + strerror(errno);
    return;
  }
  void* buf = nullptr;
  if (posix_memalign(&buf, 4096, 4096) != 0) {
    close(fd);
    unlink(path.c_str());
    return;
  }
  memset(buf, 0x5a, 4096);
  iovec iov{buf, 4096};
  ssize_t n = pwritev2(fd, &iov, 1, 0, RWF_DONTCACHE);
  m->rwf_dontcache = n == 4096;
  if (!m->rwf_dontcache) m->rwf_dontcache_error = n < 0 ? strerror(errno) : "short write";
  int dfd = open(path.c_str(), O_RDWR | O_DIRECT | O_CLOEXEC);
  if (dfd < 0) {
    m->o_direct_error = std::string("open(O_DIRECT): ") + strerror(errno);
  } else {
    n = pwrite(dfd, buf, 4096, 4096);
    m->o_direct = n == 4096;
    if (!m->o_direct) m->o_direct_error = std::string("O_DIRECT write: ") + (n < 0 ? strerror(errno) : "short");
    close(dfd);
  }
  free(buf);
  close(fd);
  unlink(path.c_str());
}

}  // namespace

MachineInfo probe_machine(const std::string& directory) {
  MachineInfo m;
  {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("model name", 0) == 0) {
        size_t c = line.find(':');
        if (c != std::string::npos) m.cpu_model = line.substr(c + 2);
        break;
      }
  }
  m.cpus = sysconf(_SC_NPROCESSORS_ONLN);
  m.memory_bytes = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  utsname u{};
  if (uname(&u) == 0) {
    m.kernel = u.release;
    m.hostname = u.nodename;
  }
  m.dirty_ratio = read_long("/proc/sys/vm/dirty_ratio");
  m.dirty_background_ratio = read_long("/proc/sys/vm/dirty_background_ratio");
  m.dirty_bytes = read_long("/proc/sys/vm/dirty_bytes");

  char real[PATH_MAX];
  std::string target = realpath(directory.c_str(), real) ? real : directory;
  std::ifstream mounts("/proc/self/mounts");
  std::string line;
  while (std::getline(mounts, line)) {
    std::istringstream in(line);
    std::string dev, mnt, type, opts;
    if (!(in >> dev >> mnt >> type >> opts)) continue;
    mnt = unescape(mnt);
    bool under = target == mnt || mnt == "/" ||
                 (target.compare(0, mnt.size(), mnt) == 0 && target.size() > mnt.size() && target[mnt.size()] == '/');
    if (under && mnt.size() >= m.mount_point.size()) {
      m.mount_point = mnt;
      m.fs_type = type;
      m.mount_options = opts;
      m.device = dev;
    }
  }
  struct stat st{};
  if (stat(directory.c_str(), &st) == 0) {
    std::string sys = "/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
    std::string q = sys + "/queue";
    if (access(q.c_str(), R_OK) != 0) q = sys + "/../queue";  // a partition: its disk's queue
    m.logical_block_bytes = read_long(q + "/logical_block_size");
    m.rotational = read_long(q + "/rotational");
    m.read_ahead_kb = read_long(q + "/read_ahead_kb");
    m.device_model = read_line(sys + "/device/model");
    if (m.device_model.empty()) m.device_model = read_line(sys + "/../device/model");
  }
  struct statfs fs{};
  if (statfs(directory.c_str(), &fs) == 0) m.free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_bsize;
  probe_direct(directory, &m);
  return m;
}

uint64_t dirty_limit_bytes(const MachineInfo& m) {
  if (m.dirty_bytes > 0) return static_cast<uint64_t>(m.dirty_bytes);
  if (m.dirty_ratio > 0) return m.memory_bytes / 100 * static_cast<uint64_t>(m.dirty_ratio);
  return 0;
}

void write_machine_json(JsonWriter& w, const MachineInfo& m, uint64_t file_bytes) {
  w.begin_object("machine");
  w.field("cpu_model", m.cpu_model).field("cpus", static_cast<double>(m.cpus)).field("memory_bytes", m.memory_bytes);
  w.field("kernel", m.kernel).field("hostname", m.hostname);
  w.begin_object("filesystem")
      .field("type", m.fs_type)
      .field("mount_point", m.mount_point)
      .field("mount_options", m.mount_options)
      .field("device", m.device)
      .field("device_model", m.device_model)
      .field("logical_block_bytes", static_cast<double>(m.logical_block_bytes))
      .field("rotational", static_cast<double>(m.rotational))
      .field("read_ahead_kb", static_cast<double>(m.read_ahead_kb))
      .field("free_bytes", m.free_bytes)
      .field_bool("o_direct", m.o_direct)
      .field("o_direct_error", m.o_direct_error)
      .field_bool("rwf_dontcache", m.rwf_dontcache)
      .field("rwf_dontcache_error", m.rwf_dontcache_error)
      .end_object();
  w.begin_object("writeback")
      .field("dirty_ratio", static_cast<double>(m.dirty_ratio))
      .field("dirty_background_ratio", static_cast<double>(m.dirty_background_ratio))
      .field("dirty_bytes", static_cast<double>(m.dirty_bytes))
      .field("dirty_limit_bytes", dirty_limit_bytes(m))
      .end_object();
  w.field("file_bytes", file_bytes);
  w.end_object();
}

std::string machine_summary(const MachineInfo& m) {
  char b[512];
  snprintf(b, sizeof b, "%s (%s) on %s%s%s, Linux %s, %ld CPUs, %.1f GiB RAM, dirty limit %.1f GiB",
           m.fs_type.c_str(), m.mount_options.c_str(), m.device.c_str(), m.device_model.empty() ? "" : " ",
           m.device_model.c_str(), m.kernel.c_str(), m.cpus, m.memory_bytes / double(1ULL << 30),
           dirty_limit_bytes(m) / double(1ULL << 30));
  return b;
}

}  // namespace hybridio::bench
