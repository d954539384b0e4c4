// SPDX-License-Identifier: GPL-2.0-only
/*
 * file.c - hybridfs regular files: every open file holds an open lower
 * file, and each read or write is routed by the Hybrid-IO policy core.
 *
 * Routing: the request is described to hio_policy_decide() (size, offset,
 * buffer address, the lower file's STATX_DIOALIGN, how much of the range
 * is cached or dirty in the lower page cache, sequential run, O_APPEND /
 * O_SYNC / mmap state).  A direct decision is carried out by handing the
 * lower file a kiocb with IOCB_DIRECT set; the file's f_flags never change.
 * Direct is only attempted for iterators over user memory (ITER_UBUF,
 * ITER_IOVEC) whose body is aligned to the lower STATX_DIOALIGN; anything
 * else falls back to buffered and is counted.  A split plan is carried
 * out as planned: the unaligned head and tail buffered, the aligned body
 * direct, by truncating and re-expanding the caller's iterator.  A plan
 * needing a bounce buffer (misaligned user memory) is done buffered: the
 * kernel would have to copy anyway, and the page cache is that copy.
 */
#include <linux/fs.h>
#include <linux/fs_stack.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/xarray.h>

#include "hybridfs.h"

/* Per-call flags taken from the caller's kiocb rather than the lower file. */
#define HFS_IOCB_PASS (IOCB_APPEND | IOCB_DSYNC | IOCB_SYNC | IOCB_NOWAIT | IOCB_DIRECT | \
		       HFS_IOCB_DONTCACHE)

int hfs_open_lower(struct inode *inode, struct file *file)
{
	struct hfs_file_info *fi;
	struct path lower;
	struct file *lf;
	int err;

	fi = kmem_cache_zalloc(hfs_file_cachep, GFP_KERNEL);
	if (!fi)
		return -ENOMEM;
	hfs_get_lower_path(file->f_path.dentry, &lower);
	lf = hfs_lower_open(&lower, file->f_flags);
	if (IS_ERR(lf)) {
		err = PTR_ERR(lf);
		goto free;
	}
	fi->lower = lf;
	fi->next_pos = -1;
	if (S_ISREG(inode->i_mode) && (lf->f_mode & FMODE_CAN_ODIRECT)) {
		file->f_mode |= FMODE_CAN_ODIRECT;
		hfs_lower_dio_align(&lower, &fi->dio_mem_align, &fi->dio_offset_align);
	}
	file->private_data = fi;
	path_put(&lower);
	return 0;
free:
	path_put(&lower);
	kmem_cache_free(hfs_file_cachep, fi);
	return err;
}

int hfs_release(struct inode *inode, struct file *file)
{
	struct hfs_file_info *fi = HFS_F(file);

	if (fi) {
		fput(fi->lower);
		kmem_cache_free(hfs_file_cachep, fi);
	}
	return 0;
}

/*
 * Pages of [start, end) present in @mapping (dirty only, if @dirty).
 * A lockless estimate, as good as the answer can be once it is returned.
 */
static s64 hfs_count_pages(struct address_space *mapping, loff_t start, loff_t end,
			   bool dirty)
{
	pgoff_t first, last;
	struct folio *folio;
	s64 n = 0;

	if (end <= start || !mapping->nrpages)
		return 0;
	if (dirty && !mapping_tagged(mapping, PAGECACHE_TAG_DIRTY))
		return 0;
	if (!dirty && !filemap_range_has_page(mapping, start, end - 1))
		return 0;
	first = start >> PAGE_SHIFT;
	last = (end - 1) >> PAGE_SHIFT;
	{
		XA_STATE(xas, &mapping->i_pages, first);

		rcu_read_lock();
		if (dirty) {
			xas_for_each_marked(&xas, folio, last, PAGECACHE_TAG_DIRTY) {
				if (xas_retry(&xas, folio) || xa_is_value(folio))
					continue;
				n += folio_nr_pages(folio);
				if (need_resched()) {
					xas_pause(&xas);
					rcu_read_unlock();
					cond_resched();
					rcu_read_lock();
				}
			}
		} else {
			xas_for_each(&xas, folio, last) {
				if (xas_retry(&xas, folio) || xa_is_value(folio))
					continue;
				n += folio_nr_pages(folio);
				if (need_resched()) {
					xas_pause(&xas);
					rcu_read_unlock();
					cond_resched();
					rcu_read_lock();
				}
			}
		}
		rcu_read_unlock();
	}
	return min_t(s64, n, last - first + 1);
}

