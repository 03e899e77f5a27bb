// SPDX-License-Identifier: GPL-2.0
/*
 * seccomp.c - the fallback tier's "never" list as a seccomp filter
 * (libseccomp). The filter allows by default and refuses the listed
 * calls with EPERM: it is a deny list over an unprivileged process, not an
 * allow list, so that every build tool and interpreter keeps working.
 *
 * Only the native architecture is in the filter. A call made through
 * another ABI (x32's numbers on x86_64, or int 0x80) would be checked
 * against that ABI's numbers, which the rules do not name: the filter
 * kills the process instead (bad-arch action). 32-bit programs therefore
 * do not run on this tier.
 *
 * Arguments that the kernel reads as a 32-bit int (an ioctl's or fcntl's
 * command, memfd_create's flags) are compared on their low 32 bits only:
 * the kernel drops the upper half, so a filter comparing all 64 bits is
 * bypassed by setting one (CVE-2019-10063, Flatpak's TIOCSTI filter).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/sockios.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/seccomp.h>
#include "lib/alloc.h"
#include "user/sandbox/seccomp.h"

/* clone's flags are its first argument, except where the stack comes
 * first (arch/Kconfig: CLONE_BACKWARDS2) */
#if defined(__s390__) || defined(__s390x__)
#define CLONE_FLAGS_ARG	1
#else
#define CLONE_FLAGS_ARG	0
#endif

enum never_test {
	ALWAYS,		/* every call */
	HAS_BITS,	/* (arg & val) == val */
	LACKS_BITS,	/* (arg & val) == 0 */
	IS_U32,		/* (arg & 0xffffffff) == val */
};

enum never_when {
	EVERYWHERE,
	NO_IO_URING,	/* unless SBX_SECCOMP_ALLOW_IO_URING */
	MEMFD_NOEXEC,	/* only where the kernel knows MFD_NOEXEC_SEAL */
};

struct never_rule {
	const char *syscall;	/* libseccomp's name */
	enum never_test test;
	unsigned arg;
	uint64_t val;
	int err;
	enum never_when when;
	bool optional;		/* absent on some architectures (umount, fcntl64) */
};

