/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * hybridfs.h - private header of the hybridfs stackable filesystem.
 *
 * hybridfs stacks over one directory of any filesystem ("the lower fs")
 * and forwards every operation to it.  Each hybridfs object holds the lower
 * object it stands for: the super block the lower root path, an inode the
 * lower inode, a dentry the lower path, an open file the lower open file.
 * Reads and writes are routed per request by the Hybrid-IO policy core
 * (hybridio/policy.h): buffered, or direct by setting IOCB_DIRECT on the
 * kiocb handed to the lower file.
 *
 * All calls into the lower filesystem go through the hfs_lower_*()
 * wrappers in lower.c, which log at debug level (dynamic debug).
 *
 * Locking: the lower objects are set once when a hybridfs object is built
 * and never change, except the lower path of a dentry, which is guarded
 * by hfs_dentry_info.lock.  Counters are atomic; tunables are read with
 * READ_ONCE and may be changed at any time through sysfs or a remount.
 */
#ifndef HYBRIDFS_H
#define HYBRIDFS_H

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/kobject.h>
#include <linux/path.h>
#include <linux/spinlock.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/uio.h>

#include <hybridio/policy.h>

#include "compat.h"

#define HYBRIDFS_NAME  "hybridfs"
#define HYBRIDFS_MAGIC 0x48594246 /* "HYBF" */

/* Counters of one mount; see docs/kmod.md for their meaning. */
enum hfs_fallback {
	HFS_FB_ITER = 0,   /* direct planned, but the iterator is not user memory */
	HFS_FB_BOUNCE,     /* direct planned, but the buffer needs a bounce copy */
	HFS_FB_MISALIGNED, /* direct planned, but iovec segments are misaligned */
	HFS_FB_EINVAL,     /* the lower fs refused the direct I/O with EINVAL */
	HFS_FB_DONTCACHE,  /* uncached planned, but the kernel or the lower fs has no
			    * IOCB_DONTCACHE: buffered */
	HFS_FB_COUNT
};

struct hfs_stats {
	atomic64_t requests[2][HIO_PATH_COUNT]; /* [op][path the body took] */
	atomic64_t bytes[2][HIO_PATH_COUNT];    /* [op][path each byte took] */
	atomic64_t rule_requests[HIO_RULE_COUNT];
	atomic64_t rule_bytes[HIO_RULE_COUNT];
	atomic64_t fallbacks[HFS_FB_COUNT];
	atomic64_t splits;                      /* head/tail buffered, body direct */
	atomic64_t errors;                      /* lower I/O returned an error */
	atomic64_t reuse_admitted_reads;        /* re-read data sent through the cache */
	atomic64_t reuse_admitted_bytes;
	atomic64_t reuse_hit_reads;             /* later reads of it found cached */
	atomic64_t reuse_hit_bytes;
};

/*
 * The re-use history of one inode (reuse.c): extents of the file read off
 * the page cache recently (hio_reuse_extent_mask() bitmaps), the input of
 * the policy's reuse rule (HIO_FILE_REUSE).  Reset when the file is
 * written, truncated or changed below hybridfs (its size moved).
 */
struct hfs_reuse {
	spinlock_t lock;
	u64 size;     /* the file size the extents were cut from */
	u64 read;     /* extents read off the cache, or admitted */
	u64 admitted; /* extents the rule admitted to the cache */
	u32 last;     /* coarse clock of the last read recorded, 0 = none */
};

struct hfs_sb_info {
	struct path lower_root;           /* the lower directory mounted over */
	struct hio_policy_config cfg;     /* live tunables (READ_ONCE fields) */
	struct hfs_stats stats;
	atomic64_t reuse_read_bytes;      /* data of the mount's histories: what
					   * the re-use budget is shared by */
	struct kobject kobj;              /* /sys/fs/hybridfs/<major:minor> */
	struct completion kobj_released;
	bool kobj_added;
};

struct hfs_inode_info {
	struct inode *lower;
	struct hfs_reuse reuse;
	struct inode vfs_inode;
};

