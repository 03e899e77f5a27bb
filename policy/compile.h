/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compile.h - what the parts of the policy compiler share: compile.c (the
 * header, the protected policy files and the order of the passes) and
 * compile_*.c. Not the library's API; that is policy.h.
 *
 *   compile_files.c  files rules -> inode, chain and name entries, then
 *                    inode entries for hard links below denied directories
 *   compile_net.c    network rules -> LPM entries with their port rules
 *   compile_dump.c   the text form (`policy compile --dump`); it needs
 *                    only policy.h
 */
#ifndef SBX_POLICY_COMPILE_H
#define SBX_POLICY_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifndef SBX_POLICY_INTERNAL
#define SBX_POLICY_INTERNAL
#endif
#include "policy/policy.h"

/* ---- the compile state ------------------------------------------------------------ */

struct fent;		/* compile_files.c */
struct hl_cand;		/* compile_files.c */

/* file entries while building */
struct fvec {
	struct fent *v;
	size_t n, cap;
	size_t klen;
};

struct cstate {
	const struct sbx_policy *p;
	struct sbx_diags *d;
	uint32_t policy_id;
	struct sbx_compiled *out;
	struct fvec inode, chain, name;
	struct hl_cand *hl;
	size_t n_hl, cap_hl;
	size_t cap_idents;	/* of out->idents */
	void *paths;	/* tsearch tree of struct path_memo */
	bool err;
	bool oom;
};

void cerr(struct cstate *s, const struct sbx_srcpos *pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void cwarn(struct cstate *s, const struct sbx_srcpos *pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- the passes ----------------------------------------------------------------- */

/* Files rules into s->out's inode, chain and name entries (and the header's
 * length masks, max_chain and /proc flags); hard links only if no error. */
void compile_files(struct cstate *s);
/* What compile_files keeps while building; s->out keeps its entries. */
void compile_files_free(struct cstate *s);
void free_files_out(struct sbx_compiled *c);

/* Network rules into s->out's net4 and net6 entries, sorted. */
void compile_network(struct cstate *s);

/* One layer's rules as they stand, with no floor: sbx_policy_compile()
 * (floor.c) decides what the machine policy changes first. */
int compile_layer(const struct sbx_policy *p, uint32_t policy_id, struct sbx_compiled *out,
		  struct sbx_diags *diags);

#endif
