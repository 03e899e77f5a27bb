// SPDX-License-Identifier: GPL-2.0
/*
 * metadata.bpf.c - changes to a file that are not writes to its data but
 * act like them: extended attributes (a POSIX ACL entry "o::rw" opens the
 * file to every account), times (backdating a file to hide a change from
 * make or a backup), and inode flags (chattr). Each needs what a write
 * needs: the session's write verdict on the file.
 *
 * chmod, chown and truncate are path hooks in files.bpf.c; the inode hooks
 * here get no vfsmount, so the mount for the walk is found from the super
 * block (sbx_sb_mount).
 */
#include "sbx_file.h"

#define ATTR_MODE	(1 << 0)
#define ATTR_UID	(1 << 1)
#define ATTR_GID	(1 << 2)
#define ATTR_SIZE	(1 << 3)
#define ATTR_ATIME	(1 << 4)
#define ATTR_MTIME	(1 << 5)

#define FS_IOC_SETFLAGS		0x40086602
#define FS_IOC32_SETFLAGS	0x40046602
#define FS_IOC_SETVERSION	0x40087602
#define FS_IOC32_SETVERSION	0x40047602
#define FS_IOC_FSSETXATTR	0x401c5820
#define FS_IOC_ENABLE_VERITY	0x40806685

struct sbx_mctx {
	__u64 head;		/* &sb->s_mounts */
	__u64 node;
	__u64 ns;		/* the caller's mount namespace */
	__u64 root;		/* sb->s_root */
	__u64 in_ns;		/* first mount of the sb in ns */
	__u64 whole;		/* ... that mounts its root */
	__u64 any;
	bool internal;		/* a stacking file system's private mount */
};

/* clone_private_mount() marks the mounts overlayfs and its kin keep for
 * their layers with this namespace (fs/mount.h) */
#define SBX_MNT_NS_INTERNAL ((__u64)-22)

static long sbx_mount_step(__u32 i, void *ctx)
{
	struct sbx_mctx *c = ctx;
	struct mount *m;

	if (!c->node || c->node == c->head)
		return 1;
	m = (void *)c->node - bpf_core_field_offset(struct mount, mnt_instance);
	if (!c->any)
		c->any = (__u64)&m->mnt;
	if ((__u64)BPF_CORE_READ(m, mnt_ns) == SBX_MNT_NS_INTERNAL)
		c->internal = true;
	if ((__u64)BPF_CORE_READ(m, mnt_ns) == c->ns) {
		if (!c->in_ns)
			c->in_ns = (__u64)&m->mnt;
		/* the first such; the rest of the list is still read, for a
		 * private mount of a stacking file system */
		if (!c->whole && (__u64)BPF_CORE_READ(m, mnt.mnt_root) == c->root)
			c->whole = (__u64)&m->mnt;
	}
	{
		/* a local first: inside BPF_CORE_READ our own struct's field
		 * would get a CO-RE relocation that no kernel type matches */
		struct list_head *n = (void *)c->node;

		c->node = (__u64)BPF_CORE_READ(n, next);
	}
	return 0;
}

/*
 * A mount of dentry's file system for the walk to climb through: one of
 * the caller's namespace that mounts the whole file system, else any of
 * its namespace, else any at all (an overlay's private upper mount). Only
 * path-based rules above the file system's root depend on the choice;
 * inode and chain rules do not. NULL: none found, the caller denies.
 */
static __always_inline struct vfsmount *sbx_sb_mount(struct dentry *d, bool *layer)
{
	struct super_block *sb = BPF_CORE_READ(d, d_sb);
	struct task_struct *t = bpf_get_current_task_btf();
	struct sbx_mctx c = {};

	if (!sb)
		return NULL;
	c.head = (__u64)sb + bpf_core_field_offset(struct super_block, s_mounts);
	c.node = (__u64)BPF_CORE_READ(sb, s_mounts.next);
	c.ns = (__u64)BPF_CORE_READ(t, nsproxy, mnt_ns);
	c.root = (__u64)BPF_CORE_READ(sb, s_root);
	bpf_loop(64, sbx_mount_step, &c, 0);
	/*
	 * A layer of an overlay, changed by the overlay itself: overlayfs
	 * (and its kin) call the hook again for the layer's inode, with the
	 * mounter's credentials put over the caller's. The hook was called
	 * for the overlay's own inode first, in the same syscall, and that
	 * call was decided on the path the caller used. No syscall of the
	 * caller's runs with overridden credentials, so this cannot be asked
	 * for; and a file system with no stacking user is never a layer.
	 */
	*layer = c.internal &&
		 BPF_CORE_READ(t, cred) != BPF_CORE_READ(t, real_cred);
	return (struct vfsmount *)(c.whole ?: c.in_ns ?: c.any);
}

