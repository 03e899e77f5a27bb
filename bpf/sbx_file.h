/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_file.h - a file check as the hooks make it: the cheap built-in
 * refusals and the per-inode verdict cache here, inlined into each hook;
 * the walk over the parent directories and the report (grants, event) in
 * walk.bpf.c, as global functions that the verifier checks once.
 */
#ifndef SBX_FILE_H
#define SBX_FILE_H

#include "sbx_common.h"

/* walk.bpf.c: decide io->acc_mask for the object; fail closed (an error
 * in the walk denies). */
int sbx_file_walk(struct sbx_file_io *io);
/* walk.bpf.c: a person's grant turns an ask into an allow (never a deny);
 * deny, ask and audit send one event; the strictest class decides.
 * Returns 1 if the operation is refused. (A global function's result is
 * any int to the verifier, and from 6.12 an LSM program must provably
 * return 0 or an errno: sbx_file_report() makes it one.) */
int sbx_file_finish(struct sbx_file_io *io);

static __always_inline int sbx_file_report(struct sbx_file_io *io)
{
	return sbx_file_finish(io) ? -EPERM : 0;
}

/*
 * Pipes, sockets, memfds and anon inodes live on the kernel's internal
 * mounts, which no path reaches (only /proc/self/fd re-opens them). They
 * are not files a policy can name, so file rules do not apply to them;
 * exec of a memfd is decided separately.
 */
#define SBX_MNT_NS_INTERNAL ((__u64)-22)	/* ERR_PTR(-EINVAL), fs/mount.h */

static __always_inline bool sbx_internal_mount(struct vfsmount *vmnt)
{
	struct mount *m = (void *)vmnt - bpf_core_field_offset(struct mount, mnt);

	return (__u64)BPF_CORE_READ(m, mnt_ns) == SBX_MNT_NS_INTERNAL;
}

#define PROC_SUPER_MAGIC	0x9fa0
#define SYSFS_MAGIC		0x62656572

/* The session of the process a /proc/<pid> file belongs to; 0 for one
 * outside every session, -1 for a file of no process (/proc/sys). */
static __always_inline __u64 sbx_proc_file_session(struct dentry *d)
{
	struct inode *inode = BPF_CORE_READ(d, d_inode);
	struct hlist_node *first;
	struct task_struct *t;
	struct pid *pid;

	if (!inode)
		return -1;
	pid = BPF_CORE_READ((struct proc_inode *)((void *)inode -
			    bpf_core_field_offset(struct proc_inode, vfs_inode)), pid);
	if (!pid)
		return -1;
	first = BPF_CORE_READ(pid, tasks[PIDTYPE_PID].first);
	if (!first)
		return -1;	/* the process is gone */
	t = (void *)first - bpf_core_field_offset(struct task_struct, pid_links);
	return sbx_task_session(t);
}

/*
 * Writes on procfs are allowed only to files of processes inside the
 * session (/proc/self/oom_score_adj, /proc/self/attr/...). Everything
 * else there, /proc/sys and /proc/sysrq-trigger above all, is how a root
 * process reconfigures the whole machine: core_pattern alone runs a
 * program as root outside any container or sandbox.
 */
static __always_inline bool sbx_proc_write_ok(struct dentry *d, __u64 cgid)
{
	return sbx_proc_file_session(d) == cgid;
}

/*
 * A process's command line often holds a token (curl -H, mysql -p, a
 * URL with a password), and /proc/<pid>/cmdline has no ptrace check like
 * environ and mem have. So the command lines of processes outside the
 * session are not readable unless the policy says so
 * (sandbox: {proc_cmdline: allow}); ps in the session shows them as [comm].
 */
static __always_inline bool sbx_proc_cmdline_hidden(const struct sbx_session *s,
						    struct dentry *d, __u64 cgid)
{
	char name[8];
	__u64 owner;

