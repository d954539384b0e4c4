// library_thread.h - starting one of the library's own threads (the
// drop-behind worker, the write-behind writer) so that the program cannot
// tell it is there.
//
//  - Every signal is blocked in it from its first instruction on: the
//    program's signals go to the program's threads, and none of the
//    program's handlers ever runs on a thread of ours.
//  - Its stack comes from the library's private region (private_mappings.h),
//    never from a range the program has just unmapped: glibc's default 8 MiB
//    stack, an ordinary mmap, took the range the differential case
//    bad_buffer_unmapped had unmapped, and the program's write from there
//    succeeded where it must fail with EFAULT.  1 MiB (only the touched
//    pages cost memory: glibc puts the thread's static TLS there too, and a
//    large program's libraries make it big) over a 64 KiB guard.
//  - Detached and named, so that it shows for what it is in top and gdb.
//
// fork(): a child has none of the parent's threads.  The stack stays mapped
// (the child's copy is unused there) and a thread the child starts with the
// same LibraryThread runs on it.
#pragma once

#include <pthread.h>

#include "platform/fork_order.h"

namespace hybridio {

class LibraryThread {
 public:
  static constexpr unsigned long kStackBytes = 1UL << 20;
  static constexpr unsigned long kGuardBytes = 64UL << 10;

  // Starts `body(arg)` on a new thread named `name` (a literal of 15
  // characters at most); 0, or the errno why not (no memory for the stack,
  // no thread).  One thread at a time per LibraryThread, which must live as
  // long as it runs.
  int start(const char* name, void (*body)(void*), void* arg);

 private:
  static void* run(void* self);

  char* stack_ = nullptr;  // above its guard; mapped by the first start()
  const char* name_ = nullptr;
  void (*body_)(void*) = nullptr;
  void* arg_ = nullptr;
};

// The process's one T, for a class that owns a library thread: made on
// first use and never destroyed (its thread may still run while the
// process exits), with T's before_fork(), after_fork_parent() and
// after_fork_child() installed at T::kForkLevel (fork_order.h) when it is made.
template <class T>
T& process_instance() {
  static T* const instance = [] {
    T* made = new T();
    ForkHandlers h;
    h.prepare = [] { process_instance<T>().before_fork(); };
    h.parent = [] { process_instance<T>().after_fork_parent(); };
    h.child = [] { process_instance<T>().after_fork_child(); };
    install_fork_handlers(T::kForkLevel, h);
    return made;
  }();
  return *instance;
}

}  // namespace hybridio