/* what each group closes: docs/KERNELS.md, "The fallback tier: seccomp" */
static const struct never_rule never_rules[] = {
	/* the maps that confine the session, and the kernel's own state */
	{ "bpf", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "perf_event_open", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "init_module", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "finit_module", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "delete_module", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "kexec_load", ALWAYS, 0, 0, EPERM, EVERYWHERE, true },
	{ "kexec_file_load", ALWAYS, 0, 0, EPERM, EVERYWHERE, true },
	/* other processes' memory and descriptors: seccomp cannot tell a
	 * target inside the session from one outside, so every target */
	{ "ptrace", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "process_vm_readv", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "process_vm_writev", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "pidfd_getfd", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	/* what paths mean */
	{ "mount", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "umount", ALWAYS, 0, 0, EPERM, EVERYWHERE, true },
	{ "umount2", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "move_mount", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "fsopen", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "fsmount", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "fsconfig", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "fspick", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "open_tree", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "mount_setattr", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "pivot_root", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	{ "chroot", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	/* capabilities in a namespace of one's own */
	{ "unshare", HAS_BITS, 0, CLONE_NEWUSER, EPERM, EVERYWHERE, false },
	{ "clone", HAS_BITS, CLONE_FLAGS_ARG, CLONE_NEWUSER, EPERM, EVERYWHERE, false },
	/* its flags are in memory seccomp cannot read: ENOSYS makes glibc
	 * (and musl, Go, Rust's std) fall back to clone */
	{ "clone3", ALWAYS, 0, 0, ENOSYS, EVERYWHERE, false },
	{ "setns", ALWAYS, 0, 0, EPERM, EVERYWHERE, false },
	/* keystrokes pushed into the terminal, run by the shell outside the
	 * session once the agent exits */
	{ "ioctl", IS_U32, 1, TIOCSTI, EPERM, EVERYWHERE, false },
	{ "ioctl", IS_U32, 1, TIOCLINUX, EPERM, EVERYWHERE, false },
	/* a descriptor's owner receives SIGIO/SIGURG with no permission check
	 * at delivery: naming an owner is signalling it */
	{ "ioctl", IS_U32, 1, FIOSETOWN, EPERM, EVERYWHERE, false },
	{ "ioctl", IS_U32, 1, SIOCSPGRP, EPERM, EVERYWHERE, false },
	{ "fcntl", IS_U32, 1, F_SETOWN, EPERM, EVERYWHERE, false },
	{ "fcntl", IS_U32, 1, F_SETOWN_EX, EPERM, EVERYWHERE, false },
	{ "fcntl", IS_U32, 1, F_SETSIG, EPERM, EVERYWHERE, false },
	{ "fcntl64", IS_U32, 1, F_SETOWN, EPERM, EVERYWHERE, true },
	{ "fcntl64", IS_U32, 1, F_SETOWN_EX, EPERM, EVERYWHERE, true },
	{ "fcntl64", IS_U32, 1, F_SETSIG, EPERM, EVERYWHERE, true },
	/* code that never was a file: Landlock does not check the exec of a
	 * memfd (its inode is on an internal mount), so the memfd must not be
	 * executable in the first place */
	{ "memfd_create", HAS_BITS, 1, MFD_EXEC, EPERM, MEMFD_NOEXEC, false },
	{ "memfd_create", LACKS_BITS, 1, MFD_NOEXEC_SEAL, EPERM, MEMFD_NOEXEC, false },
	{ "execveat", HAS_BITS, 4, AT_EMPTY_PATH, EPERM, EVERYWHERE, false },
	/* its submissions run in the kernel without passing this filter */
	{ "io_uring_setup", ALWAYS, 0, 0, EPERM, NO_IO_URING, false },
	{ "io_uring_enter", ALWAYS, 0, 0, EPERM, NO_IO_URING, false },
	{ "io_uring_register", ALWAYS, 0, 0, EPERM, NO_IO_URING, false },
};

bool sbx_memfd_noexec_known(void)
{
	int fd = memfd_create("bpfsbx-probe", MFD_CLOEXEC | MFD_NOEXEC_SEAL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

bool sbx_seccomp_available(void)
{
	uint32_t action = SECCOMP_RET_ERRNO;

	return syscall(__NR_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

static int rule_add(scmp_filter_ctx ctx, const struct never_rule *r, char **err)
{
	int nr = seccomp_syscall_resolve_name(r->syscall);
	uint32_t action = SCMP_ACT_ERRNO((uint32_t)r->err);
	int rc;

	if (nr == __NR_SCMP_ERROR || nr < 0) {
		/* a name this architecture lacks: nothing to refuse */
		if (r->optional)
			return 0;
		*err = sbx_asprintf("libseccomp does not know the system call %s here",
				    r->syscall);
		return -ENOSYS;
	}
	if (r->test == ALWAYS) {
		rc = seccomp_rule_add(ctx, action, nr, 0);
	} else {
		/* every test is one masked compare: (arg & mask) == value */
		uint64_t mask = r->test == IS_U32 ? 0xffffffffULL : r->val;
		uint64_t value = r->test == LACKS_BITS ? 0 : r->val;

		rc = seccomp_rule_add(ctx, action, nr, 1,
				      SCMP_CMP(r->arg, SCMP_CMP_MASKED_EQ, mask, value));
	}
	if (rc < 0)
		*err = sbx_asprintf("seccomp: cannot add the rule for %s: %s", r->syscall,
				    strerror(-rc));
	return rc;
}

static int build(unsigned flags, scmp_filter_ctx *out, char **err)
{
	bool memfd_rules = sbx_memfd_noexec_known();
	scmp_filter_ctx ctx;
	int rc = 0;

	*out = NULL;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		*err = sbx_strdup("seccomp: cannot create a filter (libseccomp)");
		return -ENOMEM;
	}
	/* seccomp_init added the native architecture alone: any other ABI's
	 * calls (x32 on x86_64 included) take the bad-arch action */
	if ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1)) ||
	    /* a thread started before the filter would otherwise stay
	     * unfiltered; the load fails rather than leave one */
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1)) ||
	    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1))) {
		*err = sbx_asprintf("seccomp: cannot set the filter's attributes: %s",
				    strerror(-rc));
		goto fail;
	}
	for (size_t i = 0; i < sizeof(never_rules) / sizeof(never_rules[0]); i++) {
		const struct never_rule *r = &never_rules[i];

		if ((r->when == NO_IO_URING && (flags & SBX_SECCOMP_ALLOW_IO_URING)) ||
		    (r->when == MEMFD_NOEXEC && !memfd_rules))
			continue;
		if ((rc = rule_add(ctx, r, err)) < 0)
			goto fail;
	}
	*out = ctx;
	return 0;
