// SPDX-License-Identifier: GPL-2.0
/*
 * tier.c - which tier this kernel allows, and the fallback tier's
 * protections on it, each with the mechanism it rests on. Every row is
 * decided by a probe of the running kernel (a syscall, securityfs, the
 * mount table, the daemon's pins). A row says "enforced" only where run
 * and the daemon use the mechanism.
 */
#include <errno.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "lib/text.h"
#include "policy/landlock.h"
#include "user/sandbox/seccomp.h"
#include "user/sandbox/tier.h"

static bool cgroup2_mounted(void)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char type[64];
	bool found = false;

	while (f && !found && fscanf(f, "%*s %*s %63s %*[^\n]", type) == 1)
		found = !strcmp(type, "cgroup2");
	if (f)
		fclose(f);
	return found;
}

void sbx_tier_probe(struct sbx_tier_probe *p, bool bpf_lsm_ok, const char *lsm)
{
	struct utsname u;
	char *err = NULL;

	memset(p, 0, sizeof(*p));
	if (uname(&u) == 0)
		sscanf(u.release, "%u.%u", &p->kmajor, &p->kminor);
	errno = 0;
	p->landlock_abi = sbx_landlock_abi();
	p->landlock_errno = p->landlock_abi ? 0 : errno;
	p->lsm_read = lsm != NULL;
	p->bpf_listed = sbx_list_has(lsm, "bpf");
	p->bpf_lsm_ok = bpf_lsm_ok;
	p->seccomp = sbx_seccomp_available();
	p->seccomp_filter = p->seccomp && sbx_seccomp_check(0, &err) == 0;
	free(err);
	p->memfd_noexec = sbx_memfd_noexec_known();
	p->cgroup2 = cgroup2_mounted();
	p->sec_hooks = -1;
	if (bpf_lsm_ok)
		p->tier = SBX_TIER_BPF_LSM;
	/* a kernel that lists bpf but refuses its programs is lockdown or a
	 * container: the daemon refuses there (user/daemon/kernel.c) */
	else if (p->lsm_read && !p->bpf_listed && p->landlock_abi >= 1 && p->seccomp_filter &&
		 p->cgroup2)
		p->tier = SBX_TIER_LANDLOCK;
	else
		p->tier = SBX_TIER_NONE;
}

const char *sbx_tier_name(enum sbx_tier t)
{
	return t == SBX_TIER_BPF_LSM ? "bpf-lsm" : t == SBX_TIER_LANDLOCK ? "landlock" : "none";
}

const char *sbx_prot_state_name(enum sbx_prot_state s)
{
	switch (s) {
	case SBX_PROT_ENFORCED:
		return "enforced";
	case SBX_PROT_PARTIAL:
		return "partly";
	case SBX_PROT_NOT_ENFORCED:
	default:
		return "NOT enforced";
	}
}

/* the mechanism of the rows that rest on the daemon's fentry, fexit and
 * fmod_ret programs, where the kernel refused them */
#define NO_HOOKS "none: the kernel refused the daemon's programs on security_* (its log says why)"

/* the kernel has the mechanism, and run and the daemon use it */
static enum sbx_prot_state have(bool yes)
{
	return yes ? SBX_PROT_ENFORCED : SBX_PROT_NOT_ENFORCED;
}

#define ROW(w, m, s, n) do {							\
		if (k < max)							\
			rows[k] = (struct sbx_protection){ (w), (m), (s), (n) };	\
		k++;								\
	} while (0)

