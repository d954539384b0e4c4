// SPDX-License-Identifier: GPL-2.0-only
/*
 * sysfs.c - per-mount counters and tunables in /sys/fs/hybridfs/<dev>/,
 * where <dev> is the mount's anonymous device "major:minor", as shown in
 * the third field of /proc/self/mountinfo and by stat -c '%Hd:%Ld'.
 *
 *   stats          counters, one "name value" per line (see docs/kmod.md)
 *   reset_stats    write anything to zero the counters
 *   policy         hybrid | buffered | direct | dontcache (read-write)
 *   *_threshold    sizes in bytes, K/M/G accepted on write (read-write)
 *   lower          the lower directory as given to mount
 *
 * and /sys/fs/hybridfs/features: "dontcache" where the kernel has the
 * uncached buffered path (IOCB_DONTCACHE), and "reuse".
 */
#include <linux/fs.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "hybridfs.h"

static struct kset *hfs_kset;

static const char *const hfs_op_names[2] = { "read", "write" };
static const char *const hfs_fb_names[HFS_FB_COUNT] = {
	"iter", "bounce", "misaligned", "einval", "dontcache"
};

void hfs_stats_count(struct hfs_sb_info *sbi, const struct hio_decision *d,
		     enum hio_op op, enum hio_path taken, u64 len)
{
	atomic64_inc(&sbi->stats.requests[op][taken]);
	atomic64_inc(&sbi->stats.rule_requests[d->rule]);
	atomic64_add(len, &sbi->stats.rule_bytes[d->rule]);
}

void hfs_stats_bytes(struct hfs_sb_info *sbi, enum hio_op op,
		     enum hio_path path, ssize_t done)
{
	atomic64_add(done, &sbi->stats.bytes[op][path]);
}

void hfs_stats_fallback(struct hfs_sb_info *sbi, enum hfs_fallback fb)
{
	atomic64_inc(&sbi->stats.fallbacks[fb]);
}

struct hfs_attr {
	struct attribute attr;
	ssize_t (*show)(struct hfs_sb_info *sbi, const struct hfs_attr *a, char *buf);
	ssize_t (*store)(struct hfs_sb_info *sbi, const struct hfs_attr *a,
			 const char *buf, size_t len);
	enum hfs_size_tunable_index index; /* size tunables only */
};

static ssize_t hfs_stats_show(struct hfs_sb_info *sbi, const struct hfs_attr *a, char *buf)
{
	struct hfs_stats *s = &sbi->stats;
	int op, path, r, n = 0;

	for (op = 0; op < 2; op++) {
		for (path = HIO_PATH_BUFFERED; path < HIO_PATH_COUNT; path++) {
			n += sysfs_emit_at(buf, n, "%s_%s_requests %lld\n", hfs_op_names[op],
					   hio_path_name(path),
					   atomic64_read(&s->requests[op][path]));
			n += sysfs_emit_at(buf, n, "%s_%s_bytes %lld\n", hfs_op_names[op],
					   hio_path_name(path),
					   atomic64_read(&s->bytes[op][path]));
		}
	}
	for (r = 0; r < HIO_RULE_COUNT; r++) {
		n += sysfs_emit_at(buf, n, "rule_%s_requests %lld\n", hio_rule_name(r),
				   atomic64_read(&s->rule_requests[r]));
		n += sysfs_emit_at(buf, n, "rule_%s_bytes %lld\n", hio_rule_name(r),
				   atomic64_read(&s->rule_bytes[r]));
	}
	for (r = 0; r < HFS_FB_COUNT; r++)
		n += sysfs_emit_at(buf, n, "fallback_%s %lld\n", hfs_fb_names[r],
				   atomic64_read(&s->fallbacks[r]));
	n += sysfs_emit_at(buf, n, "splits %lld\n", atomic64_read(&s->splits));
	n += sysfs_emit_at(buf, n, "errors %lld\n", atomic64_read(&s->errors));
	n += sysfs_emit_at(buf, n, "reuse_admitted_reads %lld\n",
			   atomic64_read(&s->reuse_admitted_reads));
	n += sysfs_emit_at(buf, n, "reuse_admitted_bytes %lld\n",
			   atomic64_read(&s->reuse_admitted_bytes));
	n += sysfs_emit_at(buf, n, "reuse_hit_reads %lld\n", atomic64_read(&s->reuse_hit_reads));
	n += sysfs_emit_at(buf, n, "reuse_hit_bytes %lld\n", atomic64_read(&s->reuse_hit_bytes));
	return n;
}

static ssize_t hfs_reset_store(struct hfs_sb_info *sbi, const struct hfs_attr *a,
			       const char *buf, size_t len)
{
	struct hfs_stats *s = &sbi->stats;
	atomic64_t *c = (atomic64_t *)s;
	size_t i;

	for (i = 0; i < sizeof(*s) / sizeof(*c); i++)
		atomic64_set(&c[i], 0);
	return len;
}

static ssize_t hfs_policy_show(struct hfs_sb_info *sbi, const struct hfs_attr *a, char *buf)
{
	return sysfs_emit(buf, "%s\n", hio_mode_name(READ_ONCE(sbi->cfg.mode)));
}

static ssize_t hfs_policy_store(struct hfs_sb_info *sbi, const struct hfs_attr *a,
				const char *buf, size_t len)
{
	enum hio_mode m;

	if (hfs_parse_policy(buf, &m))
		return -EINVAL;
	WRITE_ONCE(sbi->cfg.mode, m);
	return len;
}

