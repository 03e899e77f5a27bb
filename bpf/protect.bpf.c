// SPDX-License-Identifier: GPL-2.0
/*
 * protect.bpf.c - what no session may do, whatever its policy says: the
 * ways out of a sandbox that are not file, exec or network accesses.
 *
 *  - bpf(): a session could read or rewrite the very maps that confine it.
 *  - tracing or signalling anything outside the session (the daemon first
 *    of all); inside it, processes trace and signal each other as usual.
 *    ptrace_access_check also guards /proc/PID/{mem,environ,fd,root,...},
 *    process_vm_readv and pidfd_getfd of outside processes.
 *  - clone3(CLONE_INTO_CGROUP): the one way to leave the cgroup that does
 *    not go through a write to cgroupfs.
 *  - mounts and user namespaces: the classic ways to rearrange what paths
 *    mean, or to gain capabilities in a new namespace.
 *  - perf events, kernel modules, kexec and firmware loading.
 *  - sockets of any family or protocol but the few that the network hooks
 *    read (see sbx_socket_create).
 *  - TIOCSTI/TIOCLINUX: pushing keystrokes into the terminal's input,
 *    which the shell outside the session would run after the agent exits.
 *  - F_SETOWN and its ioctls: SIGIO and SIGURG go to a file's owner with
 *    no task_kill check at delivery, so naming an owner is sending it
 *    signals; only the session's own processes may be named.
 */
#include "sbx_family.h"

#define CLONE_INTO_CGROUP	0x200000000ULL
#define TIOCSTI			0x5412
#define TIOCLINUX		0x541C
#define FIOSETOWN		0x8901
#define SIOCSPGRP		0x8902
#define F_SETOWN		8
#define F_SETOWN_EX		15
#define F_OWNER_TID		0
#define F_OWNER_PID		1
#define F_OWNER_PGRP		2

static __always_inline int sbx_refuse(struct sbx_session *s, __u64 cgid, __u16 op,
				      __u32 rule, __u32 aux)
{
	struct sbx_event *e;

	sbx_count_verdict(SBX_V_DENY);
	e = sbx_event_begin(s, cgid, op, SBX_V_DENY, rule, -EPERM);
	if (e) {
		e->aux = aux;
		sbx_event_describe(0, 0);
		sbx_event_send(e);
	}
	return -EPERM;
}

SEC("lsm/bpf")
int BPF_PROG(sbx_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
	struct sbx_session *s;
	__u64 cgid;

	if (ret)
		return ret;
	s = sbx_current_session(&cgid);
	if (!s)
		return 0;
	return sbx_refuse(s, cgid, SBX_OP_BPF, SBX_RULE_SELF_PROTECT, cmd);
}

static __always_inline int sbx_ptrace_check(struct task_struct *child)
{
	struct sbx_session *s;
	__u64 cgid;

	s = sbx_current_session(&cgid);
	if (!s || sbx_task_session(child) == cgid)
		return 0;
	return sbx_refuse(s, cgid, SBX_OP_PTRACE, SBX_RULE_SELF_PROTECT,
			  BPF_CORE_READ(child, tgid));
}

static __always_inline int sbx_kill_check(struct task_struct *p, int sig)
{
	struct sbx_session *s;
	__u64 cgid;

	if (!sig)
		return 0;	/* "does it exist?" signals nothing */
	s = sbx_current_session(&cgid);
	if (!s || sbx_task_session(p) == cgid)
		return 0;
	return sbx_refuse(s, cgid, SBX_OP_SIGNAL, SBX_RULE_SELF_PROTECT, BPF_CORE_READ(p, tgid));
}

/*
 * Each twice (SBX_TWINS): on the landlock tier seccomp refuses ptrace(2)
 * itself, but /proc/PID/{environ,mem,fd,root,cwd,maps,...}, pidfd_getfd
 * and process_vm_readv ask ptrace_may_access, which only this check sees;
 * and Landlock scopes signals from ABI 6 only, without an event.
 */
SBX_TWINS(ptrace_access_check, ptrace_access_check, sbx_ptrace_check(child),
	  struct task_struct *child, unsigned int mode)

SBX_TWINS(task_kill, task_kill, sbx_kill_check(p, sig),
	  struct task_struct *p, struct kernel_siginfo *info, int sig, const struct cred *cred)

SEC("lsm/task_alloc")
int BPF_PROG(sbx_task_alloc, struct task_struct *task, unsigned long clone_flags, int ret)
{
	struct sbx_session *s;
	__u64 cgid;

	if (ret)
		return ret;
	if (!(clone_flags & CLONE_INTO_CGROUP))
		return 0;
	s = sbx_current_session(&cgid);
	if (!s)
		return 0;
	return sbx_refuse(s, cgid, SBX_OP_CGROUP_ESCAPE, SBX_RULE_SELF_PROTECT, 0);
}

