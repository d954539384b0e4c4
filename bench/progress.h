// progress.h - a live progress line on stderr (percent, GB/s, time left),
// drawn only when stderr is a terminal and at most a few times a second.
#pragma once

#include <cstdint>
#include <string>

namespace hybridio::bench {

class Progress {
 public:
  explicit Progress(uint64_t total_bytes);
  void set_label(const std::string& label) { label_ = label; }
  void advance(uint64_t bytes);
  void finish();  // clears the line

 private:
  uint64_t total_, done_ = 0;
  double start_, last_draw_ = 0, window_start_, window_bytes_ = 0;
  bool enabled_;
  std::string label_;
};

}  // namespace hybridio::bench
