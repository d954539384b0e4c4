// stale_writer.cc - the adversary of the restore pipeline: a process that
// uses plain libc only (never the library, never the shim), and keeps
// overwriting, truncating, extending and punching holes into the file that
// the reader streams, opening the file for each change (so that the
// reader's read leases are taken in between and broken by each change).
// Every change is logged once its system call returned (stale_log.h).
//
// Usage: stale_writer FILE LOG   (ends when the reader sets log->stop)
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "stale_log.h"

using namespace hybridio::adversarial;

namespace {

uint64_t* g_block = nullptr;  // one block's contents, 4 KiB aligned (for O_DIRECT)

void fill(uint64_t seq) {
  for (uint64_t i = 0; i < kBlock / 8; ++i) g_block[i] = seq;
}

[[noreturn]] void die(const char* what) {
  perror(what);
  exit(2);
}

// Writes block b with sequence number `seq`, buffered or O_DIRECT, and logs it.
void write_block(StaleLog* log, const char* path, uint64_t b, uint64_t seq, bool direct) {
  int fd = open(path, O_WRONLY | (direct ? O_DIRECT : 0));
  if (fd < 0) die("open for writing");
  fill(seq);
  if (pwrite(fd, g_block, kBlock, static_cast<off_t>(b * kBlock)) != static_cast<ssize_t>(kBlock)) die("pwrite");
  // Returned: from here on every read that begins must see it.
  log->floor[b].store(seq);
  close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: stale_writer FILE LOG\n");
    return 2;
  }
  const char* path = argv[1];
  int lfd = open(argv[2], O_RDWR);
  if (lfd < 0) die("open log");
  auto* log = static_cast<StaleLog*>(mmap(nullptr, sizeof(StaleLog), PROT_READ | PROT_WRITE, MAP_SHARED, lfd, 0));
  if (log == MAP_FAILED) die("mmap log");
  if (posix_memalign(reinterpret_cast<void**>(&g_block), 4096, kBlock) != 0) die("memalign");

  // The initial file: every block written with sequence 1.
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) die("create");
  fill(1);
  for (uint64_t b = 0; b < kBlocks; ++b)
    if (pwrite(fd, g_block, kBlock, static_cast<off_t>(b * kBlock)) != static_cast<ssize_t>(kBlock)) die("pwrite");
  if (fsync(fd) != 0) die("fsync");
  close(fd);
  log->seq.store(1);
  for (uint64_t b = 0; b < kBlocks; ++b) log->floor[b].store(1);
  log->ready.store(1);

  // The reader's first reads are left alone, so that its pipeline surely
  // runs once (when and how long it runs after that is up to the changes).
  while (!log->go.load() && !log->stop.load()) usleep(1000);
  std::mt19937_64 rng(getpid());
  uint64_t size_blocks = kBlocks;
  while (!log->stop.load()) {
    const uint64_t seq = log->seq.fetch_add(1) + 1;
    const unsigned kind = static_cast<unsigned>(rng() % 100);
    if (kind < 70 || size_blocks < kBlocks / 2) {
      // Overwrite (or extend back) one block, buffered or direct; often
      // several blocks in a row, as a stream ahead of the reader would meet.
      uint64_t b = rng() % kBlocks;
      if (b > size_blocks) b = size_blocks;  // extend by one block, no hole
      write_block(log, path, b, seq, rng() % 2);
      if (b == size_blocks) ++size_blocks;
      log->writes.fetch_add(1);
    } else if (kind < 85) {
      // Truncate (by path: no descriptor) to a block boundary, then the
      // blocks beyond are gone: a read must see them short or zero.
      const uint64_t to = kBlocks / 2 + rng() % (size_blocks - kBlocks / 2 + 1);
      for (uint64_t b = to; b < kBlocks; ++b) log->zeroed[b].store(seq);
      if (truncate(path, static_cast<off_t>(to * kBlock)) != 0) die("truncate");
      for (uint64_t b = to; b < kBlocks; ++b) log->floor[b].store(seq);
      size_blocks = to;
      log->truncates.fetch_add(1);
    } else {
      // Punch a hole into one block that exists.
      const uint64_t b = rng() % size_blocks;
      int pfd = open(path, O_WRONLY);
      if (pfd < 0) die("open for punching");
      log->zeroed[b].store(seq);
      if (fallocate(pfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(b * kBlock),
                    static_cast<off_t>(kBlock)) != 0)
        die("fallocate");
      log->floor[b].store(seq);
      close(pfd);
      log->punches.fetch_add(1);
    }
    // A pause, so that leases are taken again and windows run in between.
    const timespec pause{0, static_cast<long>(2000000 + rng() % 18000000)};
    nanosleep(&pause, nullptr);
  }
  return 0;
}
