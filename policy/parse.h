/* SPDX-License-Identifier: GPL-2.0 */
/*
 * parse.h - what the parts of the policy parser share: parse.c (the top
 * level, extends and merging) and parse_*.c. Not the library's API; that
 * is policy.h.
 *
 *   parse_yaml.c      text -> a tree of ynodes that keep their line:column
 *   parse_schema.c    diagnostics, type and key checks, variables, the
 *                     head every rule starts with, the frame of a section
 *   parse_files.c     files:     -> trules with path patterns
 *   parse_net.c       network:   -> trules with hosts, CIDRs and ports
 *   parse_commands.c  commands:  -> trules with command names and arg globs
 *
 * Each file of an extends chain is read into its own fdoc; parse.c then
 * numbers the rules and merges the fdocs into one struct sbx_policy.
 */
#ifndef SBX_POLICY_PARSE_H
#define SBX_POLICY_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#ifndef SBX_POLICY_INTERNAL
#define SBX_POLICY_INTERNAL
#endif
#include "lib/text.h"
#include "policy/policy.h"

#define FIELD_MAX	256

/* ---- a YAML tree with positions (parse_yaml.c) ------------------------------ */

enum ytype { Y_SCALAR, Y_SEQ, Y_MAP };

struct ynode {
	enum ytype type;
	int line, col;		/* 1-based */
	char *str;		/* scalar */
	size_t len;
	bool plain;		/* unquoted scalar */
	struct ynode **kids;	/* seq: items; map: key, value, key, value... */
	size_t n, cap;
	struct yblock *arena;	/* the root's: every node, string and list */
};

/* One document, or NULL with a diagnostic. */
struct ynode *yparse(const char *file, const char *buf, size_t len, struct sbx_diags *d);
void ynode_free(struct ynode *y);

/* ---- per-file results before merging ------------------------------------------ */

struct trule {
	enum sbx_section sec;
	char *key;		/* canonical order within the section */
	struct sbx_rule_info info;
	struct sbx_frule f;
	struct sbx_nrule nr;
	struct sbx_crule c;
};

struct defpos {
	bool set;
	uint8_t verdict;
	int line, col;
	char *field;
};

#define SBX_SANDBOX_SWITCHES 8
/* the switches, then socket_families, netlink, keep_env */
#define SBX_SANDBOX_KEYS (SBX_SANDBOX_SWITCHES + 3)

struct sbx_machine_doc;

struct fdoc {
	char *file;		/* display name */
	char *dir;		/* for relative extends; NULL: cwd */
	struct trule *r;
	size_t n, cap;
	struct defpos fdef[SBX_ACC_MAX];
	bool fdef_scalar;	/* one id for all three */
	char *freason;
	struct defpos ndef, cdef;
	struct defpos ldef;	/* network.loopback: a listener outside the session */
	struct defpos idef;	/* network.inbound: outside clients of its listeners */
	/* network.reserved_ports and network.inbound_ports: lists add up */
	struct sbx_port_range *reserved, *inbound_ports;
	size_t n_reserved, n_inbound_ports;
	char *nreason, *creason;
	char *extends;
	int ext_line, ext_col;
	/* network.resolvers and network.dns: what this file sets (a child's
	 * setting replaces its parent's) */
	bool dns_resolvers_set, dns_grace_set, dns_min_ttl_set, dns_per_name_set,
	     dns_per_session_set;
	struct sbx_dns_conf dns;
	int sandbox[SBX_SANDBOX_SWITCHES];	/* -1 unset, 0 deny, 1 allow; see parse.c */
	uint64_t family_allow;	/* sandbox.socket_families */
	uint32_t netlink_allow;	/* sandbox.netlink */
	char **keep_env;	/* sandbox.keep_env */
	size_t n_keep_env;
	bool keep_env_set;
	bool require_bpf_lsm;	/* sandbox.require: bpf-lsm */
	/* where each sandbox: key was written (switches, then the lists in
	 * machine.c's order), for the machine policy's refusals */
	int sandbox_line[SBX_SANDBOX_KEYS], sandbox_col[SBX_SANDBOX_KEYS];
	char *ext_real;		/* what extends: resolved to (realpath) */
	struct sbx_machine_doc *mdoc;	/* a machine file's projects: (machine.c) */
	void (*mdoc_free)(struct sbx_machine_doc *);	/* machine.c's, with mdoc */
};

struct pctx {
	struct sbx_diags *d;
	const struct sbx_policy_env *env;
	struct fdoc *doc;
	bool err;		/* this file had an error */
	bool machine;		/* a machine policy file (machine.c) */
	/* a machine file's projects: section (machine.c passes its parser in,
	 * so that the parser knows nothing of the machine policy) */
	void (*projects)(struct pctx *c, const struct ynode *y);
};

/* ---- schema helpers (parse_schema.c) ------------------------------------------ */

