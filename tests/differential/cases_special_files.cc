// cases_special_files.cc - special files (issue 58 item 6): a file of the
// kernel's pseudo filesystems reached by a path the shim's path rules do
// not exclude.  sysfs answers each read itself, with at most a page, so a
// large read made as anything but the program's own call returns more.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "diff_case.h"
#include "io_helpers.h"

namespace hio_diff {

HIO_DIFF_CASE(sysfs_bind_mount, "58.6b",
              "/sys/kernel/btf bind-mounted under the scratch dir: 8 MiB read/pread/readv at 0 and 4096 "
              "return a page each, as sysfs gives it") {
  const std::string dir = opt.path("btf");
  if (mkdir(dir.c_str(), 0755) != 0) return harness_failure("mkdir");
  const char* sources[] = {"/sys/kernel/btf", "/sys/kernel/mm"};
  const char* source = nullptr;
  for (const char* s : sources)
    if (access(s, R_OK) == 0) {
      source = s;
      break;
    }
  if (!source) return out.skip("no /sys/kernel/btf or /sys/kernel/mm to bind-mount");
  if (mount(source, dir.c_str(), nullptr, MS_BIND, nullptr) != 0)
    return out.skip(std::string("bind mount refused: ") + strerror(errno));
  // The file: vmlinux (several MB) when there is BTF, else any readable one.
  const std::string file = dir + (strcmp(source, "/sys/kernel/btf") == 0 ? "/vmlinux" : "/transparent_hugepage/enabled");
  Mapping buf(8 * kMiB);
  const std::string ended = run_in_child([&] {
    int fd = open(file.c_str(), O_RDONLY);
    if (fd < 0 || !buf.ok()) return 2;
    auto show = [&](const std::string& key, ssize_t n) {
      out.put(key, rv(n) + ":" + hex(checksum(buf.data(), n > 0 ? static_cast<size_t>(n) : 0)));
    };
    show("read_at_0", read(fd, buf.data(), 8 * kMiB));
    show("read_next", read(fd, buf.data(), 8 * kMiB));
    out.put("pos", rv(lseek(fd, 0, SEEK_CUR)));
    show("pread_at_4096", pread(fd, buf.data(), 8 * kMiB, 4096));
    show("pread_at_0", pread(fd, buf.data(), 8 * kMiB, 0));
    iovec iov[2] = {{buf.data(), 4 * kMiB}, {buf.data() + 4 * kMiB, 4 * kMiB}};
    ssize_t n = preadv(fd, iov, 2, 4096);
    show("preadv_at_4096", n);
    FILE* f = fdopen(fd, "r");
    if (!f) return 3;
    n = static_cast<ssize_t>(fread(buf.data(), 1, 8 * kMiB, f));
    show("fread", n);
    fclose(f);
    return 0;
  });
  out.put("ended", ended);
  out.put("umount", umount2(dir.c_str(), MNT_DETACH) == 0);
  return kRan;
}

}  // namespace hio_diff