/* Address of the first byte of a user-memory iterator, else 0. */
static unsigned long hfs_iter_addr(const struct iov_iter *iter)
{
	if (iter_is_ubuf(iter))
		return (unsigned long)iter->ubuf + iter->iov_offset;
	if (iter_is_iovec(iter) && iter->nr_segs)
		return (unsigned long)hfs_iter_iov(iter)->iov_base + iter->iov_offset;
	return 0;
}

/*
 * Is every segment of a user-memory iterator aligned: its address to
 * @addr_mask + 1 and its length to @len_mask + 1?  (The kernel's own
 * iov_iter_is_aligned() is gone from newer kernels.)  A segment that the
 * iterator's count cuts short must be aligned whole: 7.3's direct I/O path
 * refuses (-EINVAL) an iovec whose last segment is misaligned past the count.
 */
static bool hfs_iter_aligned(const struct iov_iter *iter, unsigned long addr_mask,
			     size_t len_mask)
{
	const struct iovec *iov;
	size_t left = iov_iter_count(iter), skip = iter->iov_offset;
	unsigned long i;

	if (iter_is_ubuf(iter))
		return !(((unsigned long)iter->ubuf + skip) & addr_mask) && !(left & len_mask);
	if (!iter_is_iovec(iter))
		return false;
	iov = hfs_iter_iov(iter);
	for (i = 0; i < iter->nr_segs && left; i++, skip = 0) {
		size_t len = min(iov[i].iov_len - skip, left);

		if (!len)
			continue;
		if ((((unsigned long)iov[i].iov_base + skip) & addr_mask) ||
		    ((iov[i].iov_len - skip) & len_mask))
			return false;
		left -= len;
	}
	return true;
}

/* Describe one request to the policy core, without the cache state. */
static void hfs_fill_request(struct kiocb *iocb, struct iov_iter *iter,
			     enum hio_op op, struct hio_request *r)
{
	struct hfs_file_info *fi = HFS_F(iocb->ki_filp);
	struct file *lower = fi->lower;
	loff_t pos = iocb->ki_pos;
	u64 len = iov_iter_count(iter);
	u32 run = 0;

	memset(r, 0, sizeof(*r));
	r->op = op;
	r->offset = pos;
	r->length = len;
	r->buf_addr = hfs_iter_addr(iter);
	r->mem_align = fi->dio_mem_align;
	r->offset_align = fi->dio_offset_align;
	r->file_size = i_size_read(file_inode(lower));
	r->cached_pages = HIO_PAGES_UNKNOWN;
	r->dirty_pages = HIO_PAGES_UNKNOWN;

	if (pos == READ_ONCE(fi->next_pos))
		run = min_t(u32, READ_ONCE(fi->seq_run) + 1, 1U << 30);
	WRITE_ONCE(fi->seq_run, run);
	WRITE_ONCE(fi->next_pos, pos + len);
	r->seq_run = run;
	r->pressure = 0;

	if (iocb->ki_flags & IOCB_APPEND)
		r->file_flags |= HIO_FILE_APPEND;
	if (iocb->ki_flags & IOCB_DSYNC)
		r->file_flags |= HIO_FILE_SYNC;
	if (mapping_mapped(lower->f_mapping))
		r->file_flags |= HIO_FILE_MAPPED;
	if (!(lower->f_mode & FMODE_CAN_ODIRECT) || !fi->dio_mem_align)
		r->file_flags |= HIO_FILE_NO_DIRECT;
	if (iocb->ki_flags & IOCB_DIRECT)
		r->file_flags |= HIO_FILE_CALLER_DIRECT;
	/*
	 * As libhybridio does, decide as if the uncached path worked; where
	 * the kernel or the lower fs lacks it, hfs_check_path() falls back.
	 */
	r->file_flags |= HIO_FILE_DONTCACHE_OK;
}

/*
 * Decide.  The cache probe is the one costly input, so it is taken only
 * for requests that are headed direct without it (as libhybridio does):
 * a read of a mostly cached range, or an overwrite of a mostly dirty one,
 * then stays buffered.
 */
static void hfs_decide(const struct hio_policy_config *cfg, struct file *lower,
		       struct hio_request *r, struct hio_decision *d)
{
	struct address_space *mapping = lower->f_mapping;

	hio_policy_decide(cfg, r, d);
	if (d->path != HIO_PATH_DIRECT || cfg->mode != HIO_MODE_HYBRID ||
	    d->rule == HIO_RULE_CALLER_DIRECT)
		return;
	if (r->op == HIO_OP_READ) {
		loff_t end = min_t(u64, r->offset + r->length, r->file_size);

		r->cached_pages = hfs_count_pages(mapping, r->offset, end, false);
	} else {
		r->dirty_pages = hfs_count_pages(mapping, r->offset, r->offset + r->length, true);
	}
	if (r->cached_pages > 0 || r->dirty_pages > 0)
		hio_policy_decide(cfg, r, d);
}

