// fork_order.h - the library's and the shim's fork(2) handlers, run in one
// global order.
//
// Every part that must take a lock before fork (so that no child inherits
// it held by a thread that does not exist there), or reset state in the
// child, installs its handlers at its level here; one pthread_atfork(3)
// registration, made on the first install, runs them all:
//  - prepare: levels in increasing order;
//  - parent and child: levels in decreasing order.
// A lock of a lower level is the outer one: a thread may wait for a
// higher level's lock while it holds a lower level's, never the reverse.
// That is the one lock order of fork, whatever order the parts were first
// used in (pthread_atfork itself runs prepare handlers in the reverse order
// of their registration, which lazy registration would make arbitrary).
//
// The order, outermost first:
//  kWriteBehindDrain  write_behind.cc: waits until the queued writes are
//                     done (holds no lock afterwards; its writer thread may
//                     need any lock below while it drains)
//  kExactCalls        preload/exact_call.cc: every inode lock, held by a
//                     thread for a whole intercepted call, inside which it
//                     takes the locks below
//  kMappedFiles       preload/shim.cc: the list of mapped inodes
//  kPrivateFds        private_fd.cc: the registry of the library's twins
//  kDropBehind        drop_behind.cc: the drop-behind worker's queue lock
//  kLeases            lease_guard.cc: child only (no library open is in
//                     flight in the child)
//  kRuntime           runtime.cc: child only (counters, learner locks)
//  kRings             uring_engine.cc: child only (the parent's rings are
//                     not the child's)
// A level installed while a fork is under way takes part from the next
// fork on: prepare notes which levels it ran, and only those are released.
#pragma once

namespace hybridio {

enum class ForkLevel : unsigned {
  kWriteBehindDrain,
  kExactCalls,
  kMappedFiles,
  kPrivateFds,
  kDropBehind,
  kLeases,
  kRuntime,
  kRings,
  kCount
};

struct ForkHandlers {
  void (*prepare)() = nullptr;
  void (*parent)() = nullptr;
  void (*child)() = nullptr;
};

// Installs `h` at `level`; the first install of a level stands.  Callers
// install each level once (call_once or equivalent).
void install_fork_handlers(ForkLevel level, const ForkHandlers& h);

}  // namespace hybridio
