// cases_stdio.cc - stdio streams (item 12).  A large fread/fwrite must
// honour what the FILE holds: a character pushed back with ungetc, the
// end-of-file indicator (whether a read goes on past it once the file has
// grown is glibc's business - 2.36 reads on - the shim must not change it),
// item-granular counts and ftell.
#include <fcntl.h>
#include <signal.h>
#include <stdio_ext.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <string>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {
namespace {

std::string stream_state(FILE* f) {
  return "eof=" + std::to_string(feof(f) != 0) + " error=" + std::to_string(ferror(f) != 0) +
         " tell=" + std::to_string(ftello(f));
}

}  // namespace

HIO_DIFF_CASE(stdio_ungetc, "12", "fread 1 byte, ungetc another, fread 4 MiB: the pushed-back byte comes first") {
  const std::string path = opt.path("stream");
  if (!make_pattern_file(path, 16 * kMiB, 80)) return harness_failure("setup");
  Mapping buf(8 * kMiB);
  FILE* f = fopen(path.c_str(), "r");
  if (!f || !buf.ok()) return harness_failure("fopen/mmap");
  unsigned char first = 0;
  out.put("fread1", fread(&first, 1, 1, f));
  out.put("first", static_cast<int>(first));
  out.put("ungetc", ungetc(first ^ 0x5a, f));
  size_t n = fread(buf.data(), 1, 4 * kMiB, f);
  out.put("fread4m", n);
  out.put("fread4m.head", hex(checksum(buf.data(), 16)));
  out.put("fread4m.sum", hex(checksum(buf.data(), n)));
  out.put("state1", stream_state(f));
  // Items of 7 bytes, a count that does not divide the rest.
  n = fread(buf.data() + 1, 7, kMiB + 3, f);
  out.put("fread_items", n);
  out.put("fread_items.sum", hex(checksum(buf.data() + 1, n * 7)));
  out.put("state2", stream_state(f));
  out.put("ungetc2", ungetc('x', f));
  n = fread(buf.data(), 1, 6 * kMiB + 1, f);
  out.put("fread_after_ungetc2", n);
  out.put("fread_after_ungetc2.sum", hex(checksum(buf.data(), n)));
  out.put("state3", stream_state(f));
  fclose(f);
  // Writing: "r+" stream, fwrite of items, positioned in between.
  f = fopen(path.c_str(), "r+");
  if (!f) return harness_failure("fopen r+");
  fill_pattern(buf.data(), buf.size(), 81, 0);
  out.put("getc", getc(f));
  out.put("fseek", fseeko(f, 0, SEEK_CUR));
  out.put("fwrite_items", fwrite(buf.data(), 7, kMiB + 5, f));
  out.put("state4", stream_state(f));
  out.put("fputc", fputc('z', f));
  out.put("fwrite_more", fwrite(buf.data() + 3, 1, 3 * kMiB + 1, f));
  out.put("state5", stream_state(f));
  out.put("fclose", fclose(f));
  out.put("digest", file_digest(path));
  return kRan;
}

