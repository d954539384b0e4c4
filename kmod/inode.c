// SPDX-License-Identifier: GPL-2.0-only
/*
 * inode.c - hybridfs inodes: one per lower inode, found by iget5 on the
 * lower inode pointer; attributes are copies of the lower inode's, and
 * permission checks, getattr and setattr are the lower filesystem's.
 */
#include <linux/fs.h>
#include <linux/fs_stack.h>
#include <linux/namei.h>
#include <linux/stat.h>

#include "hybridfs.h"

/* Refresh every attribute of @inode from its lower inode. */
void hfs_copy_attr(struct inode *inode)
{
	struct inode *lower = hfs_lower_inode(inode);

	fsstack_copy_attr_all(inode, lower);
	fsstack_copy_inode_size(inode, lower);
}

static int hfs_inode_test(struct inode *inode, void *lower)
{
	return hfs_lower_inode(inode) == lower;
}

static int hfs_inode_set(struct inode *inode, void *lower)
{
	HFS_I(inode)->lower = lower;
	return 0;
}

/*
 * The hybridfs inode for @lower, created on first use.  Takes its own
 * reference to @lower for a new inode; the caller keeps its own.
 */
struct inode *hfs_iget(struct super_block *sb, struct inode *lower)
{
	struct inode *inode;

	if (!igrab(lower))
		return ERR_PTR(-ESTALE);
	inode = iget5_locked(sb, lower->i_ino, hfs_inode_test, hfs_inode_set, lower);
	if (!inode) {
		iput(lower);
		return ERR_PTR(-ENOMEM);
	}
	if (!hfs_inode_is_new(inode)) {
		/* Already built: it holds its own reference to @lower. */
		iput(lower);
		return inode;
	}

	inode->i_ino = lower->i_ino;
	inode->i_mapping->a_ops = &hfs_aops;
	switch (lower->i_mode & S_IFMT) {
	case S_IFREG:
		inode->i_op = &hfs_file_iops;
		inode->i_fop = &hfs_file_fops;
		break;
	case S_IFDIR:
		inode->i_op = &hfs_dir_iops;
		inode->i_fop = &hfs_dir_fops;
		break;
	case S_IFLNK:
		inode->i_op = &hfs_symlink_iops;
		break;
	default:
		inode->i_op = &hfs_special_iops;
		init_special_inode(inode, lower->i_mode, lower->i_rdev);
		break;
	}
	hfs_copy_attr(inode);
	unlock_new_inode(inode);
	return inode;
}

int hfs_permission(hfs_idmap_t *idmap, struct inode *inode, int mask)
{
	return hfs_lower_permission(inode->i_sb, hfs_lower_inode(inode), mask);
}

int hfs_getattr(hfs_idmap_t *idmap, const struct path *path,
		struct kstat *stat, u32 request_mask, unsigned int flags)
{
	struct dentry *dentry = path->dentry;
	struct path lower;
	int err;

	hfs_get_lower_path(dentry, &lower);
	err = hfs_lower_getattr(&lower, stat, request_mask, flags);
	path_put(&lower);
	if (err)
		return err;
	/* Inode numbers are the lower ones, the device is ours. */
	stat->dev = dentry->d_sb->s_dev;
	hfs_copy_attr(d_inode(dentry));
	return 0;
}

int hfs_setattr(hfs_idmap_t *idmap, struct dentry *dentry,
		struct iattr *ia)
{
	struct inode *inode = d_inode(dentry);
	struct iattr lower_ia;
	struct path lower;
	int err;

	/* Checked against our copy of the lower attributes, then again below. */
	err = setattr_prepare(hfs_nop_idmap, dentry, ia);
	if (err)
		return err;

	if (ia->ia_valid & ATTR_SIZE)
		hfs_reuse_forget(inode);
	lower_ia = *ia;
	if (ia->ia_valid & ATTR_FILE)
		lower_ia.ia_file = hfs_lower_file(ia->ia_file);
	/* notify_change() computes the mode itself when it kills suid/sgid. */
	if (lower_ia.ia_valid & (ATTR_KILL_SUID | ATTR_KILL_SGID))
		lower_ia.ia_valid &= ~ATTR_MODE;

	hfs_get_lower_path(dentry, &lower);
	err = hfs_lower_setattr(inode->i_sb, lower.dentry, &lower_ia);
	path_put(&lower);
	hfs_copy_attr(inode);
	return err;
}

static const char *hfs_get_link(struct dentry *dentry, struct inode *inode,
				struct delayed_call *done)
{
	struct dentry *lower;

	if (!dentry)
		return ERR_PTR(-ECHILD);
	lower = hfs_lower_dentry(dentry);
	return hfs_lower_get_link(lower, done);
}

const struct inode_operations hfs_file_iops = {
	.permission = hfs_permission,
	.getattr = hfs_getattr,
	.setattr = hfs_setattr,
};

const struct inode_operations hfs_symlink_iops = {
	.get_link = hfs_get_link,
	.permission = hfs_permission,
	.getattr = hfs_getattr,
	.setattr = hfs_setattr,
};

const struct inode_operations hfs_special_iops = {
	.permission = hfs_permission,
	.getattr = hfs_getattr,
	.setattr = hfs_setattr,
};

/*
 * hybridfs inodes never hold pages: data lives in the lower inode's cache.
 * direct_IO is set only so that the VFS lets callers open with O_DIRECT.
 */
const struct address_space_operations hfs_aops = {
	.direct_IO = noop_direct_IO,
};
