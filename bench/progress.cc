// progress.cc - see progress.h.
#include "progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace hybridio::bench {
namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Progress::Progress(uint64_t total_bytes)
    : total_(total_bytes), start_(now()), window_start_(start_), enabled_(isatty(STDERR_FILENO) == 1) {}

void Progress::advance(uint64_t bytes) {
  done_ += bytes;
  window_bytes_ += bytes;
  if (!enabled_) return;
  double t = now();
  if (t - last_draw_ < 0.25) return;
  double rate = window_bytes_ / (t - window_start_);  // current, not average, throughput
  double overall = done_ / (t - start_);
  double left = overall > 0 ? (total_ - done_) / overall : 0;
  fprintf(stderr, "\r%-22s %5.1f%%  %6.2f GB/s  %4.0f s left ", label_.c_str(),
          100.0 * done_ / (total_ ? total_ : 1), rate / 1e9, left);
  last_draw_ = t;
  window_start_ = t;
  window_bytes_ = 0;
}

void Progress::finish() {
  if (enabled_) fprintf(stderr, "\r%70s\r", "");
}

}  // namespace hybridio::bench
