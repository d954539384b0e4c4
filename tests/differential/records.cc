// records.cc - see records.h.
#include "records.h"

#include <fcntl.h>
#include <string.h>

#include "io_helpers.h"

namespace hio_diff {
namespace {

constexpr uint32_t kMagic = 0x48494f52;  // "HIOR"

uint32_t payload_tag(uint32_t writer, uint32_t seq) { return writer * 1000003u + seq; }

}  // namespace

void make_record(char* buf, uint32_t writer, uint32_t seq, size_t len) {
  char* payload = buf + sizeof(RecordHeader);
  const size_t payload_len = len - sizeof(RecordHeader);
  fill_pattern(payload, payload_len, payload_tag(writer, seq), 0);
  RecordHeader h = {kMagic, writer, seq, static_cast<uint32_t>(len), checksum(payload, payload_len)};
  memcpy(buf, &h, sizeof h);
}

bool records_intact(const std::string& path, const std::vector<uint32_t>& expected) {
  long long size = file_size(path);
  if (size < 0) return false;
  std::vector<char> data(static_cast<size_t>(size));
  int fd = raw_open(path, O_RDONLY);
  bool ok = fd >= 0 && raw_pread(fd, data.data(), data.size(), 0) == size;
  if (fd >= 0) raw_close(fd);
  std::vector<std::vector<uint8_t>> seen(expected.size());
  for (size_t w = 0; w < expected.size(); ++w) seen[w].assign(expected[w], 0);
  size_t at = 0;
  while (ok && at < data.size()) {
    RecordHeader h;
    if (data.size() - at < sizeof h) return false;
    memcpy(&h, data.data() + at, sizeof h);
    ok = h.magic == kMagic && h.len >= sizeof h && h.len <= data.size() - at && h.writer < expected.size() &&
         h.seq < expected[h.writer] &&
         checksum(data.data() + at + sizeof h, h.len - sizeof h) == h.sum &&
         has_pattern(data.data() + at + sizeof h, h.len - sizeof h, payload_tag(h.writer, h.seq), 0) &&
         seen[h.writer][h.seq]++ == 0;
    at += h.len;
  }
  for (const auto& w : seen)
    for (uint8_t n : w) ok = ok && n == 1;
  return ok;
}

}  // namespace hio_diff
