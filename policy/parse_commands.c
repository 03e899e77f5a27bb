// SPDX-License-Identifier: GPL-2.0
/*
 * parse_commands.c - the commands: section: command names (a basename,
 * or an absolute path after expansion) and argument globs.
 *
 * The kernel does not see these rules: they classify commands for the
 * agent connectors (sbx_decide_command), so a name is matched exactly
 * and only args: are globs.
 */
#include <stdlib.h>
#include <string.h>
#include "policy/parse.h"

/* ---- commands ------------------------------------------------------------------- */

/* A commands rule's own fields. */
struct cmd_fields {
	struct sitem *cs, *as;	/* command:, args: */
	size_t nc, na;
};

static bool cmd_fields(struct pctx *c, const struct ynode *y, const char *field, void *out)
{
	struct cmd_fields *cf = out;
	const struct ynode *yc = map_get(y, "command"), *ya = map_get(y, "args");
	char f[FIELD_MAX];
	bool ok = true;

	field_name(f, sizeof(f), field, ".command");
	if (!yc) {
		perr(c, y->line, y->col, f, "missing: write command: NAME (or a list, or an absolute path)");
		ok = false;
	} else if (!(cf->cs = string_or_list(c, yc, f, "a command name or absolute path", &cf->nc))) {
		ok = false;
	}
	field_name(f, sizeof(f), field, ".args");
	if (ya && !(cf->as = string_or_list(c, ya, f, "an argument glob", &cf->na)))
		ok = false;
	return ok;
}

static const char *const cmd_rule_keys[] = { "command", "args", "verdict", "reason", NULL };

static const struct rule_kind cmd_rule_kind = {
	.sec = SBX_SEC_COMMANDS,
	.what = "a rule (a mapping with command, verdict and reason)",
	.keys = cmd_rule_keys,
	.fields = cmd_fields,
};

static void parse_cmd_rule(struct pctx *c, const struct ynode *y, const char *field)
{
	struct cmd_fields cf = { 0 };
	struct trule *t = parse_rule_head(c, y, field, &cmd_rule_kind, &cf);
	struct sitem *cs = cf.cs, *as = cf.as;
	size_t nc = cf.nc, na = cf.na;
	int verdict;

	if (!t)
		goto out;
	verdict = t->info.verdict;
	t->c.verdict = (uint8_t)verdict;
	t->c.cmds = calloc(nc, sizeof(char *));
	t->c.args = na ? calloc(na, sizeof(char *)) : NULL;
	if (!t->c.cmds || (na && !t->c.args))
		goto out;
	for (size_t i = 0; i < nc; i++) {
		const struct ynode *ci = cs[i].y;
		char *e;

		if (strchr(ci->str, '*') || strchr(ci->str, '?') || strchr(ci->str, '[')) {
			perr(c, ci->line, ci->col, cs[i].field,
			     "command names are matched exactly: no wildcards (use args: for arguments)");
			continue;
		}
		if (strchr(ci->str, ' ')) {
			perr(c, ci->line, ci->col, cs[i].field,
			     "a command is one word: put its arguments in args: (e.g. command: git, "
			     "args: \"push*--force*\")");
			continue;
		}
		if (has_var_start(ci->str)) {
			char *n;

			e = expand_vars(c, ci, cs[i].field);
			if (!e)
				continue;
			n = sbx_path_normalize(e);
			free(e);
			e = n;
		} else if (strchr(ci->str, '/')) {
			perr(c, ci->line, ci->col, cs[i].field,
			     "relative command path: write a basename (git) or an absolute path (/usr/bin/git)");
			continue;
		} else {
			e = strdup(ci->str);
		}
		if (!e)
			continue;
		t->c.cmds[t->c.n_cmds++] = e;
		sbx_str_append(&t->info.pattern, ", ", ci->str);
		sbx_str_append(&t->info.expanded, ", ", e);
	}
	for (size_t i = 0; i < na; i++) {
		t->c.args[t->c.n_args] = strdup(as[i].y->str);
		if (t->c.args[t->c.n_args])
			t->c.n_args++;
	}
	{
		char *args = NULL, tail[32];
		const char **raw = calloc(nc + 1, sizeof(*raw));

		for (size_t i = 0; i < na; i++)
			sbx_str_append(&args, " | ", as[i].y->str);
		if (args)
			sbx_str_append(&t->info.pattern, " ", args);
		snprintf(tail, sizeof(tail), "%d\x1f", verdict);
		if (raw) {
			for (size_t i = 0; i < nc; i++)
				raw[i] = cs[i].y->str;
			t->key = make_key(raw, nc, tail);
			if (t->key && args)
				sbx_str_append(&t->key, "", args);
			if (t->key)
				sbx_str_append(&t->key, "\x1e", t->info.reason);
		}
		free(raw);
		free(args);
	}
out:
	free(cs);
	free(as);
}

void parse_commands(struct pctx *c, const struct ynode *y)
{
	parse_verdict_section(c, y, "commands", "commands.default", "commands.rules",
			      &c->doc->cdef, &c->doc->creason, parse_cmd_rule, NULL);
}