	if (s->pol.flags & SBX_PF_PROC_CMDLINE)
		return false;
	if (BPF_CORE_READ(d, d_name.len) != 7 ||
	    bpf_probe_read_kernel(name, 8, BPF_CORE_READ(d, d_name.name)) ||
	    name[0] != 'c' || name[1] != 'm' || name[2] != 'd' || name[3] != 'l' ||
	    name[4] != 'i' || name[5] != 'n' || name[6] != 'e')
		return false;
	owner = sbx_proc_file_session(d);
	return owner != cgid && owner != (__u64)-1;
}

static __always_inline bool sbx_pseudo_fs(__u32 magic)
{
	return magic == CGROUP2_SUPER_MAGIC || magic == CGROUP_SUPER_MAGIC ||
	       magic == BPF_FS_MAGIC || magic == SECURITYFS_MAGIC ||
	       magic == DEBUGFS_MAGIC || magic == TRACEFS_MAGIC || magic == SYSFS_MAGIC;
}

/* Writes that no policy allows: the pseudo file systems, and procfs files
 * of processes outside the session. */
static __always_inline bool sbx_write_never(struct dentry *d, __u64 cgid)
{
	__u32 magic = BPF_CORE_READ(d, d_sb, s_magic);

	return sbx_pseudo_fs(magic) || (magic == PROC_SUPER_MAGIC && !sbx_proc_write_ok(d, cgid));
}

/* Directories and files with one name: what a cached verdict can stand
 * for. inode is a BTF pointer (see sbx_check_file): plain loads. */
static __always_inline bool sbx_cacheable(struct inode *inode)
{
	return (inode->i_mode & 0170000) == 0040000 || inode->__i_nlink == 1;
}

/*
 * Files with no name left (memfd_create, or unlinked after opening) are
 * how fileless malware runs: refused unless the policy allows them.
 */
static __always_inline __u32 sbx_exec_kind(const struct sbx_session *s, struct file *file)
{
	struct inode *inode = BPF_CORE_READ(file, f_inode);

	if (!BPF_CORE_READ(inode, __i_nlink) && !(s->pol.flags & SBX_PF_ALLOW_MEMFD_EXEC))
		return SBX_RULE_EXEC_KIND;
	return 0;
}

/*
 * The task's file_io, filled in for one object. NULL when the kernel had
 * no memory for the scratch: the caller fails closed.
 */
static __always_inline struct sbx_file_io *
sbx_file_io_get(const struct sbx_session *s, __u64 cgid, struct vfsmount *vmnt,
		struct dentry *d, __u8 acc_mask, __u16 op)
{
	struct sbx_tscratch *sc = sbx_scratch();
	struct sbx_file_io *io;

	if (!sc) {
		sbx_stat_inc(SBX_STAT_ERRORS);
		return NULL;
	}
	io = &sc->io;
	__builtin_memset(io, 0, sizeof(*io));
	io->s = *s;
	io->cgid = cgid;
	io->vfsmount = (__u64)vmnt;
	io->dentry = (__u64)d;
	io->acc_mask = acc_mask;
	io->op = op;
	return io;
}

/* A verdict that needs no walk (a pseudo file system, a memfd exec),
 * reported like any other. */
static __always_inline int sbx_file_refuse(const struct sbx_session *s, __u64 cgid,
					   struct vfsmount *vmnt, struct dentry *d, __u8 acc,
					   __u16 op, __u32 rule)
{
	struct sbx_file_io *io = sbx_file_io_get(s, cgid, vmnt, d, SBX_ACCBIT(acc), op);

	if (!io)
		return -EPERM;
	io->v[acc & 3] = SBX_V_DENY;
	io->rule[acc & 3] = rule;
	return sbx_file_report(io);
}

/*
 * The object's cached verdicts: on the inode itself (inode storage, the
 * full tier), or in sbx_ll_vcache by the inode's address (the landlock
 * tier's programs, which may not use inode storage). ll is a constant in
 * every caller, so each program keeps one of the two.
 */
