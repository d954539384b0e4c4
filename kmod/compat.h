/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * compat.h - the kernel APIs hybridfs uses that changed between Linux 6.1
 * and 7.3, each behind one name here.
 *
 * Each difference is a feature test, never a version number: a macro the
 * kernel defines (IOCB_DONTCACHE, FOP_DONTCACHE) is tested directly; a
 * changed function signature is found by the Makefile, which greps the
 * headers of the kernel being built against and sets HFS_HAVE_* (the list
 * and the pattern of each is there).  Code outside this file and lower.c
 * never tests a HFS_HAVE_* itself.
 */
#ifndef HYBRIDFS_COMPAT_H
#define HYBRIDFS_COMPAT_H

#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/uio.h>

/* Mount idmaps (6.3) replaced user namespaces in the VFS helpers. */
#ifdef HFS_HAVE_MNT_IDMAP
typedef struct mnt_idmap hfs_idmap_t;
#define hfs_mnt_idmap(mnt) mnt_idmap(mnt)
#define hfs_nop_idmap (&nop_mnt_idmap)
#else
typedef struct user_namespace hfs_idmap_t;
#define hfs_mnt_idmap(mnt) mnt_user_ns(mnt)
#define hfs_nop_idmap (&init_user_ns)
#endif

/*
 * The VFS helpers that create or remove a name grew a delegation argument
 * (struct delegated_inode); hybridfs never breaks delegations itself.
 */
#ifdef HFS_HAVE_DELEGATED_INODE
#define HFS_DELEG_ARG , NULL
#else
#define HFS_DELEG_ARG
#endif

static inline int hfs_vfs_create(hfs_idmap_t *idmap, struct inode *dir,
				 struct dentry *d, umode_t mode, bool excl)
{
#ifdef HFS_HAVE_VFS_CREATE_NO_DIR
	return vfs_create(idmap, d, mode HFS_DELEG_ARG);
#else
	return vfs_create(idmap, dir, d, mode, excl);
#endif
}

/*
 * vfs_mkdir() returns the new dentry where it may be another one (6.15);
 * on failure it has then dropped a reference to @d, so one is taken here.
 * The caller's @d may be left negative or unhashed: it looks again.
 */
static inline int hfs_vfs_mkdir(hfs_idmap_t *idmap, struct inode *dir,
				struct dentry *d, umode_t mode)
{
#ifdef HFS_HAVE_VFS_MKDIR_DENTRY
	struct dentry *ret;

	ret = vfs_mkdir(idmap, dir, dget(d), mode HFS_DELEG_ARG);
	if (IS_ERR(ret))
		return PTR_ERR(ret);
	dput(ret);
	return 0;
#else
	return vfs_mkdir(idmap, dir, d, mode);
#endif
}

static inline int hfs_vfs_symlink(hfs_idmap_t *idmap, struct inode *dir,
				  struct dentry *d, const char *target)
{
	return vfs_symlink(idmap, dir, d, target HFS_DELEG_ARG);
}

static inline int hfs_vfs_rmdir(hfs_idmap_t *idmap, struct inode *dir,
				struct dentry *d)
{
	return vfs_rmdir(idmap, dir, d HFS_DELEG_ARG);
}

/* ->create() lost its O_EXCL flag: the lower create is then exclusive. */
#ifdef HFS_HAVE_IOP_CREATE_NO_EXCL
#define HFS_IOP_CREATE_ARGS hfs_idmap_t *idmap, struct inode *dir, \
	struct dentry *dentry, umode_t mode
#define HFS_IOP_CREATE_EXCL true
#else
#define HFS_IOP_CREATE_ARGS hfs_idmap_t *idmap, struct inode *dir, \
	struct dentry *dentry, umode_t mode, bool excl
#define HFS_IOP_CREATE_EXCL excl
#endif

/* ->mkdir() returns the dentry it made, NULL for the one it was given (6.15). */
#ifdef HFS_HAVE_IOP_MKDIR_DENTRY
#define HFS_MKDIR_RET struct dentry *
#define hfs_mkdir_ret(err) ERR_PTR(err)
#else
#define HFS_MKDIR_RET int
#define hfs_mkdir_ret(err) (err)
#endif

/* Lookup without permission checks: the caller's were made on hybridfs. */
static inline struct dentry *hfs_lookup_noperm_unlocked(const struct qstr *name,
							struct dentry *base)
{
#ifdef HFS_HAVE_LOOKUP_NOPERM
	struct qstr q = QSTR_INIT(name->name, name->len);

