// learned_seed.cc - see hybridio_internal/learned_seed.h.
#include "hybridio_internal/learned_seed.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>

#include "learned_store.h"
#include "path_costs.h"
#include "runtime.h"

namespace hybridio::internal {
namespace {

// A calibrated point counts as settled (a full damping window) with no
// spread: the command compared medians; a program's own samples take over
// from there at the usual weight.
PathEstimate seeded(double bytes_per_second, uint32_t samples, bool write) {
  PathEstimate e;
  e.samples = samples;
  e.ns_per_byte = 1e9 / bytes_per_second;  // a write's flush is in it already ...
  e.deferred_samples = write ? 1 : 0;      // ... so its deferred part is a measured zero
  return e;
}

void apply(FsCosts& costs, const std::vector<CalibrationPoint>& points, uint32_t samples) {
  for (const CalibrationPoint& p : points) {
    const int c = size_class(p.request_size);
    if (c < 0 || class_floor(c) != p.request_size) continue;  // only whole classes
    const struct {
      hio_op op;
      hio_path path;
      double rate;
    } rows[] = {{HIO_OP_WRITE, HIO_PATH_BUFFERED, p.write_buffered},
                {HIO_OP_WRITE, HIO_PATH_DIRECT, p.write_direct},
                {HIO_OP_READ, HIO_PATH_BUFFERED, p.read_buffered},
                {HIO_OP_READ, HIO_PATH_DIRECT, p.read_direct}};
    for (const auto& r : rows)
      if (r.rate > 0)
        costs.set_estimate(r.op, c, r.path, seeded(r.rate, samples, r.op == HIO_OP_WRITE && r.path != HIO_PATH_DIRECT));
  }
}

}  // namespace

std::string seed_learned(const std::string& dir, const std::vector<CalibrationPoint>& points, std::string* error) {
  try {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
      *error = dir + ": " + strerror(errno);
      if (fd >= 0) ::close(fd);
      return "";
    }
    const std::string key = filesystem_key(fd);
    Runtime& rt = Runtime::get();
    LearnedFs* fs = rt.learned() ? rt.learned()->filesystem(st.st_dev, fd) : nullptr;
    ::close(fd);
    const std::string state = rt.learned() ? rt.learned()->state_dir() : learned_state_dir(rt.config().state_dir);
    if (key.empty() || state.empty()) {
      *error = key.empty() ? "cannot identify the filesystem of " + dir : "no state directory (HOME is not set)";
      return "";
    }
    const uint32_t samples = rt.learned() ? rt.learned()->tuning().damping : LearnTuning().damping;
    // Calibration measures streams; what reads at random learned is kept.
    FsCostSet costs;
    if (fs) {
      std::lock_guard<std::mutex> lock(fs->mu);
      apply(fs->costs.streams, points, samples);
      fs->publish();
      costs = fs->costs;
      fs->costs.clear_dirty();  // written now; exit writes it again only after new samples
    } else {
      load_learned(state, key, &costs);
      apply(costs.streams, points, samples);
    }
    if (int err = save_learned(state, key, costs)) {
      *error = state + "/" + key + ": " + strerror(-err);
      return "";
    }
    return state + "/" + key;
  } catch (const std::bad_alloc&) {
    *error = "out of memory";
    return "";
  }
}

}  // namespace hybridio::internal