struct hfs_dentry_info {
	spinlock_t lock;
	struct path lower;
};

struct hfs_file_info {
	struct file *lower;
	u32 dio_mem_align;     /* STATX_DIOALIGN of the lower file, 0 = none */
	u32 dio_offset_align;
	loff_t next_pos;       /* end of the previous request: sequential detection */
	u32 seq_run;           /* sequential predecessors of the next request */
};

static inline struct hfs_sb_info *HFS_SB(const struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline struct hfs_inode_info *HFS_I(const struct inode *inode)
{
	return container_of(inode, struct hfs_inode_info, vfs_inode);
}

static inline struct inode *hfs_lower_inode(const struct inode *inode)
{
	return HFS_I(inode)->lower;
}

static inline struct hfs_dentry_info *HFS_D(const struct dentry *dentry)
{
	return dentry->d_fsdata;
}

static inline struct hfs_file_info *HFS_F(const struct file *file)
{
	return file->private_data;
}

static inline struct file *hfs_lower_file(const struct file *file)
{
	return HFS_F(file)->lower;
}

/* Take a reference to the lower path of @dentry; release with path_put(). */
static inline void hfs_get_lower_path(const struct dentry *dentry, struct path *out)
{
	struct hfs_dentry_info *di = HFS_D(dentry);

	spin_lock(&di->lock);
	*out = di->lower;
	path_get(out);
	spin_unlock(&di->lock);
}

/* The lower dentry without a reference: valid while @dentry is pinned. */
static inline struct dentry *hfs_lower_dentry(const struct dentry *dentry)
{
	return HFS_D(dentry)->lower.dentry;
}

static inline hfs_idmap_t *hfs_lower_idmap(const struct super_block *sb)
{
	return hfs_mnt_idmap(HFS_SB(sb)->lower_root.mnt);
}

/* super.c */
extern struct kmem_cache *hfs_dentry_cachep;
extern struct kmem_cache *hfs_file_cachep;

/*
 * The size tunables: hio_policy_config fields of the same name, declared
 * once here with their module parameter description.  The list makes the
 * named indices below, hfs_size_tunables[] (mount options, /proc/mounts),
 * the module parameters (super.c) and the per-mount sysfs files (sysfs.c).
 */
#define HFS_SIZE_TUNABLES(X)						\
	X(write_threshold, "default size from which writes go direct (K/M/G)") \
	X(read_threshold, "default size from which uncached reads go direct") \
	X(sync_write_threshold, "default write threshold for O_SYNC/O_DSYNC writes") \
	X(stream_threshold, "default write threshold in long sequential write streams")

#define HFS_SIZE_TUNABLE_INDEX(name, desc) HFS_TUNABLE_##name,
enum hfs_size_tunable_index {
	HFS_SIZE_TUNABLES(HFS_SIZE_TUNABLE_INDEX)
	HFS_NR_SIZE_TUNABLES
};
#undef HFS_SIZE_TUNABLE_INDEX

struct hfs_size_tunable {
	const char *name;
	size_t offset; /* of a hio_u64 in struct hio_policy_config */
};

extern const struct hfs_size_tunable hfs_size_tunables[HFS_NR_SIZE_TUNABLES];

static inline u64 *hfs_cfg_size(struct hio_policy_config *cfg, int i)
{
	return (u64 *)((char *)cfg + hfs_size_tunables[i].offset);
}

int hfs_parse_size(const char *s, u64 *out);
int hfs_parse_policy(const char *s, enum hio_mode *out);
void hfs_default_config(struct hio_policy_config *cfg);

/* inode.c */
struct inode *hfs_iget(struct super_block *sb, struct inode *lower);
void hfs_copy_attr(struct inode *inode);
int hfs_permission(hfs_idmap_t *idmap, struct inode *inode, int mask);
int hfs_getattr(hfs_idmap_t *idmap, const struct path *path,
		struct kstat *stat, u32 request_mask, unsigned int flags);
int hfs_setattr(hfs_idmap_t *idmap, struct dentry *dentry,
		struct iattr *ia);
extern const struct inode_operations hfs_file_iops;
extern const struct inode_operations hfs_symlink_iops;
extern const struct inode_operations hfs_special_iops;
extern const struct address_space_operations hfs_aops;

/* namei.c */
int hfs_new_dentry_info(struct dentry *dentry, const struct path *lower);
extern const struct inode_operations hfs_dir_iops;
extern const struct dentry_operations hfs_dops;

/* file.c */
int hfs_open_lower(struct inode *inode, struct file *file);
int hfs_release(struct inode *inode, struct file *file);
loff_t hfs_llseek(struct file *file, loff_t offset, int whence);
int hfs_fsync(struct file *file, loff_t start, loff_t end, int datasync);
extern const struct file_operations hfs_file_fops;

/* reuse.c */
extern unsigned int hfs_reuse_window;
void hfs_reuse_init(struct hfs_reuse *h);
void hfs_reuse_forget(struct inode *inode);
void hfs_reuse_consult(struct inode *inode, const struct hio_policy_config *cfg,
		       struct hio_request *r, struct hio_decision *d);

/* dir.c */
extern const struct file_operations hfs_dir_fops;

/* sysfs.c */
int hfs_sysfs_init(void);
void hfs_sysfs_exit(void);
int hfs_sysfs_add(struct super_block *sb);
void hfs_sysfs_del(struct super_block *sb);
void hfs_stats_count(struct hfs_sb_info *sbi, const struct hio_decision *d,
		     enum hio_op op, enum hio_path taken, u64 len);
void hfs_stats_bytes(struct hfs_sb_info *sbi, enum hio_op op,
		     enum hio_path path, ssize_t done);
void hfs_stats_fallback(struct hfs_sb_info *sbi, enum hfs_fallback fb);

/* lower.c: every call into the lower filesystem. */
struct dentry *hfs_lower_lookup(struct dentry *lower_dir, const struct qstr *name);
struct file *hfs_lower_open(const struct path *lower, int flags);
int hfs_lower_dio_align(const struct path *lower, u32 *mem_align, u32 *offset_align);
int hfs_lower_create(struct super_block *sb, struct dentry *d, umode_t mode, bool excl);
int hfs_lower_mkdir(struct super_block *sb, struct dentry *d, umode_t mode);
int hfs_lower_symlink(struct super_block *sb, struct dentry *d, const char *target);
int hfs_lower_link(struct super_block *sb, struct dentry *old, struct dentry *new);
int hfs_lower_unlink(struct super_block *sb, struct dentry *d);
int hfs_lower_rmdir(struct super_block *sb, struct dentry *d);
int hfs_lower_rename(struct super_block *sb, struct dentry *old, struct dentry *new,
		     unsigned int flags);
int hfs_lower_setattr(struct super_block *sb, struct dentry *d, struct iattr *ia);
const char *hfs_lower_get_link(struct dentry *lower, struct delayed_call *done);
int hfs_lower_getattr(const struct path *lower, struct kstat *stat,
		      u32 request_mask, unsigned int flags);
int hfs_lower_permission(struct super_block *sb, struct inode *lower, int mask);
ssize_t hfs_lower_read(struct file *lower, struct kiocb *iocb, struct iov_iter *iter);
ssize_t hfs_lower_write(struct file *lower, struct kiocb *iocb, struct iov_iter *iter);
int hfs_lower_fsync(struct file *lower, loff_t start, loff_t end, int datasync);
loff_t hfs_lower_llseek(struct file *lower, loff_t offset, int whence);
long hfs_lower_fallocate(struct file *lower, int mode, loff_t offset, loff_t len);
int hfs_lower_fadvise(struct file *lower, loff_t offset, loff_t len, int advice);
int hfs_lower_flush(struct file *lower, fl_owner_t id);
int hfs_lower_mmap(struct file *lower, struct vm_area_struct *vma);
int hfs_lower_iterate(struct file *lower, struct dir_context *ctx);
int hfs_lower_statfs(const struct path *lower, struct kstatfs *buf);

#endif /* HYBRIDFS_H */
