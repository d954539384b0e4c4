// records.h - self-describing records for the shared-offset and append
// cases: each record carries its writer, sequence number, length and the
// checksum of its payload, so that a scan of the file alone shows whether
// every record landed whole, once, and nothing else is there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hio_diff {

struct RecordHeader {
  uint32_t magic;
  uint32_t writer;
  uint32_t seq;
  uint32_t len;  // whole record, header included
  uint64_t sum;  // checksum of the payload
};

constexpr size_t kMinRecord = sizeof(RecordHeader);

// Fills buf[0, len) with record (writer, seq); len >= kMinRecord.  Pure
// computation on the caller's memory: safe in a signal handler.
void make_record(char* buf, uint32_t writer, uint32_t seq, size_t len);

// Scans the file at path (read with raw calls) as back-to-back records:
// true when every record is intact, writer w contributed exactly
// seqs 0..expected[w]-1 once each, and nothing else is in the file.
bool records_intact(const std::string& path, const std::vector<uint32_t>& expected);

// A small deterministic generator (splitmix64) for sizes and choices.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  uint64_t range(uint64_t lo, uint64_t hi) { return lo + next() % (hi - lo + 1); }

 private:
  uint64_t s_;
};

}  // namespace hio_diff
