// learned_seed.cc - see hybridio_internal/learned_seed.h.
#include "hybridio_internal/learned_seed.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>

#include "learn/learned_store.h"
#include "learn/learner.h"
#include "runtime/runtime.h"

namespace hybridio::internal {
namespace {

// Each calibrated point counts as a full damping window of samples with no
// spread (the command compared medians).  A write's flush is in its rate:
// a path without a measured flush gets a flush share of zero, counted as
// one sample of the average its real flushes then join.  Then the
// crossovers are placed where those estimates say.
void apply(FsModel& model, const std::vector<CalibrationPoint>& points) {
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
    for (const auto& r : rows) {
      if (!(r.rate > 0)) continue;
      Estimate e;
      e.samples = model.settings().damping;
      e.ns_per_byte = 1e9 / r.rate;
      model.set_estimate(r.op, c, r.path, e);
      if (r.op == HIO_OP_WRITE && model.flush_estimate(r.path).samples == 0) {
        Estimate zero;
        zero.samples = 1;
        model.set_flush_estimate(r.path, zero);
      }
    }
  }
  model.settle(HIO_OP_READ);
  model.settle(HIO_OP_WRITE);
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
    LearnedFs* fs = rt.learner() ? rt.learner()->filesystem(st.st_dev, fd) : nullptr;
    ::close(fd);
    const std::string state = rt.learner() ? rt.learner()->state_dir() : learned_state_dir(rt.config().state_dir);
    if (key.empty() || state.empty()) {
      *error = key.empty() ? "cannot identify the filesystem of " + dir : "no state directory (HOME is not set)";
      return "";
    }
    FsModel model(rt.learner() ? rt.learner()->settings() : LearnSettings(), rt.config().policy);
    if (fs) {
      std::lock_guard<std::mutex> lock(fs->mu);
      apply(fs->model, points);
      fs->publish();
      model = fs->model;
      fs->model.dirty = false;  // written now; exit writes it again only after new samples
    } else {
      load_learned(state, key, &model);
      apply(model, points);
    }
    if (int err = save_learned(state, key, model)) {
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
