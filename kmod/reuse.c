// SPDX-License-Identifier: GPL-2.0-only
/*
 * reuse.c - the re-use history: which extents of a file were read off the
 * page cache recently, kept in the hybridfs inode (struct hfs_reuse).
 *
 * It is the input of the policy's reuse rule, as libhybridio's shared history
 * is the library's (docs/policy.md): a hybrid read that the policy sends off
 * the cache (direct or uncached) is re-use when every extent it finishes, or
 * the one it touches when it finishes none, was read off the cache within
 * hfs_reuse_window seconds (hio_reuse_reread_mask()).  A read off the cache
 * marks only the extents whose last byte it reads
 * (hio_reuse_finished_mask()), so a pass in small calls is not its own
 * re-read, and a read that leaves a file's trailer unread is a re-read of the
 * rest.  It is admitted when all the data the mount's histories hold fits the
 * budget (seven eighths of MemAvailable, the room for page cache), or else
 * when the extent is in the stable hash subset that does (hio_reuse_admits(),
 * budget / bytes read); the request is then decided again with
 * HIO_FILE_REUSE, and the policy sends it through the cache.  Extents, hashing
 * and the budget are policy.h's, shared with the library.  A later read that
 * finds an admitted range cached counts a hit.
 *
 * The history of an inode is reset when it is written or truncated through
 * hybridfs, when the lower file's size moved (changed below hybridfs), when
 * its last read is older than the window, and when the inode is evicted;
 * the mount's total (hfs_sb_info.reuse_read_bytes) follows every change.
 * A spinlock per inode guards the bitmaps; nothing here sleeps or allocates.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/timekeeping.h>

#include "hybridfs.h"

unsigned int hfs_reuse_window = HIO_REUSE_WINDOW_DEFAULT;
module_param_named(reuse_window, hfs_reuse_window, uint, 0644);
MODULE_PARM_DESC(reuse_window,
		 "seconds within which a read again of data read off the cache is re-use (0: off)");

void hfs_reuse_init(struct hfs_reuse *h)
{
	spin_lock_init(&h->lock);
	h->size = 0;
	h->read = 0;
	h->admitted = 0;
	h->last = 0;
}

static u32 hfs_reuse_clock(void)
{
	return (u32)ktime_get_boottime_seconds() + 1;
}

/* Bytes of the extents in @mask of a file of @size bytes (the last is partial). */
static u64 hfs_mask_bytes(u64 size, u64 mask)
{
	u64 extent = hio_reuse_extent_bytes(size);
	u64 last = size ? (size - 1) >> __builtin_ctzll(extent) : 0;
	u64 bytes = (u64)hweight64(mask) * extent;

	if (size && (mask >> last) & 1)
		bytes -= extent * (last + 1) - size;
	return bytes;
}

static void hfs_reuse_reset_locked(struct hfs_sb_info *sbi, struct hfs_reuse *h)
{
	if (h->read)
		atomic64_sub(hfs_mask_bytes(h->size, h->read), &sbi->reuse_read_bytes);
	h->read = 0;
	h->admitted = 0;
	h->last = 0;
}

/* The file was written, truncated or is going away: forget what was read. */
void hfs_reuse_forget(struct inode *inode)
{
	struct hfs_reuse *h = &HFS_I(inode)->reuse;

	if (!READ_ONCE(h->last))
		return;
	spin_lock(&h->lock);
	hfs_reuse_reset_locked(HFS_SB(inode->i_sb), h);
	spin_unlock(&h->lock);
}

/* The history's key of the file: its lower device, inode and generation. */
static u64 hfs_reuse_key(const struct inode *lower)
{
	return hio_mix64((u64)lower->i_sb->s_dev ^
			 hio_mix64((u64)lower->i_ino ^ hio_mix64(lower->i_generation)));
}

enum hfs_reuse_outcome { HFS_REUSE_OFF_CACHE, HFS_REUSE_ADMITTED, HFS_REUSE_HIT };

