// real_faults_test.cc - the fault matrix's real faults (issue 14, item 4):
// the kernel, not an injector, produces them, on every write path of the
// engine (buffered, direct, split, bounce, parallel io_uring chunks,
// write-behind, RWF_DONTCACHE).  The injected cells are in
// libhybridio/src/io/fault_matrix_test.cc.
//
//  - RLIMIT_FSIZE (EFBIG and SIGXFSZ), the read-only filesystem (EROFS,
//    ext4 errors=remount-ro after an error) and a shut-down filesystem
//    (EIO on everything): differential - the same calls on a twin file with
//    plain system calls must give the same results, the same number of
//    SIGXFSZ and the same bytes.
//  - A full filesystem (ENOSPC) and a user over quota (EDQUOT, ext4 with
//    the quota feature, the writer an unprivileged child): the space left
//    differs from run to run, so the POSIX properties are asserted - short
//    counts, then the errno; the file holds exactly the reported bytes.
//
// The filesystems are small ext4 loop images (root, mkfs.ext4); a test that
// cannot have one skips and says why.  The shim's side of RLIMIT_FSIZE
// (SIGXFSZ under LD_PRELOAD, counted against the plain program) is the
// differential case rlimit_fsize (tests/differential/cases_limits.cc).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/quota.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "expect_bytes.h"
#include "file_bytes.h"
#include "hybridio/hybridio.h"
#include "temp_dir.h"

using hybridio::testing::reported_bytes;
using hybridio::testing::show_results;
using hybridio::testing::write_file_durably;

namespace {

using hybridio::testing::TempDir;

constexpr uint64_t K = 1024, M = 1024 * 1024;

// ---- the paths ------------------------------------------------------------

struct WritePath {
  const char* name;
  hio_mode mode;
  int uring;
  int write_behind;
  uint64_t offset_delta;  // a misaligned start: head, body and tail
  uint64_t mem_delta;     // misaligned memory: the body is staged
};

constexpr WritePath kPaths[] = {
    {"buffered", HIO_MODE_BUFFERED, 0, 0, 0, 0},  {"direct", HIO_MODE_DIRECT, 0, 0, 0, 0},
    {"split", HIO_MODE_DIRECT, 0, 0, 100, 0},     {"bounce", HIO_MODE_DIRECT, 0, 0, 0, 512},
    {"parallel", HIO_MODE_DIRECT, 1, 0, 0, 0},    {"parallel_split", HIO_MODE_DIRECT, 1, 0, 100, 0},
    {"writebehind", HIO_MODE_DIRECT, 0, 1, 0, 0}, {"writebehind_uring", HIO_MODE_DIRECT, 1, 1, 0, 0},
    {"dontcache", HIO_MODE_DONTCACHE, 0, 0, 0, 0},
};

// Process-wide settings for one path, restored at the end of the test.
class PathSettings {
 public:
  PathSettings() {
    hio_engine_get(&engine_);
    hio_policy_get(&policy_);
  }
  ~PathSettings() {
    hio_engine_set(&engine_);
    hio_policy_set(&policy_);
  }
  void use(const WritePath& p) const {
    hio_policy_config c;
    hio_policy_config_defaults(&c);
    c.mode = p.mode;
    hio_policy_set(&c);
    hio_engine_config e = engine_;
    e.queue_depth = 4;
    e.chunk_size = 64 * K;
    e.uring = p.uring;
    e.write_behind = p.write_behind;
    e.write_behind_limit = 16 * M;
    e.read_ahead = 0;
    hio_engine_set(&e);
  }

 private:
  hio_engine_config engine_{};
  hio_policy_config policy_{};
};

// Page-aligned memory with `delta` bytes in front.
struct Memory {
  explicit Memory(uint64_t len, uint64_t delta) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, len + delta + 4096) == 0) raw.reset(static_cast<char*>(p));
    data = raw ? raw.get() + delta : nullptr;
  }
  std::unique_ptr<char, decltype(&free)> raw{nullptr, free};
  char* data = nullptr;
};

