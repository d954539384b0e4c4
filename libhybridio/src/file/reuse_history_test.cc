// reuse_history_test.cc - the re-use history and its admission, with an
// injected clock and budget, on a table of the test's own.
#include "file/reuse_history.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "file/reuse_admission.h"
#include "platform/private_mappings.h"

namespace hybridio {
namespace {

constexpr uint64_t M = 1ULL << 20;
constexpr uint32_t kWindow = 600;

class ReuseHistoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hio-reuse-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    h_ = ReuseHistory::attach(dir_.c_str());
    ASSERT_NE(h_, nullptr);
  }
  void TearDown() override {
    ReuseHistory::detach(h_);
    unlink(table().c_str());
    rmdir(dir_.c_str());
  }
  std::string table() const {
    char path[512];
    ReuseHistory::table_path(dir_.c_str(), path, sizeof path);
    return path;
  }
  // What the engine does with a whole-file read: the verdict, then the
  // admission under `budget`, then the record.  True when admitted.
  bool read_whole(const FileIdentity& id, uint32_t now, uint64_t budget) {
    const ReuseVerdict v = h_->lookup(id, 0, id.size, now, kWindow);
    bool admit = false;
    if (v.reread) admit = reuse_admits(id.key, v.first_extent, budget, h_->totals(now, kWindow).read_bytes);
    h_->record(id, 0, id.size, now, admit ? ReuseHistory::Outcome::kAdmitted : ReuseHistory::Outcome::kOffCache);
    return admit;
  }
  static FileIdentity file(uint64_t n, uint64_t size = 16 * M) {
    FileIdentity id;
    id.key = 0x1000 + n * 7919;
    id.size = size;
    return id;
  }

  std::string dir_;
  ReuseHistory* h_ = nullptr;
};

TEST(ReuseExtents, CoverTheFileInAtMost64) {
  EXPECT_EQ(reuse_extent_bytes(16 * M), 1 * M);
  EXPECT_EQ(reuse_extent_bytes(64 * M), 1 * M);
  EXPECT_EQ(reuse_extent_bytes(64 * M + 1), 2 * M);
  EXPECT_EQ(reuse_extent_bytes(10000 * M), 256 * M);
  EXPECT_EQ(reuse_extent_bytes(~0ULL >> 1), 1ULL << 57) << "the largest off_t";
  EXPECT_EQ(reuse_extent_mask(~0ULL >> 1, (~0ULL >> 1) - 1, 1), 1ULL << 63);
  EXPECT_EQ(reuse_extent_mask(16 * M, 0, 16 * M), 0xffffULL);
  EXPECT_EQ(reuse_extent_mask(16 * M, 0, 64 * M), 0xffffULL) << "clamped to the size";
  EXPECT_EQ(reuse_extent_mask(16 * M, 3 * M + 5, 1), 0x8ULL);
  EXPECT_EQ(reuse_extent_mask(64 * M, 0, 64 * M), ~0ULL);
  EXPECT_EQ(reuse_extent_mask(16 * M, 16 * M, 4096), 0u) << "at EOF: nothing";
}

TEST_F(ReuseHistoryTest, AdmittedOnReuse) {
  const FileIdentity f = file(1);
  EXPECT_FALSE(read_whole(f, 100, 1ULL << 40)) << "the first read leaves the cache";
  EXPECT_TRUE(read_whole(f, 160, 1ULL << 40)) << "read again within the window: admitted";
  const ReuseVerdict v = h_->lookup(f, 0, f.size, 220, kWindow);
  EXPECT_TRUE(v.reread);
  EXPECT_TRUE(v.admitted_before) << "a later cached read counts as a hit";
  const ReuseTotals t = h_->totals(220, kWindow);
  EXPECT_EQ(t.reread_bytes, f.size);
  EXPECT_EQ(t.admitted_bytes, f.size);
}

