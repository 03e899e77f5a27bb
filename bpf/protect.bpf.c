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
 *  - sockets of rarely used families with a history of kernel bugs, and
 *    raw packet sockets.
 *  - TIOCSTI/TIOCLINUX: pushing keystrokes into the terminal's input,
 *    which the shell outside the session would run after the agent exits.
 */
#include "sbx_common.h"

#define CLONE_INTO_CGROUP	0x200000000ULL
#define TIOCSTI			0x5412
#define TIOCLINUX		0x541C

#define AF_AX25		3
#define AF_IPX		4
#define AF_APPLETALK	5
#define AF_NETROM	6
#define AF_X25		9
#define AF_ROSE		11
#define AF_DECnet	12
#define AF_PACKET	17
#define AF_RDS		21
#define AF_TIPC		30
#define AF_ALG		38
#define AF_VSOCK	40
#define AF_KCM		41

static __always_inline int sbx_refuse(struct sbx_session *s, __u64 cgid, __u16 op,
				      __u32 rule, __u32 aux)
{
	struct sbx_event *e;

	sbx_count_verdict(SBX_V_DENY);
	e = sbx_event_begin(s, cgid, op, SBX_V_DENY, rule, -EPERM);
	if (e) {
		e->aux = aux;
		sbx_event_submit(e);
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

SEC("lsm/ptrace_access_check")
int BPF_PROG(sbx_ptrace_access_check, struct task_struct *child, unsigned int mode, int ret)
{
	struct sbx_session *s;
	__u64 cgid;

	if (ret)
		return ret;
	s = sbx_current_session(&cgid);
	if (!s || sbx_task_session(child) == cgid)
		return 0;
	return sbx_refuse(s, cgid, SBX_OP_PTRACE, SBX_RULE_SELF_PROTECT,
			  BPF_CORE_READ(child, tgid));
}

SEC("lsm/task_kill")
int BPF_PROG(sbx_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred, int ret)
{
	struct sbx_session *s;
	__u64 cgid;

	if (ret)
		return ret;
	if (!sig)
		return 0;	/* "does it exist?" signals nothing */
	s = sbx_current_session(&cgid);
	if (!s || sbx_task_session(p) == cgid)
		return 0;
	return sbx_refuse(s, cgid, SBX_OP_SIGNAL, SBX_RULE_SELF_PROTECT, BPF_CORE_READ(p, tgid));
}

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

SEC("lsm/perf_event_open")
int BPF_PROG(sbx_perf_event_open, struct perf_event_attr *attr, int type, int ret)
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
	__u64 cgid;

	if (ret || kern)
		return ret;
	switch (family) {
	case AF_ALG: case AF_VSOCK: case AF_RDS: case AF_TIPC: case AF_KCM: case AF_X25:
	case AF_AX25: case AF_NETROM: case AF_ROSE: case AF_DECnet: case AF_APPLETALK:
	case AF_IPX: case AF_PACKET:
		break;
	default:
		return 0;
	}
	s = sbx_current_session(&cgid);
	if (!s)
		return 0;
	return sbx_refuse(s, cgid, SBX_OP_SOCKET_CREATE, SBX_RULE_SOCKET_FAMILY,
			  (__u32)family | ((__u32)type << 16));
}

SEC("lsm/file_ioctl")
int BPF_PROG(sbx_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
	struct sbx_session *s;
	__u64 cgid;

	if (ret)
		return ret;
	if (cmd != TIOCSTI && cmd != TIOCLINUX)
		return 0;
	s = sbx_current_session(&cgid);
	if (!s)
		return 0;
	return sbx_refuse(s, cgid, SBX_OP_IOCTL, SBX_RULE_SELF_PROTECT, cmd);
}
