// SPDX-License-Identifier: GPL-2.0-only
/*
 * dir.c - hybridfs directory files: readdir and seek on the lower
 * directory, opened alongside ours.
 */
#include <linux/fs.h>
#include <linux/fs_stack.h>

#include "hybridfs.h"

static int hfs_readdir(struct file *file, struct dir_context *ctx)
{
	struct file *lower = hfs_lower_file(file);
	int err;

	/* iterate_dir() starts the lower walk at the lower f_pos. */
	lower->f_pos = ctx->pos;
	err = hfs_lower_iterate(lower, ctx);
	fsstack_copy_attr_atime(file_inode(file), file_inode(lower));
	return err;
}

const struct file_operations hfs_dir_fops = {
	.open = hfs_open_lower,
	.release = hfs_release,
	.llseek = hfs_llseek,
	.read = generic_read_dir,
	.iterate_shared = hfs_readdir,
	.fsync = hfs_fsync,
};