/*
 * Can the decided plan be carried out on this iterator and lower file?
 * Returns the path the body will take and counts the reason for any
 * fallback.
 */
static enum hio_path hfs_check_path(struct hfs_sb_info *sbi, struct hfs_file_info *fi,
				    const struct iov_iter *iter,
				    const struct hio_decision *d)
{
	struct iov_iter body;

	if (d->path == HIO_PATH_DONTCACHE) {
		if (HFS_HAVE_DONTCACHE && hfs_file_dontcache_ok(fi->lower))
			return HIO_PATH_DONTCACHE;
		hfs_stats_fallback(sbi, HFS_FB_DONTCACHE);
		return HIO_PATH_BUFFERED;
	}
	if (d->path != HIO_PATH_DIRECT)
		return HIO_PATH_BUFFERED;
	if (d->rule == HIO_RULE_CALLER_DIRECT)
		return HIO_PATH_DIRECT;
	if (!user_backed_iter(iter)) {
		hfs_stats_fallback(sbi, HFS_FB_ITER);
		return HIO_PATH_BUFFERED;
	}
	if (d->bounce) {
		hfs_stats_fallback(sbi, HFS_FB_BOUNCE);
		return HIO_PATH_BUFFERED;
	}
	body = *iter;
	iov_iter_advance(&body, d->head_len);
	iov_iter_truncate(&body, d->body_len);
	if (!hfs_iter_aligned(&body, fi->dio_mem_align - 1, fi->dio_offset_align - 1)) {
		hfs_stats_fallback(sbi, HFS_FB_MISALIGNED);
		return HIO_PATH_BUFFERED;
	}
	return HIO_PATH_DIRECT;
}

/*
 * Move up to @len bytes of @iter at *@pos through the lower file on @path.
 * Advances @iter and *@pos by what was done.
 */
static ssize_t hfs_io_part(struct kiocb *iocb, struct iov_iter *iter, enum hio_op op,
			   enum hio_path path, size_t len, loff_t *pos)
{
	struct file *file = iocb->ki_filp;
	struct hfs_sb_info *sbi = HFS_SB(file_inode(file)->i_sb);
	struct file *lower = hfs_lower_file(file);
	size_t count = iov_iter_count(iter);
	struct kiocb lk;
	ssize_t ret;

	if (len > count)
		len = count;
	init_sync_kiocb(&lk, lower);
	lk.ki_flags &= ~HFS_IOCB_PASS;
	lk.ki_flags |= iocb->ki_flags & HFS_IOCB_PASS;
	if (path == HIO_PATH_DIRECT) {
		lk.ki_flags |= IOCB_DIRECT;
		lk.ki_flags &= ~HFS_IOCB_DONTCACHE;
	} else {
		lk.ki_flags &= ~IOCB_DIRECT;
		if (path == HIO_PATH_DONTCACHE)
			lk.ki_flags |= HFS_IOCB_DONTCACHE;
		/* The caller's own RWF_DONTCACHE, where the lower fs has none. */
		if (!hfs_file_dontcache_ok(lower))
			lk.ki_flags &= ~HFS_IOCB_DONTCACHE;
	}
	lk.ki_pos = *pos;

	iov_iter_truncate(iter, len);
	if (op == HIO_OP_READ)
		ret = hfs_lower_read(lower, &lk, iter);
	else
		ret = hfs_lower_write(lower, &lk, iter);
	iov_iter_reexpand(iter, count - (len - iov_iter_count(iter)));

	if (ret > 0) {
		*pos = lk.ki_pos;
		hfs_stats_bytes(sbi, op, path, ret);
	} else if (ret < 0 && ret != -EAGAIN) {
		atomic64_inc(&sbi->stats.errors);
	}
	return ret;
}

