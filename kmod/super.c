// SPDX-License-Identifier: GPL-2.0-only
/*
 * super.c - hybridfs module, mount (fs_context), tunables and super block.
 *
 *   mount -t hybridfs [-o policy=hybrid|buffered|direct|dontcache,write_threshold=2M,...]
 *         /lower/dir /mnt/point
 *
 * Tunables are declared once, in HFS_SIZE_TUNABLES() (hybridfs.h; plus the
 * policy), and that list drives mount option parsing, /proc/mounts, the
 * module parameters (defaults for new mounts) and the per-mount sysfs files.
 */
#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/statfs.h>

#include "hybridfs.h"

struct kmem_cache *hfs_dentry_cachep;
struct kmem_cache *hfs_file_cachep;
static struct kmem_cache *hfs_inode_cachep;

#define HFS_SIZE_TUNABLE_ROW(_name, _desc)				\
	[HFS_TUNABLE_##_name] = {					\
		.name = #_name,						\
		.offset = offsetof(struct hio_policy_config, _name),	\
	},
const struct hfs_size_tunable hfs_size_tunables[HFS_NR_SIZE_TUNABLES] = {
	HFS_SIZE_TUNABLES(HFS_SIZE_TUNABLE_ROW)
};
#undef HFS_SIZE_TUNABLE_ROW

/* Parse "123", "64K", "2M", "1G" (memparse suffixes). */
int hfs_parse_size(const char *s, u64 *out)
{
	char *end;
	u64 v;

	if (!s || !isdigit(*s))
		return -EINVAL;
	v = memparse(s, &end);
	if (*end == '\n')
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int hfs_parse_policy(const char *s, enum hio_mode *out)
{
	static const enum hio_mode modes[] = {
		HIO_MODE_HYBRID, HIO_MODE_BUFFERED, HIO_MODE_DIRECT, HIO_MODE_DONTCACHE
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		if (sysfs_streq(s, hio_mode_name(modes[i]))) {
			*out = modes[i];
			return 0;
		}
	}
	return -EINVAL;
}

/* Module parameters: defaults for new mounts; unset ones follow policy.h. */
static int hfs_mod_policy = -1;
static u64 hfs_mod_size[HFS_NR_SIZE_TUNABLES] = {
	[0 ... HFS_NR_SIZE_TUNABLES - 1] = U64_MAX
};

void hfs_default_config(struct hio_policy_config *cfg)
{
	int i;

	hio_policy_config_defaults(cfg);
	cfg->page_size = PAGE_SIZE;
	if (READ_ONCE(hfs_mod_policy) >= 0)
		cfg->mode = READ_ONCE(hfs_mod_policy);
	for (i = 0; i < HFS_NR_SIZE_TUNABLES; i++) {
		u64 v = READ_ONCE(hfs_mod_size[i]);

		if (v != U64_MAX)
			*hfs_cfg_size(cfg, i) = v;
	}
}

static int hfs_param_set_size(const char *val, const struct kernel_param *kp)
{
	u64 v;

	if (hfs_parse_size(val, &v) || v == U64_MAX) {
		pr_err("bad size '%s' for module parameter %s\n", val, kp->name);
		return -EINVAL;
	}
	WRITE_ONCE(*(u64 *)kp->arg, v);
	return 0;
}

static int hfs_param_get_size(char *buf, const struct kernel_param *kp)
{
	struct hio_policy_config cfg;

	hfs_default_config(&cfg);
	return sysfs_emit(buf, "%llu\n",
			  *hfs_cfg_size(&cfg, (u64 *)kp->arg - hfs_mod_size));
}

static const struct kernel_param_ops hfs_size_param_ops = {
	.set = hfs_param_set_size,
	.get = hfs_param_get_size,
};

static int hfs_param_set_policy(const char *val, const struct kernel_param *kp)
{
	enum hio_mode m;

	if (hfs_parse_policy(val, &m)) {
		pr_err("bad policy '%s' for module parameter policy (hybrid|buffered|direct)\n",
		       val);
		return -EINVAL;
	}
	WRITE_ONCE(hfs_mod_policy, m);
	return 0;
}

static int hfs_param_get_policy(char *buf, const struct kernel_param *kp)
{
	struct hio_policy_config cfg;

	hfs_default_config(&cfg);
	return sysfs_emit(buf, "%s\n", hio_mode_name(cfg.mode));
}

static const struct kernel_param_ops hfs_policy_param_ops = {
	.set = hfs_param_set_policy,
	.get = hfs_param_get_policy,
};

module_param_cb(policy, &hfs_policy_param_ops, NULL, 0644);
MODULE_PARM_DESC(policy, "default policy of new mounts: hybrid, buffered, direct or dontcache");
#define HFS_SIZE_PARAM(_name, _desc)					\
	module_param_cb(_name, &hfs_size_param_ops,			\
			&hfs_mod_size[HFS_TUNABLE_##_name], 0644);	\
	MODULE_PARM_DESC(_name, _desc);
HFS_SIZE_TUNABLES(HFS_SIZE_PARAM)
#undef HFS_SIZE_PARAM

/* Mount options. */
struct hfs_fs_context {
	struct hio_policy_config cfg;
};

static int hfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct hfs_fs_context *ctx = fc->fs_private;
	int i;

	if (strcmp(param->key, "policy") == 0) {
		if (param->type != fs_value_is_string ||
		    hfs_parse_policy(param->string, &ctx->cfg.mode))
			return invalfc(fc, "bad policy '%s' (expected hybrid, buffered or direct)",
				       param->type == fs_value_is_string ? param->string : "");
		return 0;
	}
	for (i = 0; i < HFS_NR_SIZE_TUNABLES; i++) {
		if (strcmp(param->key, hfs_size_tunables[i].name))
			continue;
		if (param->type != fs_value_is_string ||
		    hfs_parse_size(param->string, hfs_cfg_size(&ctx->cfg, i)))
			return invalfc(fc, "bad size '%s' for %s (a number with optional K, M or G)",
				       param->type == fs_value_is_string ? param->string : "",
				       param->key);
		return 0;
	}
	/* "source" and unknown keys: the VFS handles or rejects (with a log line). */
	return -ENOPARAM;
}

static struct inode *hfs_alloc_inode(struct super_block *sb)
{
	struct hfs_inode_info *hi = alloc_inode_sb(sb, hfs_inode_cachep, GFP_KERNEL);

	if (!hi)
		return NULL;
	hi->lower = NULL;
	hfs_reuse_init(&hi->reuse);
	return &hi->vfs_inode;
}

static void hfs_free_inode(struct inode *inode)
{
	kmem_cache_free(hfs_inode_cachep, HFS_I(inode));
}

static void hfs_evict_inode(struct inode *inode)
{
	struct inode *lower = hfs_lower_inode(inode);

	truncate_inode_pages_final(&inode->i_data);
	hfs_reuse_forget(inode);
	clear_inode(inode);
	if (lower) {
		HFS_I(inode)->lower = NULL;
		iput(lower);
	}
}

static int hfs_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	int err = hfs_lower_statfs(&HFS_SB(dentry->d_sb)->lower_root, buf);

	buf->f_type = HYBRIDFS_MAGIC;
	return err;
}

static int hfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct hfs_sb_info *sbi = HFS_SB(root->d_sb);
	int i;

	seq_printf(m, ",policy=%s", hio_mode_name(READ_ONCE(sbi->cfg.mode)));
	for (i = 0; i < HFS_NR_SIZE_TUNABLES; i++)
		seq_printf(m, ",%s=%llu", hfs_size_tunables[i].name,
			   READ_ONCE(*hfs_cfg_size(&sbi->cfg, i)));
	return 0;
}

