// cases_sandbox.cc - sandboxes (issue 58 item 5): a program that enters
// seccomp strict mode and then reads and writes large blocks, and one whose
// filter refuses the io_uring calls with EPERM, installed through libc
// (which the shim sees), without it (an inline system call instruction,
// which it does not), and inherited across exec by a fresh image, with the
// shim's own diagnostics at their default level.  What the shim writes on
// stderr is part of the transcript there.
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {
namespace {

constexpr size_t kBlock = 8 * kMiB;

// Results of a child in strict mode, which can make no call but read,
// write and exit: kept in memory shared with the parent, mapped before.
struct StrictResults {
  long entered;  // the seccomp call's result
  long reads[8];
  long writes[8];
  int count;
};

// One child: warm-up copy of one block, strict mode entered with `how`
// ("prctl" or "seccomp"), then the rest of src copied to dst in 8 MiB
// read/write calls.
std::string strict_copy(Transcript& out, const std::string& tag, const std::string& src, const std::string& dst) {
  auto* res = static_cast<StrictResults*>(
      mmap(nullptr, sizeof(StrictResults), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  Mapping buf(kBlock);
  if (res == MAP_FAILED || !buf.ok()) return "setup-failed";
  memset(res, 0, sizeof *res);
  const std::string ended = run_in_child([&] {
    int in = open(src.c_str(), O_RDONLY);
    int outfd = open(dst.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || outfd < 0) return 2;
    if (read(in, buf.data(), kBlock) != static_cast<ssize_t>(kBlock)) return 3;
    if (write(outfd, buf.data(), kBlock) != static_cast<ssize_t>(kBlock)) return 4;
    res->entered = tag == "prctl" ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0)
                                  : syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, nullptr);
    for (int i = 0; i < 8; ++i) {
      long n = read(in, buf.data(), kBlock);
      res->reads[i] = n;
      res->count = i + 1;
      if (n <= 0) break;
      res->writes[i] = write(outfd, buf.data(), static_cast<size_t>(n));
    }
    syscall(SYS_exit, 0);  // exit_group is not allowed in strict mode
    return 0;
  });
  out.put(tag + ".entered", res->entered);
  std::string calls;
  for (int i = 0; i < res->count && i < 8; ++i)
    calls += std::to_string(res->reads[i]) + "/" + std::to_string(res->writes[i]) + " ";
  out.put(tag + ".calls", calls);
  munmap(res, sizeof *res);
  return ended;
}

// A filter: the io_uring calls fail with EPERM, everything else runs.
sock_fprog* uring_eperm_filter() {
  static sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
#if defined(__x86_64__)
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
#elif defined(__aarch64__)
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 1, 0),
#endif
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
  };
  static sock_fprog prog = {static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  return &prog;
}

// A filter that allows the calls filtered_io() makes itself, and what
// malloc and exit need, and kills the process on any other.
sock_fprog* program_calls_only_filter() {
  static sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_read, 17, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_write, 16, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pread64, 15, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pwrite64, 14, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_lseek, 13, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_fsync, 12, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close, 11, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 10, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_brk, 9, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 8, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_munmap, 7, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_madvise, 6, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 5, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 4, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, 3, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigreturn, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_exit, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  static sock_fprog prog = {static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
  return &prog;
}

// A system call no preloaded library can see (no libc function at all).
long invisible_syscall(long n, long a, long b, long c) {
#if defined(__x86_64__)
  long r;
  register long r10 __asm__("r10") = 0;
  register long r8 __asm__("r8") = 0;
  __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8) : "rcx", "r11", "memory");
  return r;
#elif defined(__aarch64__)
  register long x8 __asm__("x8") = n;
  register long x0 __asm__("x0") = a;
  register long x1 __asm__("x1") = b;
  register long x2 __asm__("x2") = c;
  register long x3 __asm__("x3") = 0;
  register long x4 __asm__("x4") = 0;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
  return x0;
#endif
}

