// SPDX-License-Identifier: GPL-2.0
/*
 * confine.c - the fallback tier's half in `run`: files and exec by
 * Landlock, then the never-list by seccomp (confine.h). The network half
 * is the daemon's cgroup programs, but for the socket families they never
 * see (only IPv4 and IPv6 reach cgroup/sock_create): those are refused by
 * a second seccomp filter made from the compiled policy.
 *
 * The policy is compiled a second time, here, rather than sent by the
 * daemon: a Landlock plan names paths, so it must be made by a process
 * that sees the file system as CMD will (its mount namespace, its rights),
 * and the daemon's compile runs in its own child for the same reason.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "policy/landlock.h"
#include "policy/policy.h"
#include "user/sandbox/confine.h"
#include "user/sandbox/seccomp.h"

/* Host rules are the cgroup programs' part: the plan needs no address. */
static int no_resolve(const char *host, struct sbx_addr **out, size_t *n, void *ctx)
{
	(void)host;
	(void)ctx;
	*out = NULL;
	*n = 0;
	return ECANCELED;
}

static void add_root(struct sbx_scan_roots *r, const char *dir)
{
	if (!dir || dir[0] != '/')
		return;		/* a relative PATH entry names no fixed tree */
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->v[i], dir))
			return;
	r->v = sbx_realloc_array(r->v, r->n + 1, sizeof(*r->v));
	r->v[r->n++] = sbx_strdup(dir);
}

void sbx_scan_roots_make(struct sbx_scan_roots *r, const char *home, const char *project,
			 const char *path_env)
{
	char *copy = sbx_strdup(path_env ? path_env : ""), *save = NULL;

	r->v = NULL;
	r->n = 0;
	add_root(r, project);
	add_root(r, home);
	for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
		add_root(r, t);
	free(copy);
}

void sbx_scan_roots_free(struct sbx_scan_roots *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i]);
	free(r->v);
	r->v = NULL;
	r->n = 0;
}

/* the first error of the policy's diagnostics, for the one-line refusal */
static char *first_error(const struct sbx_diags *d, const char *path)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].level == SBX_DIAG_ERROR)
			return sbx_asprintf("the policy %s does not load here: %s:%d:%d: %s", path,
					    d->v[i].file ? d->v[i].file : path, d->v[i].line,
					    d->v[i].col, d->v[i].msg);
	return sbx_asprintf("the policy %s does not load here", path);
}

int sbx_fallback_confine(const char *policy_path, const char *home, const char *project,
			 bool kernel_decides, char **err)
{
	/* no generations: run is in its session already, and the plan is
	 * made and applied at once */
	struct sbx_policy_env env = { .home = home, .project = project, .resolve = no_resolve,
				      .no_generations = true };
	struct sbx_landlock_plan plan = { 0 };
	struct sbx_scan_roots roots;
	struct sbx_diags diags = { 0 };
	struct sbx_compiled c = { 0 };
	struct sbx_policy *p = NULL;
	char *why = NULL;
	int abi, rc;

	errno = 0;
	abi = sbx_landlock_abi();
	if (abi < 1) {
		rc = errno == EOPNOTSUPP ? -EOPNOTSUPP : -ENOSYS;
		*err = sbx_asprintf("BPF-LSM is not active and Landlock is %s, so files and exec "
				    "cannot be confined here: nothing was run ('bpfsbx doctor' "
				    "says more)", rc == -EOPNOTSUPP ? "disabled at boot (add "
				    "landlock to lsm=)" : "not in this kernel");
		return rc;
	}
	p = sbx_policy_load_file(policy_path, &env, &diags);
	if (!p) {
		*err = first_error(&diags, policy_path);
		sbx_diags_free(&diags);
		return -EINVAL;
	}
	if (sbx_policy_requires_bpf_lsm(p)) {
		*err = sbx_asprintf("the policy %s requires the bpf-lsm tier (sandbox.require), "
				    "and BPF-LSM is not active here (tier landlock): nothing was "
				    "run", policy_path);
		rc = -EPERM;
		goto out;
	}
	rc = sbx_policy_compile(p, 1, &c, &diags);
	if (rc) {
		*err = first_error(&diags, policy_path);
		rc = -EINVAL;
		goto out;
	}
	sbx_scan_roots_make(&roots, home, project, getenv("PATH"));
	rc = sbx_landlock_plan(p, &c, abi, &(struct sbx_landlock_opts){
					.scan_roots = (const char *const *)roots.v,
					.n_scan_roots = roots.n,
					.kernel_decides = kernel_decides }, &plan, &why);
	sbx_scan_roots_free(&roots);
	if (rc) {
		*err = sbx_asprintf("making the Landlock ruleset: %s", why ? why : strerror(-rc));
		goto out;
	}
	rc = sbx_landlock_apply(&plan, &why);
	if (rc) {
		*err = sbx_asprintf("applying the Landlock ruleset: %s", why ? why : strerror(-rc));
		goto out;
	}
	rc = sbx_seccomp_install(0, err);
	if (!rc)
		rc = sbx_seccomp_install_families(&(struct sbx_seccomp_families){
				.family_allow = c.hdr.family_allow,
				.netlink_allow = c.hdr.netlink_allow,
				.packet = c.hdr.flags & SBX_PF_ALLOW_RAW }, err);
out:
	free(why);
	sbx_landlock_plan_free(&plan);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&diags);
	return rc;
}
