// SPDX-License-Identifier: GPL-2.0
/*
 * files.bpf.c - file access: opens, and every path mutation, so that a
 * denied write changes nothing on disk (a denied create leaves no file, a
 * denied unlink leaves the file, a denied rename moves nothing).
 */
#include "sbx_chan.h"

#define SBX_PFA_NO_NEW_PRIVS	(1ul << 0)	/* PFA_NO_NEW_PRIVS, include/linux/sched.h */

SEC("lsm/file_open")
int BPF_PROG(sbx_file_open, struct file *file, int ret)
{
	__u32 fmode, flags;
	__u8 acc = 0;

	if (ret || !sbx_maybe_in_session())
		return ret;
	/* a FIFO or message queue: who is at the other end (sbx_chan.h) */
	if (sbx_is_chan(file->f_inode)) {
		__u64 *owner = bpf_inode_storage_get(&sbx_chan_owner, file->f_inode, 0, 0);

		ret = sbx_chan_open(file, owner ? *owner : 0);
		if (ret)
			return ret;
	}
	/* file is a trusted BTF pointer: plain loads, not probe reads (this
	 * is the hottest path, and each probe read is a helper call) */
	fmode = file->f_mode;
	flags = file->f_flags;
	/* before the access mode: an ioctl-only open of a terminal is one */
	if (sbx_is_chr(file->f_inode)) {
		ret = sbx_tty_check(file, file->f_inode,
				    (fmode & FMODE_WRITE) ? SBX_OP_OPEN_WRITE : SBX_OP_OPEN_READ,
				    false, false);
		if (ret)
			return ret;
	}
	/* The binary of an execve (and a script's interpreter) is decided in
	 * bprm_check_security, by the exec rules. open_exec() marks its open
	 * with __FMODE_EXEC in f_flags, which open(2) cannot set (the flag is
	 * not in VALID_OPEN_FLAGS); f_mode gets FMODE_EXEC only later. */
	if ((fmode & FMODE_EXEC) || (flags & __FMODE_EXEC))
		return 0;
	/* overlayfs opens the real file a second time on the caller's
	 * behalf; the open of the overlay file already decided. On 6.1 the
	 * real file keeps the overlay path with the real inode. */
	if (sbx_fmode_backing && (fmode & sbx_fmode_backing))
		return 0;
	if (file->f_path.dentry->d_inode != file->f_inode)
		return 0;

	if (fmode & FMODE_READ)
		acc |= SBX_ACCBIT(SBX_ACC_READ);
	if ((fmode & FMODE_WRITE) || (flags & (O_TRUNC | O_APPEND)))
		acc |= SBX_ACCBIT(SBX_ACC_WRITE);
	if (!acc)
		return 0;
	if (acc == SBX_ACCBIT(SBX_ACC_READ) && file->f_inode->i_sb->s_magic == PROC_SUPER_MAGIC) {
		ret = sbx_check_proc_read(file->f_path.mnt, file->f_path.dentry);
		if (ret)
			return ret;
	}
	return sbx_check_file(file->f_path.mnt, file->f_path.dentry, file->f_inode, acc,
			      (acc & SBX_ACCBIT(SBX_ACC_WRITE)) ? SBX_OP_OPEN_WRITE :
								       SBX_OP_OPEN_READ);
}

/* The classes an open asks for, and its operation for the event. */
static __always_inline __u8 sbx_ll_open_acc(struct file *file, __u16 *op)
{
	__u32 fmode = file->f_mode, flags = file->f_flags;
	__u8 acc = 0;

	if ((fmode & FMODE_EXEC) || (flags & __FMODE_EXEC)) {
		*op = SBX_OP_EXEC;
		return SBX_ACCBIT(SBX_ACC_EXEC);
	}
	if (fmode & FMODE_READ)
		acc |= SBX_ACCBIT(SBX_ACC_READ);
	if ((fmode & FMODE_WRITE) || (flags & (O_TRUNC | O_APPEND)))
		acc |= SBX_ACCBIT(SBX_ACC_WRITE);
	*op = (acc & SBX_ACCBIT(SBX_ACC_WRITE)) ? SBX_OP_OPEN_WRITE : SBX_OP_OPEN_READ;
	return acc;
}

