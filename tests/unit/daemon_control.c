// SPDX-License-Identifier: GPL-2.0
/*
 * The control protocol's table: every op with good and bad arguments and
 * callers, and docs/CONTROL.md as the table prints it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/fileio.h"
#include "user/daemon/control_ops.h"
#include "tests/unit/unit.h"

static struct sbx_session_rt fake_session = { .name = "s1", .project = "/p" };

static const struct sbx_ctl_caller root_out = { .pid = 1, .uid = 0 };
static const struct sbx_ctl_caller user_out = { .pid = 2, .uid = 1000 };
static const struct sbx_ctl_caller user_in = {
	.pid = 3, .uid = 1000, .in_session = true, .session = &fake_session,
};
/* inside some session the daemon does not know: never treated as outside */
static const struct sbx_ctl_caller unknown_in = { .pid = 4, .uid = 1000, .in_session = true };

/* a request with every argument of op, each of the right type */
static json_t *good_request(const struct sbx_ctl_op *op)
{
	json_t *req = json_pack("{s:s}", "op", op->name);

	for (const struct sbx_ctl_arg *a = op->args; a->name; a++)
		json_object_set_new(req, a->name, a->type == SBX_ARG_STRING ? json_string("/x") :
				    a->type == SBX_ARG_OBJECT ? json_object() : json_true());
	return req;
}

static const struct sbx_ctl_caller *allowed_caller(const struct sbx_ctl_op *op)
{
	if (op->who & SBX_CTL_INSIDE)
		return &user_in;
	if (op->who & SBX_CTL_ROOT)
		return &root_out;
	return &user_out;
}

static bool says(char *why, const char *what)
{
	bool ok = why && strstr(why, what);

	if (!ok)
		fprintf(stderr, "expected '%s', got '%s'\n", what, why ? why : "(allowed)");
	free(why);
	return ok;
}

SBX_TEST(daemon_control, every_op_with_good_and_bad_arguments)
{
	size_t n;
	const struct sbx_ctl_op *ops = sbx_ctl_ops(&n);

	CU_ASSERT_TRUE(n >= 6);
	for (size_t i = 0; i < n; i++) {
		const struct sbx_ctl_op *op = &ops[i];
		json_t *req = good_request(op);
		char *why = sbx_ctl_check(op, allowed_caller(op), req);

		CU_ASSERT_PTR_NULL(why);
		if (why)
			fprintf(stderr, "%s: %s\n", op->name, why);
		free(why);
		CU_ASSERT_PTR_EQUAL(sbx_ctl_op_find(op->name), op);

		for (const struct sbx_ctl_arg *a = op->args; a->name; a++) {
			json_t *bad = json_deep_copy(req);
			char field[80];

			/* the wrong type, named in the error */
			json_object_set_new(bad, a->name, a->type == SBX_ARG_BOOL ?
					    json_string("yes") : json_integer(7));
			snprintf(field, sizeof(field), "\"%s\" must be", a->name);
			CU_ASSERT_TRUE(says(sbx_ctl_check(op, allowed_caller(op), bad), field));
			/* missing: an error only where it is required */
			json_object_del(bad, a->name);
			why = sbx_ctl_check(op, allowed_caller(op), bad);
			if (a->required) {
				snprintf(field, sizeof(field), "needs \"%s\"", a->name);
				CU_ASSERT_TRUE(says(why, field));
			} else {
				CU_ASSERT_PTR_NULL(why);
				free(why);
			}
			json_decref(bad);
		}

		/* callers */
		if (op->who & SBX_CTL_ROOT)
			CU_ASSERT_TRUE(says(sbx_ctl_check(op, &user_out, req), "only root"));
		if (op->who & SBX_CTL_OUTSIDE) {
			/* as root too: being root never makes a session's process outside */
			struct sbx_ctl_caller in = user_in, unk = unknown_in;

			in.uid = unk.uid = (op->who & SBX_CTL_ROOT) ? 0 : 1000;
			CU_ASSERT_TRUE(says(sbx_ctl_check(op, &in, req), "inside a session"));
			CU_ASSERT_TRUE(says(sbx_ctl_check(op, &unk, req), "inside a session"));
		}
		if (op->who & SBX_CTL_INSIDE) {
			CU_ASSERT_TRUE(says(sbx_ctl_check(op, &user_out, req), "inside a session"));
			CU_ASSERT_TRUE(says(sbx_ctl_check(op, &unknown_in, req), "inside a session"));
		}
		json_decref(req);
	}
}

/* From inside a session only submit (a request or an audit record) and
 * status may be sent (issue 12: whatever pid the socket reports). */
SBX_TEST(daemon_control, a_session_sends_only_submit_and_status)
{
	size_t n;
	const struct sbx_ctl_op *ops = sbx_ctl_ops(&n);

	for (size_t i = 0; i < n; i++) {
		json_t *req = good_request(&ops[i]);
		char *why = sbx_ctl_check(&ops[i], &user_in, req);
		bool ok = !why;

		CU_ASSERT_EQUAL(ok, !strcmp(ops[i].name, "submit") || !strcmp(ops[i].name, "status"));
		free(why);
		json_decref(req);
	}
}

/* docs/CONTROL.md holds the table exactly as sbx_ctl_describe() prints it. */
SBX_TEST(daemon_control, docs_match_the_table)
{
	static const char begin[] = "<!-- generated from user/daemon/control_ops.c -->\n";
	static const char end[] = "<!-- end -->";
	char *doc = NULL, *want = NULL, *from, *to;
	size_t len = 0;
	FILE *f = open_memstream(&want, &len);

	sbx_ctl_describe(f);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(sbx_read_file("docs/CONTROL.md", 1 << 20, &doc, NULL), 0);
	from = strstr(doc, begin);
	to = from ? strstr(from, end) : NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(to);
	from += strlen(begin);
	*to = 0;
	CU_ASSERT_STRING_EQUAL(from, want);
	if (strcmp(from, want)) {
		FILE *o = fopen("build/CONTROL.ops.md", "we");

		if (o) {
			fputs(want, o);
			fclose(o);
		}
		fprintf(stderr, "docs/CONTROL.md differs from the table; the table says "
			"(build/CONTROL.ops.md):\n%s", want);
	}
	free(want);
	free(doc);
}