static void hfs_reuse_record(struct hfs_sb_info *sbi, struct hfs_reuse *h, u64 size,
			     u64 mask, u32 now, enum hfs_reuse_outcome what)
{
	u64 new_read = 0;

	spin_lock(&h->lock);
	if (h->size != size) {
		hfs_reuse_reset_locked(sbi, h);
		h->size = size;
	}
	switch (what) {
	case HFS_REUSE_OFF_CACHE:
		new_read = mask & ~h->read;
		break;
	case HFS_REUSE_ADMITTED:
		new_read = mask & ~h->read;
		h->admitted |= mask;
		break;
	case HFS_REUSE_HIT:
		break;
	}
	h->read |= new_read;
	h->last = now;
	spin_unlock(&h->lock);
	if (new_read)
		atomic64_add(hfs_mask_bytes(size, new_read), &sbi->reuse_read_bytes);
}

/*
 * For a hybrid read after its decision @d: re-decides @r with
 * HIO_FILE_REUSE when the history admits it, records what the read does,
 * and counts admissions and hits.
 */
void hfs_reuse_consult(struct inode *inode, const struct hio_policy_config *cfg,
		       struct hio_request *r, struct hio_decision *d)
{
	struct hfs_sb_info *sbi = HFS_SB(inode->i_sb);
	struct hfs_reuse *h = &HFS_I(inode)->reuse;
	unsigned int window = READ_ONCE(hfs_reuse_window);
	bool off_cache, reread, admitted_before, admit = false;
	u64 mask, need, size = r->file_size, len;
	u32 now;

	if (r->op != HIO_OP_READ || cfg->mode != HIO_MODE_HYBRID || !window ||
	    d->rule == HIO_RULE_CALLER_DIRECT)
		return;
	off_cache = d->path == HIO_PATH_DIRECT || d->path == HIO_PATH_DONTCACHE;
	if (!off_cache && d->rule != HIO_RULE_READ_CACHED)
		return;
	mask = hio_reuse_extent_mask(size, r->offset, r->length);
	if (!mask)
		return;
	len = min(r->length, size - r->offset);
	now = hfs_reuse_clock();

	spin_lock(&h->lock);
	if (h->size != size || (h->last && now - h->last > window)) {
		hfs_reuse_reset_locked(sbi, h);
		h->size = size;
	}
	need = hio_reuse_reread_mask(size, r->offset, r->length);
	reread = h->last && (h->read & need) == need;
	admitted_before = h->last && (h->admitted & mask) == mask;
	spin_unlock(&h->lock);

	if (reread) {
		u64 budget = hio_reuse_budget_auto((u64)si_mem_available() << PAGE_SHIFT);
		u64 first = r->offset >> __builtin_ctzll(hio_reuse_extent_bytes(size));

		admit = hio_reuse_admits(hfs_reuse_key(hfs_lower_inode(inode)), first, budget,
					 atomic64_read(&sbi->reuse_read_bytes));
	}
	if (!off_cache) {
		/* Found cached after the rule admitted it: a hit. */
		if (admitted_before) {
			hfs_reuse_record(sbi, h, size, mask, now, HFS_REUSE_HIT);
			atomic64_inc(&sbi->stats.reuse_hit_reads);
			atomic64_add(len, &sbi->stats.reuse_hit_bytes);
		}
		return;
	}
	if (admit) {
		r->file_flags |= HIO_FILE_REUSE;
		hio_policy_decide(cfg, r, d);
	}
	if (d->rule == HIO_RULE_REUSE) {
		hfs_reuse_record(sbi, h, size, mask, now, HFS_REUSE_ADMITTED);
		atomic64_inc(&sbi->stats.reuse_admitted_reads);
		atomic64_add(len, &sbi->stats.reuse_admitted_bytes);
	} else {
		/* Read only where it reads an extent's last byte (hio_reuse_finished_mask()). */
		hfs_reuse_record(sbi, h, size, hio_reuse_finished_mask(size, r->offset, r->length), now,
				 HFS_REUSE_OFF_CACHE);
	}
}