HIO_DIFF_CASE(stdio_eof, "12", "fread to EOF, the file grows through another fd, fread 4 MiB again: as stdio does it") {
  const std::string path = opt.path("stream");
  if (!make_pattern_file(path, 6 * kMiB + 11, 82)) return harness_failure("setup");
  Mapping buf(8 * kMiB);
  FILE* f = fopen(path.c_str(), "r");
  if (!f || !buf.ok()) return harness_failure("fopen/mmap");
  size_t n = fread(buf.data(), 1, 4 * kMiB, f);
  out.put("fread1", n);
  out.put("fread1.sum", hex(checksum(buf.data(), n)));
  n = fread(buf.data(), 1, 4 * kMiB, f);
  out.put("fread2", n);
  out.put("fread2.sum", hex(checksum(buf.data(), n)));
  out.put("state2", stream_state(f));
  int other = raw_open(path, O_WRONLY);
  fill_pattern(buf.data(), 3 * kMiB, 83, 0);
  out.put("extend", rv(raw_pwrite(other, buf.data(), 3 * kMiB, 6 * kMiB + 11)));
  raw_close(other);
  n = fread(buf.data(), 1, 4 * kMiB, f);
  out.put("fread_after_growth", n);
  out.put("state3", stream_state(f));
  clearerr(f);
  n = fread(buf.data(), 1, 4 * kMiB, f);
  out.put("fread_after_clearerr", n);
  out.put("fread_after_clearerr.sum", hex(checksum(buf.data(), n)));
  out.put("state4", stream_state(f));
  n = fread(buf.data(), 5, kMiB, f);
  out.put("fread_at_eof_items", n);
  out.put("state5", stream_state(f));
  fclose(f);
  // A write-only stream: fread fails with the error indicator set.
  f = fopen(opt.path("wonly").c_str(), "w");
  if (!f) return harness_failure("fopen w");
  n = fread(buf.data(), 1, 4 * kMiB, f);
  out.put("fread_on_w_stream", n);
  out.put("state6", stream_state(f));
  out.put("fwrite_on_w_stream", fwrite(buf.data(), 3, kMiB + 1, f));
  out.put("state7", stream_state(f));
  fclose(f);
  out.put("wonly.digest", file_digest(opt.path("wonly")));
  return kRan;
}

// ---- issue 58 item 7: what glibc's fread/fwrite decide themselves ---------

namespace {

volatile sig_atomic_t g_stdio_sigxfsz = 0;
void on_stdio_sigxfsz(int) { g_stdio_sigxfsz = g_stdio_sigxfsz + 1; }

std::string error_state(FILE* f) {
  return "error=" + std::to_string(ferror(f) != 0) + " errno=" + errno_name(errno);
}

}  // namespace

HIO_DIFF_CASE(stdio_stream_mode, "58.7a",
              "fwrite 9 MiB on fdopen(O_RDWR fd, \"r\") and fread 9 MiB on a \"w\" stream: 0, EBADF, error flag") {
  const std::string path = opt.path("modes");
  if (!make_pattern_file(path, 16 * kMiB, 82)) return harness_failure("setup");
  Mapping buf(9 * kMiB);
  if (!buf.ok()) return harness_failure("mmap");
  fill_pattern(buf.data(), buf.size(), 83, 0);
  int fd = open(path.c_str(), O_RDWR);
  FILE* r = fd < 0 ? nullptr : fdopen(fd, "r");
  if (!r) return harness_failure("fdopen r");
  errno = 0;
  out.put("r.fwrite", fwrite(buf.data(), 1, 9 * kMiB, r));
  out.put("r.after_fwrite", error_state(r));
  out.put("r.fwrite_items", fwrite(buf.data(), 4096, 2304, r));
  out.put("r.fread", fread(buf.data(), 1, 9 * kMiB, r));
  out.put("r.fread.sum", hex(checksum(buf.data(), 9 * kMiB)));
  out.put("r.fclose", fclose(r));
  fd = open(path.c_str(), O_RDWR);
  FILE* w = fd < 0 ? nullptr : fdopen(fd, "w");
  if (!w) return harness_failure("fdopen w");
  errno = 0;
  out.put("w.fread", fread(buf.data(), 1, 9 * kMiB, w));
  out.put("w.after_fread", error_state(w));
  out.put("w.tell", ftello(w));
  out.put("w.fclose", fclose(w));
  out.put("digest", file_digest(path));
  return kRan;
}