// Calls as a POSIX program does: again from where the last call ended,
// until done or an error.
std::vector<ssize_t> write_all(const std::function<ssize_t(uint64_t done)>& call, uint64_t len) {
  std::vector<ssize_t> results;
  uint64_t done = 0;
  while (done < len && results.size() < 64) {
    const ssize_t n = call(done);
    results.push_back(n);
    if (n <= 0) break;
    done += static_cast<uint64_t>(n);
  }
  return results;
}

// The same request plainly and through the engine, on twin files that hold
// the same bytes: results, fsync, close.
struct Twin {
  std::vector<ssize_t> results;
  int fsync_rc = 0;
  int close_rc = 0;
};

Twin plain_writes(int fd, const char* buf, uint64_t len, uint64_t off) {
  Twin t;
  t.results = write_all(
      [&](uint64_t d) {
        ssize_t n = ::pwrite(fd, buf + d, len - d, static_cast<off_t>(off + d));
        return n < 0 ? -static_cast<ssize_t>(errno) : n;
      },
      len);
  t.fsync_rc = ::fsync(fd) == 0 ? 0 : -errno;
  t.close_rc = ::close(fd) == 0 ? 0 : -errno;
  return t;
}

Twin engine_writes(hio_file* f, const char* buf, uint64_t len, uint64_t off) {
  Twin t;
  t.results = write_all([&](uint64_t d) { return hio_pwrite(f, buf + d, len - d, static_cast<off_t>(off + d)); }, len);
  t.fsync_rc = hio_fsync(f);
  t.close_rc = hio_close(f);
  return t;
}

// Write-behind starts once a direct write has worked on the file.
void prove_direct(hio_file* f, const WritePath& p, const std::vector<char>& old) {
  if (!p.write_behind) return;
  Memory m(M, 0);
  memcpy(m.data, old.data(), M);
  ASSERT_EQ(hio_pwrite(f, m.data, M, 0), static_cast<ssize_t>(M));
}

// ---- a small ext4 loop filesystem ------------------------------------------

