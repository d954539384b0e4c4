// stale_log.h - the log that the adversarial writer and the restore reader
// share (a MAP_SHARED file mapping): what every change returned, so that
// the reader's check is exact, not timing-based.
//
// The file is kBlocks blocks of kBlock bytes.  Every 8-byte word of a block
// holds the sequence number of the write that wrote the block (sequence
// numbers start at 1 and only grow; each is issued before its change
// starts), or 0 where a truncate or a hole punch left zeros.  For each block
// the writer records the sequence number of a change once its system call
// returned (`floor`), and for a change that leaves zeros also before the
// call starts (`zeroed`: such a change may be seen by a read it overlaps).
// A read that began after the reader saw floor[b] = F may return, in block
// b, only words in [F, the newest sequence issued] (that change or a later
// one), or 0 if a zeroing with sequence >= F had begun by the time the read
// returned (the zeroing that set the floor, or a later one racing with the
// read).  Anything else is a stale byte.
#pragma once

#include <atomic>
#include <cstdint>

namespace hybridio::adversarial {

constexpr uint64_t kBlock = 1 << 20;
constexpr uint64_t kBlocks = 64;

struct StaleLog {
  std::atomic<uint64_t> ready;                 // the writer wrote the initial file
  std::atomic<uint64_t> go;                    // the reader lets the writer start changing the file
  std::atomic<uint64_t> stop;                  // the reader asks the writer to end
  std::atomic<uint64_t> seq;                   // the last sequence number the writer issued
  std::atomic<uint64_t> floor[kBlocks];
  std::atomic<uint64_t> zeroed[kBlocks];       // the latest zeroing that has begun
  std::atomic<uint64_t> writes, truncates, punches;
};

}  // namespace hybridio::adversarial
