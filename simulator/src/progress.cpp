/* progress: stderr progress line, terminal only. */
#include "progress.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <cstdio>
#include <unistd.h>

namespace hiosim {

Progress::Progress(bool enabled) : on_(enabled && isatty(STDERR_FILENO))
{
  start_ = last_ = std::chrono::steady_clock::now();
}

void Progress::phase(const std::string& name, double total_bytes)
{
  name_  = name;
  total_ = total_bytes;
  done_  = 0;
  draw(true);
}

void Progress::add(double bytes)
{
  done_ += bytes;
  draw(false);
}

void Progress::draw(bool force)
{
  if (not on_)
    return;
  auto now = std::chrono::steady_clock::now();
  if (not force && now - last_ < std::chrono::milliseconds(250))
    return;
  last_ = now;
  double pct  = total_ > 0 ? 100.0 * done_ / total_ : 0;
  double wall = std::chrono::duration<double>(now - start_).count();
  std::fprintf(stderr, "\r  %-22s %5.1f %%   simulated %9.2f s   wall %6.1f s ", name_.c_str(), pct,
               simgrid::s4u::Engine::get_clock(), wall);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::done()
{
  if (on_ && drawn_) {
    std::fprintf(stderr, "\r%78s\r", "");
    std::fflush(stderr);
  }
}

} // namespace hiosim
