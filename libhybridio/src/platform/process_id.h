// process_id.h - this process's id, without a system call each time.
//
// getpid() is a system call (glibc does not cache the id since 2.25), which
// costs a guest's hypervisor exit on a paravirtualised machine; the checked
// copy (checked_copy.h) asks for the id on every copy.
//
// The id is kept in a page of the library's own marked MADV_WIPEONFORK,
// which the kernel zeroes in every child that does not share the parent's
// memory - fork(), and clone() without CLONE_VM however it is called, with
// no atfork handler involved - and a zero means "ask the kernel".  A vfork
// child shares the page, as it shares all of its parent's memory, and sees
// the parent's id: callers that must tell it apart (the shim's
// in_vfork_child) ask getpid().  Without the page (no memory, a kernel
// before 4.14) every call asks getpid().  Thread-safe and lock-free after
// the first call.
#pragma once

#include <sys/types.h>

namespace hybridio {

pid_t current_pid();

}  // namespace hybridio