/* Denied to every session, unconditionally. */
static __always_inline int sbx_never(__u16 op)
{
	struct sbx_session *s;
	__u64 cgid;

	s = sbx_current_session(&cgid);
	if (!s)
		return 0;
	return sbx_refuse(s, cgid, op, SBX_RULE_SELF_PROTECT, 0);
}

SEC("lsm/sb_mount")
int BPF_PROG(sbx_sb_mount, const char *dev_name, const struct path *path, const char *type,
	     unsigned long flags, void *data, int ret)
{
	if (ret)
		return ret;
	sbx_names_changed(false);	/* by anyone: what paths reach changes */
	return sbx_never(SBX_OP_MOUNT);
}

SEC("lsm/move_mount")
int BPF_PROG(sbx_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
	if (ret)
		return ret;
	sbx_names_changed(false);
	return sbx_never(SBX_OP_MOUNT);
}

SEC("lsm/sb_umount")
int BPF_PROG(sbx_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
	if (ret)
		return ret;
	sbx_names_changed(false);
	return sbx_never(SBX_OP_MOUNT);
}

/* The landlock tier's sessions cannot mount (run's seccomp filter), but
 * a mount change outside moves what paths reach there too, and the tier's
 * cached verdicts trust SBX_EPOCH_RENAME as the full tier's do. */
