/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SBX_TIER_H
#define SBX_TIER_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Which enforcement tier this kernel allows, and what each protection
 * would rest on there: the table `bpfsbx doctor` prints. Nothing is
 * assumed: a protection whose mechanism the running kernel lacks is
 * listed as not enforced, with the reason.
 *
 * The fallback tier (Landlock + cgroup-BPF + seccomp) is used where
 * BPF-LSM is not active: the daemon loads the cgroup programs and its
 * programs on security_* functions
 * (user/daemon/kernel.c) and run confines itself (user/sandbox/confine.h).
 * A row says "enforced" only for what those really do.
 */
enum sbx_tier {
	SBX_TIER_BPF_LSM,	/* BPF-LSM is active and its programs load */
	SBX_TIER_LANDLOCK,	/* the fallback: Landlock + cgroup-BPF + seccomp */
	SBX_TIER_NONE,		/* neither: run refuses */
};

struct sbx_tier_probe {
	unsigned kmajor, kminor;
	int landlock_abi;	/* 0: not built (ENOSYS) or disabled at boot */
	int landlock_errno;	/* why 0: ENOSYS, EOPNOTSUPP; else 0 */
	bool lsm_read;		/* /sys/kernel/security/lsm could be read */
	bool bpf_listed;	/* "bpf" is in it */
	bool bpf_lsm_ok;	/* the caller's diagnosis: BPF-LSM can enforce */
	bool seccomp;		/* seccomp filters with SECCOMP_RET_ERRNO */
	bool seccomp_filter;	/* the never-list filter can be built here */
	bool memfd_noexec;	/* MFD_NOEXEC_SEAL is known (6.3) */
	bool cgroup2;		/* cgroup v2 is mounted */
	/* the daemon's fentry and fmod_ret programs on security_unix_*,
	 * security_socket_bind and _listen (bpf/network.bpf.c): 1 pinned, 0
	 * the kernel refused them, -1 not known (nothing loaded, or not
	 * readable); set by the caller */
	int sec_hooks;
	enum sbx_tier tier;
};

/* Probe the running kernel. bpf_lsm_ok: whether BPF-LSM is active and
 * loads here, and lsm: the LSM list as read for that diagnosis (NULL:
 * unreadable), both from user/daemon/lsm_diag.h, which mounts securityfs
 * first when it must. */
void sbx_tier_probe(struct sbx_tier_probe *p, bool bpf_lsm_ok, const char *lsm);

const char *sbx_tier_name(enum sbx_tier t);	/* "bpf-lsm", "landlock", "none" */

enum sbx_prot_state {
	SBX_PROT_ENFORCED,	/* the mechanism is there and bpfsbx uses it */
	SBX_PROT_PARTIAL,	/* part of the class only; `note` says what stays open */
	SBX_PROT_NOT_ENFORCED,	/* no mechanism on this kernel */
};

struct sbx_protection {
	const char *what;	/* the protection, as the issue and docs name it */
	const char *mechanism;	/* on the fallback tier, on this kernel */
	enum sbx_prot_state state;
	const char *note;	/* what stays open, or NULL */
};

/*
 * The fallback tier's protections on this kernel, in a fixed order: the
 * never-list (seccomp, no_new_privs, Landlock scopes), then files, exec,
 * network and events. Returns the number of rows written to rows (at most
 * max; SBX_TIER_ROWS is enough).
 */
#define SBX_TIER_ROWS	40
unsigned sbx_tier_protections(const struct sbx_tier_probe *p, struct sbx_protection *rows,
			      unsigned max);
const char *sbx_prot_state_name(enum sbx_prot_state s);

/* The tier line and the table, as doctor prints them. */
void sbx_tier_print(FILE *f, const struct sbx_tier_probe *p);

#endif
