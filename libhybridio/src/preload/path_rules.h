// path_rules.h - which files the shim may accelerate, by path.
//
// HYBRIDIO_INCLUDE and HYBRIDIO_EXCLUDE are colon-separated lists of path
// prefixes ("/data/ckpt") or shell globs ("*.pt", "/scratch/*/tmp/*");
// a path is accelerated if it matches no exclude pattern and, when include
// patterns are given, at least one of them.  /proc, /sys and /dev are
// always excluded.  Per file, the extended attribute user.hybridio=off (or
// "buffered") opts a file out, e.g. `setfattr -n user.hybridio -v off f`.
#pragma once

#include <string>
#include <vector>

namespace hybridio::preload {

class PathRules {
 public:
  // Parses the two lists (either may be null or empty).
  PathRules(const char* include, const char* exclude);
  // Allocates nothing (it runs on the first large call of every descriptor).
  bool allows(const char* path) const;

 private:
  static bool matches(const std::string& pattern, const char* path);
  std::vector<std::string> include_, exclude_;
};

// True if the open file carries the user.hybridio=off|buffered opt-out.
bool opted_out(int fd);

// The kernel's pseudo filesystems, by statfs f_type: files whose reads and
// writes are made by kernel code per call (sysfs returns at most a page per
// read; procfs, debugfs, tracefs, configfs, securityfs, cgroup and cgroup2,
// bpf, pstore, efivarfs, selinuxfs, smackfs, devpts, mqueue, binfmt_misc,
// fusectl, resctrl, nsfs, usbdevfs, xenfs, openpromfs).  Their files are
// left to libc whatever path reaches them (a bind mount, a symlink, a
// chroot), so every call is the program's own.  The name of the type, or
// null when `f_type` is not one.
const char* kernel_pseudo_fs(unsigned long f_type);

}  // namespace hybridio::preload