#define SBX_LL_MOUNT_SEEN(name, fn)		\
	SEC("fentry/" #fn)			\
	int BPF_PROG(name)			\
	{					\
		sbx_names_changed(false);	\
		return 0;			\
	}

SBX_LL_MOUNT_SEEN(sbx_ll_sb_mount, security_sb_mount)
SBX_LL_MOUNT_SEEN(sbx_ll_move_mount, security_move_mount)
SBX_LL_MOUNT_SEEN(sbx_ll_sb_umount, security_sb_umount)

SEC("lsm/sb_pivotroot")
int BPF_PROG(sbx_sb_pivotroot, const struct path *old_path, const struct path *new_path, int ret)
{
	return ret ?: sbx_never(SBX_OP_MOUNT);
}

/* A user namespace gives its creator every capability inside it, which
 * is where most unprivileged kernel exploits start. A policy may allow it
 * (sandbox: {userns: allow}) for tools that need it (rootless podman,
 * bubblewrap, Chrome's sandbox). */
SEC("lsm/userns_create")
int BPF_PROG(sbx_userns_create, const struct cred *cred, int ret)
{
	struct sbx_session *s;
	__u64 cgid;

	if (ret)
		return ret;
	s = sbx_current_session(&cgid);
	if (!s || (s->pol.flags & SBX_PF_ALLOW_USERNS))
		return 0;
	return sbx_refuse(s, cgid, SBX_OP_USERNS, SBX_RULE_SELF_PROTECT, 0);
}

/*
 * The hook lost its attr argument after 6.1 (6.12 passes only the type);
 * the loader keeps the one variant whose arguments match the running
 * kernel's BTF (user/daemon/kernel.c, prog_variants).
 */
SEC("lsm/perf_event_open")
int BPF_PROG(sbx_perf_event_open, struct perf_event_attr *attr, int type, int ret)
{
	return ret ?: sbx_never(SBX_OP_KERNEL);
}

SEC("lsm/perf_event_open")
int BPF_PROG(sbx_perf_event_open_type, int type, int ret)
{
	return ret ?: sbx_never(SBX_OP_KERNEL);
}

SEC("lsm/kernel_read_file")
int BPF_PROG(sbx_kernel_read_file, struct file *file, enum kernel_read_file_id id, bool contents,
	     int ret)
{
	return ret ?: sbx_never(SBX_OP_KERNEL);
}

SEC("lsm/kernel_load_data")
int BPF_PROG(sbx_kernel_load_data, enum kernel_load_data_id id, bool contents, int ret)
{
	return ret ?: sbx_never(SBX_OP_KERNEL);
}

SEC("lsm/socket_create")
int BPF_PROG(sbx_socket_create, int family, int type, int protocol, int kern, int ret)
{
	struct sbx_session *s;
	struct sbx_event *e;
	__u64 cgid;

	if (ret || kern)
		return ret;
	s = sbx_current_session(&cgid);
	if (!s || sbx_socket_allowed(s, family, type, protocol))
		return 0;
	sbx_count_verdict(SBX_V_DENY);
	e = sbx_event_begin(s, cgid, SBX_OP_SOCKET_CREATE, SBX_V_DENY, SBX_RULE_SOCKET_FAMILY,
			    -EPERM);
	if (e) {
		e->family = family;
		e->aux = type;
		e->port = protocol;
		sbx_event_describe(0, 0);
		sbx_event_send(e);
	}
	return -EPERM;
}

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

/*
 * May the caller name who as the owner of a file (F_SETOWN's sense:
 * who > 0 a process, who < 0 a process group, 0 nobody)? Always itself
 * and its own process group when the group's leader is in the session
 * (only a process of the session could have made the group). lookup:
 * the kernel can find any task by pid (bpf_task_from_pid, from 6.2), so
 * any process of the session may be named.
 */
static __always_inline bool sbx_owner_ok(__u64 cgid, int who, bool tid, bool lookup)
{
	struct task_struct *me = bpf_get_current_task_btf();
	struct task_struct *t;
	struct pid *pg;
	struct hlist_node *first;
	bool ok;

	if (who == 0)
		return true;
	if (who > 0 && (who == (tid ? me->pid : me->tgid) || who == me->tgid))
		return true;
	if (who < 0) {
		pg = BPF_CORE_READ(me, signal, pids[PIDTYPE_PGID]);
		if (!pg || BPF_CORE_READ(pg, numbers[0].nr) != -who)
			return false;
		first = BPF_CORE_READ(pg, tasks[PIDTYPE_PID].first);
		if (!first)
			return false;
		t = (void *)first - bpf_core_field_offset(struct task_struct, pid_links);
		return sbx_task_session(t) == cgid;
	}
	if (!lookup)
		return false;
	/* pid numbers of the initial namespace; a task in another one
	 * names others by its own numbers */
	if (BPF_CORE_READ(me, thread_pid, level))
		return false;
	t = bpf_task_from_pid(who);
	if (!t)
		return false;
	ok = sbx_task_session(t) == cgid;
	bpf_task_release(t);
	return ok;
}

static __always_inline int sbx_owner_check(int who, bool tid, bool lookup, __u32 cmd)
{
	struct sbx_session *s;
	struct sbx_event *e;
	__u64 cgid;

	s = sbx_current_session(&cgid);
	if (!s || sbx_owner_ok(cgid, who, tid, lookup))
		return 0;
	sbx_count_verdict(SBX_V_DENY);
	e = sbx_event_begin(s, cgid, SBX_OP_SIGNAL_OWNER, SBX_V_DENY, SBX_RULE_SELF_PROTECT,
			    -EPERM);
	if (e) {
		e->aux = (__u32)who;
		e->port = cmd;
		sbx_event_describe(0, 0);
		sbx_event_send(e);
	}
	return -EPERM;
}

/* The owner named by an F_SETOWN_EX argument, or a refusal if it cannot
 * be read: fail closed. */
static __always_inline int sbx_fcntl(unsigned int cmd, unsigned long arg, bool lookup)
{
	struct f_owner_ex ex;

	if (cmd == F_SETOWN)
		return sbx_owner_check((int)arg, false, lookup, cmd);
	if (cmd != F_SETOWN_EX)
		return 0;
	if (bpf_probe_read_user(&ex, sizeof(ex), (void *)arg))
		return sbx_owner_check(-1, false, false, cmd);	/* no such group */
	if (ex.type == F_OWNER_PGRP)
		return sbx_owner_check(ex.pid ? -ex.pid : 0, false, lookup, cmd);
	return sbx_owner_check(ex.pid, ex.type == F_OWNER_TID, lookup, cmd);
}

/* 6.1 has no bpf_task_from_pid: the loader keeps one of the two
 * (user/daemon/verifier.c). */
SEC("lsm/file_fcntl")
int BPF_PROG(sbx_file_fcntl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	if (ret || !sbx_maybe_in_session())
		return ret;
	return sbx_fcntl(cmd, arg, false);
}

SEC("lsm/file_fcntl")
int BPF_PROG(sbx_file_fcntl_lookup, struct file *file, unsigned int cmd, unsigned long arg,
	     int ret)
{
	if (ret || !sbx_maybe_in_session())
		return ret;
	return sbx_fcntl(cmd, arg, true);
}

static __always_inline int sbx_ioctl(unsigned int cmd, unsigned long arg)
{
	struct sbx_session *s;
	__u64 cgid;
	int who;

	if (cmd == FIOSETOWN || cmd == SIOCSPGRP) {
		/* the same owner as F_SETOWN, by pointer (no lookup: rare) */
		if (bpf_probe_read_user(&who, sizeof(who), (void *)arg))
			who = -1;
		return sbx_owner_check(who, false, false, cmd);
	}
	if (cmd != TIOCSTI && cmd != TIOCLINUX)
		return 0;
	s = sbx_current_session(&cgid);
	if (!s)
		return 0;
	return sbx_refuse(s, cgid, SBX_OP_IOCTL, SBX_RULE_SELF_PROTECT, cmd);
}

SEC("lsm/file_ioctl")
int BPF_PROG(sbx_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	if (ret || !sbx_maybe_in_session())
		return ret;
	return sbx_ioctl(cmd, arg);
}

/* 32-bit processes' ioctls have their own hook from 6.7; on 6.1 they
 * reach file_ioctl. */
SEC("lsm/file_ioctl_compat")
int BPF_PROG(sbx_file_ioctl_compat, struct file *file, unsigned int cmd, unsigned long arg,
	     int ret)
{
	if (ret || !sbx_maybe_in_session())
		return ret;
	return sbx_ioctl(cmd, arg);
}