unsigned sbx_tier_protections(const struct sbx_tier_probe *p, struct sbx_protection *rows,
			      unsigned max)
{
	bool sc = p->seccomp_filter, ll = p->landlock_abi >= 1, hooks = p->sec_hooks != 0;
	int abi = p->landlock_abi;
	unsigned k = 0;

	/* the never-list */
	ROW("bpf()", "seccomp: EPERM", have(sc), NULL);
	ROW("perf_event_open", "seccomp: EPERM", have(sc), NULL);
	ROW("kernel modules, kexec", "seccomp: EPERM", have(sc), NULL);
	ROW("ptrace, process_vm_*, pidfd_getfd, /proc/PID/mem of outside processes",
	    hooks ? "seccomp: EPERM for every target; for /proc/PID/*, fmod_ret on "
	    "security_ptrace_access_check (with an event) and Landlock's ptrace scope" :
	    "seccomp: EPERM for every target; Landlock's ptrace scope for /proc/PID/*",
	    have(sc && ll), "inside the session too: no debugger or strace runs in a session");
	ROW("mounts, pivot_root, chroot", "seccomp: EPERM", have(sc), NULL);
	ROW("new user namespaces, setns", "seccomp: EPERM; clone3 ENOSYS (libc falls back to clone)",
	    have(sc), "whatever sandbox.userns says");
	ROW("TIOCSTI, TIOCLINUX", "seccomp: EPERM", have(sc), NULL);
	ROW("descriptor owners (F_SETOWN, F_SETOWN_EX, F_SETSIG, FIOSETOWN, SIOCSPGRP)",
	    "seccomp: EPERM for every owner", have(sc), "inside the session too");
	if (hooks)
		ROW("memfd exec and exec of unlinked files", "seccomp: execveat(AT_EMPTY_PATH)"
		    "; fmod_ret on security_file_open and security_mmap_file: a file with no name "
		    "left, EPERM with an event", have(true), NULL);
	else if (p->memfd_noexec)
		ROW("memfd exec and exec of unlinked files", "seccomp: memfd_create without "
		    "MFD_NOEXEC_SEAL; execveat(AT_EMPTY_PATH)", SBX_PROT_PARTIAL,
		    "an unlinked file still open runs through execve(\"/proc/self/fd/N\")");
	else
		ROW("memfd exec and exec of unlinked files", "seccomp: execveat(AT_EMPTY_PATH) only",
		    SBX_PROT_NOT_ENFORCED, "before 6.3 every memfd is executable and Landlock does "
		    "not check it: execve(\"/proc/self/fd/N\") stays open");
	ROW("setuid and file-capability programs", "no_new_privs", have(true), NULL);
	ROW("io_uring (unless the policy allows it)", "seccomp: EPERM", have(sc), NULL);
	ROW("signals to processes outside the session", hooks ? "fmod_ret on security_task_kill: "
	    "EPERM, with an event" : abi >= 6 ? "Landlock signal scope (ABI 6): EPERM" :
	    "none: Landlock ABI 6 has the signal scope", have(hooks || abi >= 6),
	    hooks || abi >= 6 ? NULL : "a session may signal every process of its user");

	/* files and exec */
	ROW("file reads by path", hooks ? "Landlock; where the policy asks for a read or a name "
	    "rule (.env, *.key) decides one, fmod_ret on security_file_open: EPERM, with an "
	    "event" : ll ? "Landlock, by place" : "none", hooks ? SBX_PROT_ENFORCED : ll ?
	    SBX_PROT_PARTIAL : SBX_PROT_NOT_ENFORCED, hooks ? NULL : "a name rule does not hold "
	    "for a name made after the session started, or outside the project, the home and "
	    "PATH");
	ROW("file writes by path: opens, creates, unlinks, renames, links, truncate, chmod, "
	    "chown, times, xattrs, inode flags", hooks ? "fmod_ret on security_file_open, the "
	    "security_path_* functions, security_inode_setattr and _setxattr and "
	    "security_file_ioctl: the policy's verdict, EPERM with an event; Landlock as well "
	    "where no directory above may be written" : ll ? "Landlock" : "none",
	    hooks ? SBX_PROT_ENFORCED : ll ? SBX_PROT_PARTIAL : SBX_PROT_NOT_ENFORCED,
	    hooks ? NULL : "a name cannot be made beside a write-denied one (the project root "
	    "beside .sandbox); chmod, chown, times, xattrs and inode flags are not checked");
	ROW("exec by path", "Landlock EXECUTE", have(ll), NULL);
	ROW("exec without execve: ld.so, LD_PRELOAD, dlopen, mprotect to executable",
	    hooks ? "fmod_ret on security_mmap_file and security_file_mprotect: the exec "
	    "rules, EPERM with an event" : "none: Landlock checks EXECUTE on execve only",
	    have(hooks), hooks ? NULL : "a binary the policy keeps from running runs "
	    "through ld.so");
	ROW("descriptors passed in over a unix socket (SCM_RIGHTS)", hooks ? "fmod_ret on "
	    "security_file_receive: the file's verdict (a terminal: as below), EPERM with an "
	    "event" : "none: Landlock checks opens, and the descriptor was opened outside",
	    have(hooks), NULL);
	ROW("terminals but the session's own (the person's `bpfsbx watch`, other ptys, VTs, "
	    "the console), opened or passed in", hooks ? "fmod_ret on security_file_open and "
	    "security_file_receive, by device; the ptys a session made recorded by fexit on "
	    "devpts_pty_new: EPERM, with an event" : ll ? "Landlock: by path only" : "none",
	    hooks ? SBX_PROT_ENFORCED : SBX_PROT_NOT_ENFORCED, hooks ? NULL : "a pty of the "
	    "agent's uid that the policy lets the session open (/dev/pts) is reachable");
	ROW("rename and link into another directory", abi >= 2 ? "Landlock REFER (ABI 2)" :
	    "Landlock ABI 1: every such rename or link is refused", have(ll), NULL);
	ROW("truncate", hooks ? "fmod_ret on security_path_truncate" : abi >= 3 ?
	    "Landlock TRUNCATE (ABI 3)" : "none: Landlock ABI 3 has TRUNCATE",
	    have(hooks || abi >= 3), hooks || abi >= 3 ? NULL : "truncate(2) is not checked: a "
	    "file the policy keeps from writing can still be emptied");
	ROW("device ioctls", abi >= 5 ? "Landlock IOCTL_DEV (ABI 5)" :
	    "none: Landlock ABI 5 has IOCTL_DEV", have(abi >= 5), NULL);
	ROW("the always-protected set (.sandbox, policy files, bpffs, cgroupfs)", hooks ?
	    "the programs on security_file_open and security_path_*, and Landlock" : "Landlock",
	    have(ll), NULL);
	ROW("file asks: a person approves a read, write or exec, and the session carries on",
	    hooks ? "fmod_ret on security_file_open and security_path_* decide what the policy "
	    "asks for (run's plan lets Landlock grant it)" : "none: without the daemon's "
	    "programs on security_* an ask is a deny", have(hooks), NULL);

	/* network */
	ROW("IP connects and sends, DNS redirect, loopback listeners",
	    "cgroup/connect4/6, sendmsg4/6", have(p->cgroup2), NULL);
	ROW("a session's loopback listener reached by a client outside every session; "
	    "network.reserved_ports bound in a session", hooks ? "fentry and fmod_ret on "
	    "security_socket_bind and security_socket_listen, cgroup/sendmsg4/6 (whose a port "
	    "is), cgroup/connect4/6 and sendmsg4/6 on the cgroup root: EPERM, with an event" :
	    NO_HOOKS,
	    have(hooks && p->cgroup2), NULL);
	ROW("socket families (raw, packet, netlink, ...)", "cgroup/sock_create for IPv4 and IPv6 "
	    "(EPERM, with an event); seccomp for the other families (EPERM, no event)",
	    have(p->cgroup2 && sc), NULL);
	ROW("unix sockets by listener (pathname and abstract): the daemon's, an approver's, "
	    "one outside the session only by the policy's connect rules; a session's own "
	    "socket reached from outside only by network.inbound", hooks ? "fentry and "
	    "fmod_ret on security_unix_stream_connect and security_unix_may_send (BPF "
	    "trampolines, no BPF-LSM): EPERM, with an event" : NO_HOOKS, have(hooks),
	    p->sec_hooks < 0 ? "once the daemon has loaded its programs; a kernel without BPF "
	    "trampolines refuses them, and this row then says so" : NULL);
	ROW("abstract unix sockets bound outside the session", abi >= 6 ? "Landlock abstract-socket "
	    "scope (ABI 6): EPERM, after the rules above" : hooks ? "the unix hooks above, by "
	    "\"@name\" rules" : "none: Landlock ABI 6 has the abstract-socket scope",
	    have(abi >= 6 || hooks), abi >= 6 ? "every one, whatever the policy allows (\"@name\" "
	    "rules are not honoured where the scope is)" : NULL);

	/* accomplices without sockets */
	ROW("SysV message queues, semaphores and shared memory made outside the session",
	    hooks ? "fmod_ret on security_ipc_permission and the security_msg_queue_*, sem_* "
	    "and shm_* checks: EPERM, with an event" : NO_HOOKS,
	    have(hooks), NULL);
	ROW("kernel keys and keyrings made outside the session", hooks ? "fmod_ret on "
	    "security_key_alloc and security_key_permission: EPERM, with an event" :
	    NO_HOOKS, have(hooks), NULL);

	ROW("named FIFOs made outside the session", hooks ? "fexit on vfs_mknod (who made "
	    "it), fmod_ret on security_file_open: EPERM, with an event" : ll ? "Landlock: by "
	    "its path, as a file" : "none", hooks ? SBX_PROT_ENFORCED : ll ? SBX_PROT_PARTIAL :
	    SBX_PROT_NOT_ENFORCED, hooks ? NULL : "a FIFO outside that the policy lets the "
	    "session write (in /tmp, say) is reachable");
	ROW("POSIX message queues made outside the session", hooks ? "fmod_ret on "
	    "security_file_open: EPERM, with an event" : ll ? "Landlock (the mqueue mount has "
	    "no rule): EACCES" : "none", have(hooks || ll), "every queue, the session's own "
	    "too: who made one is not recorded on this tier");

	/* events */
	ROW("events for network denials", "the cgroup programs", have(p->cgroup2), NULL);
	ROW("events for file and exec denials", hooks ? "the programs that refuse writes; "
	    "fexit on security_file_open for Landlock's refusal of a read or exec, with the "
	    "policy's rule (or built-in landlock)" : NO_HOOKS,
	    have(hooks), hooks ? NULL : "silent in the kernel: only the connectors report them");
	ROW("events for the never-list", "none: seccomp's EPERM is silent", SBX_PROT_NOT_ENFORCED,
	    "refused, but no event");
	return k;
}

