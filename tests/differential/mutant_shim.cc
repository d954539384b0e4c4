// mutant_shim.cc - libhio_diff_mutant.so: a deliberately wrong LD_PRELOAD
// library, to show that the differential cases catch the bugs they name
// even where the real shim happens to be right today.  HIO_MUTANT selects
// one bug (see README.md, "Checking the checks"):
//   signal_thread   a helper thread started at load time, signals unblocked
//   split_writev    writev as one write() per element (not atomic)
//   eof_sticky      fread returns 0 once the EOF indicator is set
//   late_write      writes >= 1 MiB return at once; whole pages (read at
//                   call time) land 20 ms later (write-behind done badly)
//   pad_pages       writes >= 1 MiB rounded out to pages, edges zero-filled
// Test-only; never installed.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr size_t kLarge = 1 << 20;
constexpr off_t kPage = 4096;

const std::string& mutant() {
  static const std::string m = getenv("HIO_MUTANT") ? getenv("HIO_MUTANT") : "";
  return m;
}

bool regular(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

// The file's current bytes of the pages around [at, at+len), with `buf`
// laid over them (pad_pages: zeros instead of the current bytes).
std::vector<char> whole_pages(int fd, const void* buf, size_t len, off_t at, bool keep_edges, off_t* start) {
  *start = at / kPage * kPage;
  off_t end = (at + static_cast<off_t>(len) + kPage - 1) / kPage * kPage;
  std::vector<char> pages(static_cast<size_t>(end - *start), 0);
  if (keep_edges) syscall(SYS_pread64, fd, pages.data(), pages.size(), *start);
  memcpy(pages.data() + (at - *start), buf, len);
  return pages;
}

ssize_t mutated_pwrite(int fd, const void* buf, size_t len, off_t at) {
  off_t start = 0;
  if (mutant() == "pad_pages") {
    std::vector<char> pages = whole_pages(fd, buf, len, at, false, &start);
    ssize_t r = syscall(SYS_pwrite64, fd, pages.data(), pages.size(), start);
    return r < 0 ? r : static_cast<ssize_t>(len);
  }
  // late_write: the file grows now, the bytes come later.
  std::vector<char> pages = whole_pages(fd, buf, len, at, true, &start);
  int copy = dup(fd);
  std::thread([copy, start, pages = std::move(pages)] {
    usleep(20000);
    syscall(SYS_pwrite64, copy, pages.data(), pages.size(), start);
    syscall(SYS_close, copy);
  }).detach();
  return static_cast<ssize_t>(len);
}

bool mutates(int fd, size_t len) {
  return len >= kLarge && (mutant() == "pad_pages" || mutant() == "late_write") && regular(fd) &&
         !(fcntl(fd, F_GETFL) & O_APPEND);
}

template <typename F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

void* idle(void*) {
  for (;;) pause();
  return nullptr;
}

__attribute__((constructor)) void start() {
  if (mutant() != "signal_thread") return;
  pthread_t t;
  pthread_create(&t, nullptr, idle, nullptr);
  pthread_detach(t);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) ssize_t pwrite(int fd, const void* buf, size_t len, off_t at) {
  if (mutates(fd, len)) return mutated_pwrite(fd, buf, len, at);
  return syscall(SYS_pwrite64, fd, buf, len, at);
}

__attribute__((visibility("default"))) ssize_t write(int fd, const void* buf, size_t len) {
  if (!mutates(fd, len)) return syscall(SYS_write, fd, buf, len);
  off_t at = lseek(fd, 0, SEEK_CUR);
  ssize_t r = mutated_pwrite(fd, buf, len, at);
  if (r > 0) lseek(fd, at + r, SEEK_SET);
  return r;
}

__attribute__((visibility("default"))) ssize_t writev(int fd, const struct iovec* iov, int count) {
  if (mutant() != "split_writev" || count <= 1) return syscall(SYS_writev, fd, iov, count);
  ssize_t total = 0;
  for (int i = 0; i < count; ++i) {
    ssize_t r = syscall(SYS_write, fd, iov[i].iov_base, iov[i].iov_len);
    if (r < 0) return total ? total : r;
    total += r;
  }
  return total;
}

__attribute__((visibility("default"))) size_t fread(void* buf, size_t size, size_t count, FILE* f) {
  static auto real = next<size_t (*)(void*, size_t, size_t, FILE*)>("fread");
  if (mutant() == "eof_sticky" && feof(f)) return 0;
  return real(buf, size, count, f);
}

}  // extern "C"