/*
 * The landlock tier's opens that Landlock lets through for the kernel to
 * decide (run's plan, kernel_decides): every write, since the plan grants
 * a directory's writes to all of its entries (see SBX_TWINS, sbx_file.h);
 * and reads and execs where the session's policy has SBX_PF_DECIDE_OPENS:
 * an ask (a person's approval, a grant in a map, must reach the running
 * session), an audit, or a deny Landlock cannot hold because it grants by
 * place (a .env made after the plan, a *.key outside its scan roots, a
 * denied file's other name, a reloaded policy). Those are decided here
 * whole, deny included, with EPERM as on the full tier. Otherwise a read
 * or exec is Landlock's (a deny then gets its event from
 * sbx_ll_file_refused). The verdicts are cached as on the full tier, by
 * the inode's address (sbx_ll_vcache), since inode storage needs BPF-LSM.
 */
SEC("fmod_ret/security_file_open")
int BPF_PROG(sbx_ll_file_open, struct file *file, int ret)
{
	struct vfsmount *mnt = file->f_path.mnt;
	struct dentry *d = file->f_path.dentry;
	struct sbx_session *s;
	__u64 cgid = 0;
	__u16 op;
	__u8 acc;

	if (ret)
		return ret;
	s = sbx_current_session(&cgid);
	if (!s)
		return 0;
	/* a FIFO or message queue: who is at the other end (sbx_chan.h),
	 * its maker kept by the inode's address (ipc.bpf.c) */
	if (sbx_is_chan(file->f_inode)) {
		__u64 k = (__u64)file->f_inode;
		struct sbx_fifo_maker *m = bpf_map_lookup_elem(&sbx_fifo_maker, &k);

		ret = sbx_chan_open(file, m && m->ino == file->f_inode->i_ino ? m->cgid : 0);
		if (ret)
			return ret;
	}
	/* a terminal by device, whatever Landlock lets through: the
	 * person's `bpfsbx watch` is a pty of the agent's uid */
	if (sbx_is_chr(file->f_inode)) {
		ret = sbx_tty_check(file, file->f_inode,
				    (file->f_mode & FMODE_WRITE) ? SBX_OP_OPEN_WRITE :
								    SBX_OP_OPEN_READ, false, true);
		if (ret)
			return ret;
	}
	/* run itself, in the session and not yet confined: its plan reads
	 * the home directory. Everything that runs in the session after it
	 * has no_new_privs, which run sets before Landlock and nobody can
	 * clear. */
	if (!(bpf_get_current_task_btf()->atomic_flags & SBX_PFA_NO_NEW_PRIVS))
		return 0;
	acc = sbx_ll_open_acc(file, &op);
	/* an exec of a file with no name left, as bprm_check refuses it on
	 * the full tier: execve(/proc/self/fd/N) passes run's seccomp rule on
	 * execveat(AT_EMPTY_PATH) */
	if (acc == SBX_ACCBIT(SBX_ACC_EXEC)) {
		__u32 kind = sbx_exec_kind(s, file);

		if (kind)
			return sbx_file_refuse(s, cgid, mnt, d, SBX_ACC_EXEC, op, kind);
	}
	/* the command lines of outside processes, which Landlock lets be
	 * read (procfs has no rule of its own) */
	if (acc == SBX_ACCBIT(SBX_ACC_READ) && file->f_inode->i_sb->s_magic == PROC_SUPER_MAGIC) {
		ret = sbx_check_proc_read(mnt, d);
		if (ret)
			return ret;
	}
	if (!(s->pol.flags & SBX_PF_DECIDE_OPENS))
		acc &= SBX_ACCBIT(SBX_ACC_WRITE);
	if (!acc)
		return 0;
	if (sbx_fmode_backing && (file->f_mode & sbx_fmode_backing))
		return 0;
	if (d->d_inode != file->f_inode || sbx_internal_mount(mnt))
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	return sbx_check_file_in(s, cgid, mnt, d, file->f_inode, true, acc, op);
}

/*
 * An inode's address is the landlock tier's key for what the full tier
 * keeps on the inode: cached verdicts (sbx_ll_vcache) and a FIFO's maker
 * (sbx_fifo_maker). The entries go with the inode, before another inode
 * can be made at the same address (the memory is freed after an RCU
 * grace period), so a file made where a deleted one was never inherits
 * its verdicts, nor a FIFO its session (the inode number, which the
 * FIFO's entry also holds, comes back on ext4).
 */
SEC("fentry/security_inode_free")
int BPF_PROG(sbx_ll_inode_free, struct inode *inode)
{
	__u64 k = (__u64)inode;

	/* a lookup first: most inodes were never checked, and a delete
	 * takes the bucket's lock */
	if (bpf_map_lookup_elem(&sbx_ll_vcache, &k))
		bpf_map_delete_elem(&sbx_ll_vcache, &k);
	if (bpf_map_lookup_elem(&sbx_fifo_maker, &k))
		bpf_map_delete_elem(&sbx_fifo_maker, &k);
	return 0;
}

