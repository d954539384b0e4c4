// ring_loop.cc - see ring_loop.h.
#include "io/ring_loop.h"

namespace hybridio {

bool RingLoop::withdraw_one(uint64_t* user_data) {
  // Without SQPOLL the kernel takes entries only inside io_uring_enter, and
  // a failed enter took none: everything between the kernel's head and
  // liburing's tail is still ours.  Entry i sits at sqes[i & mask] (liburing
  // fills the index array in order).  Stepping liburing's tail (and the
  // shared tail, when it was already published) back forgets the last one,
  // so a later submission on this ring never carries it.
  io_uring_sq& sq = ring_->sq;
  const unsigned head = *sq.khead;
  if (sq.sqe_tail == head) return false;
  const unsigned last = sq.sqe_tail - 1;
  *user_data = sq.sqes[last & sq.ring_mask].user_data;
  sq.sqe_tail = last;
  if (static_cast<int>(sq.sqe_head - last) > 0) sq.sqe_head = last;
  if (static_cast<int>(*sq.ktail - last) > 0) *sq.ktail = last;
  return true;
}

}  // namespace hybridio