static __always_inline struct sbx_vcache *sbx_vcache_find(struct inode *bi, bool ll)
{
	__u64 k = (__u64)bi;

	if (ll)
		return bpf_map_lookup_elem(&sbx_ll_vcache, &k);
	return bpf_inode_storage_get(&sbx_vcache, bi, 0, 0);
}

static const struct sbx_vcache sbx_vcache_empty;

static __always_inline struct sbx_vcache *sbx_vcache_make(struct inode *bi, bool ll)
{
	struct sbx_vcache *vc;
	__u64 k = (__u64)bi;

	if (!ll)
		return bpf_inode_storage_get(&sbx_vcache, bi, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	vc = bpf_map_lookup_elem(&sbx_ll_vcache, &k);
	if (vc)
		return vc;
	/* NOEXIST: a racing check's entry is as good as ours */
	bpf_map_update_elem(&sbx_ll_vcache, &k, &sbx_vcache_empty, BPF_NOEXIST);
	return bpf_map_lookup_elem(&sbx_ll_vcache, &k);
}

/*
 * The check of one object for the classes acc_mask, in session s. d may
 * be a negative dentry (a name about to be created). bi is the object's
 * inode as a BTF pointer (from a hook argument, not a probe read), which
 * inode local storage needs; NULL: no verdict cache. ll: the landlock
 * tier's program (sbx_vcache_find). The check's state is in the task's
 * scratch, not on the stack: a hook that checks two objects (rename,
 * link) and the global functions below it must fit in the 512 bytes that
 * the verifier allows for the whole call chain.
 */
static __always_inline int sbx_check_file_in(const struct sbx_session *s, __u64 cgid,
					     struct vfsmount *vmnt, struct dentry *d,
					     struct inode *bi, bool ll, __u8 acc_mask, __u16 op)
{
	struct sbx_file_io *io;
	struct sbx_vcache *vc;
	__u32 k_ren = SBX_EPOCH_RENAME, k_dmn = SBX_EPOCH_DAEMON;
	__u64 *re, *de, r_epoch = 0, d_epoch = 0;
	bool cache;

	if ((acc_mask & SBX_ACCBIT(SBX_ACC_WRITE)) && sbx_write_never(d, cgid))
		return sbx_file_refuse(s, cgid, vmnt, d, SBX_ACC_WRITE, op, SBX_RULE_PSEUDOFS);

	re = bpf_map_lookup_elem(&sbx_epoch, &k_ren);
	de = bpf_map_lookup_elem(&sbx_epoch, &k_dmn);
	cache = bi && re && de && sbx_cacheable(bi);
	if (cache) {
		vc = sbx_vcache_find(bi, ll);
		if (vc && vc->policy_id == s->pol.policy_id && vc->mnt == (__u64)vmnt &&
		    vc->rename_epoch == *re && vc->daemon_epoch == *de &&
		    (vc->valid & acc_mask) == acc_mask) {
			sbx_stat_inc(SBX_STAT_CACHE_HIT);
			if ((!(acc_mask & SBX_ACCBIT(SBX_ACC_READ)) ||
			     vc->v[SBX_ACC_READ] <= SBX_V_ALLOW) &&
			    (!(acc_mask & SBX_ACCBIT(SBX_ACC_WRITE)) ||
			     vc->v[SBX_ACC_WRITE] <= SBX_V_ALLOW) &&
			    (!(acc_mask & SBX_ACCBIT(SBX_ACC_EXEC)) ||
			     vc->v[SBX_ACC_EXEC] <= SBX_V_ALLOW) &&
			    (!(acc_mask & SBX_ACCBIT(SBX_ACC_CONNECT)) ||
			     vc->v[SBX_ACC_CONNECT] <= SBX_V_ALLOW))
				return 0;
			io = sbx_file_io_get(s, cgid, vmnt, d, acc_mask, op);
			if (!io)
				return -EPERM;
#pragma unroll
			for (int a = 0; a < SBX_ACC_MAX; a++) {
				if (acc_mask & SBX_ACCBIT(a)) {
					io->v[a] = vc->v[a];
					io->rule[a] = vc->rule[a];
				}
			}
			return sbx_file_report(io);
		}
		/* where the epochs stood before the walk: a rename during it
		 * must not let a stale verdict in */
		r_epoch = *re;
		d_epoch = *de;
	}

	io = sbx_file_io_get(s, cgid, vmnt, d, acc_mask, op);
	if (!io)
		return -EPERM;
	sbx_file_walk(io);

	if (cache && !io->walk_trunc && !io->no_cache) {
		vc = sbx_vcache_make(bi, ll);
		if (vc) {
			if (vc->policy_id != s->pol.policy_id || vc->mnt != (__u64)vmnt ||
			    vc->rename_epoch != r_epoch || vc->daemon_epoch != d_epoch) {
				vc->valid = 0;
				vc->policy_id = s->pol.policy_id;
				vc->mnt = (__u64)vmnt;
				vc->rename_epoch = r_epoch;
				vc->daemon_epoch = d_epoch;
			}
#pragma unroll
			for (int a = 0; a < SBX_ACC_MAX; a++) {
				if (acc_mask & SBX_ACCBIT(a)) {
					vc->v[a] = io->v[a];
					vc->rule[a] = io->rule[a];
				}
			}
			vc->valid |= acc_mask;
		}
	}
	if (io->v[SBX_ACC_READ] <= SBX_V_ALLOW && io->v[SBX_ACC_WRITE] <= SBX_V_ALLOW &&
	    io->v[SBX_ACC_EXEC] <= SBX_V_ALLOW && io->v[SBX_ACC_CONNECT] <= SBX_V_ALLOW)
		return 0;
	return sbx_file_report(io);
}

/*
 * The file hooks are made twice (SBX_TWINS, sbx_common.h). For a file
 * hook's twin, run's plan lets Landlock grant the writes that a
 * directory's own verdict allows, however its entries are ruled
 * (kernel_decides), so that a name can be made in the project root beside
 * .sandbox; the twins refuse what the policy denies below it (.sandbox,
 * the policy files, a denied entry), file what it asks, and see what
 * Landlock does not (chmod, chown, times, xattrs, inode flags). A twin
 * walks each time (SBX_CACHE_INODE): only the tier's opens, the hot
 * path, use its verdict cache (sbx_ll_file_open).
 */
/* The object's inode for the verdict cache: none on a twin. */
#define SBX_CACHE_INODE(ll, d)	((ll) ? NULL : (d)->d_inode)

/* A read open of a procfs file: the command lines of outside processes
 * first (see sbx_proc_cmdline_hidden). */
static __always_inline int sbx_check_proc_read(struct vfsmount *vmnt, struct dentry *d)
{
	struct sbx_session *s;
	__u64 cgid = 0;

	s = sbx_session_lookup(&cgid);
	if (!s || !sbx_proc_cmdline_hidden(s, d, cgid))
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	return sbx_file_refuse(s, cgid, vmnt, d, SBX_ACC_READ, SBX_OP_OPEN_READ, SBX_RULE_PROC);
}

/* The whole check for one object, as the file hooks use it. */
static __always_inline int sbx_check_file(struct vfsmount *vmnt, struct dentry *d,
					  struct inode *bi, __u8 acc_mask, __u16 op)
{
	struct sbx_session *s;
	__u64 cgid = 0;

	s = sbx_session_lookup(&cgid);
	if (!s)
		return 0;
	sbx_stat_inc(SBX_STAT_CHECKS);
	if (!(acc_mask & SBX_ACCBIT(SBX_ACC_EXEC)) && sbx_internal_mount(vmnt))
		return 0;
	return sbx_check_file_in(s, cgid, vmnt, d, bi, false, acc_mask, op);
}

#endif /* SBX_FILE_H */
