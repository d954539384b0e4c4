// private_fd.h - descriptors the library's API opens for itself (the
// O_DIRECT twins of File::direct_fd(), file/file.h), kept out of the program's way.
// Under the LD_PRELOAD shim the library opens none (its twins live in
// io_uring fixed-file slots, pinned_request.h); the shim still asks here
// on close, which costs one atomic load while the registry is empty.
//
// A private descriptor is O_CLOEXEC and moved to a high number, below the
// soft RLIMIT_NOFILE, so that programs that number their own descriptors
// rarely meet it.  Programs that close every descriptor (daemons, ssh) may
// still close it: the LD_PRELOAD shim asks private_fd_owner() on every
// close/dup2/dup3 and tells the owner, which then forgets the descriptor
// and reopens a new one when it next needs it.  Thread-safe.
#pragma once

namespace hybridio {

// What owns a private descriptor (an open File, for its twin).
class PrivateFdOwner {
 public:
  // The program closed or replaced private descriptor `fd`: forget it
  // without closing it (see above).
  virtual void forget_direct_fd(int fd) = 0;

 protected:
  ~PrivateFdOwner() = default;
};

// Moves `fd` into the private range and records `owner`; returns the
// descriptor to use (the old one if it could not be moved), or -ENOMEM
// (`fd` closed) when there is no memory to record it.  Never throws.
int adopt_private_fd(int fd, PrivateFdOwner* owner);

// Forgets `fd` before the library closes it itself.
void release_private_fd(int fd);

// The owner of private descriptor `fd`, or nullptr.
PrivateFdOwner* private_fd_owner(int fd);

// Tells the owners of every private descriptor in [first, last] that the
// program is closing it (close_range, closefrom).
void forget_private_fds(unsigned first, unsigned last);

}  // namespace hybridio
