/* SPDX-License-Identifier: GPL-2.0 */
/* compile_as.h - a policy compiled in a child with its owner's rights. */
#ifndef SBX_COMPILE_AS_H
#define SBX_COMPILE_AS_H

#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include "policy/policy.h"
#include "user/daemon/state.h"

struct sbx_compiled_rt {
	struct sbx_compiled c;		/* entries, without the "what" labels */
	struct sbx_rule_row *rules;
	size_t n_rules;
	json_t *diags;			/* array of "file:line:col: ..." strings */
	json_t *sources;		/* {files: [{path, mtime, size, ino}], scan_dirs, hardlinks} */
	json_t *names;			/* host rules and DNS settings (sbx_names_json()) */
	json_t *approval;		/* the machine's projects: for approvals
					 * {max_always_ttl_s, approvers?} */
};

/* Load and compile in a child that runs with uid/gid's rights (floor_live:
 * a running session's, policy.h sbx_policy_env.floor_live; learn: for run
 * --learn, sbx_policy_learn() between the two). */
int sbx_policy_compile_as(uid_t uid, gid_t gid, const char *home, const char *project,
			  const char *policy_path, uint32_t policy_id, bool floor_live,
			  bool learn, struct sbx_compiled_rt *out, char **err);
void sbx_compiled_rt_free(struct sbx_compiled_rt *c);

/* What a policy file looks like now ({path, mtime, size, ino}): if it
 * still looks the same, a compiled copy of it may be reused. */
json_t *sbx_source_stamp(const char *path);

#endif
