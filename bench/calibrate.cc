// calibrate.cc - see calibrate.h.
//
// For each request size from 256 KiB to 16 MiB, a file of --size bytes is
// written (fsync included) and read back cold, once buffered and once
// direct (through the library, with the engine's parallel chunks), the
// policies interleaved, --repeat times; medians are compared.  The write
// threshold is the smallest size from which direct is at least as fast as
// buffered at every larger size measured (likewise for reads); if direct
// never wins, the threshold is set above the largest size measured.  The
// profile is "key = value" lines in the config-file format (config.cc), so
// HYBRIDIO_CONFIG=<profile> applies it; the environment still wins.
#include "calibrate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "config.h"
#include "hybridio/hybridio.h"

namespace hybridio::bench {
namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void set_mode(hio_mode mode) {
  hio_policy_config c;
  hio_policy_get(&c);
  c.mode = mode;
  hio_policy_set(&c);
}

void make_cold(const std::string& path) {
  sync();
  int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (write(fd, "1", 1) != 1) { /* not root: fadvise below */ }
    close(fd);
  }
  fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
  }
}

// GB/s of writing (fsync included) or cold-reading `size` bytes in `bs` requests; < 0 on error.
double measure(const std::string& path, hio_op op, uint64_t size, uint64_t bs, char* buf) {
  hio_file* f = nullptr;
  int flags = op == HIO_OP_WRITE ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY;
  if (op == HIO_OP_READ) make_cold(path);
  if (hio_open(path.c_str(), flags, 0644, &f) != 0) return -1;
  double t0 = now();
  for (uint64_t off = 0; off < size; off += bs) {
    ssize_t n = op == HIO_OP_WRITE ? hio_pwrite(f, buf, bs, static_cast<off_t>(off))
                                   : hio_pread(f, buf, bs, static_cast<off_t>(off));
    if (n != static_cast<ssize_t>(bs)) {
      hio_close(f);
      return -1;
    }
  }
  if (op == HIO_OP_WRITE && hio_fsync(f) != 0) {
    hio_close(f);
    return -1;
  }
  hio_close(f);
  return static_cast<double>(size) / (now() - t0) / 1e9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
}

// The smallest size from which direct >= buffered at it and every larger size.
uint64_t crossover(const std::vector<uint64_t>& sizes, const std::vector<double>& buffered,
                   const std::vector<double>& direct) {
  uint64_t at = 0;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (direct[i] < buffered[i]) break;
    at = sizes[i];
  }
  return at ? at : sizes.back() * 2;  // direct never won: above everything measured
}

std::string default_profile_path() {
  const char* xdg = getenv("XDG_CONFIG_HOME");
  const char* home = getenv("HOME");
  std::string base = xdg && *xdg ? xdg : std::string(home && *home ? home : ".") + "/.config";
  return base + "/hybridio/profile";
}

void usage(FILE* out) {
  fprintf(out,
          "usage: hybridio calibrate DIR [--size=SIZE] [--repeat=N] [--output=FILE]\n\n"
          "Measures buffered and direct write (fsync included) and cold read throughput on the\n"
          "filesystem of DIR for request sizes 256K..16M, and writes the measured crossovers as\n"
          "a profile (default $XDG_CONFIG_HOME/hybridio/profile); apply it with\n"
          "HYBRIDIO_CONFIG=<profile>.  --size: bytes per measurement (default 512M);\n"
          "--repeat: interleaved runs per point, medians compared (default 3).\n");
}

}  // namespace

