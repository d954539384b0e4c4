// library_thread.cc - see library_thread.h.
#include "platform/library_thread.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>

#include <cerrno>

#include "platform/private_mappings.h"

namespace hybridio {

void* LibraryThread::run(void* self) {
  auto* t = static_cast<LibraryThread*>(self);
  pthread_setname_np(pthread_self(), t->name_);
  t->body_(t->arg_);
  return nullptr;
}

int LibraryThread::start(const char* name, void (*body)(void*), void* arg) {
  if (!stack_) {
    char* p = map_private(kGuardBytes + kStackBytes, 4096);
    if (!p) return ENOMEM;
    mprotect(p, kGuardBytes, PROT_NONE);
    stack_ = p + kGuardBytes;
  }
  pthread_attr_t attr;
  if (int rc = pthread_attr_init(&attr); rc != 0) return rc;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstack(&attr, stack_, kStackBytes);
  // The new thread inherits the creator's mask: all blocked while it is made.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  name_ = name;
  body_ = body;
  arg_ = arg;
  pthread_t thread;
  const int rc = pthread_create(&thread, &attr, &LibraryThread::run, this);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  pthread_attr_destroy(&attr);
  return rc;
}

}  // namespace hybridio
