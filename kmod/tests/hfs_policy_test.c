// SPDX-License-Identifier: GPL-2.0-only
/*
 * hfs_policy_test.c - runs the policy table that libhybridio's unit tests
 * run (libhybridio/src/policy_cases.h) inside the kernel, compiled as the
 * hybridfs module compiles policy.h.  Loading it runs every row and prints
 * "hfs_policy_test: N passed, M failed" and a line per failed row; the load
 * fails (-EINVAL) when a row does.  Built by the VM test only.
 */
#include <linux/module.h>
#include <linux/printk.h>

#include "policy_cases.h"

static int __init hfs_policy_test_init(void)
{
	static const u64 keys[] = { 1, 0x5eed, 0x9e3779b97f4a7c15ULL };
	struct hio_decision d;
	int i, passed = 0, failed = 0, err;

	for (i = 0; i < ARRAY_SIZE(hio_policy_cases); i++) {
		const struct hio_policy_case *c = &hio_policy_cases[i];

		if (hio_policy_case_holds(c, &d)) {
			passed++;
			continue;
		}
		failed++;
		pr_err("hfs_policy_test: FAIL %s: got %s/%s, want %s/%s\n", c->name,
		       hio_path_name(d.path), hio_rule_name(d.rule),
		       hio_path_name(c->path), hio_rule_name(c->rule));
	}
	for (i = 0; i < ARRAY_SIZE(hio_reuse_extent_cases); i++) {
		const struct hio_reuse_extent_case *c = &hio_reuse_extent_cases[i];
		u64 got = hio_reuse_extent_mask(c->size, c->offset, c->length);
		u64 done = hio_reuse_finished_mask(c->size, c->offset, c->length);
		u64 need = hio_reuse_reread_mask(c->size, c->offset, c->length);

		if (got == c->mask && done == c->finished && need == c->reread) {
			passed++;
			continue;
		}
		failed++;
		pr_err("hfs_policy_test: FAIL extents of %llu at %llu+%llu: %#llx finished %#llx re-read %#llx, want %#llx finished %#llx re-read %#llx\n",
		       c->size, c->offset, c->length, got, done, need, c->mask, c->finished, c->reread);
	}
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		err = hio_reuse_admission_holds(keys[i]);
		if (!err) {
			passed++;
			continue;
		}
		failed++;
		pr_err("hfs_policy_test: FAIL admission of key %#llx: check %d\n", keys[i], err);
	}
	pr_info("hfs_policy_test: %d passed, %d failed\n", passed, failed);
	return failed ? -EINVAL : 0;
}

static void __exit hfs_policy_test_exit(void)
{
}

module_init(hfs_policy_test_init);
module_exit(hfs_policy_test_exit);
MODULE_DESCRIPTION("hybridfs: the policy table shared with libhybridio");
MODULE_LICENSE("GPL");