static const struct super_operations hfs_sops = {
	.alloc_inode = hfs_alloc_inode,
	.free_inode = hfs_free_inode,
	.evict_inode = hfs_evict_inode,
	.drop_inode = hfs_drop_inode,
	.statfs = hfs_statfs,
	.show_options = hfs_show_options,
};

static int hfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct hfs_fs_context *ctx = fc->fs_private;
	struct super_block *lower_sb;
	struct hfs_sb_info *sbi;
	struct inode *inode;
	struct path root_path;
	int err;

	sbi = kzalloc(sizeof(*sbi), GFP_KERNEL);
	if (!sbi)
		return -ENOMEM;
	init_completion(&sbi->kobj_released);
	sbi->cfg = ctx->cfg;
	sb->s_fs_info = sbi;

	err = kern_path(fc->source, LOOKUP_FOLLOW | LOOKUP_DIRECTORY, &sbi->lower_root);
	if (err) {
		errorfc(fc, "cannot use '%s' as lower directory: error %d", fc->source, err);
		return err;
	}
	lower_sb = sbi->lower_root.dentry->d_sb;
	sb->s_stack_depth = lower_sb->s_stack_depth + 1;
	if (sb->s_stack_depth > FILESYSTEM_MAX_STACK_DEPTH)
		return invalfc(fc, "'%s' is stacked too deeply", fc->source);

	sb->s_maxbytes = lower_sb->s_maxbytes;
	sb->s_blocksize = lower_sb->s_blocksize;
	sb->s_blocksize_bits = lower_sb->s_blocksize_bits;
	sb->s_time_gran = lower_sb->s_time_gran;
	sb->s_magic = HYBRIDFS_MAGIC;
	sb->s_op = &hfs_sops;
	hfs_set_d_op(sb, &hfs_dops);

	inode = hfs_iget(sb, d_inode(sbi->lower_root.dentry));
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	sb->s_root = d_make_root(inode);
	if (!sb->s_root)
		return -ENOMEM;
	root_path = sbi->lower_root;
	path_get(&root_path);
	err = hfs_new_dentry_info(sb->s_root, &root_path);
	if (err) {
		path_put(&root_path);
		return err;
	}

	err = hfs_sysfs_add(sb);
	if (err)
		return err;
	pr_info("mounted %s as %u:%u, policy %s\n", fc->source, MAJOR(sb->s_dev),
		MINOR(sb->s_dev), hio_mode_name(sbi->cfg.mode));
	return 0;
}

