// SPDX-License-Identifier: GPL-2.0-only
/*
 * namei.c - hybridfs dentries and directory inode operations.
 *
 * Every hybridfs dentry, positive or negative, holds the lower path it
 * stands for.  Lookups look the name up in the lower parent; namespace
 * changes are made on the lower dentries (lower.c) and then mirrored by
 * instantiating or dropping the hybridfs dentry.
 */
#include <linux/fs.h>
#include <linux/fs_stack.h>
#include <linux/namei.h>
#include <linux/slab.h>

#include "hybridfs.h"

/* Attach a new dentry info to @dentry; takes over the references of @lower. */
int hfs_new_dentry_info(struct dentry *dentry, const struct path *lower)
{
	struct hfs_dentry_info *di;

	di = kmem_cache_zalloc(hfs_dentry_cachep, GFP_KERNEL);
	if (!di)
		return -ENOMEM;
	spin_lock_init(&di->lock);
	di->lower = *lower;
	dentry->d_fsdata = di;
	return 0;
}

static int hfs_d_revalidate(HFS_D_REVALIDATE_ARGS)
{
	struct hfs_dentry_info *di = READ_ONCE(dentry->d_fsdata);
	struct dentry *lower;
	struct inode *inode, *lower_inode;

	if (!di)
		return 0;
	if (IS_ROOT(dentry))
		return 1;
	lower = di->lower.dentry;
	/* Changed below us (directly on the lower fs)? Then look it up again. */
	if (d_unhashed(lower))
		return 0;
	inode = d_inode_rcu(dentry);
	lower_inode = d_inode_rcu(lower);
	if (!inode != !lower_inode)
		return 0;
	if (inode && hfs_lower_inode(inode) != lower_inode)
		return 0;
	if (lower->d_flags & DCACHE_OP_REVALIDATE) {
		if (flags & LOOKUP_RCU)
			return -ECHILD;
		return hfs_call_d_revalidate(lower, flags);
	}
	return 1;
}

static void hfs_d_release(struct dentry *dentry)
{
	struct hfs_dentry_info *di = dentry->d_fsdata;

	if (!di)
		return;
	path_put(&di->lower);
	kmem_cache_free(hfs_dentry_cachep, di);
}

const struct dentry_operations hfs_dops = {
	.d_revalidate = hfs_d_revalidate,
	.d_release = hfs_d_release,
};

static struct dentry *hfs_lookup(struct inode *dir, struct dentry *dentry,
				 unsigned int flags)
{
	struct path lower_parent, lower;
	struct inode *inode = NULL;
	struct dentry *ret;
	int err;

	hfs_get_lower_path(dentry->d_parent, &lower_parent);
	lower.dentry = hfs_lower_lookup(lower_parent.dentry, &dentry->d_name);
	if (IS_ERR(lower.dentry)) {
		ret = ERR_CAST(lower.dentry);
		goto out;
	}
	if (d_really_is_positive(lower.dentry)) {
		inode = hfs_iget(dir->i_sb, d_inode(lower.dentry));
		if (IS_ERR(inode)) {
			dput(lower.dentry);
			ret = ERR_CAST(inode);
			goto out;
		}
	}
	lower.mnt = mntget(lower_parent.mnt);
	err = hfs_new_dentry_info(dentry, &lower);
	if (err) {
		path_put(&lower);
		iput(inode);
		ret = ERR_PTR(err);
		goto out;
	}
	ret = d_splice_alias(inode, dentry);
	fsstack_copy_attr_atime(dir, d_inode(lower_parent.dentry));
out:
	path_put(&lower_parent);
	return ret;
}

/* Mirror a lower object just created at @lower into @dentry. */
static int hfs_instantiate(struct inode *dir, struct dentry *dentry,
			   struct dentry *lower)
{
	struct inode *inode;

	hfs_copy_attr(dir);
	if (d_unhashed(lower) || d_really_is_negative(lower)) {
		/* The lower fs wants a fresh lookup (as NFS does after mkdir). */
		d_drop(dentry);
		return 0;
	}
	inode = hfs_iget(dir->i_sb, d_inode(lower));
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	d_instantiate(dentry, inode);
	return 0;
}

