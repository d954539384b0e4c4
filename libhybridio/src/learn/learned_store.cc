// learned_store.cc - see learned_store.h.
#include "learn/learned_store.h"

#include <sys/stat.h>
#include <sys/vfs.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <locale>
#include <new>
#include <sstream>

#include "platform/byte_size.h"
#include "platform/make_dirs.h"
#include "platform/proc_files.h"
#include "platform/stats_file.h"

namespace hybridio {
namespace {

constexpr const char* kSchema = "hybridio-learned/4";
constexpr size_t kMaxFileBytes = 64 << 10;  // a learned file is ~3 KiB; at most this much is read

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

namespace {
constexpr const char* kOps[] = {"read", "write"};  // by hio_op

bool path_of(const std::string& word, hio_path* out) {
  for (hio_path p : {HIO_PATH_BUFFERED, HIO_PATH_DIRECT, HIO_PATH_DONTCACHE})
    if (word == hio_path_name(p)) {
      *out = p;
      return true;
    }
  return false;
}

bool op_of(const std::string& word, hio_op* out) {
  for (hio_op op : {HIO_OP_READ, HIO_OP_WRITE})
    if (word == kOps[op]) {
      *out = op;
      return true;
    }
  return false;
}

// A size class's floor as text, and back.
bool class_of(const std::string& word, int* c) {
  uint64_t bytes;
  if (!parse_size(word, &bytes) || size_class(bytes) < 0 || class_floor(size_class(bytes)) != bytes) return false;
  *c = size_class(bytes);
  return true;
}
}  // namespace

std::string learned_text(const std::string& key, const FsModel& model) {
  std::ostringstream out;
  out.imbue(std::locale::classic());  // a program's global locale must not change the decimal point
  out.precision(6);
  out << "# hybridio learned crossovers and path costs (docs/policy.md, \"Learned thresholds\")\n"
      << "schema " << kSchema << "\nfs " << key << "\n";
  for (hio_op op : {HIO_OP_READ, HIO_OP_WRITE}) {
    const int x = model.crossover(op);
    out << "side " << kOps[op] << ' '
        << (x == kConfigured ? std::string("configured") : x >= kSizeClasses ? std::string("none") : format_size(class_floor(x)))
        << ' ' << hio_path_name(model.offcache(op)) << '\n';
  }
  out << "# flush path samples ns_per_byte variance (a write's flush, per byte written)\n";
  for (hio_path p : {HIO_PATH_BUFFERED, HIO_PATH_DIRECT, HIO_PATH_DONTCACHE}) {
    const Estimate& e = model.flush_estimate(p);
    if (e.samples)
      out << "flush " << hio_path_name(p) << ' ' << e.samples << ' ' << e.ns_per_byte << ' ' << e.var << '\n';
  }
  out << "# op class path samples ns_per_byte variance (the calls)\n";
  for (hio_op op : {HIO_OP_READ, HIO_OP_WRITE})
    for (int c = 0; c < kSizeClasses; ++c)
      for (hio_path p : {HIO_PATH_BUFFERED, HIO_PATH_DIRECT, HIO_PATH_DONTCACHE}) {
        const Estimate& e = model.estimate(op, c, p);
        if (e.samples == 0) continue;
        out << kOps[op] << ' ' << format_size(class_floor(c)) << ' ' << hio_path_name(p) << ' ' << e.samples << ' '
            << e.ns_per_byte << ' ' << e.var << '\n';
      }
  return out.str();
}

bool parse_learned(const std::string& text, FsModel* model) {
  std::istringstream in(text);
  in.imbue(std::locale::classic());
  std::string line;
  bool schema_seen = false;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    words.imbue(std::locale::classic());
    std::string first, a, b, path;
    words >> first;
    if (first == "schema") {
      words >> a;
      if (a != kSchema) return false;
      schema_seen = true;
      continue;
    }
    if (!schema_seen) return false;
    if (first == "fs") continue;
    hio_op op;
    hio_path p;
    if (first == "side") {
      int x = kConfigured;
      if (!(words >> a >> b >> path) || !op_of(a, &op) || !path_of(path, &p)) return false;
      if (b == "none")
        x = kSizeClasses;
      else if (b != "configured" && !class_of(b, &x))
        return false;
      model->set_side(op, x, p);
      continue;
    }
    Estimate e;
    if (first == "flush") {
      if (!(words >> path >> e.samples >> e.ns_per_byte >> e.var) || !path_of(path, &p)) return false;
      if (!(e.ns_per_byte >= 0) || !(e.var >= 0)) return false;  // negative, or NaN
      model->set_flush_estimate(p, e);
      continue;
    }
    int c;
    if (!op_of(first, &op) || !(words >> a >> path >> e.samples >> e.ns_per_byte >> e.var) || !class_of(a, &c) ||
        !path_of(path, &p))
      return false;
    if (!(e.ns_per_byte >= 0) || !(e.var >= 0)) return false;  // negative, or NaN
    model->set_estimate(op, c, p, e);
  }
  return schema_seen;
}

bool load_learned(const std::string& dir, const std::string& key, FsModel* model) {
  try {
    std::string text(kMaxFileBytes, '\0');
    if (!read_small_file((dir + "/" + key).c_str(), &text[0], text.size())) return false;
    text.resize(strlen(text.c_str()));
    return parse_learned(text, model);
  } catch (const std::bad_alloc&) {
    return false;
  }
}

int save_learned(const std::string& dir, const std::string& key, const FsModel& model) {
  try {
    if (int err = make_dirs(dir.c_str(), 0755)) return err;
    return write_file_atomically(dir + "/" + key, learned_text(key, model));
  } catch (const std::bad_alloc&) {
    return -ENOMEM;
  }
}

}  // namespace hybridio
