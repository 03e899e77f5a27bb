// SPDX-License-Identifier: GPL-2.0
/*
 * parse_files.c - the files: section: path patterns, access classes, the
 * default per access class, and the rules.
 *
 * A pattern is one of a few shapes that the kernel can match without
 * globbing (see shapes_help); every other shape is an error that says
 * which part is unsupported.
 */
#include <stdlib.h>
#include <string.h>
#include "policy/parse.h"
#include "lib/text.h"

/* ---- path patterns ------------------------------------------------------------ */

static const char shapes_help[] =
	"supported: an absolute path (/dir, /dir/, /dir/** = the path and everything below), "
	"a name anywhere (NAME, **/NAME, lit*, *lit), /proc/*/environ|mem|fd, or an abstract "
	"unix socket (@name, @lit*)";

/* "@name" or "@lit*": an abstract unix socket's name, taken as bytes. */
static int parse_abstract(struct pctx *c, const struct ynode *y, const char *field,
			  struct sbx_path_pat *out)
{
	const char *b = y->str + 1;
	size_t n = strlen(b);
	const char *star = memchr(b, '*', n);

	if (star && star != b + n - 1) {
		perr(c, y->line, scol(y, (size_t)(star - y->str)), field,
		     "unsupported pattern: an abstract socket name may end in one '*', nowhere else");
		return -1;
	}
	if (star)
		n--;
	if (n == 0) {
		perr(c, y->line, y->col, field, "empty abstract socket name; %s", shapes_help);
		return -1;
	}
	if (n > (star ? SBX_GLOB_LIT_MAX : 107)) {
		perr(c, y->line, y->col, field, star ?
		     "the literal part of a wildcard name is at most %d bytes" :
		     "an abstract socket name is at most %d bytes", star ? SBX_GLOB_LIT_MAX : 107);
		return -1;
	}
	out->shape = star ? SBX_PAT_ABSTRACT_PREFIX : SBX_PAT_ABSTRACT;
	out->text = strndup(b, n);
	out->pos = mkpos(c, y, 1, field);
	return out->text ? 0 : -1;
}

/* Parse one files path pattern. */
static int parse_path(struct pctx *c, const struct ynode *y, const char *field,
		      struct sbx_path_pat *out)
{
	const char *s = y->str;
	size_t len = strlen(s);
	const char *star;