int calibrate_command(int argc, char** argv) {
  std::string dir, output = default_profile_path();
  uint64_t size = 512ULL << 20;
  unsigned repeat = 3;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    }
    if (a.rfind("--size=", 0) == 0) {
      if (!parse_size(a.substr(7), &size) || size < (16ULL << 20)) {
        fprintf(stderr, "hybridio calibrate: --size=%s is not valid: a size of at least 16M\n", a.c_str() + 7);
        return 2;
      }
    } else if (a.rfind("--repeat=", 0) == 0) {
      repeat = static_cast<unsigned>(strtoul(a.c_str() + 9, nullptr, 10));
      if (repeat < 1 || repeat > 100) {
        fprintf(stderr, "hybridio calibrate: --repeat must be 1-100\n");
        return 2;
      }
    } else if (a.rfind("--output=", 0) == 0) {
      output = a.substr(9);
    } else if (a.rfind("--", 0) == 0) {
      fprintf(stderr, "hybridio calibrate: unknown option %s (see --help)\n", a.c_str());
      return 2;
    } else if (dir.empty()) {
      dir = a;
    } else {
      fprintf(stderr, "hybridio calibrate: unexpected argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  struct stat st;
  if (dir.empty() || stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "hybridio calibrate: %s is not a directory (see --help)\n", dir.empty() ? "(none)" : dir.c_str());
    return 2;
  }
  const std::vector<uint64_t> sizes = {256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20};
  void* raw = nullptr;
  if (posix_memalign(&raw, 4096, sizes.back()) != 0) return 1;
  char* buf = static_cast<char*>(raw);
  memset(buf, 0x5a, sizes.back());
  const std::string path = dir + "/.hybridio-calibrate." + std::to_string(getpid());
  hio_policy_config saved;
  hio_policy_get(&saved);

  std::vector<double> wb, wd, rb, rd;
  printf("%-8s %12s %12s %12s %12s   (GB/s, median of %u; %s per point)\n", "size", "buf write",
         "dir write", "buf read", "dir read", repeat, format_size(size).c_str());
  for (uint64_t bs : sizes) {
    std::vector<double> v[4];
    for (unsigned r = 0; r < repeat; ++r) {
      // Interleaved, and alternating which policy goes first.
      hio_mode order[2] = {HIO_MODE_BUFFERED, HIO_MODE_DIRECT};
      if (r % 2) std::swap(order[0], order[1]);
      for (hio_mode m : order) {
        set_mode(m);
        const int k = m == HIO_MODE_DIRECT ? 1 : 0;
        double w = measure(path, HIO_OP_WRITE, size / bs * bs, bs, buf);
        double rr = measure(path, HIO_OP_READ, size / bs * bs, bs, buf);
        if (w < 0 || rr < 0) {
          fprintf(stderr, "hybridio calibrate: I/O on %s failed: %s\n", path.c_str(), strerror(errno));
          unlink(path.c_str());
          hio_policy_set(&saved);
          free(raw);
          return 1;
        }
        v[k].push_back(w);
        v[2 + k].push_back(rr);
      }
    }
    wb.push_back(median(v[0]));
    wd.push_back(median(v[1]));
    rb.push_back(median(v[2]));
    rd.push_back(median(v[3]));
    printf("%-8s %12.2f %12.2f %12.2f %12.2f\n", format_size(bs).c_str(), wb.back(), wd.back(), rb.back(),
           rd.back());
    fflush(stdout);
  }
  unlink(path.c_str());
  hio_policy_set(&saved);
  free(raw);

  const uint64_t write_threshold = crossover(sizes, wb, wd);
  const uint64_t read_threshold = crossover(sizes, rb, rd);
  std::string parent = output.substr(0, output.find_last_of('/'));
  if (output.find('/') != std::string::npos && !parent.empty()) {
    // mkdir -p, one level at a time.
    for (size_t at = 1; (at = parent.find('/', at)) != std::string::npos; ++at) mkdir(parent.substr(0, at).c_str(), 0755);
    mkdir(parent.c_str(), 0755);
  }
  std::ofstream out(output);
  if (!out) {
    fprintf(stderr, "hybridio calibrate: cannot write %s: %s\n", output.c_str(), strerror(errno));
    return 1;
  }
  utsname u{};
  uname(&u);
  char when[64];
  time_t t = time(nullptr);
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", gmtime(&t));
  out << "# hybridio calibrate " << dir << " (" << when << " UTC, Linux " << u.release << ")\n"
      << "# " << format_size(size) << " per point, median of " << repeat
      << "; direct at least as fast as buffered from these sizes on:\n"
      << "write_threshold = " << format_size(write_threshold) << "\n"
      << "read_threshold = " << format_size(read_threshold) << "\n";
  out.close();
  printf("\nwrite_threshold = %s, read_threshold = %s\nprofile written to %s; apply it with\n"
         "  export HYBRIDIO_CONFIG=%s\n",
         format_size(write_threshold).c_str(), format_size(read_threshold).c_str(), output.c_str(), output.c_str());
  return 0;
}

}  // namespace hybridio::bench