	return lookup_noperm_unlocked(&q, base);
#else
	return lookup_one_len_unlocked(name->name, base, name->len);
#endif
}

/* ->d_revalidate() is told the parent and the name (6.14). */
#ifdef HFS_HAVE_D_REVALIDATE_DIR
#define HFS_D_REVALIDATE_ARGS struct inode *dir, const struct qstr *name, \
	struct dentry *dentry, unsigned int flags
#define hfs_call_d_revalidate(d, flags) \
	(d)->d_op->d_revalidate(d_inode_rcu((d)->d_parent), &(d)->d_name, d, flags)
#else
#define HFS_D_REVALIDATE_ARGS struct dentry *dentry, unsigned int flags
#define hfs_call_d_revalidate(d, flags) (d)->d_op->d_revalidate(d, flags)
#endif

/*
 * Where the VFS calls ->getattr() with AT_GETATTR_NOSEC (6.8 to 6.x), the
 * security hook has run on hybridfs's inode already: the lower call must
 * skip it too (vfs_getattr() refuses the flag with a warning and -EPERM).
 */
static inline int hfs_vfs_getattr(const struct path *path, struct kstat *stat,
				  u32 request_mask, unsigned int flags)
{
#ifdef AT_GETATTR_NOSEC
	if (flags & AT_GETATTR_NOSEC)
		return vfs_getattr_nosec(path, stat, request_mask, flags);
#endif
	return vfs_getattr(path, stat, request_mask, flags);
}

/* call_mmap() became vfs_mmap() (6.17), which also knows ->mmap_prepare. */
static inline int hfs_call_mmap(struct file *file, struct vm_area_struct *vma)
{
#ifdef HFS_HAVE_VFS_MMAP
	return vfs_mmap(file, vma);
#else
	return call_mmap(file, vma);
#endif
}

/* Can @file be mapped (->mmap, or ->mmap_prepare where it exists)? */
static inline bool hfs_file_can_mmap(const struct file *file)
{
#ifdef HFS_HAVE_MMAP_PREPARE
	if (file->f_op->mmap_prepare)
		return true;
#endif
	return file->f_op->mmap;
}

/* Splice reads through ->read_iter (generic_file_splice_read went in 6.5). */
#ifdef HFS_HAVE_COPY_SPLICE_READ
#define hfs_splice_read copy_splice_read
#else
#define hfs_splice_read generic_file_splice_read
#endif

/* The iovec array of an ITER_IOVEC iterator (iov became __iov in 6.4). */
static inline const struct iovec *hfs_iter_iov(const struct iov_iter *iter)
{
#ifdef HFS_HAVE_ITER_IOV
	return iter_iov(iter);
#else
	return iter->iov;
#endif
}

/*
 * The uncached buffered path (RWF_DONTCACHE, 6.14): a filesystem says it
 * supports it with FOP_DONTCACHE, a request asks for it with IOCB_DONTCACHE.
 */
#if defined(IOCB_DONTCACHE) && defined(FOP_DONTCACHE)
#define HFS_HAVE_DONTCACHE 1
#define HFS_IOCB_DONTCACHE IOCB_DONTCACHE
#define HFS_FOP_DONTCACHE_FLAGS .fop_flags = FOP_DONTCACHE,
static inline bool hfs_file_dontcache_ok(const struct file *f)
{
	return f->f_op->fop_flags & FOP_DONTCACHE;
}
#else
#define HFS_HAVE_DONTCACHE 0
#define HFS_IOCB_DONTCACHE 0
#define HFS_FOP_DONTCACHE_FLAGS
static inline bool hfs_file_dontcache_ok(const struct file *f)
{
	return false;
}
#endif

/* ->drop_inode that never keeps an unused inode cached. */
#ifdef HFS_HAVE_INODE_JUST_DROP
#define hfs_drop_inode inode_just_drop
#else
#define hfs_drop_inode generic_delete_inode
#endif

static inline void hfs_set_d_op(struct super_block *sb, const struct dentry_operations *ops)
{
#ifdef HFS_HAVE_SET_DEFAULT_D_OP
	set_default_d_op(sb, ops);
#else
	sb->s_d_op = ops;
#endif
}

/* Was @inode just made by iget5_locked() (I_NEW)? */
static inline bool hfs_inode_is_new(struct inode *inode)
{
#ifdef HFS_HAVE_INODE_STATE_READ
	return inode_state_read_once(inode) & I_NEW;
#else
	return inode->i_state & I_NEW;
#endif
}

#endif /* HYBRIDFS_COMPAT_H */