// The large I/O a filtered process makes: 32 MiB written in 8 MiB calls,
// read back, rewritten and reread at unaligned offsets, synced.
void filtered_io(Transcript& out, const std::string& tag, const std::string& path) {
  Mapping buf(kBlock + 4096);
  if (!buf.ok()) {
    out.put(tag + ".mmap", "failed");
    return;
  }
  fill_pattern(buf.data(), buf.size(), 90, 0);
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  out.put(tag + ".open", fd >= 0);
  std::string r;
  for (int i = 0; i < 4; ++i) r += rv(write(fd, buf.data() + i, kBlock)) + " ";
  out.put(tag + ".writes", r);
  out.put(tag + ".lseek", rv(lseek(fd, 0, SEEK_SET)));
  r.clear();
  for (int i = 0; i < 5; ++i) {
    ssize_t n = read(fd, buf.data(), kBlock);
    r += rv(n) + ":" + hex(checksum(buf.data(), n > 0 ? static_cast<size_t>(n) : 0)) + " ";
  }
  out.put(tag + ".reads", r);
  fill_pattern(buf.data(), buf.size(), 91, 0);
  out.put(tag + ".pwrite", rv(pwrite(fd, buf.data() + 1, kBlock, 4097)));
  ssize_t n = pread(fd, buf.data(), kBlock, 3);
  out.put(tag + ".pread", rv(n) + ":" + hex(checksum(buf.data(), n > 0 ? static_cast<size_t>(n) : 0)));
  out.put(tag + ".fsync", rv(fsync(fd)));
  out.put(tag + ".close", rv(close(fd)));
  out.put(tag + ".digest", file_digest(path));
}

// What a child wrote on its stderr (the file it was redirected to).
std::string captured(const std::string& path) {
  int fd = raw_open(path, O_RDONLY);
  if (fd < 0) return "unreadable";
  char text[512] = {};
  ssize_t n = raw_pread(fd, text, sizeof text - 1, 0);
  raw_close(fd);
  if (n <= 0) return "empty";
  std::string s(text, static_cast<size_t>(n));
  for (char& c : s)
    if (c == '\n') c = '|';
  return s;
}

bool redirect_stderr(const std::string& path) {
  int fd = raw_open(path, O_WRONLY | O_CREAT | O_TRUNC);
  return fd >= 0 && dup2(fd, 2) == 2 && (fd == 2 || close(fd) == 0);
}

std::string seccomp_line() {
  char text[4096] = {};
  int fd = raw_open("/proc/self/status", O_RDONLY);
  ssize_t n = fd < 0 ? -1 : raw_pread(fd, text, sizeof text - 1, 0);
  if (fd >= 0) raw_close(fd);
  if (n <= 0) return "unreadable";
  const char* line = strstr(text, "\nSeccomp:");
  if (!line) return "none";
  std::string s(line + 9, strcspn(line + 9, "\n"));
  return s.substr(s.find_first_not_of(" \t") == std::string::npos ? 0 : s.find_first_not_of(" \t"));
}

}  // namespace

HIO_DIFF_CASE(seccomp_strict, "58.5",
              "8 MiB read/write copy, strict mode entered after a warm-up block (prctl, then seccomp(2)): "
              "completes, 40 MiB written") {
  const std::string src = opt.path("src");
  if (!make_pattern_file(src, 5 * kBlock, 92)) return harness_failure("setup");
  for (const char* how : {"prctl", "seccomp"}) {
    const std::string dst = opt.path(std::string("dst_") + how);
    out.put(std::string(how) + ".ended", strict_copy(out, how, src, dst));
    out.put(std::string(how) + ".size", file_size(dst));
    out.put(std::string(how) + ".same", file_digest(dst) == file_digest(src));
  }
  return kRan;
}