HIO_DIFF_CASE(stdio_fsize_signal, "58.7b", "one 8 MiB fwrite across RLIMIT_FSIZE 5 MiB+1000: one SIGXFSZ, EFBIG, error flag") {
  const std::string path = opt.path("limited_stream");
  Mapping buf(8 * kMiB);
  FILE* f = fopen(path.c_str(), "w");
  if (!buf.ok() || !f) return harness_failure("fopen/mmap");
  fill_pattern(buf.data(), buf.size(), 84, 0);
  struct sigaction sa = {};
  sa.sa_handler = on_stdio_sigxfsz;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGXFSZ, &sa, nullptr) != 0 || !set_soft_limit(RLIMIT_FSIZE, 5 * kMiB + 1000))
    return harness_failure("sigaction/setrlimit");
  errno = 0;
  out.put("fwrite_8m", fwrite(buf.data(), 1, 8 * kMiB, f));
  out.put("after", error_state(f));
  out.put("signals", static_cast<int>(g_stdio_sigxfsz));
  out.put("tell", ftello(f));
  clearerr(f);
  errno = 0;
  out.put("fwrite_items_beyond", fwrite(buf.data(), 7, kMiB, f));
  out.put("after_beyond", error_state(f));
  out.put("signals_beyond", static_cast<int>(g_stdio_sigxfsz));
  out.put("fclose", fclose(f));
  out.put("digest", file_digest(path));
  return kRan;
}

HIO_DIFF_CASE(stdio_errno_kept, "58.7c", "successful 9 MiB fwrite and fread leave errno as it was (0, then EDOM)") {
  const std::string path = opt.path("errno_stream");
  Mapping buf(9 * kMiB);
  if (!buf.ok()) return harness_failure("mmap");
  fill_pattern(buf.data(), buf.size(), 85, 0);
  for (int preset : {0, EDOM}) {
    const std::string tag = preset ? "edom." : "zero.";
    FILE* f = fopen(path.c_str(), "w+");
    if (!f) return harness_failure("fopen");
    errno = preset;
    out.put(tag + "fwrite", fwrite(buf.data(), 1, 9 * kMiB, f));
    out.put(tag + "fwrite.errno", errno_name(errno));
    errno = preset;
    out.put(tag + "fflush", fflush(f));
    out.put(tag + "fflush.errno", errno_name(errno));
    rewind(f);
    errno = preset;
    out.put(tag + "fread", fread(buf.data(), 1, 9 * kMiB, f));
    out.put(tag + "fread.errno", errno_name(errno));
    out.put(tag + "fread.sum", hex(checksum(buf.data(), 9 * kMiB)));
    out.put(tag + "fclose", fclose(f));
  }
  out.put("digest", file_digest(path));
  return kRan;
}

HIO_DIFF_CASE(stdio_buffered_tail, "58.7d",
              "fwrite 9 MiB+333: the 333 bytes stay in the stdio buffer, so fork+exit writes them twice and _exit never") {
  constexpr size_t kLen = 9 * kMiB + 333;
  Mapping buf(10 * kMiB);
  if (!buf.ok()) return harness_failure("mmap");
  fill_pattern(buf.data(), buf.size(), 86, 0);
  const std::string forked = opt.path("tail_fork");
  out.put("fork.ended", run_in_child([&] {
            FILE* f = fopen(forked.c_str(), "w");
            if (!f) return 2;
            out.put("fork.fwrite", fwrite(buf.data(), 1, kLen, f));
            out.put("fork.pending", __fpending(f));
            out.put("fork.tell", ftello(f));
            pid_t pid = fork();
            if (pid == 0) exit(0);  // flushes its copy of the buffer
            int status = 0;
            waitpid(pid, &status, 0);
            out.put("fork.child", how_ended(status));
            out.put("fork.size_before_fclose", file_size(forked));
            out.put("fork.fclose", fclose(f));
            return 0;
          }));
  out.put("fork.digest", file_digest(forked));
  const std::string exited = opt.path("tail_exit");
  out.put("exit.ended", run_in_child([&] {
            FILE* f = fopen(exited.c_str(), "w");
            if (!f) return 2;
            // 4 KiB buffered first: the call fills the buffer, then writes whole blocks.
            out.put("exit.fwrite_small", fwrite(buf.data(), 1, 100, f));
            out.put("exit.fwrite", fwrite(buf.data() + 100, 1, kLen, f));
            out.put("exit.pending", __fpending(f));
            out.put("exit.fwrite_items", fwrite(buf.data(), 1000, 3 * 1024 + 7, f));
            out.put("exit.pending2", __fpending(f));
            _exit(0);
          }));
  out.put("exit.digest", file_digest(exited));
  return kRan;
}

}  // namespace hio_diff