int run(const std::string& cmd) {
  const int rc = system((cmd + " >/dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

class LoopFs {
 public:
  // A fresh ext4 of `mib` MiB; `mkfs_opts`, `mount_opts` as for the tools.
  LoopFs(const TempDir& dir, int mib, const std::string& mkfs_opts, const std::string& mount_opts)
      : image_(dir.file("fs.img")), mnt_(dir.file("mnt")) {
    if (geteuid() != 0) {
      why_ = "needs root to mount a loop filesystem";
      return;
    }
    if (run("command -v mkfs.ext4") != 0) {
      why_ = "mkfs.ext4 not installed";
      return;
    }
    if (run("truncate -s " + std::to_string(mib) + "M " + image_) != 0 ||
        run("mkfs.ext4 -q -F -m 0 " + mkfs_opts + " " + image_) != 0 || mkdir(mnt_.c_str(), 0755) != 0) {
      why_ = "mkfs.ext4 " + mkfs_opts + " failed";
      return;
    }
    if (run("mount -o loop" + (mount_opts.empty() ? "" : "," + mount_opts) + " " + image_ + " " + mnt_) != 0) {
      why_ = "mount -o loop," + mount_opts + " failed";
      return;
    }
    mounted_ = true;
    chmod(mnt_.c_str(), 0777);
    if (char* real = realpath(mnt_.c_str(), nullptr)) {  // as /proc/self/mounts shows it
      mnt_ = real;
      free(real);
    }
  }
  ~LoopFs() {
    if (mounted_ && run("umount " + mnt_) != 0) run("umount -l " + mnt_);
    unlink(image_.c_str());
  }
  bool ok() const { return mounted_; }
  const std::string& why() const { return why_; }
  std::string file(const std::string& name) const { return mnt_ + "/" + name; }
  const std::string& mnt() const { return mnt_; }
  // The block device, e.g. /dev/loop3.
  std::string device() const {
    std::ifstream mounts("/proc/self/mounts");
    std::string dev, where, rest;
    while (mounts >> dev >> where && std::getline(mounts, rest))
      if (where == mnt_) return dev;
    return "";
  }
  uint64_t free_bytes() const {
    struct statvfs v;
    return statvfs(mnt_.c_str(), &v) == 0 ? static_cast<uint64_t>(v.f_bavail) * v.f_frsize : 0;
  }

 private:
  std::string image_, mnt_, why_;
  bool mounted_ = false;
};

// ---- RLIMIT_FSIZE: EFBIG and SIGXFSZ ---------------------------------------

std::atomic<int> g_sigxfsz{0};
void count_sigxfsz(int) { g_sigxfsz.fetch_add(1); }

// A request across the limit: the part below it, then EFBIG with one
// SIGXFSZ - plain and through the engine alike, on every path.
TEST(RealFaults, RlimitFsizeEfbigAndOneSigxfszPerPath) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  PathSettings settings;
  struct sigaction sa = {}, saved_sa = {};
  sa.sa_handler = count_sigxfsz;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGXFSZ, &sa, &saved_sa), 0);
  rlimit saved_rl{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved_rl), 0);
  constexpr uint64_t kLimit = 3 * M + 12 * K, kLen = 2 * M;
  const std::vector<char> old = hybridio::testing::random_bytes(2 * M, 1);
  const std::vector<char> fresh = hybridio::testing::random_bytes(kLen, 2);

  for (const WritePath& p : kPaths) {
    SCOPED_TRACE(p.name);
    settings.use(p);
    const std::string engine_path = dir.file(std::string("engine_") + p.name);
    const std::string plain_path = dir.file(std::string("plain_") + p.name);
    ASSERT_TRUE(write_file_durably(engine_path, old));
    ASSERT_TRUE(write_file_durably(plain_path, old));
    Memory m(kLen, p.mem_delta);
    memcpy(m.data, fresh.data(), kLen);
    const uint64_t off = 2 * M + p.offset_delta;
    hio_file* f = nullptr;
    ASSERT_EQ(hio_open(engine_path.c_str(), O_RDWR, 0, &f), 0);
    prove_direct(f, p, old);
    int pfd = ::open(plain_path.c_str(), O_RDWR);
    ASSERT_GE(pfd, 0);
    if (p.write_behind) {
      ASSERT_EQ(::pwrite(pfd, old.data(), M, 0), static_cast<ssize_t>(M));
    }

    rlimit rl = saved_rl;
    rl.rlim_cur = kLimit;
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &rl), 0);
    g_sigxfsz = 0;
    const Twin plain = plain_writes(pfd, m.data, kLen, off);
    const int plain_signals = g_sigxfsz.exchange(0);
    const Twin engine = engine_writes(f, m.data, kLen, off);
    const int engine_signals = g_sigxfsz.exchange(0);
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &saved_rl), 0);

    EXPECT_EQ(show_results(plain.results), show_results(std::vector<ssize_t>{static_cast<ssize_t>(kLimit - off), -EFBIG})) << "the kernel's answer";
    EXPECT_EQ(plain_signals, 1);
    EXPECT_EQ(show_results(engine.results), show_results(plain.results)) << "results";
    EXPECT_EQ(engine_signals, plain_signals) << "SIGXFSZ lost or doubled";
    EXPECT_EQ(engine.fsync_rc, plain.fsync_rc);
    EXPECT_EQ(engine.close_rc, plain.close_rc);
    EXPECT_TRUE(hybridio::testing::file_holds(engine_path, hybridio::testing::file_bytes(plain_path))) << "the bytes";
  }
  sigaction(SIGXFSZ, &saved_sa, nullptr);
}

// ---- a full filesystem: ENOSPC ----------------------------------------------