	memset(out, 0, sizeof(*out));
	if (s[0] == '@')
		return parse_abstract(c, y, field, out);
	for (const char *d = strchr(s, '$'); d; d = strchr(d + 1, '$'))
		if (d[1] != '{') {
			perr(c, y->line, scol(y, (size_t)(d - s)), field,
			     "'$' must start ${HOME} or ${PROJECT} (braces required)");
			return -1;
		}
	if (!strncmp(s, "/proc/*/", 8)) {
		const char *rest = s + 8;
		size_t rl = strlen(rest);
		static const char *const names[] = { "environ", "mem", "fd" };

		if (rl >= 3 && !strcmp(rest + rl - 3, "/**"))
			rl -= 3;
		while (rl > 0 && rest[rl - 1] == '/')
			rl--;
		for (size_t i = 0; i < 3; i++)
			if (rl == strlen(names[i]) && !strncmp(rest, names[i], rl)) {
				out->shape = SBX_PAT_PROC;
				out->text = strdup(names[i]);
				out->pos = mkpos(c, y, 0, field);
				return out->text ? 0 : -1;
			}
		perr(c, y->line, scol(y, 6), field,
		     "unsupported /proc pattern: only /proc/*/environ, /proc/*/mem and "
		     "/proc/*/fd (files of processes outside the session) are supported");
		return -1;
	}
	if (has_var_start(s)) {
		/* absolute: the path and everything below it */
		size_t n = len;
		char *lit, *exp, *norm;

		if (n >= 3 && !strcmp(s + n - 3, "/**"))
			n -= 3;
		while (n > 1 && s[n - 1] == '/')
			n--;
		star = memchr(s, '*', n);
		if (star) {
			perr(c, y->line, scol(y, (size_t)(star - s)), field,
			     "unsupported pattern: '*' inside a path; %s", shapes_help);
			return -1;
		}
		if (n == 0)	/* the pattern was the root, all below */
			n = 1;
		lit = strndup(s, n);
		if (!lit)
			return -1;
		{
			struct ynode tmp = *y;

			tmp.str = lit;
			tmp.len = n;
			exp = expand_vars(c, &tmp, field);
		}
		free(lit);
		if (!exp)
			return -1;
		if (exp[0] != '/') {
			perr(c, y->line, y->col, field,
			     "expands to a relative path '%s': HOME and PROJECT must be absolute", exp);
			free(exp);
			return -1;
		}
		norm = sbx_path_normalize(exp);
		free(exp);
		if (!norm)
			return -1;
		out->shape = SBX_PAT_ANCHORED;
		out->text = norm;
		out->pos = mkpos(c, y, 0, field);
		return 0;
	}
	/* a name anywhere: optional leading double-star slash, NAME, optional trailing slash or slash-double-star */
	{
		const char *b = s, *e = s + len;
		size_t n, stars = 0;

		while (e - b >= 3 && !strncmp(b, "**/", 3))
			b += 3;
		if (e - b >= 3 && !strncmp(e - 3, "/**", 3))
			e -= 3;
		while (e > b && e[-1] == '/')
			e--;
		n = (size_t)(e - b);
		if (n == 0) {
			perr(c, y->line, y->col, field, "empty name; %s", shapes_help);
			return -1;
		}
		if (memchr(b, '/', n)) {
			perr(c, y->line, y->col, field,
			     "relative path '%s': write ${PROJECT}/%.*s for a path in the project, "
			     "or **/NAME for a name anywhere", s, (int)n, b);
			return -1;
		}
		for (size_t i = 0; i < n; i++)
			if (b[i] == '*')
				stars++;
		if (memchr(b, '$', n)) {
			const char *d = memchr(b, '$', n);

			perr(c, y->line, scol(y, (size_t)(d - s)), field,
			     "variables can only start a path (${HOME}/..., ${PROJECT}/...)");
			return -1;
		}
		if (n == 1 && b[0] == '*') {
			perr(c, y->line, scol(y, (size_t)(b - s)), field,
			     "'*' alone matches everything: set the section's default instead");
			return -1;
		}
		if (stars == 0) {
			if ((n == 1 && b[0] == '.') || (n == 2 && b[0] == '.' && b[1] == '.')) {
				perr(c, y->line, y->col, field, "'%.*s' is not a name", (int)n, b);
				return -1;
			}
			if (n > SBX_NAME_MAX) {
				perr(c, y->line, y->col, field, "name longer than %d bytes", SBX_NAME_MAX);
				return -1;
			}
			out->shape = SBX_PAT_NAME_EXACT;
			out->text = strndup(b, n);
		} else if (stars == 1 && (b[0] == '*' || b[n - 1] == '*')) {
			if (n - 1 > SBX_GLOB_LIT_MAX) {
				perr(c, y->line, y->col, field,
				     "the literal part of a wildcard name is at most %d bytes", SBX_GLOB_LIT_MAX);
				return -1;
			}
			if (b[0] == '*') {
				out->shape = SBX_PAT_NAME_SUFFIX;
				out->text = strndup(b + 1, n - 1);
			} else {
				out->shape = SBX_PAT_NAME_PREFIX;
				out->text = strndup(b, n - 1);
			}
		} else {
			/* point at the '*' that makes it unsupported: the one in
			 * the middle, or the second one */
			const char *bad = memchr(b, '*', n);

			if (stars > 1 && bad == b)
				bad = memchr(b + 1, '*', n - 1);
			perr(c, y->line, scol(y, (size_t)(bad - s)), field,
			     "unsupported pattern: one '*' only, at the start or the end of a name; %s",
			     shapes_help);
			return -1;
		}
		if (!out->text)
			return -1;
		out->pos = mkpos(c, y, (int)(b - s), field);
		return 0;
	}
}

/* ---- files ---------------------------------------------------------------------- */

