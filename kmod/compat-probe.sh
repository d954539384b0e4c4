#!/bin/sh
# compat-probe.sh <kernel source or headers tree> - the HFS_HAVE_* flags of
# compat.h for that kernel, each a grep of its headers for the form an API
# takes there.  Run by the Makefile (Kbuild) once per build.
K=$1
have() { # <header under include/> <extended regex> <name>
	grep -qsE "$2" "$K/include/$1" && printf ' -DHFS_HAVE_%s' "$3"
}
# the same over the header's lines joined, for declarations split across lines
have_joined() {
	tr '\n\t' '  ' <"$K/include/$1" 2>/dev/null | grep -qE "$2" && printf ' -DHFS_HAVE_%s' "$3"
}
# struct mnt_idmap instead of struct user_namespace in the VFS helpers (6.3)
have linux/mount.h 'struct mnt_idmap \*mnt_idmap\(' MNT_IDMAP
# the name-changing helpers take a struct delegated_inode *
have linux/fs.h '^struct delegated_inode;' DELEGATED_INODE
# vfs_create() without the parent inode and the O_EXCL flag
have linux/fs.h 'int vfs_create\(struct mnt_idmap \*, struct dentry \*' VFS_CREATE_NO_DIR
# vfs_mkdir() returns the dentry it made (6.15)
have linux/fs.h 'struct dentry \*vfs_mkdir\(' VFS_MKDIR_DENTRY
# ->create() without the O_EXCL flag
have_joined linux/fs.h 'int \(\*create\) \([^)]*umode_t\);' IOP_CREATE_NO_EXCL
# ->mkdir() returns a dentry (6.15)
have linux/fs.h 'struct dentry \*\(\*mkdir\) *\(' IOP_MKDIR_DENTRY
# lookup_noperm_unlocked() replaced lookup_one_len_unlocked() (6.16)
have linux/namei.h 'lookup_noperm_unlocked\(' LOOKUP_NOPERM
# rename locking by start_renaming_two_dentries() / end_renaming()
have linux/namei.h 'int start_renaming_two_dentries\(' START_RENAMING
# ->d_revalidate(dir, name, dentry, flags) (6.14)
have linux/dcache.h 'd_revalidate\)\(struct inode \*' D_REVALIDATE_DIR
# vfs_mmap() replaced call_mmap() (6.17)
have linux/fs.h 'int vfs_mmap\(struct file \*' VFS_MMAP
# ->mmap_prepare() beside ->mmap() (6.16): ext4 has only the former
have linux/fs.h 'int \(\*mmap_prepare\)\(' MMAP_PREPARE
# copy_splice_read() replaced generic_file_splice_read() (6.5)
have linux/fs.h 'ssize_t copy_splice_read\(' COPY_SPLICE_READ
# iter_iov() for the iovec array (6.4)
have linux/uio.h 'iovec \*iter_iov\(' ITER_IOV
# generic_delete_inode() became inode_just_drop()
have linux/fs.h 'int inode_just_drop\(' INODE_JUST_DROP
# the default dentry operations are set with set_default_d_op()
have linux/dcache.h 'void set_default_d_op\(' SET_DEFAULT_D_OP
# i_state is read through inode_state_read_once()
have linux/fs.h 'inode_state_read_once\(' INODE_STATE_READ
echo