// Checks a sequence that ran out of space: short counts, then ENOSPC, and
// the file exactly the reported bytes at `off` (zeros before them).
void expect_ran_out(const std::vector<ssize_t>& results, const std::string& path, uint64_t off, const char* fresh,
                    uint64_t len, int err) {
  ASSERT_FALSE(results.empty());
  EXPECT_EQ(results.back(), -err) << "ends with the errno: " << show_results(results);
  const uint64_t got = reported_bytes(results);
  EXPECT_LT(got, len) << show_results(results);
  std::vector<char> model(off + got, 0);
  if (got) memcpy(model.data() + off, fresh, got);  // got == 0: model may have no storage at all
  EXPECT_TRUE(hybridio::testing::file_holds(path, model)) << "exactly the " << got << " bytes reported";
}

// The filesystem with `leave` bytes free: a filler takes the rest.
bool fill(const LoopFs& fs, uint64_t leave) {
  const std::string filler = fs.file("filler");
  unlink(filler.c_str());
  ::sync();
  const uint64_t free = fs.free_bytes();
  if (free <= leave) return false;
  int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  const bool ok = fallocate(fd, 0, 0, static_cast<off_t>((free - leave) / M * M)) == 0;
  ::close(fd);
  return ok;
}

TEST(RealFaults, FullFilesystemShortCountThenEnospcPerPath) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LoopFs fs(dir, 64, "", "");
  if (!fs.ok()) GTEST_SKIP() << fs.why();
  PathSettings settings;
  constexpr uint64_t kLen = 12 * M;
  const std::vector<char> fresh = hybridio::testing::random_bytes(kLen, 3);
  for (const WritePath& p : kPaths) {
    SCOPED_TRACE(p.name);
    settings.use(p);
    const std::string path = fs.file("target");
    unlink(path.c_str());
    ASSERT_TRUE(fill(fs, 6 * M)) << "could not leave 6 MiB free";
    Memory m(kLen, p.mem_delta);
    memcpy(m.data, fresh.data(), kLen);
    hio_file* f = nullptr;
    ASSERT_EQ(hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f), 0);
    if (p.write_behind) {
      // Queued: the write returns at once; ENOSPC comes at fsync, once.
      const std::vector<char> zeros(M, 0);
      prove_direct(f, p, zeros);
      const ssize_t n = hio_pwrite(f, m.data, 8 * M, static_cast<off_t>(M));
      EXPECT_EQ(n, static_cast<ssize_t>(8 * M)) << "queued";
      EXPECT_EQ(hio_fsync(f), -ENOSPC) << "deferred to fsync";
      EXPECT_EQ(hio_fsync(f), 0) << "reported once";
      EXPECT_EQ(hio_close(f), 0);
      // The size is the write's (set before it returned); what did not land
      // reads as zeros, never as anything else.
      const std::vector<char> disk = hybridio::testing::file_bytes(path);
      ASSERT_EQ(disk.size(), 9 * M);
      uint64_t landed = 0;
      for (uint64_t i = 0; i < 8 * M; ++i) {
        const char b = disk[M + i];
        ASSERT_TRUE(b == fresh[i] || b == 0) << "byte " << M + i;
        landed += b == fresh[i] && b != 0;
      }
      EXPECT_LT(landed, 8 * M) << "the filesystem was full";
      continue;
    }
    const uint64_t off = p.offset_delta;
    const std::vector<ssize_t> results =
        write_all([&](uint64_t d) { return hio_pwrite(f, m.data + d, kLen - d, static_cast<off_t>(off + d)); }, kLen);
    EXPECT_EQ(hio_fsync(f), 0);
    EXPECT_EQ(hio_close(f), 0);
    expect_ran_out(results, path, off, fresh.data(), kLen, ENOSPC);
    // With 6 MiB free the page cache fills what is left; one direct system
    // call for the whole body fails whole, as a plain O_DIRECT write does
    // (the engine's synchronous direct and bounce paths, outside the shim).
    if (p.mode != HIO_MODE_DIRECT || p.uring || p.offset_delta) {
      EXPECT_GT(reported_bytes(results), 0u) << "6 MiB were free";
    }
  }
}

