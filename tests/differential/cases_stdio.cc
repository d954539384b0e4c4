// cases_stdio.cc - stdio streams (item 12).  A large fread/fwrite must
// honour what the FILE holds: a character pushed back with ungetc, the
// end-of-file indicator (whether a read goes on past it once the file has
// grown is glibc's business - 2.36 reads on - the shim must not change it),
// item-granular counts and ftell.
#include <fcntl.h>
#include <unistd.h>

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

}  // namespace hio_diff
