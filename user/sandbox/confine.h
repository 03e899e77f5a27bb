/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SBX_CONFINE_H
#define SBX_CONFINE_H

/*
 * `run` on the fallback tier (BPF-LSM off): the process that is already in
 * the session's cgroup confines itself just before it execs CMD. It loads
 * and compiles the session's policy with its own rights (as the daemon's
 * compile does, user/daemon/compile_as.c), makes the Landlock plan
 * (policy/landlock.h), applies it, then installs the never-list
 * (user/sandbox/seccomp.h). Everything it sets is inherited by CMD and
 * cannot be undone.
 *
 * Returns 0, or -errno with *err (malloc'd, one sentence). On any error
 * the process may be half confined or not at all: the caller must not run
 * CMD (fail closed). A policy that says `sandbox: {require: bpf-lsm}` is
 * refused here (-EPERM), and so is a kernel without Landlock (-ENOSYS,
 * -EOPNOTSUPP). kernel_decides: the daemon's programs decide writes,
 * and the asks, in the kernel (the "kernel_decides" of its run reply), so
 * the plan lets Landlock grant them (policy/landlock.h).
 */
int sbx_fallback_confine(const char *policy_path, const char *home, const char *project,
			 bool kernel_decides, char **err);

/* The PATH directories, the project and the home directory: the trees the
 * plan searches for entries a name rule matches. */
struct sbx_scan_roots {
	char **v;
	size_t n;
};
void sbx_scan_roots_make(struct sbx_scan_roots *r, const char *home, const char *project,
			 const char *path_env);
void sbx_scan_roots_free(struct sbx_scan_roots *r);

#endif
