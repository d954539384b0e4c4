// cases_offsets.cc - the shared file offset (item 3) and atomic pwrite
// (item 5).  Since Linux 3.14 read() and write() on a regular file hold
// the file's f_pos lock, so threads (and signal handlers) sharing one
// descriptor each get a range of their own; and ext4 holds the inode lock
// for a whole buffered write, so overlapping pwrites never mix.
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "diff_case.h"
#include "io_helpers.h"
#include "records.h"

namespace hio_diff {
namespace {

constexpr size_t kSmallRecord = 100;

// Large records of 1-4 MiB, unaligned lengths, from the seed.
std::vector<size_t> large_lengths(uint64_t seed, int count) {
  Rng rng(seed);
  std::vector<size_t> lens;
  for (int i = 0; i < count; ++i) lens.push_back(rng.range(kMiB, 4 * kMiB));
  return lens;
}

// Writes the large records of writer 0 with write(); false on a short write.
bool write_large_records(int fd, const std::vector<size_t>& lens) {
  Mapping buf(4 * kMiB);
  bool ok = buf.ok();
  for (size_t i = 0; ok && i < lens.size(); ++i) {
    make_record(buf.data(), 0, static_cast<uint32_t>(i), lens[i]);
    ok = write(fd, buf.data(), lens[i]) == static_cast<ssize_t>(lens[i]);
  }
  return ok;
}

// The SIGALRM writer of offset_signal.
int g_signal_fd = -1;
std::atomic<uint32_t> g_signal_records{0};
volatile sig_atomic_t g_signal_stop = 0;

void on_alarm(int) {
  if (g_signal_stop) return;
  int saved = errno;
  char rec[kSmallRecord];
  uint32_t seq = g_signal_records.load(std::memory_order_relaxed);
  make_record(rec, 1, seq, sizeof rec);
  if (write(g_signal_fd, rec, sizeof rec) == static_cast<ssize_t>(sizeof rec))
    g_signal_records.store(seq + 1, std::memory_order_relaxed);
  errno = saved;
}

}  // namespace

HIO_DIFF_CASE(offset_threads, "3", "threads write() 1-4 MiB and 100-byte records to one shared fd: all land whole, once") {
  const std::string path = opt.path("records");
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return harness_failure("open");
  const std::vector<size_t> lens = large_lengths(opt.seed, 8);
  constexpr uint32_t kSmallWriters = 3, kSmallEach = 1500;
  std::atomic<int> ready{0};
  std::atomic<bool> small_ok{true};
  std::vector<std::thread> threads;
  for (uint32_t w = 1; w <= kSmallWriters; ++w) {
    threads.emplace_back([&, w] {
      char rec[kSmallRecord];
      ready.fetch_add(1);
      while (ready.load() <= static_cast<int>(kSmallWriters)) {
      }
      for (uint32_t s = 0; s < kSmallEach; ++s) {
        make_record(rec, w, s, sizeof rec);
        if (write(fd, rec, sizeof rec) != static_cast<ssize_t>(sizeof rec)) small_ok = false;
      }
    });
  }
  while (ready.load() < static_cast<int>(kSmallWriters)) {
  }
  ready.fetch_add(1);
  bool large_ok = write_large_records(fd, lens);
  for (auto& t : threads) t.join();
  size_t total = kSmallWriters * kSmallEach * kSmallRecord;
  for (size_t l : lens) total += l;
  out.put("writes_ok", large_ok && small_ok);
  out.put("size", file_size(path));
  out.put("size_is_sum", file_size(path) == static_cast<long long>(total));
  out.put("records_ok", records_intact(path, {static_cast<uint32_t>(lens.size()), kSmallEach, kSmallEach, kSmallEach}));
  out.put("pos", rv(lseek(fd, 0, SEEK_CUR)));
  return kRan;
}

HIO_DIFF_CASE(offset_signal, "3", "SIGALRM handler write()s small records on the fd the main thread writes 1-4 MiB to") {
  const std::string path = opt.path("records");
  g_signal_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (g_signal_fd < 0) return harness_failure("open");
  struct sigaction sa = {};
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  itimerval every = {{0, 500}, {0, 500}};
  if (sigaction(SIGALRM, &sa, nullptr) != 0 || setitimer(ITIMER_REAL, &every, nullptr) != 0)
    return harness_failure("sigaction/setitimer");
  const std::vector<size_t> lens = large_lengths(opt.seed + 1, 16);
  bool large_ok = write_large_records(g_signal_fd, lens);
  itimerval off = {};
  setitimer(ITIMER_REAL, &off, nullptr);
  g_signal_stop = 1;
  // How many handler records there are varies; that all of them (and only
  // they) are intact does not.
  const uint32_t handled = g_signal_records.load();
  long long size = file_size(path);
  long long expected = static_cast<long long>(handled * kSmallRecord);
  for (size_t l : lens) expected += static_cast<long long>(l);
  out.put("large_writes_ok", large_ok);
  out.put("size_is_sum", size == expected);
  out.put("records_ok", records_intact(path, {static_cast<uint32_t>(lens.size()), handled}));
  out.put("pos_is_size", lseek(g_signal_fd, 0, SEEK_CUR) == size);
  return kRan;
}

HIO_DIFF_CASE(offset_read_threads, "3", "threads read() 1-4 MiB and 104-byte pieces through one shared fd: each byte once") {
  const std::string path = opt.path("words");
  constexpr size_t kSize = 32 * kMiB;
  {
    // Each 8-byte word holds its own offset (+1 so that no word is 0).
    std::vector<uint64_t> words(kSize / 8);
    for (size_t i = 0; i < words.size(); ++i) words[i] = i * 8 + 1;
    int fd = raw_open(path, O_WRONLY | O_CREAT | O_TRUNC);
    if (fd < 0 || raw_pwrite(fd, words.data(), kSize, 0) != static_cast<ssize_t>(kSize)) return harness_failure("setup");
    raw_close(fd);
  }
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return harness_failure("open");
  std::vector<std::atomic<uint8_t>> seen(kSize / 8);
  std::atomic<long long> total{0};
  std::atomic<bool> consistent{true};
  auto reader = [&](bool large, uint64_t seed) {
    Rng rng(seed);
    std::vector<uint64_t> buf(4 * kMiB / 8);
    for (;;) {
      size_t len = large ? rng.range(kMiB / 8, 4 * kMiB / 8) * 8 : 104;
      ssize_t n = read(fd, buf.data(), len);
      if (n <= 0) {
        if (n < 0) consistent = false;
        return;
      }
      total += n;
      if (n % 8) consistent = false;
      const uint64_t start = buf[0] - 1;
      for (size_t i = 0; i < static_cast<size_t>(n) / 8; ++i) {
        if (buf[i] != start + i * 8 + 1 || (start / 8 + i) >= seen.size()) {
          consistent = false;
          return;
        }
        seen[start / 8 + i].fetch_add(1);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(reader, i < 2, opt.seed * 31 + static_cast<uint64_t>(i));
  for (auto& t : threads) t.join();
  bool once = true;
  for (auto& s : seen) once = once && s.load() == 1;
  out.put("bytes_read_total", total.load());
  out.put("reads_consistent", consistent.load());
  out.put("coverage_ok", once);
  out.put("pos", rv(lseek(fd, 0, SEEK_CUR)));
  return kRan;
}

HIO_DIFF_CASE(atomic_pwrite, "5", "two threads pwrite 8 MiB at offset 1000, 20 rounds: the range is never mixed") {
  const std::string path = opt.path("atomic");
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return harness_failure("open");
  constexpr size_t kLen = 8 * kMiB;
  constexpr off_t kAt = 1000;
  Mapping a(kLen), b(kLen);
  if (!a.ok() || !b.ok()) return harness_failure("mmap");
  memset(a.data(), 0xAA, kLen);
  memset(b.data(), 0xBB, kLen);
  int mixed = 0;
  std::atomic<int> failed{0};
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> go{0};
    auto writer = [&](const Mapping& m) {
      go.fetch_add(1);
      while (go.load() < 2) {
      }
      if (pwrite(fd, m.data(), kLen, kAt) != static_cast<ssize_t>(kLen)) ++failed;
    };
    std::thread ta(writer, std::cref(a)), tb(writer, std::cref(b));
    ta.join();
    tb.join();
    if (!file_is_all(path, kAt, kLen, 0xAA) && !file_is_all(path, kAt, kLen, 0xBB)) ++mixed;
  }
  out.put("failed_writes", failed.load());
  out.put("mixed_rounds", mixed);
  out.put("size", file_size(path));
  return kRan;
}

}  // namespace hio_diff