static int parse_access(struct pctx *c, const struct ynode *y, const char *field,
			uint8_t *mask)
{
	size_t n;
	struct sitem *it = string_or_list(c, y, field, "an access class (read, write, exec or all)", &n);

	*mask = 0;
	if (!it)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *s = it[i].y->str;

		if (!strcmp(s, "read"))
			*mask |= SBX_ACCBIT(SBX_ACC_READ);
		else if (!strcmp(s, "write"))
			*mask |= SBX_ACCBIT(SBX_ACC_WRITE);
		else if (!strcmp(s, "exec"))
			*mask |= SBX_ACCBIT(SBX_ACC_EXEC);
		else if (!strcmp(s, "connect"))
			*mask |= SBX_ACCBIT(SBX_ACC_CONNECT);
		else if (!strcmp(s, "all"))
			*mask |= (1u << SBX_ACC_MAX) - 1;
		else {
			perr(c, it[i].y->line, it[i].y->col, it[i].field,
			     "unknown access '%s': use read, write, exec, connect or all", s);
			free(it);
			return -1;
		}
	}
	free(it);
	return 0;
}

static bool has_component(const char *path, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = path; (p = strstr(p, name)); p++)
		if (p > path && p[-1] == '/' && (p[n] == 0 || p[n] == '/'))
			return true;
	return false;
}

/* Warn about rules that the built-in protections override. */
static void warn_builtin(struct pctx *c, const struct sbx_path_pat *pat, uint8_t access,
			 uint8_t verdict, const struct ynode *y, const char *field)
{
	static const char *const pseudo[] = {
		"/sys/fs/bpf", "/sys/fs/cgroup", "/sys/kernel/security",
		"/sys/kernel/debug", "/sys/kernel/tracing",
	};
	const char *why = NULL;

	if (!(access & SBX_ACCBIT(SBX_ACC_WRITE)) || verdict == SBX_V_DENY)
		return;
	if (pat->shape == SBX_PAT_NAME_EXACT && !strcmp(pat->text, ".sandbox"))
		why = "writes under any .sandbox directory are always denied";
	if (pat->shape == SBX_PAT_ANCHORED) {
		if (has_component(pat->text, ".sandbox"))
			why = "writes under any .sandbox directory are always denied";
		for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
			if (sbx_path_within(pat->text, pseudo[i]))
				why = "writes to bpffs, cgroupfs, securityfs, debugfs and tracefs are always denied";
	}
	if (why)
		pwarn(c, y->line, y->col, field,
		      "%s (built in): the write part of this rule never takes effect", why);
}

/* A files rule's own fields. */
struct file_fields {
	const struct ynode *yp;	/* path: */
	struct sitem *it;	/* its patterns */
	size_t n;
	uint8_t access;
};

static bool file_fields(struct pctx *c, const struct ynode *y, const char *field, void *out)
{
	struct file_fields *ff = out;
	const struct ynode *ya = map_get(y, "access");
	char f[FIELD_MAX];
	bool ok = true;

	ff->yp = map_get(y, "path");
	field_name(f, sizeof(f), field, ".path");
	if (!ff->yp)
		perr(c, y->line, y->col, f, "missing: every files rule needs a path");
	else
		ff->it = string_or_list(c, ff->yp, f, "a path pattern", &ff->n);
	field_name(f, sizeof(f), field, ".access");
	if (ya && parse_access(c, ya, f, &ff->access))
		ok = false;
	return ok && ff->it;
}

static const char *const file_rule_keys[] = { "path", "access", "verdict", "reason", NULL };

static const struct rule_kind file_rule_kind = {
	.sec = SBX_SEC_FILES,
	.what = "a rule (a mapping with path, verdict and reason)",
	.keys = file_rule_keys,
	.fields = file_fields,
};

