/* SPDX-License-Identifier: GPL-2.0 */
/*
 * landlock.h - the files-and-exec part of the fallback tier: a compiled
 * policy turned into a Landlock ruleset (docs/KERNELS.md, "The landlock
 * tier"); `run` applies it on that tier (user/sandbox/confine.c).
 *
 * Landlock only allows: a right granted on a directory holds for everything
 * below it. So the plan walks down from "/" along every path a rule is
 * anchored on (the "hot" paths) and, in each directory on the way, grants
 * each entry what sbx_decide_path() gives it. A hot directory itself keeps
 * only the rights that hold for all of its entries, so a name created in it
 * later gets only those (fail closed: usually none).
 *
 * Pipeline:  sbx_policy + sbx_compiled --sbx_landlock_plan()--> plan (a
 * sorted list of (path, rights)) --sbx_landlock_apply()--> the calling
 * thread is restricted; any error leaves the caller unable to run CMD.
 */
#ifndef SBX_POLICY_LANDLOCK_H
#define SBX_POLICY_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/landlock.h>
#include "policy/policy.h"

/* newer than the 6.1 uapi headers */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV	(1ULL << 15)
#endif
/* ABI 6 (6.12): the values of include/uapi/linux/landlock.h, which the
 * struct landlock_ruleset_attr of older headers has no field for */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET	(1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL			(1ULL << 1)
#endif

/* The running kernel's Landlock ABI: 0 when Landlock is missing or off,
 * with errno telling which (ENOSYS: not built; EOPNOTSUPP: disabled). */
int sbx_landlock_abi(void);

/* Landlock rights of the access classes in accbits (SBX_ACCBIT mask) that
 * ABI abi has; all_rights(abi) when accbits covers read, write and exec. */
uint64_t sbx_landlock_rights(int abi, unsigned accbits);
uint64_t sbx_landlock_all_rights(int abi);

/* The scopes the plan sets on ABI abi: from ABI 6, abstract unix sockets
 * and signals, so that a session can neither connect to an abstract
 * socket bound outside its domain nor signal a process outside it. */
uint64_t sbx_landlock_scopes(int abi);

struct sbx_landlock_rule {
	char *path;		/* real path, no symlink in it */
	uint64_t access;	/* LANDLOCK_ACCESS_FS_* */
	bool dir;
};

struct sbx_landlock_plan {
	int abi;			/* the ABI the rights were chosen for */
	uint64_t handled;		/* handled_access_fs */
	uint64_t scoped;		/* LANDLOCK_SCOPE_*: sbx_landlock_scopes(abi) */
	struct sbx_landlock_rule *rules;	/* sorted by path, each once */
	size_t n_rules;
	/* Directories expanded into their entries (a rule is anchored below
	 * them): new names there get only what every entry may have. Sorted. */
	char **expanded;
	size_t n_expanded;
	size_t scanned;			/* entries read looking for name rules */
};

struct sbx_landlock_opts {
	/* Trees searched for entries that a name rule ("*.pem", ".env") or
	 * the .sandbox protection matches; they become hot paths. Outside
	 * them, name rules hold only in expanded directories. */
	const char *const *scan_roots;
	size_t n_scan_roots;
	size_t scan_max;		/* entries; 0: SBX_LANDLOCK_SCAN_MAX */
	/* The daemon's programs on security_file_open and security_path_*
	 * (bpf/files.bpf.c) decide every write, and the reads and execs the
	 * policy asks for: grant what the policy asks for, so that a person's
	 * approval can reach the running session, and keep a directory's own
	 * write rights, so that names can be made beside a write-denied one.
	 * False: ask is deny, as nobody could approve, and a directory keeps
	 * only the write rights all of its entries may have. */
	bool kernel_decides;
};

#define SBX_LANDLOCK_SCAN_MAX	200000
#define SBX_LANDLOCK_SCAN_DEPTH	64

/*
 * The plan for policy p compiled as c, for ABI abi (1 and up). 0, or
 * -errno with *why (malloc'd) in words: -E2BIG when a scan root holds
 * more than scan_max entries (fail closed: a name rule below the limit
 * would go unenforced), -ENOTSUP for abi < 1.
 */
int sbx_landlock_plan(const struct sbx_policy *p, const struct sbx_compiled *c, int abi,
		      const struct sbx_landlock_opts *opts, struct sbx_landlock_plan *out,
		      char **why);
void sbx_landlock_plan_free(struct sbx_landlock_plan *plan);
/* One line per rule and per expanded directory (tests, --dump). */
void sbx_landlock_plan_dump(const struct sbx_landlock_plan *plan, FILE *out);

/*
 * Restrict the calling thread (and what it later forks and execs) to the
 * plan: no_new_privs, then landlock_restrict_self. 0, or -errno with
 * *why. On any error the thread may be half restricted or not at all:
 * the caller must not run the command.
 */
int sbx_landlock_apply(const struct sbx_landlock_plan *plan, char **why);

/*
 * What the plan lets a process do to path for access class acc, judged
 * from the rules as the kernel walks them (for the differential test and
 * `explain`): every Landlock right the operations of acc need there is
 * granted (ALLOW), none is (DENY), or some are (PARTIAL). READ: read the
 * file or list the directory; WRITE: write, truncate, remove or create
 * the entry; EXEC: execve (Landlock also needs READ_FILE for that).
 * missing rights in *lacking (may be NULL).
 */
enum sbx_landlock_verdict { SBX_LL_ALLOW, SBX_LL_DENY, SBX_LL_PARTIAL };
int sbx_landlock_check(const struct sbx_landlock_plan *plan, const char *path,
		       enum sbx_access acc, enum sbx_landlock_verdict *out, uint64_t *lacking);

#endif
