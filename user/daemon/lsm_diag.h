/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SBX_LSM_DIAG_H
#define SBX_LSM_DIAG_H

#include <stdbool.h>

/*
 * Why BPF-LSM can or cannot enforce here: the one diagnosis that doctor,
 * the daemon and `run` print. Three ways to fail need three different
 * fixes: a kernel built without it (another kernel), one that has it but
 * not in its LSM list (a boot parameter, made from the real list), and one
 * whose list has it but where loading an LSM program is refused (lockdown,
 * a container, a host policy: nothing on the kernel command line helps).
 */
enum sbx_lsm_state {
	SBX_LSM_OK,		/* in the list; a test program loaded (or none was tried) */
	SBX_LSM_NOT_BUILT,	/* CONFIG_BPF_LSM off, or no bpf_lsm_ hooks in the BTF */
	SBX_LSM_NOT_LISTED,	/* built in, but "bpf" is not in the LSM list */
	SBX_LSM_REFUSED,	/* listed, but loading an LSM program fails here */
	SBX_LSM_UNKNOWN,	/* the list cannot be read (no securityfs, not root) */
};

struct sbx_lsm_diag {
	enum sbx_lsm_state state;
	char *lsm;		/* /sys/kernel/security/lsm, without its newline, or NULL */
	char *config;		/* where CONFIG_BPF_LSM was read, or NULL */
	bool tested;		/* a test program was loaded (or refused) */
	int load_errno;		/* the refusal's errno, SBX_LSM_REFUSED */
	char *why;		/* one sentence: what is the case */
	char *fix;		/* what to change, or NULL */
};

/*
 * Diagnose; mounts securityfs when root and it is not mounted (as the
 * daemon mounts bpffs). try_load: as root, load (and attach, then detach)
 * a two-instruction LSM program that allows everything, to tell a refused
 * load apart from a working one.
 */
void sbx_lsm_diagnose(struct sbx_lsm_diag *d, bool try_load);
void sbx_lsm_diag_free(struct sbx_lsm_diag *d);
/* "lsm=LIST,bpf" from the current list (capability is always on, not listed) */
char *sbx_lsm_boot_param(const char *lsm);

#endif