static void parse_file_rule(struct pctx *c, const struct ynode *y, const char *field)
{
	struct file_fields ff = { .access = 0 };
	struct trule *t = parse_rule_head(c, y, field, &file_rule_kind, &ff);
	struct sitem *it = ff.it;
	size_t n = ff.n;
	uint8_t access = ff.access, verdict;
	bool proc_only_some = false;

	if (!t) {
		free(it);
		return;
	}
	verdict = t->info.verdict;
	/* without access: read, write and exec for paths, connect for
	 * abstract names; one rule does not mix the two */
	{
		size_t n_abs = 0;

		for (size_t i = 0; i < n; i++)
			n_abs += it[i].y->str[0] == '@';
		if (n_abs && n_abs != n) {
			perr(c, ff.yp->line, ff.yp->col, field,
			     "abstract socket names (@...) and paths in one rule: give them rules "
			     "of their own");
			free(it);
			return;
		}
		if (!access)
			access = n_abs ? SBX_ACCBIT(SBX_ACC_CONNECT) : 7;
		if (n_abs && access != SBX_ACCBIT(SBX_ACC_CONNECT)) {
			perr(c, ff.yp->line, ff.yp->col, field,
			     "an abstract socket name (@...) takes access: connect only");
			free(it);
			return;
		}
	}
	t->f.access = access;
	t->f.verdict = verdict;
	t->f.pats = calloc(n, sizeof(*t->f.pats));
	t->info.access = access;
	if (!t->f.pats) {
		free(it);
		return;
	}
	{
		const char **raw = calloc(n, sizeof(*raw));
		unsigned proc_seen = 0;
		char tail[64];

		for (size_t i = 0; i < n; i++) {
			if (raw)
				raw[i] = it[i].y->str;
			if (parse_path(c, it[i].y, it[i].field, &t->f.pats[t->f.n_pats]))
				continue;
			warn_builtin(c, &t->f.pats[t->f.n_pats], access, verdict,
				     it[i].y, it[i].field);
			if (t->f.pats[t->f.n_pats].shape == SBX_PAT_PROC)
				proc_seen |= 1u << (t->f.pats[t->f.n_pats].text[0] == 'e' ? 0 :
						    t->f.pats[t->f.n_pats].text[0] == 'm' ? 1 : 2);
			sbx_str_append(&t->info.pattern, ", ", it[i].y->str);
			sbx_str_append(&t->info.expanded, ", ", t->f.pats[t->f.n_pats].text);
			t->f.n_pats++;
		}
		if (proc_seen && proc_seen != 7)
			proc_only_some = true;
		snprintf(tail, sizeof(tail), "%u\x1f%d", access, verdict);
		if (raw) {
			char *k = make_key(raw, n, tail);

			if (k && sbx_str_append(&k, "\x1e", t->info.reason) == 0)
				t->key = k;
			else
				free(k);
		}
		free(raw);
	}
	if (proc_only_some)
		pwarn(c, ff.yp->line, ff.yp->col, field,
		      "the kernel protects /proc/*/environ, /proc/*/mem and /proc/*/fd of "
		      "processes outside the session together: this rule covers all three");
	free(it);
}

static void parse_default_files(struct pctx *c, const struct ynode *y, const char *field)
{
	static const char *const keys[] = { "read", "write", "exec", "connect", NULL };

	if (y->type == Y_SCALAR) {
		int v = parse_verdict(c, y, field);

		if (v < 0)
			return;
		c->doc->fdef_scalar = true;
		for (int a = 0; a < SBX_ACC_MAX; a++) {
			c->doc->fdef[a].set = true;
			c->doc->fdef[a].verdict = (uint8_t)v;
			c->doc->fdef[a].line = y->line;
			c->doc->fdef[a].col = y->col;
			c->doc->fdef[a].field = strdup(field);
		}
		return;
	}
	if (y->type != Y_MAP) {
		perr(c, y->line, y->col, field,
		     "expected a verdict or {read: V, write: V, exec: V, connect: V}, found a list");
		return;
	}
	check_keys(c, y, field, keys);
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		const struct ynode *v = map_get(y, sbx_access_name(a));
		char f[FIELD_MAX];
		int vv;

		if (!v)
			continue;
		snprintf(f, sizeof(f), "%s.%s", field, sbx_access_name(a));
		vv = parse_verdict(c, v, f);
		if (vv < 0)
			continue;
		c->doc->fdef[a].set = true;
		c->doc->fdef[a].verdict = (uint8_t)vv;
		c->doc->fdef[a].line = v->line;
		c->doc->fdef[a].col = v->col;
		c->doc->fdef[a].field = strdup(f);
	}
}

void parse_files(struct pctx *c, const struct ynode *y)
{
	static const char *const keys[] = { "default", "default_reason", "rules", NULL };
	const struct ynode *v;

	if (!want_map(c, y, "files", "a mapping with default and rules"))
		return;
	check_keys(c, y, "files", keys);
	if ((v = map_get(y, "default")))
		parse_default_files(c, v, "files.default");
	c->doc->freason = parse_opt_reason(c, y, "files");
	if ((v = map_get(y, "rules")))
		parse_rules(c, v, "files.rules", parse_file_rule);
}