static int hfs_get_tree(struct fs_context *fc)
{
	if (!fc->source)
		return invalfc(fc, "no lower directory given");
	return get_tree_nodev(fc, hfs_fill_super);
}

static int hfs_reconfigure(struct fs_context *fc)
{
	struct hfs_fs_context *ctx = fc->fs_private;
	struct hfs_sb_info *sbi = HFS_SB(fc->root->d_sb);
	int i;

	WRITE_ONCE(sbi->cfg.mode, ctx->cfg.mode);
	for (i = 0; i < HFS_NR_SIZE_TUNABLES; i++)
		WRITE_ONCE(*hfs_cfg_size(&sbi->cfg, i), *hfs_cfg_size(&ctx->cfg, i));
	return 0;
}

static void hfs_free_fc(struct fs_context *fc)
{
	kfree(fc->fs_private);
}

static const struct fs_context_operations hfs_context_ops = {
	.free = hfs_free_fc,
	.parse_param = hfs_parse_param,
	.get_tree = hfs_get_tree,
	.reconfigure = hfs_reconfigure,
};

static int hfs_init_fs_context(struct fs_context *fc)
{
	struct hfs_fs_context *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	if (fc->purpose == FS_CONTEXT_FOR_RECONFIGURE)
		ctx->cfg = HFS_SB(fc->root->d_sb)->cfg;
	else
		hfs_default_config(&ctx->cfg);
	fc->fs_private = ctx;
	fc->ops = &hfs_context_ops;
	return 0;
}

static void hfs_kill_sb(struct super_block *sb)
{
	struct hfs_sb_info *sbi = HFS_SB(sb);

	/* Before the anonymous device number can be reused by a new mount. */
	if (sbi)
		hfs_sysfs_del(sb);
	kill_anon_super(sb);
	if (sbi) {
		path_put(&sbi->lower_root);
		kfree(sbi);
	}
}

static struct file_system_type hfs_fs_type = {
	.owner = THIS_MODULE,
	.name = HYBRIDFS_NAME,
	.init_fs_context = hfs_init_fs_context,
	.kill_sb = hfs_kill_sb,
};
MODULE_ALIAS_FS(HYBRIDFS_NAME);

static void hfs_inode_init_once(void *p)
{
	struct hfs_inode_info *hi = p;

	inode_init_once(&hi->vfs_inode);
}

static void hfs_destroy_caches(void)
{
	/* Inodes are freed after an RCU grace period. */
	rcu_barrier();
	kmem_cache_destroy(hfs_inode_cachep);
	kmem_cache_destroy(hfs_dentry_cachep);
	kmem_cache_destroy(hfs_file_cachep);
}

static int __init hfs_init(void)
{
	int err = -ENOMEM;

	hfs_inode_cachep = kmem_cache_create("hybridfs_inode", sizeof(struct hfs_inode_info),
					     0, SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
					     hfs_inode_init_once);
	hfs_dentry_cachep = kmem_cache_create("hybridfs_dentry", sizeof(struct hfs_dentry_info),
					      0, SLAB_RECLAIM_ACCOUNT, NULL);
	hfs_file_cachep = kmem_cache_create("hybridfs_file", sizeof(struct hfs_file_info),
					    0, 0, NULL);
	if (!hfs_inode_cachep || !hfs_dentry_cachep || !hfs_file_cachep)
		goto caches;
	err = hfs_sysfs_init();
	if (err)
		goto caches;
	err = register_filesystem(&hfs_fs_type);
	if (err)
		goto sysfs;
	return 0;
sysfs:
	hfs_sysfs_exit();
caches:
	hfs_destroy_caches();
	return err;
}

static void __exit hfs_exit(void)
{
	unregister_filesystem(&hfs_fs_type);
	hfs_sysfs_exit();
	hfs_destroy_caches();
}

module_init(hfs_init);
module_exit(hfs_exit);

MODULE_DESCRIPTION("hybridfs: stackable filesystem routing each request buffered or direct");
MODULE_LICENSE("GPL");