TEST_F(ReuseHistoryTest, NothingAdmittedForDataReadOnce) {
  for (uint64_t n = 0; n < 50; ++n) EXPECT_FALSE(read_whole(file(n), 100 + n, 1ULL << 40));
  EXPECT_EQ(h_->totals(200, kWindow).reread_bytes, 0u) << "read once is not re-read data";
  // A part read once does not make another part re-use.
  const FileIdentity big = file(99, 64 * M);
  h_->record(big, 0, 32 * M, 300, ReuseHistory::Outcome::kOffCache);
  EXPECT_FALSE(h_->lookup(big, 32 * M, 32 * M, 301, kWindow).reread);
  EXPECT_FALSE(h_->lookup(big, 16 * M, 32 * M, 301, kWindow).reread) << "half of it read: not re-use";
  EXPECT_TRUE(h_->lookup(big, 4 * M, 8 * M, 301, kWindow).reread);
  // Outside the window it is forgotten.
  EXPECT_FALSE(h_->lookup(big, 0, 32 * M, 300 + kWindow + 1, kWindow).reread);
  EXPECT_FALSE(read_whole(file(1), 100 + 1 + kWindow + 1, 1ULL << 40)) << "read again too late: as read once";
}

TEST_F(ReuseHistoryTest, APassInCallsSmallerThanAnExtentIsNotItsOwnReread) {
  // A 1 GiB file (16 MiB extents) read off the cache in 1 MiB calls: no
  // call of the first pass finds its extent read, every call of the
  // second does.
  const FileIdentity id = file(1, 1024 * M);
  for (int pass = 0; pass < 2; ++pass) {
    int rereads = 0;
    for (uint64_t off = 0; off < id.size; off += M) {
      rereads += h_->lookup(id, off, M, 100 + pass, kWindow).reread;
      h_->record(id, off, M, 100 + pass, ReuseHistory::Outcome::kOffCache);
    }
    EXPECT_EQ(rereads, pass == 0 ? 0 : 1024) << "pass " << pass + 1;
  }
}

TEST_F(ReuseHistoryTest, AReadThatLeavesTheFilesTrailerIsAReread) {
  // A sample file of 146,600,640 bytes (4 MiB extents) whose reader reads
  // all but its last 12 bytes in one call, every epoch: the second epoch's
  // read is a re-read though the last extent is never finished.
  const FileIdentity id = file(1, 146600640);
  const uint64_t len = 146600628;
  EXPECT_FALSE(h_->lookup(id, 0, len, 100, kWindow).reread);
  h_->record(id, 0, len, 100, ReuseHistory::Outcome::kOffCache);
  EXPECT_TRUE(h_->lookup(id, 0, len, 101, kWindow).reread);
}

TEST_F(ReuseHistoryTest, AStableSubsetWhenTheDataExceedsTheBudget) {
  constexpr int kFiles = 400;
  const uint64_t dataset = kFiles * 16 * M, budget = dataset / 4;
  std::vector<std::set<int>> admitted(5);
  uint32_t now = 1000;
  for (int epoch = 1; epoch <= 4; ++epoch) {
    for (int n = 0; n < kFiles; ++n) {
      const int shuffled = (n * 149 + epoch * 37) % kFiles;  // another order each epoch
      if (read_whole(file(shuffled), now, budget)) admitted[epoch].insert(shuffled);
    }
    now += 30;
  }
  EXPECT_TRUE(admitted[1].empty()) << "the first epoch leaves the cache";
  EXPECT_EQ(h_->totals(now, kWindow).reread_bytes, dataset);
  EXPECT_EQ(h_->totals(now, kWindow).read_bytes, dataset);
  EXPECT_EQ(admitted[2], admitted[3]) << "the same files from the first re-read on";
  EXPECT_EQ(admitted[3], admitted[4]) << "the same files epoch after epoch";
  const double fraction = static_cast<double>(admitted[4].size()) / kFiles;
  EXPECT_NEAR(fraction, 0.25, 0.06) << "close to budget / dataset";
  // A smaller budget admits a subset of what a larger one does.
  for (int n = 0; n < kFiles; ++n) {
    const FileIdentity f = file(n);
    if (reuse_admits(f.key, 0, budget / 2, dataset)) {
      EXPECT_TRUE(admitted[4].count(n)) << n;
    }
  }
  EXPECT_FALSE(reuse_admits(file(1).key, 0, 0, dataset)) << "budget off: nothing";
  EXPECT_TRUE(reuse_admits(file(1).key, 0, dataset, dataset)) << "it all fits: everything";
}

