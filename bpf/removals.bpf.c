// SPDX-License-Identifier: GPL-2.0
/*
 * removals.bpf.c - counting the removals of the objects that inode rules
 * were made for, where the file system keeps no generation.
 *
 * An inode rule names its object by (dev, ino). A file system that gives a
 * freed number to the next file it makes (ext4, xfs, btrfs, f2fs) would
 * pass the rule's exception to that file: a config deleted, a key made
 * next. Those keep a generation, which the entry holds (SBX_GEN_INODE);
 * overlayfs keeps none, and its numbers are its upper layer's, reused as
 * that layer reuses them. So every removal of a name of such an object,
 * by anyone, counts here before the file system acts on it, and an entry
 * made for an earlier count keeps only its refusals (walk.bpf.c,
 * sbx_entry_floor). Only objects the daemon made a count for are
 * counted: one hash lookup per removal for everyone else.
 *
 * A removal that fails after its hook (an error of the file system) and
 * the second name of a hard link count too: the entry then refuses what
 * it allowed until the policy is compiled again, and allows nothing it
 * should not. The LSM hook of a rename cannot tell RENAME_EXCHANGE, which
 * removes nothing, and counts both objects the same way.
 */
#include "sbx_common.h"

static __always_inline void sbx_count_removal(struct dentry *d)
{
	struct sbx_protect_key k = {};
	struct inode *inode;
	__u32 *n;

	if (!d)
		return;
	inode = d->d_inode;
	if (!inode)
		return;
	k.dev = inode->i_sb->s_dev;
	k.ino = inode->i_ino;
	n = bpf_map_lookup_elem(&sbx_removals, &k);
	if (!n)
		return;
	__sync_fetch_and_add(n, 1);
	k = SBX_REMOVALS_ANY;
	n = bpf_map_lookup_elem(&sbx_removals, &k);
	if (n)
		__sync_fetch_and_add(n, 1);
}

/* after every earlier LSM agreed: a refused removal removes nothing */
SEC("lsm/inode_unlink")
int BPF_PROG(sbx_removal_unlink, struct inode *dir, struct dentry *dentry, int ret)
{
	if (!ret)
		sbx_count_removal(dentry);
	return ret;
}

SEC("lsm/inode_rmdir")
int BPF_PROG(sbx_removal_rmdir, struct inode *dir, struct dentry *dentry, int ret)
{
	if (!ret)
		sbx_count_removal(dentry);
	return ret;
}

/* the object a rename replaces */
SEC("lsm/inode_rename")
int BPF_PROG(sbx_removal_rename, struct inode *old_dir, struct dentry *old_dentry,
	     struct inode *new_dir, struct dentry *new_dentry, int ret)
{
	if (!ret)
		sbx_count_removal(new_dentry);
	return ret;
}

/* The landlock tier (no BPF-LSM): the same count on entry to the
 * security_* functions, before any LSM decides. Its walk decides only the
 * session's asks at open (files.bpf.c); Landlock's own rules hold their
 * objects, not numbers. */
SEC("fentry/security_inode_unlink")
int BPF_PROG(sbx_ll_removal_unlink, struct inode *dir, struct dentry *dentry)
{
	sbx_count_removal(dentry);
	return 0;
}

SEC("fentry/security_inode_rmdir")
int BPF_PROG(sbx_ll_removal_rmdir, struct inode *dir, struct dentry *dentry)
{
	sbx_count_removal(dentry);
	return 0;
}

SEC("fentry/security_inode_rename")
int BPF_PROG(sbx_ll_removal_rename, struct inode *old_dir, struct dentry *old_dentry,
	     struct inode *new_dir, struct dentry *new_dentry, unsigned int flags)
{
	if (!(flags & RENAME_EXCHANGE))
		sbx_count_removal(new_dentry);
	return 0;
}
