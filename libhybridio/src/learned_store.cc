// learned_store.cc - see learned_store.h.
#include "learned_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <locale>
#include <new>
#include <sstream>

#include "config.h"
#include "stats_file.h"

namespace hybridio {
namespace {

constexpr const char* kSchema = "hybridio-learned/1";
constexpr size_t kMaxFileBytes = 64 << 10;  // a learned file is ~3 KiB; anything larger is not one

// The first word of a line: the costs and direction it belongs to.
struct LineKind {
  const char* word;
  hio_op op;
  bool at_random;  // FsCostSet::random_reads, else streams
};
constexpr LineKind kKinds[] = {{"read", HIO_OP_READ, false}, {"write", HIO_OP_WRITE, false}, {"randread", HIO_OP_READ, true}};

// mkdir -p; 0 or -errno.
int make_dirs(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return -errno;
  }
  return 0;
}

bool read_small_file(const std::string& path, std::string* text) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  bool ok = true;
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    text->append(buf, static_cast<size_t>(n));
    if (text->size() > kMaxFileBytes) {
      ok = false;
      break;
    }
  }
  ::close(fd);
  return ok;
}

}  // namespace

std::string learned_state_dir(const std::string& configured) {
  try {
    if (!configured.empty()) return configured;
    const char* xdg = getenv("XDG_STATE_HOME");
    if (xdg && *xdg == '/') return std::string(xdg) + "/hybridio/learned";
    const char* home = getenv("HOME");
    if (home && *home == '/') return std::string(home) + "/.local/state/hybridio/learned";
  } catch (const std::bad_alloc&) {
  }
  return "";
}

std::string filesystem_key(int fd) {
  struct statfs sf;
  if (fstatfs(fd, &sf) != 0) return "";
  int fsid[2];
  static_assert(sizeof fsid == sizeof sf.f_fsid, "f_fsid is two ints");
  memcpy(fsid, &sf.f_fsid, sizeof fsid);
  char key[64];
  snprintf(key, sizeof key, "%" PRIx64 "-%08x%08x", static_cast<uint64_t>(sf.f_type), static_cast<unsigned>(fsid[0]),
           static_cast<unsigned>(fsid[1]));
  try {
    return key;
  } catch (const std::bad_alloc&) {
    return "";
  }
}

std::string learned_text(const std::string& key, const FsCostSet& costs) {
  std::ostringstream out;
  out.imbue(std::locale::classic());  // a program's global locale must not change the decimal point
  out.precision(6);
  out << "# hybridio learned path costs (docs/policy.md, \"Learned thresholds\")\n"
      << "schema " << kSchema << "\nfs " << key << "\n"
      << "# op class path samples ns_per_byte variance deferred_samples deferred_ns_per_byte variance"
         " [paired: samples own_ns_per_byte ns_per_byte variance]\n";
  for (const LineKind& kind : kKinds)  // randread last: a reader before it stops there, keeping the rest
    for (int c = 0; c < kSizeClasses; ++c)
      for (int p = 0; p < HIO_PATH_COUNT; ++p) {
        const FsCosts& set = kind.at_random ? costs.random_reads : costs.streams;
        const PathEstimate& e = set.estimate(kind.op, c, static_cast<hio_path>(p));
        if (e.samples == 0 && e.deferred_samples == 0) continue;
        out << kind.word << ' ' << format_size(class_floor(c)) << ' ' << hio_path_name(static_cast<hio_path>(p))
            << ' ' << e.samples << ' ' << e.ns_per_byte << ' ' << e.ns_var << ' ' << e.deferred_samples << ' '
            << e.deferred_ns_per_byte << ' ' << e.deferred_var;
        if (e.paired_samples)
          out << ' ' << e.paired_samples << ' ' << e.paired_own_ns_per_byte << ' ' << e.paired_ns_per_byte << ' '
              << e.paired_var;
        out << '\n';
      }
  return out.str();
}

bool parse_learned(const std::string& text, FsCostSet* costs) {
  std::istringstream in(text);
  in.imbue(std::locale::classic());
  std::string line;
  bool schema_seen = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    words.imbue(std::locale::classic());
    std::string first;
    words >> first;
    if (first == "schema") {
      std::string schema;
      words >> schema;
      if (schema != kSchema) return false;
      schema_seen = true;
      continue;
    }
    if (!schema_seen) return false;
    if (first == "fs") continue;
    const LineKind* kind = nullptr;
    for (const LineKind& k : kKinds)
      if (first == k.word) kind = &k;
    if (!kind) return false;
    std::string size, path;
    PathEstimate e;
    if (!(words >> size >> path >> e.samples >> e.ns_per_byte >> e.ns_var >> e.deferred_samples >>
          e.deferred_ns_per_byte >> e.deferred_var))
      return false;
    // Optional (written since 2026-11-29): the pairing of an off-cache path.
    if (!(words >> e.paired_samples >> e.paired_own_ns_per_byte >> e.paired_ns_per_byte >> e.paired_var) ||
        !(e.paired_own_ns_per_byte >= 0) || !(e.paired_ns_per_byte >= 0) || !(e.paired_var >= 0)) {
      e.paired_samples = 0;
      e.paired_own_ns_per_byte = e.paired_ns_per_byte = e.paired_var = 0;
    }
    uint64_t bytes;
    if (!parse_size(size, &bytes) || size_class(bytes) < 0 || class_floor(size_class(bytes)) != bytes) return false;
    if (!(e.ns_per_byte >= 0) || !(e.deferred_ns_per_byte >= 0) || !(e.ns_var >= 0) || !(e.deferred_var >= 0))
      return false;  // negative, or NaN
    int found = -1;
    for (int p = 0; p < HIO_PATH_COUNT; ++p)
      if (path == hio_path_name(static_cast<hio_path>(p))) found = p;
    if (found < 0) return false;
    costs->of(kind->at_random).set_estimate(kind->op, size_class(bytes), static_cast<hio_path>(found), e);
  }
  return schema_seen;
}

bool load_learned(const std::string& dir, const std::string& key, FsCostSet* costs) {
  try {
    std::string text;
    if (!read_small_file(dir + "/" + key, &text)) return false;
    return parse_learned(text, costs);
  } catch (const std::bad_alloc&) {
    return false;
  }
}

int save_learned(const std::string& dir, const std::string& key, const FsCostSet& costs) {
  try {
    if (int err = make_dirs(dir)) return err;
    return write_file_atomically(dir + "/" + key, learned_text(key, costs));
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
}

}  // namespace hybridio