// ---- over quota: EDQUOT ------------------------------------------------------

// In an unprivileged child (root ignores block limits): one path's writes
// until EDQUOT.  Exit status 0 when every property held; the failures on stderr.
int quota_child(const LoopFs& fs, const WritePath& p, const std::vector<char>& fresh, uint64_t len) {
  if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) return 90;
  PathSettings settings;
  settings.use(p);
  const std::string path = fs.file(std::string("quota_") + p.name);
  Memory m(len, p.mem_delta);
  memcpy(m.data, fresh.data(), len);
  hio_file* f = nullptr;
  if (hio_open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644, &f) != 0) return 91;
  const std::vector<ssize_t> results =
      write_all([&](uint64_t d) { return hio_pwrite(f, m.data + d, len - d, static_cast<off_t>(p.offset_delta + d)); }, len);
  const int fsync_rc = hio_fsync(f), close_rc = hio_close(f);
  const uint64_t got = reported_bytes(results);
  std::vector<char> model(p.offset_delta + got, 0);
  memcpy(model.data() + p.offset_delta, fresh.data(), got);
  const bool bytes_ok = hybridio::testing::file_bytes(path) == model;
  const bool ok = !results.empty() && results.back() == -EDQUOT && got > 0 && got < len && fsync_rc == 0 &&
                  close_rc == 0 && bytes_ok;
  if (!ok)
    fprintf(stderr, "%s: results %s, fsync %d, close %d, file %s the %llu reported bytes\n", p.name,
            show_results(results).c_str(), fsync_rc, close_rc, bytes_ok ? "holds" : "does not hold",
            static_cast<unsigned long long>(got));
  return ok ? 0 : 1;
}

TEST(RealFaults, OverQuotaShortCountThenEdquotPerPath) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LoopFs fs(dir, 64, "-O quota", "usrquota");
  if (!fs.ok()) GTEST_SKIP() << fs.why() << " (ext4 quotas unavailable: EDQUOT is covered by injection only)";
  // 6 MiB for user 65534.
  struct dqblk q{};
  q.dqb_bhardlimit = q.dqb_bsoftlimit = 6 * M / 1024;  // in 1 KiB blocks
  q.dqb_valid = QIF_BLIMITS;
  const std::string dev = fs.device();
  if (quotactl(QCMD(Q_SETQUOTA, USRQUOTA), dev.c_str(), 65534, reinterpret_cast<caddr_t>(&q)) != 0)
    GTEST_SKIP() << "quotactl(Q_SETQUOTA) on " << dev << ": " << strerror(errno);
  constexpr uint64_t kLen = 12 * M;
  const std::vector<char> fresh = hybridio::testing::random_bytes(kLen, 4);
  for (const WritePath& p : kPaths) {
    if (p.write_behind) continue;  // deferred like ENOSPC above; a child's queue is its own
    SCOPED_TRACE(p.name);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(quota_child(fs, p, fresh, kLen));
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's writes (stderr says which property)";
    unlink(fs.file(std::string("quota_") + p.name).c_str());
  }
}

// ---- a filesystem gone read-only or shut down: EROFS, EIO -------------------