fail:
	seccomp_release(ctx);
	return rc < 0 ? rc : -EINVAL;
}

int sbx_seccomp_check(unsigned flags, char **err)
{
	scmp_filter_ctx ctx;
	int rc;

	*err = NULL;
	rc = build(flags, &ctx, err);
	if (ctx)
		seccomp_release(ctx);
	return rc;
}

int sbx_seccomp_install(unsigned flags, char **err)
{
	scmp_filter_ctx ctx;
	int rc;

	*err = NULL;
	/* before the filter: seccomp requires it of an unprivileged caller,
	 * and it is what makes setuid programs gain nothing */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		rc = -errno;
		*err = sbx_asprintf("cannot set no_new_privs: %s", strerror(errno));
		return rc;
	}
	rc = build(flags, &ctx, err);
	if (rc)
		return rc;
	rc = seccomp_load(ctx);
	if (rc < 0)
		*err = sbx_asprintf("seccomp: the kernel refused the filter: %s", strerror(-rc));
	seccomp_release(ctx);
	return rc < 0 ? rc : 0;
}

/* families are ints: the kernel drops the upper half (as for IS_U32) */
static int family_rule(scmp_filter_ctx ctx, int nr, unsigned fam, int proto)
{
	if (proto < 0)
		return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
					SCMP_CMP(0, SCMP_CMP_MASKED_EQ, 0xffffffffULL, fam));
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2,
				SCMP_CMP(0, SCMP_CMP_MASKED_EQ, 0xffffffffULL, fam),
				SCMP_CMP(2, SCMP_CMP_MASKED_EQ, 0xffffffffULL, (unsigned)proto));
}

int sbx_seccomp_install_families(const struct sbx_seccomp_families *f, char **err)
{
	static const char *const calls[] = { "socket", "socketpair" };
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int rc = ctx ? 0 : -ENOMEM;

	*err = NULL;
	if (!rc && ((rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS)) ||
		    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1)) ||
		    (rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1))))
		goto out;
	for (size_t c = 0; !rc && c < sizeof(calls) / sizeof(calls[0]); c++) {
		int nr = seccomp_syscall_resolve_name(calls[c]);

		if (nr == __NR_SCMP_ERROR || nr < 0) {
			rc = -ENOSYS;
			break;
		}
		/* the kernel refuses families from AF_MAX on (EAFNOSUPPORT);
		 * 64 is above every AF_MAX so far */
		for (unsigned fam = 0; !rc && fam < 64; fam++) {
			if (fam == AF_UNIX || fam == AF_INET || fam == AF_INET6)
				continue;	/* cgroup/sock_create decides inet */
			if (fam == AF_NETLINK) {
				/* protocols from 32 on do not exist (MAX_LINKS) */
				for (int p = 0; !rc && p < 32; p++)
					if (!((f->netlink_allow >> p) & 1))
						rc = family_rule(ctx, nr, fam, p);
			} else if (fam == AF_PACKET ? !f->packet : !((f->family_allow >> fam) & 1)) {
				rc = family_rule(ctx, nr, fam, -1);
			}
		}
	}
	if (!rc)
		rc = seccomp_load(ctx);
out:
	/* libseccomp returns -errno */
	if (rc)
		*err = sbx_asprintf("seccomp: the socket-family filter: %s", strerror(-rc));
	if (ctx)
		seccomp_release(ctx);
	return rc;
}