/* The write check of an inode hook's dentry (ll: a twin's, no cache). */
static __always_inline int sbx_check_meta(struct dentry *d, bool ll, __u16 op)
{
	struct sbx_session *s;
	struct vfsmount *mnt;
	bool layer = false;
	__u64 cgid = 0;

	if (!sbx_maybe_in_session())
		return 0;
	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	mnt = sbx_sb_mount(d, &layer);
	if (layer)
		return 0;
	if (!mnt)
		return sbx_file_refuse(s, cgid, NULL, d, SBX_ACC_WRITE, op, SBX_RULE_ERROR);
	if (sbx_internal_mount(mnt))
		return 0;	/* a socket's or pipe's inode */
	return sbx_check_file_in(s, cgid, mnt, d, SBX_CACHE_INODE(ll, d), false,
				 SBX_ACCBIT(SBX_ACC_WRITE), op);
}

/* Each hook twice (SBX_TWINS, sbx_file.h): the landlock tier's twins are
 * how it sees these at all, as Landlock does not. The first argument is
 * the mount's idmap (6.3+) or user namespace (6.1). */
SBX_TWINS(inode_setxattr, inode_setxattr, sbx_check_meta(dentry, ll, SBX_OP_SETXATTR),
	  void *idmap, struct dentry *dentry, const char *name, const void *value, size_t size,
	  int flags)
SBX_TWINS(inode_removexattr, inode_removexattr, sbx_check_meta(dentry, ll, SBX_OP_SETXATTR),
	  void *idmap, struct dentry *dentry, const char *name)

/* From 6.2, POSIX ACLs are set and removed through their own hooks, not
 * inode_setxattr (on 6.1 they are xattrs like any other). */
SBX_TWINS(inode_set_acl, inode_set_acl, sbx_check_meta(dentry, ll, SBX_OP_SETXATTR),
	  void *idmap, struct dentry *dentry, const char *acl_name, void *kacl)
SBX_TWINS(inode_remove_acl, inode_remove_acl, sbx_check_meta(dentry, ll, SBX_OP_SETXATTR),
	  void *idmap, struct dentry *dentry, const char *acl_name)

/*
 * utimes, utimensat, touch. Mode, owner and size changes reach this hook
 * too, and are decided by the path hooks before it, so they are left
 * alone here (no second walk for every chmod).
 */
static __always_inline int sbx_setattr(struct dentry *dentry, struct iattr *attr, bool ll)
{
	unsigned int valid = BPF_CORE_READ(attr, ia_valid);

	if (!(valid & (ATTR_ATIME | ATTR_MTIME)) ||
	    (valid & (ATTR_MODE | ATTR_UID | ATTR_GID | ATTR_SIZE)))
		return 0;
	return sbx_check_meta(dentry, ll, SBX_OP_SETATTR);
}

/* 6.3 added the idmap argument to the hook; the loader keeps the variant
 * that fits (user/daemon/verifier.c). security_inode_setattr() has taken
 * it (as a user namespace on 6.1) since 6.0: its twin is the idmap one. */
SEC("lsm/inode_setattr")
int BPF_PROG(sbx_inode_setattr, struct dentry *dentry, struct iattr *attr, int ret)
{
	return ret ?: sbx_setattr(dentry, attr, false);
}

SBX_TWINS(inode_setattr_idmap, inode_setattr, sbx_setattr(dentry, attr, ll),
	  void *idmap, struct dentry *dentry, struct iattr *attr)

/* chattr and its relatives: inode flags (append-only, immutable, no-CoW),
 * the inode generation, project ids, fs-verity (read-only for good). The
 * file systems ask only for ownership, not for a writable descriptor. */
static __always_inline int sbx_flags_ioctl(struct file *file, unsigned int cmd, bool ll)
{
	switch (cmd) {
	case FS_IOC_SETFLAGS: case FS_IOC32_SETFLAGS: case FS_IOC_SETVERSION:
	case FS_IOC32_SETVERSION: case FS_IOC_FSSETXATTR: case FS_IOC_ENABLE_VERITY:
		break;
	default:
		return 0;
	}
	if (!sbx_maybe_in_session())
		return 0;
	return sbx_check_file(file->f_path.mnt, file->f_path.dentry, ll ? NULL : file->f_inode,
			      SBX_ACCBIT(SBX_ACC_WRITE), SBX_OP_SETATTR);
}

SBX_TWINS(file_ioctl_flags, file_ioctl, sbx_flags_ioctl(file, cmd, ll),
	  struct file *file, unsigned int cmd, unsigned long arg)
/* 32-bit processes' ioctls have their own hook from 6.7 (on 6.1 they
 * reach file_ioctl). */
SBX_TWINS(file_ioctl_compat_flags, file_ioctl_compat, sbx_flags_ioctl(file, cmd, ll),
	  struct file *file, unsigned int cmd, unsigned long arg)
