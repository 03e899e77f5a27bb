/* SPDX-License-Identifier: GPL-2.0 */
/*
 * suggest.h - from what sessions were refused to the smallest policy patch
 * that would have allowed it (`bpfsbx policy suggest`), and never one
 * that opens a credential location, a persistence path or the protected
 * set.
 *
 * Pipeline: the refused accesses (deduplicated, with their event counts)
 * are sorted into already allowed, protected (agent-default denies or
 * asks them, or a built-in rule does: listed with the reason, never
 * suggested), kept (the project's own deny) and suggestible. The
 * suggestible ones are generalised (a tool's cache directory rather than
 * its files, a host rather than its addresses, a command's varying
 * arguments as a glob), emitted as a policy that extends the project's,
 * and that very text is loaded, compiled and checked with decide.c: every
 * suggestible access must be allowed by it, and no probe of the protected
 * set may change verdict. A rule that fails the check is narrowed to the
 * exact objects; if that fails too, nothing is printed.
 */
#ifndef SBX_SUGGEST_H
#define SBX_SUGGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "policy/policy.h"

enum sbx_seen_kind { SBX_SEEN_FILE, SBX_SEEN_NET, SBX_SEEN_HOST, SBX_SEEN_COMMAND };

/* One refused access as recorded; the strings are the caller's. */
struct sbx_seen {
	enum sbx_seen_kind kind;
	int access;			/* FILE: enum sbx_access */
	const char *path;		/* FILE: absolute, or "@name" */
	int family;			/* NET: AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint16_t port;
	const char *host;		/* HOST; NET: the name it was learned from, or NULL */
	char *const *argv;		/* COMMAND */
	int argc;
	uint64_t count;			/* events */
	const char *who;		/* the process name, for the comments */
};

struct sbx_suggest_in {
	const struct sbx_policy_env *env;	/* home, project */
	/* the policy the patch extends: a path, or NULL for agent-default */
	const char *base;
	/* how the patch names it in extends: (default: base, or agent-default) */
	const char *base_ref;
	/* the policy whose denies and asks are the protected set: NULL for the
	 * shipped agent-default (the fuzzer names a small one, to be fast) */
	const char *guard;
	/* a header comment (what was read), one line, or NULL */
	const char *header;
	/* objects below a tool directory before the rule is the directory
	 * (0: two). An approver widening one asked object offers it at one. */
	size_t dir_min;
	/* every rule's reason (NULL: "suggested by bpfsbx policy suggest: N
	 * recorded events of WHO") */
	const char *reason;
};

struct sbx_suggestion {
	char *yaml;			/* the patch, comments and all */
	size_t rules;			/* rules in it */
	size_t covered;			/* accesses the rules allow */
	size_t protected_n;		/* accesses left out as protected */
	size_t kept;			/* accesses the base policy denies by its own rule */
	size_t unexpressible;		/* accesses no rule can name */
	size_t already;			/* accesses the base allows by now */
};

/*
 * 0 with out->yaml set; -1 with the reason in d (a base or agent-default
 * that does not load, or a patch that fails its own check: fail closed).
 */
int sbx_suggest(const struct sbx_seen *v, size_t n, const struct sbx_suggest_in *in,
		struct sbx_suggestion *out, struct sbx_diags *d);
void sbx_suggestion_free(struct sbx_suggestion *s);

/* ---- one access, for `policy diff` ---------------------------------------------------- */

/* a key that is equal for the same access (sort and merge by it); malloc'd */
char *sbx_seen_key(const struct sbx_seen *s);
/* how p (compiled as c) decides s, as the kernel, the resolver or a connector would */
int sbx_seen_decide(const struct sbx_compiled *c, const struct sbx_policy *p,
		    const struct sbx_seen *s, struct sbx_decision *d);
/* "read /home/u/.ssh/id_rsa", "connect 192.0.2.1 port 443 (example.com)" (malloc'd) */
char *sbx_seen_words(const struct sbx_seen *s);

/*
 * What p still refuses (asks or denies) of acc below dir although a rule
 * allows dir itself: the rules that sit closer to an object, name rules
 * (which match anywhere) and path rules below dir, one line each,
 * "*.pem: ask (reason)". For the person about to widen a rule to dir.
 * *n lines, malloc'd.
 */
char **sbx_suggest_refused_below(const struct sbx_policy *p, const char *dir, int acc, size_t *n);

/* ---- the generaliser's parts, for the unit tests ------------------------------ */

/*
 * The directory a file access widens to: below home, the tool's directory
 * and one more level (~/.cache/pip, ~/.npm/_cacache, ~/.local/share/X);
 * elsewhere three levels (/var/cache/apt, /opt/tool/lib); in the project
 * one level. NULL when the path is not deeper than that (it stays exact).
 */
char *sbx_suggest_widen(const char *path, const char *home, const char *project);

/*
 * An args glob for the argument strings of one command (joined by spaces,
 * as the commands section matches them): the one string, escaped, when
 * all are equal; their common leading words and " *" when they vary and
 * share at least one word; NULL when they share none (list them instead).
 */
char *sbx_suggest_args(char *const *joined, size_t n);

#endif