// Twin files per path, opened before the filesystem goes bad, then the same
// writes plainly and through the engine: the same results, fsync and close.
void differential_after(const LoopFs& fs, const std::function<bool()>& go_bad, const char* what) {
  PathSettings settings;
  constexpr uint64_t kLen = 2 * M;
  const std::vector<char> old = hybridio::testing::random_bytes(2 * M, 5);
  const std::vector<char> fresh = hybridio::testing::random_bytes(kLen, 6);
  struct Open {
    hio_file* f = nullptr;
    int pfd = -1;
  };
  std::vector<Open> files(std::size(kPaths));
  for (size_t i = 0; i < files.size(); ++i) {
    settings.use(kPaths[i]);
    const std::string e = fs.file(std::string("engine_") + kPaths[i].name);
    const std::string pl = fs.file(std::string("plain_") + kPaths[i].name);
    ASSERT_TRUE(write_file_durably(e, old));
    ASSERT_TRUE(write_file_durably(pl, old));
    ASSERT_EQ(hio_open(e.c_str(), O_RDWR, 0, &files[i].f), 0);
    prove_direct(files[i].f, kPaths[i], old);
    files[i].pfd = ::open(pl.c_str(), O_RDWR);
    ASSERT_GE(files[i].pfd, 0);
  }
  ::sync();
  ASSERT_TRUE(go_bad()) << what;
  for (size_t i = 0; i < files.size(); ++i) {
    const WritePath& p = kPaths[i];
    SCOPED_TRACE(p.name);
    settings.use(p);
    Memory m(kLen, p.mem_delta);
    memcpy(m.data, fresh.data(), kLen);
    // Past the end, as a checkpoint writer appends: the filesystem must allocate.
    const uint64_t off = M + p.offset_delta;
    const Twin plain = plain_writes(files[i].pfd, m.data, kLen, off);
    const Twin engine = engine_writes(files[i].f, m.data, kLen, off);
    EXPECT_LT(reported_bytes(plain.results), kLen) << what << " did not fail plain writes: " << show_results(plain.results);
    EXPECT_EQ(show_results(engine.results), show_results(plain.results)) << "results";
    EXPECT_EQ(engine.fsync_rc, plain.fsync_rc) << "fsync";
    EXPECT_EQ(engine.close_rc, plain.close_rc) << "close";
  }
}

TEST(RealFaults, ReadOnlyFilesystemEroFsLikePlainWrites) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LoopFs fs(dir, 64, "", "errors=remount-ro");
  if (!fs.ok()) GTEST_SKIP() << fs.why();
  const std::string dev = fs.device();
  const std::string trigger = "/sys/fs/ext4/" + dev.substr(dev.rfind('/') + 1) + "/trigger_fs_error";
  if (access(trigger.c_str(), W_OK) != 0) GTEST_SKIP() << trigger << " is not there: no way to remount read-only under open files";
  // An ext4 error remounts the filesystem read-only with the files open
  // (mount -o remount,ro refuses while files are open for writing).
  differential_after(
      fs,
      [&] {
        std::ofstream(trigger) << "fault matrix: read-only remount\n";
        // Linux 6.x marks it emergency_ro (statvfs still says rw): ask by creating a file.
        const int probe = ::open(fs.file("probe").c_str(), O_WRONLY | O_CREAT, 0644);
        if (probe >= 0) ::close(probe);
        return probe < 0 && errno == EROFS;
      },
      "the read-only remount");
}

TEST(RealFaults, ShutDownFilesystemEioLikePlainWrites) {
  TempDir dir;
  ASSERT_TRUE(dir.ok());
  LoopFs fs(dir, 64, "", "");
  if (!fs.ok()) GTEST_SKIP() << fs.why();
  // EXT4_IOC_SHUTDOWN (_IOR('X', 125, __u32)), without flushing the log: every
  // later I/O of the filesystem fails with EIO, as after a dead device.
  constexpr unsigned long kShutdown = _IOR('X', 125, uint32_t);
  constexpr uint32_t kNoLogFlush = 2;
  differential_after(
      fs,
      [&] {
        int fd = ::open(fs.mnt().c_str(), O_RDONLY | O_DIRECTORY);
        uint32_t flags = kNoLogFlush;
        const bool ok = fd >= 0 && ioctl(fd, kShutdown, &flags) == 0;
        if (fd >= 0) ::close(fd);
        return ok;
      },
      "the shutdown");
}

}  // namespace
