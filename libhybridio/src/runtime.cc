// runtime.cc - see runtime.h.
#include "runtime.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace hybridio {

Runtime& Runtime::get() {
  static Runtime* runtime = new Runtime();  // never destroyed: usable from atexit and late threads
  return *runtime;
}

Runtime::Runtime() {
  config_ = load_config([](const char* name) { return getenv(name); }, nullptr);
  set_log_level(config_.log_level);
  set_policy(config_.policy);
  if (!config_.trace_path.empty() && !trace_.open(config_.trace_path))
    HIO_WARN("HYBRIDIO_TRACE='%s' cannot be opened: %s; tracing is off",
             config_.trace_path.c_str(), strerror(errno));
  if (!config_.stats_path.empty()) atexit(&Runtime::at_exit);
}

void Runtime::write_exit_stats() {
  if (config_.stats_path.empty()) return;
  // "%p" becomes the process id, so that every process of a program
  // (forked workers, exec'd children) leaves its own file.
  std::string path = config_.stats_path;
  for (size_t at; (at = path.find("%p")) != std::string::npos;) path.replace(at, 2, std::to_string(getpid()));
  int err = write_stats(path.c_str());
  if (err) HIO_WARN("cannot write HYBRIDIO_STATS='%s': %s", path.c_str(), strerror(-err));
}

void Runtime::set_policy(const hio_policy_config& policy) {
  std::lock_guard<std::mutex> lock(policy_mu_);
  policies_.push_back(std::make_unique<hio_policy_config>(policy));
  policy_.store(policies_.back().get(), std::memory_order_release);
}

int Runtime::write_stats(const char* path) {
  const std::string json = stats_.to_json(policy());
  // Write to a temporary name and rename, so readers never see half a file.
  std::string tmp = std::string(path) + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -errno;
  size_t done = 0;
  while (done < json.size()) {
    ssize_t n = ::write(fd, json.data() + done, json.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      return -err;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return -err;
  }
  return 0;
}

}  // namespace hybridio
