// SPDX-License-Identifier: GPL-2.0
/* remembered.yaml: round trip through libyaml, errors with line:column. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "queue/queue.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"

#define DATA "tests/unit/data/queue/"

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

SBX_TEST(queue, remembered_round_trip)
{
	struct sbx_queue *q = tq_open("remember");
	/* values that YAML would read as something else if written plainly */
	struct sbx_remembered in[] = {
		{ .kind = "file", .path = "/home/u/.aws/credentials", .access = "read",
		  .request = "20261130T101503.123456Z-4242-1a2b3c4d", .by = "alice",
		  .at = "2026-11-30T10:16:00Z" },
		{ .kind = "file", .path = "/home/u/odd: name # with \"quotes\"\n and a newline",
		  .access = "write", .by = "yes" },
		{ .kind = "exec", .path = "/usr/bin/npm", .by = "null" },
		{ .kind = "net", .addr = "2001:db8::1", .port = 443, .by = "1234" },
		{ .kind = "net", .addr = "10.0.0.5", .port = 0, .at = "~" },
		{ .kind = "file", .path = "/tmp/ünïcødé ✓", .access = "exec" },
	};
	size_t nin = sizeof(in) / sizeof(in[0]), n = 0;
	struct sbx_remembered *v = NULL;
	char *err = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_EQUAL(sbx_remembered_load(q, &v, &n, &err), 0);	/* no file yet */
	CU_ASSERT_EQUAL(n, 0);
	for (size_t i = 0; i < nin; i++) {
		CU_ASSERT_EQUAL(sbx_remembered_add(q, &in[i], &err), 0);
		if (err)
			fprintf(stderr, "%s\n", err);
	}
	/* the same object again is not added twice */
	CU_ASSERT_EQUAL(sbx_remembered_add(q, &in[0], &err), 0);
	CU_ASSERT_EQUAL(sbx_remembered_load(q, &v, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, nin);
	for (size_t i = 0; i < nin; i++) {
		CU_ASSERT_TRUE(same(v[i].kind, in[i].kind));
		CU_ASSERT_TRUE(same(v[i].path, in[i].path));
		CU_ASSERT_TRUE(same(v[i].access, in[i].access));
		CU_ASSERT_TRUE(same(v[i].addr, in[i].addr));
		CU_ASSERT_EQUAL(v[i].port, in[i].port);
		CU_ASSERT_TRUE(same(v[i].request, in[i].request));
		CU_ASSERT_TRUE(same(v[i].by, in[i].by));
		CU_ASSERT_TRUE(same(v[i].at, in[i].at));
	}
	sbx_remembered_free(v, n);
	/* the written file is private */
	{
		struct stat st;

		CU_ASSERT_EQUAL(fstatat(sbx_queue_sandbox_fd(q), "remembered.yaml", &st, 0), 0);
		CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	}
	free(err);
	sbx_queue_close(q);
}

SBX_TEST(queue, remembered_reads_hand_written)
{
	char *text = tq_read(AT_FDCWD, DATA "remembered-good.yaml"), *err = NULL;
	struct sbx_remembered *v = NULL;
	size_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL(sbx_remembered_parse(text, strlen(text), &v, &n, &err), 0);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_STRING_EQUAL(v[0].path, "/home/u/.aws/credentials");
	CU_ASSERT_STRING_EQUAL(v[0].by, "alice");
	CU_ASSERT_STRING_EQUAL(v[1].addr, "10.0.0.5");
	CU_ASSERT_EQUAL(v[1].port, 5432);
	CU_ASSERT_STRING_EQUAL(v[2].kind, "exec");
	sbx_remembered_free(v, n);
	/* empty forms are an empty list */
	CU_ASSERT_EQUAL(sbx_remembered_parse("", 0, &v, &n, &err), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(sbx_remembered_parse("remembered: []\n", 15, &v, &n, &err), 0);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(sbx_remembered_parse("remembered:\n", 12, &v, &n, &err), 0);
	CU_ASSERT_EQUAL(n, 0);
	free(err);
	free(text);
}

static void expect_error(const char *file, const char *where, const char *what)
{
	char path[256], *text, *err = NULL;
	struct sbx_remembered *v = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), DATA "%s", file);
	text = tq_read(AT_FDCWD, path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL(sbx_remembered_parse(text, strlen(text), &v, &n, &err), -EINVAL);
	CU_ASSERT_PTR_NULL(v);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(err);
	if (!strstr(err, where) || !strstr(err, what))
		fprintf(stderr, "%s: wanted \"%s\" and \"%s\", got: %s\n", file, where, what, err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, where));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, what));
	free(err);
	free(text);
}

SBX_TEST(queue, remembered_errors_have_line_and_column)
{
	expect_error("remembered-bad-indent.yaml", "remembered.yaml:4:1:", "tab character");
	expect_error("remembered-unknown-key.yaml", "remembered.yaml:4:5:", "unknown key \"acess\"");
	expect_error("remembered-bad-port.yaml", "remembered.yaml:4:11:", "port must be");
	expect_error("remembered-missing-access.yaml", "remembered.yaml:4:5:",
		     "a file entry needs \"access\"");
}

SBX_TEST(queue, remembered_malformed_file_is_kept)
{
	struct sbx_queue *q = tq_open("rembad");
	struct sbx_remembered r = { .kind = "file", .path = "/x", .access = "read" };
	const char bad[] = "remembered:\n  - kind: file\n    path: [unclosed\n";
	struct sbx_remembered *v = NULL;
	char *err = NULL, *after;
	size_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	CU_ASSERT_EQUAL(tq_write_raw(sbx_queue_sandbox_fd(q), "remembered.yaml", bad,
				     sizeof(bad) - 1), 0);
	CU_ASSERT_EQUAL(sbx_remembered_load(q, &v, &n, &err), -EINVAL);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err ? err : "", "/.sandbox/remembered.yaml:"));
	free(err);
	err = NULL;
	/* adding to a file we cannot read would lose the person's entries */
	CU_ASSERT_NOT_EQUAL(sbx_remembered_add(q, &r, &err), 0);
	CU_ASSERT_PTR_NOT_NULL(err);
	after = tq_read(sbx_queue_sandbox_fd(q), "remembered.yaml");
	CU_ASSERT_STRING_EQUAL(after ? after : "", bad);
	free(after);
	free(err);
	sbx_queue_close(q);
}