static int hfs_create(HFS_IOP_CREATE_ARGS)
{
	struct path lower;
	int err;

	hfs_get_lower_path(dentry, &lower);
	err = hfs_lower_create(dir->i_sb, lower.dentry, mode, HFS_IOP_CREATE_EXCL);
	if (err)
		goto out;
	err = hfs_instantiate(dir, dentry, lower.dentry);
out:
	path_put(&lower);
	return err;
}

static HFS_MKDIR_RET hfs_mkdir(hfs_idmap_t *idmap, struct inode *dir,
				struct dentry *dentry, umode_t mode)
{
	struct path lower;
	int err;

	hfs_get_lower_path(dentry, &lower);
	err = hfs_lower_mkdir(dir->i_sb, lower.dentry, mode);
	if (err)
		goto out;
	err = hfs_instantiate(dir, dentry, lower.dentry);
out:
	path_put(&lower);
	return hfs_mkdir_ret(err);
}

static int hfs_symlink(hfs_idmap_t *idmap, struct inode *dir,
		       struct dentry *dentry, const char *target)
{
	struct path lower;
	int err;

	hfs_get_lower_path(dentry, &lower);
	err = hfs_lower_symlink(dir->i_sb, lower.dentry, target);
	if (err)
		goto out;
	err = hfs_instantiate(dir, dentry, lower.dentry);
out:
	path_put(&lower);
	return err;
}

static int hfs_link(struct dentry *old_dentry, struct inode *dir,
		    struct dentry *new_dentry)
{
	struct path lower_old, lower_new;
	int err;

	hfs_get_lower_path(old_dentry, &lower_old);
	hfs_get_lower_path(new_dentry, &lower_new);
	err = hfs_lower_link(dir->i_sb, lower_old.dentry, lower_new.dentry);
	if (err)
		goto out;
	hfs_copy_attr(d_inode(old_dentry));
	err = hfs_instantiate(dir, new_dentry, lower_new.dentry);
out:
	path_put(&lower_new);
	path_put(&lower_old);
	return err;
}

/* unlink and rmdir: remove the lower entry, then refresh and forget ours. */
static int hfs_remove(struct inode *dir, struct dentry *dentry, bool is_dir)
{
	struct inode *inode = d_inode(dentry);
	struct path lower;
	int err;

	hfs_get_lower_path(dentry, &lower);
	if (is_dir)
		err = hfs_lower_rmdir(dir->i_sb, lower.dentry);
	else
		err = hfs_lower_unlink(dir->i_sb, lower.dentry);
	if (err)
		goto out;
	hfs_copy_attr(dir);
	hfs_copy_attr(inode);
	/* The lower dentry went negative or unhashed: look the name up again. */
	d_drop(dentry);
out:
	path_put(&lower);
	return err;
}

static int hfs_unlink(struct inode *dir, struct dentry *dentry)
{
	return hfs_remove(dir, dentry, false);
}

static int hfs_rmdir(struct inode *dir, struct dentry *dentry)
{
	return hfs_remove(dir, dentry, true);
}

static int hfs_rename(hfs_idmap_t *idmap, struct inode *old_dir,
		      struct dentry *old_dentry, struct inode *new_dir,
		      struct dentry *new_dentry, unsigned int flags)
{
	struct path lower_old, lower_new;
	int err;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	hfs_get_lower_path(old_dentry, &lower_old);
	hfs_get_lower_path(new_dentry, &lower_new);
	err = hfs_lower_rename(old_dir->i_sb, lower_old.dentry, lower_new.dentry, flags);
	if (err)
		goto out;
	hfs_copy_attr(old_dir);
	if (new_dir != old_dir)
		hfs_copy_attr(new_dir);
	hfs_copy_attr(d_inode(old_dentry));
	if (d_really_is_positive(new_dentry))
		hfs_copy_attr(d_inode(new_dentry));
out:
	path_put(&lower_new);
	path_put(&lower_old);
	return err;
}

const struct inode_operations hfs_dir_iops = {
	.lookup = hfs_lookup,
	.create = hfs_create,
	.link = hfs_link,
	.unlink = hfs_unlink,
	.symlink = hfs_symlink,
	.mkdir = hfs_mkdir,
	.rmdir = hfs_rmdir,
	.rename = hfs_rename,
	.permission = hfs_permission,
	.getattr = hfs_getattr,
	.setattr = hfs_setattr,
};