static ssize_t hfs_size_show(struct hfs_sb_info *sbi, const struct hfs_attr *a, char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(*hfs_cfg_size(&sbi->cfg, a->index)));
}

static ssize_t hfs_size_store(struct hfs_sb_info *sbi, const struct hfs_attr *a,
			      const char *buf, size_t len)
{
	u64 v;

	if (hfs_parse_size(buf, &v))
		return -EINVAL;
	WRITE_ONCE(*hfs_cfg_size(&sbi->cfg, a->index), v);
	return len;
}

static ssize_t hfs_lower_show(struct hfs_sb_info *sbi, const struct hfs_attr *a, char *buf)
{
	char *tmp, *p;
	ssize_t n;

	tmp = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!tmp)
		return -ENOMEM;
	p = d_path(&sbi->lower_root, tmp, PATH_MAX);
	n = IS_ERR(p) ? PTR_ERR(p) : sysfs_emit(buf, "%s\n", p);
	kfree(tmp);
	return n;
}

#define HFS_ATTR(_name, _mode, _show, _store, _index) \
	static struct hfs_attr hfs_attr_##_name = { \
		.attr = { .name = #_name, .mode = _mode }, \
		.show = _show, .store = _store, .index = _index, \
	}

HFS_ATTR(stats, 0444, hfs_stats_show, NULL, 0);
HFS_ATTR(reset_stats, 0200, NULL, hfs_reset_store, 0);
HFS_ATTR(policy, 0644, hfs_policy_show, hfs_policy_store, 0);
HFS_ATTR(lower, 0444, hfs_lower_show, NULL, 0);

#define HFS_SIZE_ATTR(_name, _desc) \
	HFS_ATTR(_name, 0644, hfs_size_show, hfs_size_store, HFS_TUNABLE_##_name);
HFS_SIZE_TUNABLES(HFS_SIZE_ATTR)
#undef HFS_SIZE_ATTR

#define HFS_SIZE_ATTR_ENTRY(_name, _desc) &hfs_attr_##_name.attr,

static struct attribute *hfs_attrs[] = {
	&hfs_attr_stats.attr,
	&hfs_attr_reset_stats.attr,
	&hfs_attr_policy.attr,
	HFS_SIZE_TUNABLES(HFS_SIZE_ATTR_ENTRY)
	&hfs_attr_lower.attr,
	NULL,
};
#undef HFS_SIZE_ATTR_ENTRY
ATTRIBUTE_GROUPS(hfs);

static ssize_t hfs_attr_show(struct kobject *kobj, struct attribute *attr, char *buf)
{
	struct hfs_sb_info *sbi = container_of(kobj, struct hfs_sb_info, kobj);
	struct hfs_attr *a = container_of(attr, struct hfs_attr, attr);

	return a->show ? a->show(sbi, a, buf) : -EIO;
}

static ssize_t hfs_attr_store(struct kobject *kobj, struct attribute *attr,
			      const char *buf, size_t len)
{
	struct hfs_sb_info *sbi = container_of(kobj, struct hfs_sb_info, kobj);
	struct hfs_attr *a = container_of(attr, struct hfs_attr, attr);

	return a->store ? a->store(sbi, a, buf, len) : -EIO;
}

static const struct sysfs_ops hfs_sysfs_ops = {
	.show = hfs_attr_show,
	.store = hfs_attr_store,
};

static void hfs_kobj_release(struct kobject *kobj)
{
	struct hfs_sb_info *sbi = container_of(kobj, struct hfs_sb_info, kobj);

	complete(&sbi->kobj_released);
}

static struct kobj_type hfs_ktype = {
	.sysfs_ops = &hfs_sysfs_ops,
	.default_groups = hfs_groups,
	.release = hfs_kobj_release,
};

int hfs_sysfs_add(struct super_block *sb)
{
	struct hfs_sb_info *sbi = HFS_SB(sb);
	int err;

	sbi->kobj.kset = hfs_kset;
	err = kobject_init_and_add(&sbi->kobj, &hfs_ktype, NULL, "%u:%u",
				   MAJOR(sb->s_dev), MINOR(sb->s_dev));
	if (err) {
		kobject_put(&sbi->kobj);
		wait_for_completion(&sbi->kobj_released);
		return err;
	}
	sbi->kobj_added = true;
	return 0;
}

void hfs_sysfs_del(struct super_block *sb)
{
	struct hfs_sb_info *sbi = HFS_SB(sb);

	if (!sbi->kobj_added)
		return;
	kobject_del(&sbi->kobj);
	kobject_put(&sbi->kobj);
	wait_for_completion(&sbi->kobj_released);
	sbi->kobj_added = false;
}

/* /sys/fs/hybridfs/features: what this build can do on this kernel. */
static ssize_t hfs_features_show(struct kobject *kobj, struct kobj_attribute *attr,
				 char *buf)
{
	return sysfs_emit(buf, "%s\n", HFS_HAVE_DONTCACHE ? "dontcache reuse" : "reuse");
}

static struct kobj_attribute hfs_features_attr = __ATTR(features, 0444, hfs_features_show, NULL);

int hfs_sysfs_init(void)
{
	int err;

	hfs_kset = kset_create_and_add(HYBRIDFS_NAME, NULL, fs_kobj);
	if (!hfs_kset)
		return -ENOMEM;
	err = sysfs_create_file(&hfs_kset->kobj, &hfs_features_attr.attr);
	if (err)
		kset_unregister(hfs_kset);
	return err;
}

void hfs_sysfs_exit(void)
{
	sysfs_remove_file(&hfs_kset->kobj, &hfs_features_attr.attr);
	kset_unregister(hfs_kset);
}