/*
 * The landlock tier: Landlock refuses a session's open or exec in
 * security_file_open, and tells no one before ABI 7. EACCES from there is
 * an LSM's refusal (the permission bits were checked before it), so the
 * refusal gets the full tier's event: the policy's rule that denies it,
 * or the built-in landlock rule where the plan is stricter than the
 * policy. An ask is reported as the deny it was: no approval reaches a
 * running Landlock domain.
 */
SEC("fexit/security_file_open")
int BPF_PROG(sbx_ll_file_refused, struct file *file, int ret)
{
	struct sbx_file_io *io;
	struct sbx_session *s;
	__u64 cgid = 0;
	bool denied = false;
	__u16 op;
	__u8 acc;

	if (ret != -EACCES)
		return 0;
	s = sbx_current_session(&cgid);
	if (!s)
		return 0;
	acc = sbx_ll_open_acc(file, &op);
	if (!acc)
		return 0;
	io = sbx_file_io_get(s, cgid, file->f_path.mnt, file->f_path.dentry, acc, op);
	if (!io)
		return 0;
	sbx_file_walk(io);
#pragma unroll
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		if (!(acc & SBX_ACCBIT(a)))
			continue;
		if (io->v[a] == SBX_V_ASK)
			io->v[a] = SBX_V_DENY;
		denied |= io->v[a] == SBX_V_DENY;
	}
	if (!denied) {
#pragma unroll
		for (int a = 0; a < SBX_ACC_MAX; a++) {
			if (acc & SBX_ACCBIT(a)) {
				io->v[a] = SBX_V_DENY;
				io->rule[a] = SBX_RULE_LANDLOCK;
			}
		}
	}
	sbx_file_finish(io);
	return 0;
}

/* Path mutations, each hook twice (SBX_TWINS, sbx_file.h). */

/* A new name: open(O_CREAT) of a new file, mknod, mkfifo and a unix
 * socket's bind (all reach path_mknod), mkdir, symlink. */
static __always_inline int sbx_path_new(const struct path *dir, struct dentry *dentry, __u16 op)
{
	if (!sbx_maybe_in_session())
		return 0;
	return sbx_check_file(BPF_CORE_READ(dir, mnt), dentry, NULL, SBX_ACCBIT(SBX_ACC_WRITE), op);
}

/*
 * A device node is the device to whoever opens it later, outside the
 * session too: a container's root with CAP_MKNOD could leave a 0666
 * node of the host's disk in the project. No session makes one.
 */
static __always_inline int sbx_path_mknod_do(const struct path *dir, struct dentry *dentry,
					     umode_t mode)
{
	struct sbx_session *s;
	__u64 cgid = 0;
	__u32 fmt = mode & 0170000;

	if (!sbx_maybe_in_session())
		return 0;
	if (fmt == 0020000 || fmt == 0060000) {
		s = sbx_session_lookup(&cgid);
		if (s)
			return sbx_file_refuse(s, cgid, BPF_CORE_READ(dir, mnt), dentry,
					       SBX_ACC_WRITE, SBX_OP_CREATE, SBX_RULE_DEVICE_NODE);
	}
	return sbx_path_new(dir, dentry, SBX_OP_CREATE);
}

SBX_TWINS(path_mknod, path_mknod, sbx_path_mknod_do(dir, dentry, mode),
	  const struct path *dir, struct dentry *dentry, umode_t mode, unsigned int dev)
SBX_TWINS(path_mkdir, path_mkdir, sbx_path_new(dir, dentry, SBX_OP_MKDIR),
	  const struct path *dir, struct dentry *dentry, umode_t mode)
SBX_TWINS(path_symlink, path_symlink, sbx_path_new(dir, dentry, SBX_OP_SYMLINK),
	  const struct path *dir, struct dentry *dentry, const char *old_name)

/* A write to an existing object, named by its path. */
static __always_inline int sbx_path_write(const struct path *path, bool ll, __u16 op)
{
	if (!sbx_maybe_in_session())
		return 0;
	return sbx_check_file(BPF_CORE_READ(path, mnt), BPF_CORE_READ(path, dentry),
			      SBX_CACHE_INODE(ll, path->dentry), SBX_ACCBIT(SBX_ACC_WRITE), op);
}

