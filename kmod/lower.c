// SPDX-License-Identifier: GPL-2.0-only
/*
 * lower.c - every call hybridfs makes into the lower filesystem.
 *
 * Each wrapper takes the lower objects, does the locking and write-access
 * bracketing the VFS helper expects of its caller, calls the helper with the
 * caller's credentials (so the lower filesystem's permission checks and
 * ownership rules apply unchanged), and logs the call and its result at
 * debug level: `echo 'module hybridfs +p' > /sys/kernel/debug/dynamic_debug/control`.
 */
#include <linux/fs.h>
#include <linux/fs_stack.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/statfs.h>
#include <linux/stat.h>

#include "hybridfs.h"

static struct vfsmount *hfs_lower_mnt(struct super_block *sb)
{
	return HFS_SB(sb)->lower_root.mnt;
}

/* Lock the lower parent of @d; fails if @d was moved or dropped meanwhile. */
static struct dentry *hfs_lock_parent(struct dentry *d)
{
	struct dentry *dir = dget_parent(d);

	inode_lock_nested(d_inode(dir), I_MUTEX_PARENT);
	if (d->d_parent != dir || d_unhashed(d)) {
		inode_unlock(d_inode(dir));
		dput(dir);
		return ERR_PTR(-ESTALE);
	}
	return dir;
}

static void hfs_unlock_parent(struct dentry *dir)
{
	inode_unlock(d_inode(dir));
	dput(dir);
}

struct dentry *hfs_lower_lookup(struct dentry *lower_dir, const struct qstr *name)
{
	struct dentry *d;

	d = hfs_lookup_noperm_unlocked(name, lower_dir);
	pr_debug("lookup %pd/%.*s -> %ld\n", lower_dir, name->len, name->name,
		 IS_ERR(d) ? PTR_ERR(d) : 0L);
	return d;
}

struct file *hfs_lower_open(const struct path *lower, int flags)
{
	struct file *f;

	f = dentry_open(lower, flags, current_cred());
	pr_debug("open %pd flags %#x -> %ld\n", lower->dentry, flags,
		 IS_ERR(f) ? PTR_ERR(f) : 0L);
	return f;
}

int hfs_lower_dio_align(const struct path *lower, u32 *mem_align, u32 *offset_align)
{
	struct kstat st = {};
	int err;

	*mem_align = 0;
	*offset_align = 0;
	err = vfs_getattr(lower, &st, STATX_DIOALIGN, AT_STATX_SYNC_AS_STAT);
	if (!err && (st.result_mask & STATX_DIOALIGN)) {
		*mem_align = st.dio_mem_align;
		*offset_align = st.dio_offset_align;
	}
	pr_debug("dioalign %pd -> %d mem %u offset %u\n", lower->dentry, err,
		 *mem_align, *offset_align);
	return err;
}

/*
 * The namespace operations below share one shape: write access to the
 * lower mount, the lower parent locked, the VFS helper, then unwind.
 */
int hfs_lower_create(struct super_block *sb, struct dentry *d, umode_t mode, bool excl)
{
	struct dentry *dir;
	int err;

	err = mnt_want_write(hfs_lower_mnt(sb));
	if (err)
		goto out;
	dir = hfs_lock_parent(d);
	if (IS_ERR(dir)) {
		err = PTR_ERR(dir);
		goto drop_write;
	}
	err = hfs_vfs_create(hfs_lower_idmap(sb), d_inode(dir), d, mode, excl);
	hfs_unlock_parent(dir);
drop_write:
	mnt_drop_write(hfs_lower_mnt(sb));
out:
	pr_debug("create %pd mode %#o -> %d\n", d, mode, err);
	return err;
}

int hfs_lower_mkdir(struct super_block *sb, struct dentry *d, umode_t mode)
{
	struct dentry *dir;
	int err;

	err = mnt_want_write(hfs_lower_mnt(sb));
	if (err)
		goto out;
	dir = hfs_lock_parent(d);
	if (IS_ERR(dir)) {
		err = PTR_ERR(dir);
		goto drop_write;
	}
	err = hfs_vfs_mkdir(hfs_lower_idmap(sb), d_inode(dir), d, mode);
	hfs_unlock_parent(dir);
drop_write:
	mnt_drop_write(hfs_lower_mnt(sb));
out:
	pr_debug("mkdir %pd mode %#o -> %d\n", d, mode, err);
	return err;
}

int hfs_lower_symlink(struct super_block *sb, struct dentry *d, const char *target)
{
	struct dentry *dir;
	int err;

	err = mnt_want_write(hfs_lower_mnt(sb));
	if (err)
		goto out;
	dir = hfs_lock_parent(d);
	if (IS_ERR(dir)) {
		err = PTR_ERR(dir);
		goto drop_write;
	}
	err = hfs_vfs_symlink(hfs_lower_idmap(sb), d_inode(dir), d, target);
	hfs_unlock_parent(dir);
drop_write:
	mnt_drop_write(hfs_lower_mnt(sb));
out:
	pr_debug("symlink %pd -> %d\n", d, err);
	return err;
}

