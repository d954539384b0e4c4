// stats_file.cc - see stats_file.h.
#include "platform/stats_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>

#include "platform/stats_json.h"

namespace hybridio {
namespace {

// Holds an exclusive flock on a directory for its lifetime.  Exiting
// processes of one program contend for a few milliseconds each; after 10 s
// the holder is taken to be stuck and the merge goes ahead unlocked.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& file_path) {
    const size_t slash = file_path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : file_path.substr(0, slash);
    fd_ = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd_ < 0) return;
    for (int attempt = 0; attempt < 2000; ++attempt) {
      if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
      if (errno != EWOULDBLOCK && errno != EINTR) return;  // no flock here: unlocked
      const timespec pause{0, 5 * 1000 * 1000};
      nanosleep(&pause, nullptr);
    }
  }
  ~DirectoryLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

// The whole file, or "" when it does not exist.  0 or -errno.
int read_existing(const std::string& path, std::string* text) {
  text->clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 0 : -errno;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return -err;
    }
    if (n == 0) break;
    text->append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return 0;
}

bool blank(const std::string& text) { return text.find_first_not_of(" \t\r\n") == std::string::npos; }

}  // namespace

int write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -errno;
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(tmp.c_str());
      return -err;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return -err;
  }
  return 0;
}

int add_stats_to_file(const std::string& path, const hio_stats& mine, const hio_policy_config& policy) {
  DirectoryLock lock(path);
  std::string existing;
  if (int err = read_existing(path, &existing)) return err;
  hio_stats sum = mine;
  uint64_t processes = 1;
  if (!blank(existing) && !add_stats_json(existing, &sum, &processes)) return -EEXIST;
  return write_file_atomically(path, stats_json(sum, processes, policy));
}

}  // namespace hybridio