SBX_TWINS(path_truncate, path_truncate, sbx_path_write(path, ll, SBX_OP_TRUNCATE),
	  const struct path *path)
SBX_TWINS(path_chmod, path_chmod, sbx_path_write(path, ll, SBX_OP_CHMOD),
	  const struct path *path, umode_t mode)
/* kuid_t/kgid_t are one-word structs; BPF_PROG passes words */
SBX_TWINS(path_chown, path_chown, sbx_path_write(path, ll, SBX_OP_CHOWN),
	  const struct path *path, __u64 uid, __u64 gid)

static __always_inline int sbx_path_unlink_do(const struct path *dir, struct dentry *dentry,
					      bool ll)
{
	if (!sbx_maybe_in_session())
		return 0;
	return sbx_check_file(BPF_CORE_READ(dir, mnt), dentry, SBX_CACHE_INODE(ll, dentry),
			      SBX_ACCBIT(SBX_ACC_WRITE), SBX_OP_UNLINK);
}

SBX_TWINS(path_unlink, path_unlink, sbx_path_unlink_do(dir, dentry, ll),
	  const struct path *dir, struct dentry *dentry)

/*
 * A directory above a protected path (a pin, set by the compiler on every
 * ancestor of an inode or chain rule's anchor) may not be renamed,
 * exchanged or removed: the rule is tied to the objects below it, and a
 * fresh copy put in its place would carry none of it (mv .git .git.orig
 * && cp -a .git.orig .git). Looked up before the verdict cache, which
 * knows nothing of pins.
 */
static __always_inline int sbx_check_pinned(struct vfsmount *mnt, struct dentry *d, __u16 op)
{
	struct inode *inode = d->d_inode;
	struct sbx_inode_key k = {};
	struct sbx_file_rule *r;
	struct sbx_session *s;
	__u64 cgid = 0;

	if (!inode || (inode->i_mode & 0170000) != 0040000)
		return 0;
	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	k.policy_id = s->pol.policy_id;
	k.dev = inode->i_sb->s_dev;
	k.ino = inode->i_ino;
	r = bpf_map_lookup_elem(&sbx_inode_rules, &k);
	if (!r || !r->pinned)
		return 0;
	return sbx_file_refuse(s, cgid, mnt, d, SBX_ACC_WRITE, op, SBX_RULE_PINNED);
}

static __always_inline int sbx_path_rmdir_do(const struct path *dir, struct dentry *dentry,
					     bool ll)
{
	int ret;

	if (!sbx_maybe_in_session())
		return 0;
	ret = sbx_check_pinned(BPF_CORE_READ(dir, mnt), dentry, SBX_OP_RMDIR);
	if (ret)
		return ret;
	return sbx_check_file(BPF_CORE_READ(dir, mnt), dentry, SBX_CACHE_INODE(ll, dentry),
			      SBX_ACCBIT(SBX_ACC_WRITE), SBX_OP_RMDIR);
}

SBX_TWINS(path_rmdir, path_rmdir, sbx_path_rmdir_do(dir, dentry, ll),
	  const struct path *dir, struct dentry *dentry)

/*
 * A new name for an existing inode. The source must be readable and
 * writable: a hard link to a write-denied file would make it writable
 * through the new name, and a link to a read-denied file would launder
 * it past name-based rules.
 */
static __always_inline int sbx_path_link_do(struct dentry *old_dentry, const struct path *new_dir,
					    struct dentry *new_dentry, bool ll)
{
	struct vfsmount *mnt = BPF_CORE_READ(new_dir, mnt);
	int ret;

	sbx_names_changed(false);	/* by anyone: a new name for an inode */
	if (!sbx_maybe_in_session())
		return 0;
	ret = sbx_check_file(mnt, old_dentry, SBX_CACHE_INODE(ll, old_dentry),
			     SBX_ACCBIT(SBX_ACC_READ) | SBX_ACCBIT(SBX_ACC_WRITE),
			     SBX_OP_LINK_FROM);
	if (ret)
		return ret;
	return sbx_check_file(mnt, new_dentry, NULL, SBX_ACCBIT(SBX_ACC_WRITE), SBX_OP_LINK_TO);
}

SBX_TWINS(path_link, path_link, sbx_path_link_do(old_dentry, new_dir, new_dentry, ll),
	  struct dentry *old_dentry, const struct path *new_dir, struct dentry *new_dentry)

/* Renaming is unlinking the old name (write) and may launder a file past
 * name rules (read), so the source needs both; the target needs write. */