TEST_F(ReuseHistoryTest, ForgetsAFileThatWasReplaced) {
  const std::string path = dir_ + "/data";
  int fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 16 * M), 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  const FileIdentity before = file_identity(st);
  h_->record(before, 0, before.size, 100, ReuseHistory::Outcome::kOffCache);
  EXPECT_TRUE(h_->lookup(before, 0, before.size, 101, kWindow).reread);
  // Rewritten in place (same size, new mtime): another generation.
  struct timespec times[2] = {{0, UTIME_OMIT}, {st.st_mtim.tv_sec + 5, 0}};
  ASSERT_EQ(futimens(fd, times), 0);
  ASSERT_EQ(fstat(fd, &st), 0);
  const FileIdentity rewritten = file_identity(st);
  EXPECT_NE(rewritten.key, before.key);
  EXPECT_FALSE(h_->lookup(rewritten, 0, rewritten.size, 102, kWindow).reread);
  close(fd);
  // Replaced by another file of the same name: another inode.
  ASSERT_EQ(unlink(path.c_str()), 0);
  fd = open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 16 * M), 0);
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_FALSE(h_->lookup(file_identity(st), 0, 16 * M, 103, kWindow).reread);
  close(fd);
  unlink(path.c_str());
}

TEST_F(ReuseHistoryTest, BoundedMemoryUnderAFloodOfFiles) {
  struct stat st;
  ASSERT_EQ(stat(table().c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), ReuseHistory::table_bytes());
  EXPECT_LE(ReuseHistory::table_bytes(), 300u * 1024);
  for (uint64_t n = 0; n < 100000; ++n) h_->record(file(n), 0, 16 * M, 100 + static_cast<uint32_t>(n / 1000),
                                                   ReuseHistory::Outcome::kOffCache);
  EXPECT_LE(h_->used_entries(), ReuseHistory::kEntries);
  EXPECT_GT(h_->used_entries(), ReuseHistory::kEntries / 2);
  ASSERT_EQ(stat(table().c_str(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), ReuseHistory::table_bytes()) << "the table never grows";
  // The newest files evicted the oldest: the last ones read are remembered.
  int remembered = 0;
  for (uint64_t n = 100000 - 100; n < 100000; ++n) remembered += h_->lookup(file(n), 0, 16 * M, 300, kWindow).reread;
  EXPECT_GE(remembered, 95);
  EXPECT_FALSE(h_->lookup(file(0), 0, 16 * M, 300, kWindow).reread);
}

TEST_F(ReuseHistoryTest, SharedByTwoProcesses) {
  const FileIdentity inherited = file(1), attached = file(2);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The mapping survives fork; a process that attaches anew sees the same table.
    h_->record(inherited, 0, inherited.size, 100, ReuseHistory::Outcome::kOffCache);
    ReuseHistory* own = ReuseHistory::attach(dir_.c_str());
    if (!own) _exit(2);
    own->record(attached, 0, attached.size, 100, ReuseHistory::Outcome::kOffCache);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(h_->lookup(inherited, 0, inherited.size, 110, kWindow).reread);
  EXPECT_TRUE(h_->lookup(attached, 0, attached.size, 110, kWindow).reread);
  EXPECT_TRUE(read_whole(attached, 120, 1ULL << 40)) << "read by the child, admitted in the parent";
}

TEST_F(ReuseHistoryTest, TheTableIsMappedInTheLibrarysOwnRegion) {
  // Not where the kernel would put it: in the highest free gap, often a
  // range the program has just unmapped, whose stale pointers it would make
  // valid (the differential bad_buffer_unmapped case).
  FILE* maps = fopen("/proc/self/maps", "r");
  ASSERT_NE(maps, nullptr);
  char line[1024];
  unsigned long start = 0, end = 0;
  bool found = false;
  while (fgets(line, sizeof line, maps))
    if (strstr(line, table().c_str()) && sscanf(line, "%lx-%lx", &start, &end) == 2) found = true;
  fclose(maps);
  ASSERT_TRUE(found) << "the table is not mapped";
  EXPECT_EQ(end - start, ReuseHistory::table_bytes());
  EXPECT_TRUE(in_private_region(reinterpret_cast<const void*>(start), end - start));
}

TEST_F(ReuseHistoryTest, RejectsATableThatIsNotOursOrNotWhole) {
  const std::string path = table();
  auto replace_with = [&](const std::string& bytes, mode_t mode) {
    unlink(path.c_str());
    const int fd = open(path.c_str(), O_CREAT | O_RDWR | O_EXCL, mode);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(fchmod(fd, mode), 0);
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
  };
  std::string whole(ReuseHistory::table_bytes(), '\0');
  replace_with(whole.substr(0, 4096), 0600);
  EXPECT_EQ(ReuseHistory::attach(dir_.c_str()), nullptr) << "wrong size";
  replace_with(whole, 0600);
  EXPECT_EQ(ReuseHistory::attach(dir_.c_str()), nullptr) << "no magic";
  // A whole table copied, then its version changed.
  ReuseHistory::detach(h_);
  h_ = nullptr;
  unlink(path.c_str());
  ReuseHistory* fresh = ReuseHistory::attach(dir_.c_str());
  ASSERT_NE(fresh, nullptr) << "a missing table is created";
  ReuseHistory::detach(fresh);
  int fd = open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  const uint32_t version = 99;
  ASSERT_EQ(pwrite(fd, &version, sizeof version, 8), 4);
  close(fd);
  EXPECT_EQ(ReuseHistory::attach(dir_.c_str()), nullptr) << "another version";
  // Readable by others: not ours alone.
  unlink(path.c_str());
  fresh = ReuseHistory::attach(dir_.c_str());
  ASSERT_NE(fresh, nullptr);
  ReuseHistory::detach(fresh);
  ASSERT_EQ(chmod(path.c_str(), 0644), 0);
  EXPECT_EQ(ReuseHistory::attach(dir_.c_str()), nullptr) << "mode 0644";
  // A symbolic link is never followed.
  unlink(path.c_str());
  const std::string real = dir_ + "/real";
  ASSERT_EQ(mkdir(real.c_str(), 0700), 0);
  fresh = ReuseHistory::attach(real.c_str());
  ASSERT_NE(fresh, nullptr);
  ReuseHistory::detach(fresh);
  char real_table[512];
  ReuseHistory::table_path(real.c_str(), real_table, sizeof real_table);
  ASSERT_EQ(symlink(real_table, path.c_str()), 0);
  EXPECT_EQ(ReuseHistory::attach(dir_.c_str()), nullptr) << "a symbolic link";
  unlink(real_table);
  rmdir(real.c_str());
  // A missing directory is made (0700); one that cannot be: no history.
  const std::string made = dir_ + "/made/below";
  fresh = ReuseHistory::attach(made.c_str());
  ASSERT_NE(fresh, nullptr) << "a missing directory";
  ReuseHistory::detach(fresh);
  struct stat st;
  ASSERT_EQ(stat(made.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  char made_table[512];
  ReuseHistory::table_path(made.c_str(), made_table, sizeof made_table);
  unlink(made_table);
  rmdir(made.c_str());
  rmdir((dir_ + "/made").c_str());
  const std::string plain = dir_ + "/plain";
  const int plain_fd = open(plain.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(plain_fd, 0);
  close(plain_fd);
  EXPECT_EQ(ReuseHistory::attach((plain + "/below").c_str()), nullptr) << "no directory: no history";
  unlink(plain.c_str());
  h_ = nullptr;
  unlink(path.c_str());
  h_ = ReuseHistory::attach(dir_.c_str());
  ASSERT_NE(h_, nullptr);
}

TEST_F(ReuseHistoryTest, ForgetEmptiesTheTableForEveryProcess) {
  const FileIdentity f = file(3);
  EXPECT_FALSE(read_whole(f, 100, 1ULL << 40));
  EXPECT_TRUE(read_whole(f, 110, 1ULL << 40)) << "read again: admitted";
  ReuseHistory* other = ReuseHistory::attach(dir_.c_str());  // another process's mapping
  ASSERT_NE(other, nullptr);
  other->forget();
  ReuseHistory::detach(other);
  EXPECT_EQ(h_->used_entries(), 0u);
  EXPECT_EQ(h_->totals(120, kWindow).read_bytes, 0u);
  EXPECT_FALSE(read_whole(f, 120, 1ULL << 40)) << "after forget: a first read";
}

TEST(ReuseBudget, AutoIsSevenEighthsOfTheRoomForPageCache) {
  EXPECT_EQ(reuse_budget(0, 1ULL << 30), 0u) << "off";
  EXPECT_EQ(reuse_budget(64 * M, 1ULL << 30), 64 * M) << "a size";
  EXPECT_EQ(reuse_budget(kReuseBudgetAuto, 800 * M), 700 * M);
  EXPECT_EQ(reuse_budget(kReuseBudgetAuto, ~0ULL), ~0ULL) << "no limit known";
}

}  // namespace
}  // namespace hybridio
