/* progress: a one-line progress report on stderr for long runs, only when stderr is a
 * terminal (never in pipes, logs or tests). Not thread-safe; called from simulation actors. */
#pragma once
#include <chrono>
#include <string>

namespace hiosim {

class Progress {
public:
  explicit Progress(bool enabled);
  void phase(const std::string& name, double total_bytes);
  void add(double bytes);
  void done();

private:
  void draw(bool force);
  bool on_;
  std::string name_;
  double total_ = 0, done_ = 0;
  bool drawn_   = false;
  std::chrono::steady_clock::time_point start_, last_;
};

} // namespace hiosim
