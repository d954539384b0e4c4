/* page_cache: WRENCH-style page cache of one node (see page_cache.hpp). */
#include "page_cache.hpp"
#include "hybridio/policy.h"

#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <mutex>

XBT_LOG_NEW_DEFAULT_CATEGORY(hio_pagecache, "hybridio-sim page cache");

namespace sg4 = simgrid::s4u;

namespace hiosim {

namespace {
std::pair<int, long long> key_of(int file, double offset)
{
  return {file, std::llround(offset)};
}
} // namespace

PageCache::PageCache(const CacheParams& cp, double capacity, double total_memory, bool eager, Writeback wb)
    : cp_(cp), capacity_(capacity), total_memory_(total_memory), eager_(eager), wb_(std::move(wb))
{
  mutex_    = sg4::Mutex::create();
  dirty_cv_ = sg4::ConditionVariable::create();
  clean_cv_ = sg4::ConditionVariable::create();
}

void PageCache::insert(std::unique_ptr<Block> b)
{
  Block* raw = b.get();
  auto k = key_of(raw->file, raw->offset);
  auto old = blocks_.find(k);
  if (old != blocks_.end())
    remove(old->second.get());
  raw->active = false;
  inactive_.push_back(raw);
  raw->pos = std::prev(inactive_.end());
  cached_ += raw->bytes;
  if (raw->dirty) {
    dirty_ += raw->bytes;
    dirty_order_.push_back(raw);
  }
  blocks_[k] = std::move(b);
}

void PageCache::remove(Block* b)
{
  (b->active ? active_ : inactive_).erase(b->pos);
  if (b->active)
    active_bytes_ -= b->bytes;
  cached_ -= b->bytes;
  if (b->dirty) {
    dirty_ -= b->bytes;
    dirty_order_.remove(b);
  }
  blocks_.erase(key_of(b->file, b->offset));
}

void PageCache::touch(Block* b)
{
  (b->active ? active_ : inactive_).erase(b->pos);
  if (not b->active)
    active_bytes_ += b->bytes;
  b->active = true;
  active_.push_back(b);
  b->pos = std::prev(active_.end());
  balance();
}

// Linux keeps the active list at most twice the inactive one.
void PageCache::balance()
{
  while (not active_.empty() && active_bytes_ > 2.0 * (cached_ - active_bytes_)) {
    Block* b = active_.front();
    active_.pop_front();
    active_bytes_ -= b->bytes;
    b->active = false;
    inactive_.push_back(b);
    b->pos = std::prev(inactive_.end());
  }
}

bool PageCache::evict_one()
{
  for (auto* list : {&inactive_, &active_})
    for (Block* b : *list)
      if (not b->dirty && not b->writeback) {
        remove(b);
        return true;
      }
  return false;
}

void PageCache::make_room(double bytes)
{
  while (capacity_ - cached_ < bytes && evict_one()) {
  }
}

std::vector<PageCache::Block*> PageCache::oldest_dirty(double bytes, bool only_expired, double now)
{
  std::vector<Block*> out;
  double sum = 0;
  for (Block* b : dirty_order_) {
    if (sum >= bytes)
      break;
    if (b->writeback)
      continue;
    if (only_expired && now - b->dirty_since < cp_.dirty_expire)
      break;
    out.push_back(b);
    sum += b->bytes;
  }
  return out;
}

void PageCache::write_back(const std::vector<Block*>& blocks)
{
  if (blocks.empty())
    return;
  for (Block* b : blocks)
    b->writeback = true;
  wb_(blocks);
  for (Block* b : blocks) {
    b->writeback = false;
    written_back_ += b->bytes;
    if (b->dirty) {
      b->dirty = false;
      dirty_ -= b->bytes;
      dirty_order_.remove(b);
    }
    if (b->drop_after) {
      urgent_--;
      remove(b);
    }
  }
  clean_cv_->notify_all();
}

void PageCache::reserve_dirty(double bytes)
{
  double limit = cp_.dirty_ratio * capacity_;
  std::unique_lock<sg4::Mutex> lock(*mutex_);
  while (dirty_ > 0 && dirty_ + bytes > limit) {
    // Throttled: like balance_dirty_pages, the writer pays for writeback of the excess.
    auto victims = oldest_dirty(dirty_ + bytes - limit, false, 0);
    if (victims.empty()) {
      clean_cv_->wait(lock);
      continue;
    }
    for (Block* b : victims)
      throttled_ += b->bytes;
    lock.unlock();
    write_back(victims);
    lock.lock();
  }
  make_room(bytes);
  while (capacity_ - cached_ < bytes && dirty_ > 0) {
    // Memory full of dirty data: wait for writeback (or do it) before caching more.
    auto victims = oldest_dirty(bytes, false, 0);
    if (victims.empty()) {
      clean_cv_->wait(lock);
    } else {
      lock.unlock();
      write_back(victims);
      lock.lock();
    }
    make_room(bytes);
  }
}

void PageCache::add_dirty(int file, double offset, double bytes, bool dontcache)
{
  auto b         = std::make_unique<Block>();
  b->file        = file;
  b->offset      = offset;
  b->bytes       = bytes;
  b->dirty       = true;
  b->dirty_since = sg4::Engine::get_clock();
  b->drop_after  = dontcache;
  if (dontcache)
    urgent_++;
  insert(std::move(b));
  if (eager_ || dontcache || dirty_ > cp_.background_ratio * capacity_)
    dirty_cv_->notify_all();
}

void PageCache::range_state(int file, double offset, double bytes, double threads, double& cached,
                            double& dirty) const
{
  double in_cache = 0, in_dirty = 0;
  auto end = key_of(file, offset + bytes);
  for (auto it = blocks_.lower_bound(key_of(file, offset)); it != blocks_.end() && it->first < end; ++it) {
    in_cache += it->second->bytes;
    if (it->second->dirty)
      in_dirty += it->second->bytes;
  }
  double whole = bytes * threads;
  cached = whole > 0 ? std::min(1.0, in_cache / whole) : 0;
  dirty  = whole > 0 ? std::min(1.0, in_dirty / whole) : 0;
}

void PageCache::touch_range(int file, double offset, double bytes)
{
  auto end = key_of(file, offset + bytes);
  std::vector<Block*> hit;
  for (auto it = blocks_.lower_bound(key_of(file, offset)); it != blocks_.end() && it->first < end; ++it)
    hit.push_back(it->second.get());
  for (Block* b : hit)
    touch(b);
}

uint32_t PageCache::pressure() const
{
  // The library's formula, in KiB: what the cache may use stands for MemAvailable.
  auto kib = [](double bytes) { return static_cast<hio_u64>(std::max(bytes, 0.0) / 1024); };
  return hio_policy_pressure(kib(total_memory_), kib(std::min(capacity_, total_memory_)), kib(dirty_),
                             kib(cp_.dirty_ratio * capacity_), 0);
}

void PageCache::add_clean(int file, double offset, double bytes)
{
  make_room(bytes);
  if (capacity_ - cached_ < bytes)
    return; // nothing evictable: the data is not kept
  auto b    = std::make_unique<Block>();
  b->file   = file;
  b->offset = offset;
  b->bytes  = bytes;
  insert(std::move(b));
}

void PageCache::fsync(int file)
{
  std::unique_lock<sg4::Mutex> lock(*mutex_);
  while (true) {
    std::vector<Block*> mine;
    bool pending = false;
    for (Block* b : dirty_order_) {
      if (b->file != file)
        continue;
      if (b->writeback)
        pending = true;
      else
        mine.push_back(b);
    }
    if (not mine.empty()) {
      lock.unlock();
      write_back(mine);
      lock.lock();
    } else if (pending) {
      clean_cv_->wait(lock);
    } else {
      return;
    }
  }
}

void PageCache::drop_clean()
{
  std::vector<Block*> victims;
  for (auto& [k, b] : blocks_)
    if (not b->dirty && not b->writeback)
      victims.push_back(b.get());
  for (Block* b : victims)
    remove(b);
}

void PageCache::flusher_loop()
{
  std::unique_lock<sg4::Mutex> lock(*mutex_);
  double next_wake = sg4::Engine::get_clock() + cp_.flush_interval;
  while (true) {
    double now = sg4::Engine::get_clock();
    std::vector<Block*> batch;
    if (eager_ || urgent_ > 0) {
      for (Block* b : dirty_order_)
        if (not b->writeback && (eager_ || b->drop_after))
          batch.push_back(b);
    }
    if (batch.empty() && now >= next_wake) {
      batch = oldest_dirty(1e300, true, now); // expired
      next_wake = now + cp_.flush_interval;
    }
    if (batch.empty() && dirty_ > cp_.background_ratio * capacity_)
      batch = oldest_dirty(dirty_ - cp_.background_ratio * capacity_, false, now);
    if (batch.empty()) {
      if (eager_)
        dirty_cv_->wait(lock);
      else
        dirty_cv_->wait_for(lock, std::max(1e-6, next_wake - now));
      continue;
    }
    lock.unlock();
    write_back(batch);
    lock.lock();
  }
}

} // namespace hiosim
