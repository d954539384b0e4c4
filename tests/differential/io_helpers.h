// io_helpers.h - what the cases share: naming of results, data patterns,
// checksums, the kernel's view of a file, anonymous memory and child
// processes.
//
// The "raw_" calls are system calls made with syscall(2): they bypass any
// preloaded library, so a case uses them to set files up and to look at
// what the kernel really holds, independent of the code under test.
// Helpers return false / -1 on failure and leave errno set.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

namespace hio_diff {

class Transcript;

// "EBADF"; "0" for no error.
std::string errno_name(int e);
// "SIGKILL".
std::string signal_name(int sig);
// A call's result as the transcript shows it: "N", or "-1 ENAME" (errno is
// read here: call it directly on the call's result).
std::string rv(long long r);
std::string rv(long long r, int err);

// A byte pattern that depends on the byte's file offset and a tag, never 0,
// so that misplaced, stale or missing (zero) bytes are all visible.
inline uint8_t pattern_byte(uint32_t tag, uint64_t off) {
  uint64_t t = (uint64_t{tag} * 2654435761u) >> 9;
  return static_cast<uint8_t>(((off ^ (off >> 9) ^ (off >> 17) ^ (off >> 25) ^ t) & 0x7f) | 0x80);
}
void fill_pattern(void* buf, size_t len, uint32_t tag, uint64_t off);
bool has_pattern(const void* buf, size_t len, uint32_t tag, uint64_t off);

// A fast 64-bit checksum; as hex in transcripts.
uint64_t checksum(const void* buf, size_t len, uint64_t seed = 0);
std::string hex(uint64_t v);

ssize_t raw_pread(int fd, void* buf, size_t len, off_t off);
ssize_t raw_pwrite(int fd, const void* buf, size_t len, off_t off);
int raw_open(const std::string& path, int flags, mode_t mode = 0644);
int raw_close(int fd);

// Size of the file at path (stat), -1 when it cannot be stat'ed.
long long file_size(const std::string& path);
// "SIZE:CHECKSUM" of the file's whole content, read with raw calls.
std::string file_digest(const std::string& path);
// Does [off, off+len) of the file hold the pattern `tag` (pattern offsets
// counted from pattern_off)?  Read with raw calls; false if short.
bool file_has_pattern(const std::string& path, uint64_t off, size_t len, uint32_t tag, uint64_t pattern_off);
// Is [off, off+len) of the file all `byte`?
bool file_is_all(const std::string& path, uint64_t off, size_t len, uint8_t byte);
// Creates (truncates) path holding `size` bytes of pattern `tag`, with raw calls.
bool make_pattern_file(const std::string& path, size_t size, uint32_t tag);

// Anonymous private memory, unmapped when it goes.
class Mapping {
 public:
  explicit Mapping(size_t len);
  ~Mapping();
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  bool ok() const { return data_ != nullptr; }
  char* data() const { return data_; }
  size_t size() const { return len_; }

 private:
  char* data_ = nullptr;
  size_t len_ = 0;
};

// "exit=N" or "signal=NAME", from a waitpid status.
std::string how_ended(int status);
// Runs `body` in a forked child (its return value is the exit status) and
// waits: "exit=N" or "signal=NAME", or "fork-failed".  The child shares the
// transcript (stdout), so its lines come before the parent's next ones.
std::string run_in_child(const std::function<int()>& body);

// Entries in /proc/self/fd, not counting the one used to list them.
int count_open_fds();

// Sets the soft limit of `resource` (the hard one stays); false on failure.
bool set_soft_limit(int resource, unsigned long long value);

}  // namespace hio_diff