void sbx_tier_print(FILE *f, const struct sbx_tier_probe *p)
{
	struct sbx_protection rows[SBX_TIER_ROWS];
	unsigned n = sbx_tier_protections(p, rows, SBX_TIER_ROWS);

	fprintf(f, "tier: %s (Landlock ABI %d%s; BPF-LSM %s)\n", sbx_tier_name(p->tier),
		p->landlock_abi, p->landlock_abi ? "" : p->landlock_errno == EOPNOTSUPP ?
		": built but disabled at boot" : ": not built", p->bpf_lsm_ok ? "active" :
		p->bpf_listed ? "listed but refused here" : "not active");
	/* "enforced" only where the fallback tier is the one in force */
	if (p->tier == SBX_TIER_BPF_LSM)
		fprintf(f, "the fallback tier's protections, were BPF-LSM off (\"available\": this "
			"kernel has the mechanism):\n");
	else if (p->tier == SBX_TIER_NONE)
		fprintf(f, "run refuses here; the fallback tier's protections, were it usable "
			"(\"available\": this kernel has the mechanism):\n");
	else
		fprintf(f, "the fallback tier's protections on this kernel (Landlock + cgroup-BPF + "
			"seccomp; docs/FALLBACK.md):\n");
	for (unsigned i = 0; i < n && i < SBX_TIER_ROWS; i++) {
		bool would = p->tier != SBX_TIER_LANDLOCK && rows[i].state == SBX_PROT_ENFORCED;

		fprintf(f, "  %-12s %s\n  %12s   %s\n", would ? "available" :
			sbx_prot_state_name(rows[i].state), rows[i].what, "", rows[i].mechanism);
		if (rows[i].note)
			fprintf(f, "  %12s   (%s)\n", "", rows[i].note);
	}
}