static ssize_t hfs_rw_iter(struct kiocb *iocb, struct iov_iter *iter, enum hio_op op)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	struct hfs_sb_info *sbi = HFS_SB(inode->i_sb);
	struct hfs_file_info *fi = HFS_F(file);
	struct hio_policy_config cfg;
	struct hio_request req;
	struct hio_decision d;
	enum hio_path taken;
	size_t len = iov_iter_count(iter);
	loff_t pos = iocb->ki_pos;
	ssize_t ret, done = 0;
	struct {
		size_t len;
		enum hio_path path;
	} parts[3];
	int i;

	memcpy(&cfg, &sbi->cfg, sizeof(cfg));
	if (op == HIO_OP_WRITE)
		hfs_reuse_forget(inode);
	hfs_fill_request(iocb, iter, op, &req);
	hfs_decide(&cfg, fi->lower, &req, &d);
	hfs_reuse_consult(inode, &cfg, &req, &d);
	taken = hfs_check_path(sbi, fi, iter, &d);
	hfs_stats_count(sbi, &d, op, taken, len);

	if (taken != HIO_PATH_DIRECT || d.rule == HIO_RULE_CALLER_DIRECT) {
		ret = hfs_io_part(iocb, iter, op, taken, len, &pos);
		goto out;
	}

	if (d.split)
		atomic64_inc(&sbi->stats.splits);
	parts[0].len = d.head_len;
	parts[0].path = HIO_PATH_BUFFERED;
	parts[1].len = d.body_len;
	parts[1].path = HIO_PATH_DIRECT;
	parts[2].len = len; /* the rest, whatever the tail became */
	parts[2].path = HIO_PATH_BUFFERED;
	ret = 0;
	for (i = 0; i < 3 && iov_iter_count(iter); i++) {
		size_t want = min(parts[i].len, iov_iter_count(iter));
		struct iov_iter before;

		if (!want)
			continue;
		before = *iter;
		ret = hfs_io_part(iocb, iter, op, parts[i].path, want, &pos);
		if (ret == -EINVAL && parts[i].path == HIO_PATH_DIRECT) {
			/*
			 * The lower fs refused this direct I/O: do it buffered,
			 * from where it started (a refusal may have advanced
			 * the iterator, as 7.3's does).
			 */
			*iter = before;
			hfs_stats_fallback(sbi, HFS_FB_EINVAL);
			ret = hfs_io_part(iocb, iter, op, HIO_PATH_BUFFERED, want, &pos);
		}
		if (ret <= 0)
			break;
		done += ret;
		if ((size_t)ret < want)
			break;
	}
	if (done)
		ret = done;
out:
	iocb->ki_pos = pos;
	if (op == HIO_OP_WRITE)
		hfs_copy_attr(inode);
	else
		fsstack_copy_attr_atime(inode, file_inode(fi->lower));
	return ret;
}

static ssize_t hfs_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	return hfs_rw_iter(iocb, iter, HIO_OP_READ);
}

static ssize_t hfs_write_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	return hfs_rw_iter(iocb, iter, HIO_OP_WRITE);
}

loff_t hfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct file *lower = hfs_lower_file(file);
	loff_t ret;

	/* f_pos of both files is serialised by the caller's f_pos_lock. */
	lower->f_pos = file->f_pos;
	ret = hfs_lower_llseek(lower, offset, whence);
	file->f_pos = lower->f_pos;
	return ret;
}

int hfs_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	int err = hfs_lower_fsync(hfs_lower_file(file), start, end, datasync);

	hfs_copy_attr(file_inode(file));
	return err;
}

static long hfs_fallocate(struct file *file, int mode, loff_t offset, loff_t len)
{
	long err;

	hfs_reuse_forget(file_inode(file));
	err = hfs_lower_fallocate(hfs_lower_file(file), mode, offset, len);

	hfs_copy_attr(file_inode(file));
	return err;
}

static int hfs_fadvise(struct file *file, loff_t offset, loff_t len, int advice)
{
	return hfs_lower_fadvise(hfs_lower_file(file), offset, len, advice);
}

/* The mapping is the lower file's: pages are shared with its page cache. */
static int hfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct file *lower = hfs_lower_file(file);

	if (!hfs_file_can_mmap(lower))
		return -ENODEV;
	if (file != vma->vm_file)
		return -EIO;
	return hfs_lower_mmap(lower, vma);
}

static int hfs_flush(struct file *file, fl_owner_t id)
{
	return hfs_lower_flush(hfs_lower_file(file), id);
}

const struct file_operations hfs_file_fops = {
	HFS_FOP_DONTCACHE_FLAGS
	.open = hfs_open_lower,
	.release = hfs_release,
	.flush = hfs_flush,
	.llseek = hfs_llseek,
	.read_iter = hfs_read_iter,
	.write_iter = hfs_write_iter,
	.fsync = hfs_fsync,
	.fallocate = hfs_fallocate,
	.fadvise = hfs_fadvise,
	.mmap = hfs_mmap,
	.splice_read = hfs_splice_read,
	.splice_write = iter_file_splice_write,
};