void perr(struct pctx *c, int line, int col, const char *field,
	  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void pwarn(struct pctx *c, int line, int col, const char *field,
	   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
const char *ytype_name(const struct ynode *y);

/* A field's name for messages: base then suffix (".path"), or base and
 * "[i]", into dst[n], cut as snprintf would. Every rule makes several, so
 * they are not formatted by printf. */
void field_name(char *dst, size_t n, const char *base, const char *suffix);
void field_index(char *dst, size_t n, const char *base, size_t i);

/* Reject keys that are not in `allowed` (NULL-terminated). */
void check_keys(struct pctx *c, const struct ynode *map, const char *field,
		const char *const *allowed);
const struct ynode *map_get(const struct ynode *map, const char *key);
bool want_scalar(struct pctx *c, const struct ynode *y, const char *field, const char *what);
bool want_map(struct pctx *c, const struct ynode *y, const char *field, const char *what);

/* A string, or a list of strings: fill items[] (borrowed), with fields. */
struct sitem {
	const struct ynode *y;
	char field[FIELD_MAX];
};

struct sitem *string_or_list(struct pctx *c, const struct ynode *y,
			     const char *field, const char *what, size_t *n);
int parse_verdict(struct pctx *c, const struct ynode *y, const char *field);
char *parse_reason(struct pctx *c, const struct ynode *y, const char *field);
struct sbx_srcpos mkpos(struct pctx *c, const struct ynode *y, int off, const char *field);
/* Column of byte `off` of a scalar's text (quotes shift it by one). */
int scol(const struct ynode *y, size_t off);

/*
 * Expand a leading "~" and ${HOME} / ${PROJECT} anywhere. Errors point at
 * the offending byte. Returns malloc'd text or NULL (error reported).
 */
char *expand_vars(struct pctx *c, const struct ynode *y, const char *field);
bool has_var_start(const char *s);

/* Append s to a growing string with a separator. */
/*
 * Canonical sort key of a rule: its parts as written, list items sorted,
 * so that neither the order of rules nor of items changes numbering.
 */
char *make_key(const char *const *parts, size_t n, const char *tail);

/*
 * What sets one section's rules apart. fields() reads the fields that
 * are the section's own, reports their errors and returns false on one;
 * what it fills in `out` is the caller's to free, whatever the head
 * returns.
 */
struct rule_kind {
	enum sbx_section sec;
	const char *what;		/* "a rule (a mapping with ...)" */
	const char *const *keys;	/* NULL-terminated, verdict and reason too */
	bool (*fields)(struct pctx *c, const struct ynode *y, const char *field, void *out);
};

/*
 * The lines every rule starts with: it is a mapping, has only known keys,
 * its own fields (kind->fields), then verdict and reason, in that order,
 * which is the order of its diagnostics. Returns the new rule of c->doc
 * with section, verdict, reason and position set, or NULL (an error was
 * reported, or out of memory).
 */
struct trule *parse_rule_head(struct pctx *c, const struct ynode *y, const char *field,
			      const struct rule_kind *kind, void *out);

void parse_rules(struct pctx *c, const struct ynode *y, const char *field,
		 void (*fn)(struct pctx *, const struct ynode *, const char *));
char *parse_opt_reason(struct pctx *c, const struct ynode *sec, const char *field);
/* network: and commands: share their frame: one default verdict, its
 * reason, and the rules (files: has a default per access class) */
/* A section's default verdict (default:, network.loopback:) and where it was written. */
void parse_section_default(struct pctx *c, const struct ynode *y, const char *field,
			   struct defpos *out);
void parse_verdict_section(struct pctx *c, const struct ynode *y, const char *name,
			   const char *default_field, const char *rules_field,
			   struct defpos *def, char **reason,
			   void (*rule)(struct pctx *, const struct ynode *, const char *),
			   const char *const *extra_keys);

/* ---- the sections -------------------------------------------------------------- */

void parse_files(struct pctx *c, const struct ynode *y);	/* parse_files.c */
void parse_network(struct pctx *c, const struct ynode *y);	/* parse_net.c */
void parse_commands(struct pctx *c, const struct ynode *y);	/* parse_commands.c */

/* ---- the loader's parts that the machine policy shares (parse.c) -------------------- */

/* A regular file of at most 1 MiB from an open descriptor (taken over);
 * NULL with *err. */
char *policy_read_fd(int fd, size_t *len, int *err);
/* One file's document: its own rules and settings, nothing extended;
 * *failed when it had an error (the doc is still returned, for more).
 * projects: NULL for a project's file, the parser of projects: for a
 * machine file. */
struct fdoc *policy_parse_doc(const char *file, const char *buf, size_t len,
			      const struct sbx_policy_env *env, struct sbx_diags *d,
			      void (*projects)(struct pctx *c, const struct ynode *y),
			      bool *failed);
/* The project's policy alone (the public loaders, machine.c, add the
 * machine policy): with keep, its documents (root of the chain first) and
 * the file's realpath go to the caller, for the machine's projects: check. */
struct policy_layer {
	struct fdoc *docs[10];
	size_t ndocs;
	char *self_real;
};
struct sbx_policy *policy_load_buffer(const char *name, const char *buf, size_t len,
				      const struct sbx_policy_env *env, struct sbx_diags *diags,
				      struct policy_layer *keep);
struct sbx_policy *policy_load_file(const char *path, const struct sbx_policy_env *env,
				    struct sbx_diags *diags, struct policy_layer *keep);
void policy_layer_free(struct policy_layer *keep);
void policy_fdoc_free(struct fdoc *doc);
/* Move doc's rules into p, numbered after those already there. */
int policy_merge_doc(struct sbx_policy *p, struct fdoc *doc);
/* sandbox: key i's name (the switches, then the lists) */
const char *policy_sandbox_key(int i);

/* ---- the machine policy (machine.c) ------------------------------------------------- */

/*
 * Load the machine policy of env (or the default directory) into p: its
 * rules after the project's, marked machine, and its projects: checked
 * against the project's files (docs, root of the chain first; self_real:
 * the project file's realpath, NULL for a buffer). -1 on an
 * error (reported), 0 otherwise (also when there is no machine policy).
 */
int machine_apply(struct sbx_policy *p, struct fdoc *const *docs, size_t ndocs,
		  const char *self_real, const struct sbx_policy_env *env, struct sbx_diags *d);

#endif
