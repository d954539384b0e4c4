// copy_offload.h - copies between files that the kernel would do without
// the shim seeing a byte: copy_file_range(2) and sendfile(2).
//
// coreutils 9 cp and cat copy with copy_file_range, Python's shutil with
// sendfile.  What the kernel does best stays with the kernel: a
// copy_file_range it accepts (a reflink on xfs or btrfs, a server-side
// copy on NFS, a splice within one filesystem) is its own.  Two cases take
// the hybrid path instead, in chunks through the shim's own read and
// write, each decided by the policy like any other request:
//  - copy_file_range between filesystems, which the kernel refuses with
//    EXDEV, and after which the program would copy with small reads and
//    writes through the page cache.  The shim does the copy and returns its
//    count, as Linux 5.3-5.18 did for every such call: the bytes, sizes and
//    positions are the fallback's, only the answer to that first call
//    differs (docs/preload.md);
//  - sendfile from one regular file to another, which the kernel would
//    splice through the page cache on both sides.  The result is the
//    kernel's in every respect.
// Only copies to a file the shim accelerates are taken (not one its path
// rules or user.hybridio=off leave alone).  Both return what the kernel would: the bytes copied (a failure after
// some bytes reports those), or -errno when nothing was.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace hybridio::preload {

// The shim's own read and write calls (accelerated when they can be), with
// libc's conventions: -1 and errno on failure.
struct CopyIo {
  ssize_t (*read)(int fd, void* buf, size_t n);
  ssize_t (*write)(int fd, const void* buf, size_t n);
  ssize_t (*pread)(int fd, void* buf, size_t n, off_t at);
  ssize_t (*pwrite)(int fd, const void* buf, size_t n, off_t at);
};

// copy_file_range after the kernel answered EXDEV: copies up to `len`
// bytes; offsets as copy_file_range takes them (null: the file position,
// which then advances).  Returns false when the copy is not worth taking
// (small, not two regular files, a target left alone); the caller then
// returns EXDEV.
bool copy_across_filesystems(int in_fd, off_t* in_off, int out_fd, off_t* out_off, size_t len,
                             const CopyIo& io, ssize_t* out);

// sendfile(out_fd, in_fd, offset, count) between two regular files.
// Returns false when the call is left to the kernel: small, another kind
// of file, or anything the kernel would refuse (it gives its own error).
bool sendfile_between_files(int out_fd, int in_fd, off_t* offset, size_t count, const CopyIo& io,
                            ssize_t* out);

}  // namespace hybridio::preload
