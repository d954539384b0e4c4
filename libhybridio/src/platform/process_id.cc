// process_id.cc - see process_id.h.
#include "platform/process_id.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <new>

#include "platform/private_mappings.h"

namespace hybridio {
namespace {

std::atomic<pid_t>* wiped_on_fork() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  char* mem = map_private(page, page);
  if (!mem) return nullptr;
  if (madvise(mem, page, MADV_WIPEONFORK) != 0) {
    unmap_private(mem, page);
    return nullptr;
  }
  return new (mem) std::atomic<pid_t>(0);
}

}  // namespace

pid_t current_pid() {
  static std::atomic<pid_t>* const cached = wiped_on_fork();
  if (!cached) return getpid();
  pid_t pid = cached->load(std::memory_order_relaxed);
  if (pid == 0) {
    pid = getpid();
    cached->store(pid, std::memory_order_relaxed);
  }
  return pid;
}

}  // namespace hybridio