int hfs_lower_link(struct super_block *sb, struct dentry *old, struct dentry *new)
{
	struct dentry *dir;
	int err;

	err = mnt_want_write(hfs_lower_mnt(sb));
	if (err)
		goto out;
	dir = hfs_lock_parent(new);
	if (IS_ERR(dir)) {
		err = PTR_ERR(dir);
		goto drop_write;
	}
	err = vfs_link(old, hfs_lower_idmap(sb), d_inode(dir), new, NULL);
	hfs_unlock_parent(dir);
drop_write:
	mnt_drop_write(hfs_lower_mnt(sb));
out:
	pr_debug("link %pd -> %pd -> %d\n", old, new, err);
	return err;
}

int hfs_lower_unlink(struct super_block *sb, struct dentry *d)
{
	struct dentry *dir;
	int err;

	err = mnt_want_write(hfs_lower_mnt(sb));
	if (err)
		goto out;
	dget(d);
	dir = hfs_lock_parent(d);
	if (IS_ERR(dir)) {
		err = PTR_ERR(dir);
		goto put;
	}
	err = vfs_unlink(hfs_lower_idmap(sb), d_inode(dir), d, NULL);
	hfs_unlock_parent(dir);
put:
	dput(d);
	mnt_drop_write(hfs_lower_mnt(sb));
out:
	pr_debug("unlink %pd -> %d\n", d, err);
	return err;
}

int hfs_lower_rmdir(struct super_block *sb, struct dentry *d)
{
	struct dentry *dir;
	int err;

	err = mnt_want_write(hfs_lower_mnt(sb));
	if (err)
		goto out;
	dget(d);
	dir = hfs_lock_parent(d);
	if (IS_ERR(dir)) {
		err = PTR_ERR(dir);
		goto put;
	}
	err = hfs_vfs_rmdir(hfs_lower_idmap(sb), d_inode(dir), d);
	hfs_unlock_parent(dir);
put:
	dput(d);
	mnt_drop_write(hfs_lower_mnt(sb));
out:
	pr_debug("rmdir %pd -> %d\n", d, err);
	return err;
}

#ifdef HFS_HAVE_START_RENAMING
/*
 * start_renaming_two_dentries() locks both parents and checks what the
 * older branch below checks by hand (parentage, ancestry, -EEXIST).
 */
int hfs_lower_rename(struct super_block *sb, struct dentry *old, struct dentry *new,
		     unsigned int flags)
{
	struct renamedata rd = {};
	int err;

	err = mnt_want_write(hfs_lower_mnt(sb));
	if (err)
		goto out;
	rd.mnt_idmap = hfs_lower_idmap(sb);
	rd.new_parent = dget_parent(new);
	rd.flags = flags;
	err = start_renaming_two_dentries(&rd, old, new);
	if (!err) {
		err = vfs_rename(&rd);
		end_renaming(&rd);
	} else if (err == -EINVAL && (d_unhashed(old) || d_unhashed(new))) {
		err = -ESTALE;
	}
	dput(rd.new_parent);
	mnt_drop_write(hfs_lower_mnt(sb));
out:
	pr_debug("rename %pd -> %pd flags %#x -> %d\n", old, new, flags, err);
	return err;
}
#else
int hfs_lower_rename(struct super_block *sb, struct dentry *old, struct dentry *new,
		     unsigned int flags)
{
	struct renamedata rd = {};
	struct dentry *old_dir, *new_dir, *trap;
	int err;

	err = mnt_want_write(hfs_lower_mnt(sb));
	if (err)
		goto out;
	old_dir = dget_parent(old);
	new_dir = dget_parent(new);
	trap = lock_rename(old_dir, new_dir);
	err = -ESTALE;
	if (old->d_parent != old_dir || new->d_parent != new_dir ||
	    d_unhashed(old) || d_unhashed(new))
		goto unlock;
	/* Source is an ancestor of the target, or the other way round. */
	err = -EINVAL;
	if (trap == old)
		goto unlock;
	err = -ENOTEMPTY;
	if (trap == new)
		goto unlock;
#ifdef HFS_HAVE_MNT_IDMAP
	rd.old_mnt_idmap = hfs_lower_idmap(sb);
	rd.new_mnt_idmap = hfs_lower_idmap(sb);
#else
	rd.old_mnt_userns = hfs_lower_idmap(sb);
	rd.new_mnt_userns = hfs_lower_idmap(sb);
#endif
	rd.old_dir = d_inode(old_dir);
	rd.old_dentry = old;
	rd.new_dir = d_inode(new_dir);
	rd.new_dentry = new;
	rd.flags = flags;
	err = vfs_rename(&rd);
unlock:
	unlock_rename(old_dir, new_dir);
	dput(new_dir);
	dput(old_dir);
	mnt_drop_write(hfs_lower_mnt(sb));
out:
	pr_debug("rename %pd -> %pd flags %#x -> %d\n", old, new, flags, err);
	return err;
}
#endif