HIO_DIFF_CASE(seccomp_uring_eperm, "58.5",
              "a filter refusing io_uring with EPERM (through libc after large I/O, without libc, and inherited "
              "across exec with default logging; also RLIMIT_MEMLOCK 0): large I/O as plain, nothing on stderr") {
  const std::string err = opt.path("stderr");
  const std::string warm = opt.path("warm");
  out.put("libc.ended", run_in_child([&] {
            if (!redirect_stderr(err)) return 2;
            // Large I/O before the filter: rings, twins and writeback of the
            // shim's own may be in use when the filter comes.
            Mapping block(16 * kMiB);
            int fd = open(warm.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
            if (!block.ok() || fd < 0) return 3;
            fill_pattern(block.data(), block.size(), 93, 0);
            out.put("libc.warm_write", rv(write(fd, block.data(), 16 * kMiB)));
            out.put("libc.warm_pread", rv(pread(fd, block.data(), 8 * kMiB, 4096)));
            out.put("libc.no_new_privs", rv(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)));
            out.put("libc.filter", rv(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, uring_eperm_filter(), 0, 0)));
            out.put("libc.uring_setup", rv(syscall(__NR_io_uring_setup, 8, nullptr)));
            filtered_io(out, "libc", opt.path("libc"));
            return 0;
          }));
  out.put("libc.stderr", captured(err));
  out.put("libc.warm_digest", file_digest(warm));
  out.put("unseen.ended", run_in_child([&] {
            if (!redirect_stderr(err)) return 2;
            out.put("unseen.no_new_privs", invisible_syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0));
            out.put("unseen.filter", invisible_syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0,
                                                       reinterpret_cast<long>(uring_eperm_filter())));
            filtered_io(out, "unseen", opt.path("unseen"));
            return 0;
          }));
  out.put("unseen.stderr", captured(err));
  // A fresh image started under the filter (or with no lockable memory), with
  // the shim's diagnostics at their default level.
  for (const char* how : {"exec_filter", "exec_memlock0"}) {
    const std::string tag = how;
    out.put(tag + ".ended", run_in_child([&] {
              if (!redirect_stderr(err)) return 2;
              if (tag == "exec_filter") {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
                    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, uring_eperm_filter(), 0, 0) != 0)
                  return 3;
              } else if (!set_soft_limit(RLIMIT_MEMLOCK, 0)) {
                return 3;
              }
              // Default logging.  A setting the shim refuses (write-behind) warns
              // at start-up whatever the sandbox: not what is checked here.
              unsetenv("HYBRIDIO_LOG");
              unsetenv("HYBRIDIO_WRITE_BEHIND");
              const std::string file = opt.path(tag);
              char* args[] = {const_cast<char*>("hio_diff"), const_cast<char*>("--exec-filtered"),
                              const_cast<char*>(tag.c_str()), const_cast<char*>(file.c_str()), nullptr};
              execv("/proc/self/exe", args);
              return 4;
            }));
    out.put(tag + ".stderr", captured(err));
  }
  return kRan;
}

HIO_DIFF_CASE(seccomp_program_calls_only, "58.5",
              "after large I/O, a filter that kills the process on any call but the program's own: "
              "the same I/O completes (the shim makes no call of its own once a filter is in)") {
  const std::string warm = opt.path("warm");
  out.put("ended", run_in_child([&] {
            Mapping block(16 * kMiB);
            int fd = open(warm.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
            if (!block.ok() || fd < 0) return 3;
            fill_pattern(block.data(), block.size(), 94, 0);
            out.put("warm_write", rv(write(fd, block.data(), 16 * kMiB)));
            out.put("warm_pread", rv(pread(fd, block.data(), 8 * kMiB, 4096)));
            out.put("no_new_privs", rv(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)));
            out.put("filter", rv(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, program_calls_only_filter())));
            out.put("warm_pwrite", rv(pwrite(fd, block.data() + 3, 8 * kMiB, 5)));
            out.put("warm_read", rv(read(fd, block.data(), 16 * kMiB)));
            out.put("warm_fsync", rv(fsync(fd)));
            out.put("warm_close", rv(close(fd)));
            filtered_io(out, "after", opt.path("after"));
            return 0;
          }));
  out.put("warm_digest", file_digest(warm));
  out.put("after_digest", file_digest(opt.path("after")));
  return kRan;
}

// The image exec'd by seccomp_uring_eperm: `hio_diff --exec-filtered TAG PATH`.
int seccomp_exec_body(int argc, char** argv) {
  if (argc != 4) return harness_failure("--exec-filtered TAG PATH");
  Transcript out;
  const std::string tag = argv[2];
  out.put(tag + ".seccomp", seccomp_line());
  filtered_io(out, tag, argv[3]);
  return 0;
}

}  // namespace hio_diff