static __always_inline int sbx_path_rename_do(const struct path *old_dir,
					      struct dentry *old_dentry,
					      const struct path *new_dir,
					      struct dentry *new_dentry, unsigned int flags,
					      bool ll)
{
	__u8 new_acc = SBX_ACCBIT(SBX_ACC_WRITE);
	int ret;

	sbx_names_changed(true);	/* by anyone: names above other inodes change */
	if (!sbx_maybe_in_session())
		return 0;
	ret = sbx_check_pinned(BPF_CORE_READ(old_dir, mnt), old_dentry, SBX_OP_RENAME_FROM);
	if (!ret)
		ret = sbx_check_pinned(BPF_CORE_READ(new_dir, mnt), new_dentry, SBX_OP_RENAME_TO);
	if (ret)
		return ret;
	ret = sbx_check_file(BPF_CORE_READ(old_dir, mnt), old_dentry,
			     SBX_CACHE_INODE(ll, old_dentry),
			     SBX_ACCBIT(SBX_ACC_READ) | SBX_ACCBIT(SBX_ACC_WRITE),
			     SBX_OP_RENAME_FROM);
	if (ret)
		return ret;
	if (flags & RENAME_EXCHANGE)
		new_acc |= SBX_ACCBIT(SBX_ACC_READ);
	return sbx_check_file(BPF_CORE_READ(new_dir, mnt), new_dentry,
			      SBX_CACHE_INODE(ll, new_dentry), new_acc, SBX_OP_RENAME_TO);
}

SBX_TWINS(path_rename, path_rename,
	  sbx_path_rename_do(old_dir, old_dentry, new_dir, new_dentry, flags, ll),
	  const struct path *old_dir, struct dentry *old_dentry,
	  const struct path *new_dir, struct dentry *new_dentry, unsigned int flags)

/*
 * An IPv4 or IPv6 socket made in another session or outside: the cgroup
 * programs that decide its datagrams and Fast Open connects (dns.bpf.c)
 * are its maker's cgroup's, so in this session it would send anywhere.
 * Refused; a session makes its own.
 */
static __always_inline int sbx_receive_socket(struct file *file)
{
	struct socket *sock = BPF_CORE_READ((struct file *)file, private_data);
	struct sock *sk = BPF_CORE_READ(sock, sk);
	struct sbx_session *s;
	struct sbx_event *e;
	__u64 cgid = 0;
	__u16 fam;

	if (!sk)
		return 0;
	fam = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (fam != AF_INET && fam != AF_INET6)
		return 0;
	s = sbx_session_lookup(&cgid);
	if (!s || sbx_sock_session(sk) == cgid)
		return 0;
	sbx_count_verdict(SBX_V_DENY);
	e = sbx_event_begin(s, cgid, SBX_OP_FILE_RECEIVE, SBX_V_DENY, SBX_RULE_SOCKET_OUTSIDE,
			    -EPERM);
	if (!e)
		return -EPERM;
	e->family = fam;
	e->proto = BPF_CORE_READ(sk, sk_protocol);
	sbx_event_describe(0, 0);
	sbx_event_send(e);
	return -EPERM;
}

/*
 * A file descriptor passed in over a unix socket (SCM_RIGHTS) was opened
 * by someone else, outside the session, and never went through
 * file_open here: receiving it is opening it. A terminal is decided by
 * whose it is (sbx_tty.h), on both tiers; an IP socket by where it was
 * made.
 */
static __always_inline int sbx_receive(struct file *file, bool ll)
{
	__u32 fmode;
	__u8 acc = 0;
	int ret;

	if (!sbx_maybe_in_session())
		return 0;
	if ((file->f_inode->i_mode & S_IFMT) == S_IFSOCK)
		return sbx_receive_socket(file);
	if (sbx_is_chr(file->f_inode)) {
		ret = sbx_tty_check(file, file->f_inode, SBX_OP_FILE_RECEIVE, true, ll);
		if (ret)
			return ret;
	}
	fmode = BPF_CORE_READ(file, f_mode);
	if (fmode & FMODE_READ)
		acc |= SBX_ACCBIT(SBX_ACC_READ);
	if (fmode & FMODE_WRITE)
		acc |= SBX_ACCBIT(SBX_ACC_WRITE);
	if (!acc)
		return 0;
	return sbx_check_file(BPF_CORE_READ(file, f_path.mnt), BPF_CORE_READ(file, f_path.dentry),
			      ll ? NULL : file->f_inode, acc, SBX_OP_FILE_RECEIVE);
}

SBX_TWINS(file_receive, file_receive, sbx_receive(file, ll), struct file *file)