int hfs_lower_setattr(struct super_block *sb, struct dentry *d, struct iattr *ia)
{
	struct inode *inode = d_inode(d);
	int err;

	err = mnt_want_write(hfs_lower_mnt(sb));
	if (err)
		goto out;
	inode_lock(inode);
	err = notify_change(hfs_lower_idmap(sb), d, ia, NULL);
	inode_unlock(inode);
	mnt_drop_write(hfs_lower_mnt(sb));
out:
	pr_debug("setattr %pd valid %#x -> %d\n", d, ia->ia_valid, err);
	return err;
}

const char *hfs_lower_get_link(struct dentry *lower, struct delayed_call *done)
{
	const char *link = vfs_get_link(lower, done);

	pr_debug("get_link %pd -> %ld\n", lower, IS_ERR(link) ? PTR_ERR(link) : 0L);
	return link;
}

int hfs_lower_getattr(const struct path *lower, struct kstat *stat,
		      u32 request_mask, unsigned int flags)
{
	int err = hfs_vfs_getattr(lower, stat, request_mask, flags);

	pr_debug("getattr %pd -> %d\n", lower->dentry, err);
	return err;
}

int hfs_lower_permission(struct super_block *sb, struct inode *lower, int mask)
{
	/* No logging: called for every path component, also in RCU walk. */
	return inode_permission(hfs_lower_idmap(sb), lower, mask);
}

ssize_t hfs_lower_read(struct file *lower, struct kiocb *iocb, struct iov_iter *iter)
{
	ssize_t ret = vfs_iocb_iter_read(lower, iocb, iter);

	pr_debug("read %pD flags %#x len %zu -> %zd\n", lower, iocb->ki_flags,
		 iov_iter_count(iter), ret);
	return ret;
}

ssize_t hfs_lower_write(struct file *lower, struct kiocb *iocb, struct iov_iter *iter)
{
	ssize_t ret;

	file_start_write(lower);
	ret = vfs_iocb_iter_write(lower, iocb, iter);
	file_end_write(lower);
	pr_debug("write %pD flags %#x -> %zd\n", lower, iocb->ki_flags, ret);
	return ret;
}

int hfs_lower_fsync(struct file *lower, loff_t start, loff_t end, int datasync)
{
	int err = vfs_fsync_range(lower, start, end, datasync);

	pr_debug("fsync %pD -> %d\n", lower, err);
	return err;
}

loff_t hfs_lower_llseek(struct file *lower, loff_t offset, int whence)
{
	loff_t ret = vfs_llseek(lower, offset, whence);

	pr_debug("llseek %pD %lld/%d -> %lld\n", lower, offset, whence, ret);
	return ret;
}

long hfs_lower_fallocate(struct file *lower, int mode, loff_t offset, loff_t len)
{
	long err = vfs_fallocate(lower, mode, offset, len);

	pr_debug("fallocate %pD mode %#x -> %ld\n", lower, mode, err);
	return err;
}

int hfs_lower_fadvise(struct file *lower, loff_t offset, loff_t len, int advice)
{
	int err = vfs_fadvise(lower, offset, len, advice);

	pr_debug("fadvise %pD advice %d -> %d\n", lower, advice, err);
	return err;
}

int hfs_lower_iterate(struct file *lower, struct dir_context *ctx)
{
	int err = iterate_dir(lower, ctx);

	pr_debug("iterate %pD -> %d\n", lower, err);
	return err;
}

int hfs_lower_statfs(const struct path *lower, struct kstatfs *buf)
{
	int err = vfs_statfs(lower, buf);

	pr_debug("statfs %pd -> %d\n", lower->dentry, err);
	return err;
}

int hfs_lower_mmap(struct file *lower, struct vm_area_struct *vma)
{
	int err;

	vma_set_file(vma, lower);
	err = hfs_call_mmap(lower, vma);
	pr_debug("mmap %pD -> %d\n", lower, err);
	return err;
}

int hfs_lower_flush(struct file *lower, fl_owner_t id)
{
	int err = 0;

	if (lower->f_op->flush)
		err = lower->f_op->flush(lower, id);
	pr_debug("flush %pD -> %d\n", lower, err);
	return err;
}
