// SPDX-License-Identifier: GPL-2.0
/*
 * The approver CLIs, run as the bpfsbx-san next to the test binary (make
 * build/bpfsbx-san; $BPFSBX_SAN overrides it): approve/deny exit codes
 * and messages, watch's line mode through pipes, watch --auto, watch on
 * a pty, and approved commands that run outside the agent.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "queue/queue.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"

#define NEED_BIN() do {							\
	if (!tq_bin())							\
		SBX_SKIP("bpfsbx-san is not built next to unit-tests "	\
			 "(make build/bpfsbx-san)");			\
} while (0)

static json_t *done_of(struct sbx_queue *q, const char *id)
{
	json_t *d = NULL;

	sbx_queue_read(q, SBX_QDIR_DONE, id, &d, NULL);
	return d;
}

static void cli_approve_deny_exit_codes_body(void)
{
	struct sbx_queue *q = tq_open("cli");
	char *a, *b, *c, *out = NULL, *err = NULL;
	const char *dir;
	json_t *d;
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	dir = sbx_queue_project(q);
	a = tq_submit(q, tq_file_req("/home/u/.aws/credentials"));
	b = tq_submit(q, tq_file_req("/home/u/.ssh/id_ed25519"));
	c = tq_submit(q, tq_file_req("/etc/hosts"));

	{
		char *argv[] = { "bpfsbx", "approve", a, "--scope", "session", "--dir", (char *)dir,
				 "--note", "ok for now", NULL };

		rc = tq_run(NULL, argv, NULL, &out, &err);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "approved "));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "(session)"));
		free(out);
		free(err);
		d = done_of(q, a);
		CU_ASSERT_STRING_EQUAL(tq_decision(d, "verdict") ?: "", "approve");
		CU_ASSERT_STRING_EQUAL(tq_decision(d, "scope") ?: "", "session");
		CU_ASSERT_STRING_EQUAL(tq_decision(d, "note") ?: "", "ok for now");
		CU_ASSERT_STRING_EQUAL(tq_decision(d, "by") ?: "", sbx_queue_user());
		json_decref(d);
	}
	{
		/* again: already decided */
		char *argv[] = { "bpfsbx", "deny", a, "--dir", (char *)dir, NULL };

		rc = tq_run(NULL, argv, NULL, &out, &err);
		CU_ASSERT_EQUAL(rc, 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "already decided (approve session by"));
		free(out);
		free(err);
		d = done_of(q, a);
		CU_ASSERT_STRING_EQUAL(tq_decision(d, "verdict") ?: "", "approve");
		json_decref(d);
	}
	{
		/* run from inside the project: --dir defaults to the cwd */
		char *argv[] = { "bpfsbx", "deny", b, "--note", "no keys", NULL };

		rc = tq_run(dir, argv, NULL, &out, &err);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "denied "));
		free(out);
		free(err);
		d = done_of(q, b);
		CU_ASSERT_STRING_EQUAL(tq_decision(d, "verdict") ?: "", "deny");
		json_decref(d);
	}
	{
		/* taken by another approver */
		char *argv[] = { "bpfsbx", "approve", c, "--dir", (char *)dir, NULL };

		CU_ASSERT_EQUAL(sbx_queue_claim(q, c, NULL, NULL), 0);
		rc = tq_run(NULL, argv, NULL, &out, &err);
		CU_ASSERT_EQUAL(rc, 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "taken by another approver"));
		free(out);
		free(err);
	}
	{
		char *argv[] = { "bpfsbx", "approve", "20261130T101503.123456Z-4242-1a2b3c4d",
				 "--dir", (char *)dir, NULL };

		rc = tq_run(NULL, argv, NULL, &out, &err);
		CU_ASSERT_EQUAL(rc, 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "no such request"));
		free(out);
		free(err);
	}
	{
		/* usage errors: 2 */
		char *v1[] = { "bpfsbx", "approve", NULL };
		char *v2[] = { "bpfsbx", "approve", "not-an-id", NULL };
		char *v3[] = { "bpfsbx", "approve", a, "--scope", "forever", NULL };
		char *v4[] = { "bpfsbx", "deny", a, "--scope", "once", NULL };
		char *v5[] = { "bpfsbx", "approve", a, "--frobnicate", NULL };
		char **all[] = { v1, v2, v3, v4, v5 };

		for (size_t i = 0; i < 5; i++) {
			rc = tq_run(dir, all[i], NULL, &out, &err);
			CU_ASSERT_EQUAL(rc, 2);
			CU_ASSERT_TRUE(strlen(err) > 0);
			free(out);
			free(err);
		}
	}
	{
		/* no queue there */
		char *nodir = tq_dir("empty"), *argv[] = { "bpfsbx", "deny", b, "--dir", nodir, NULL };

		rc = tq_run(NULL, argv, NULL, &out, &err);
		CU_ASSERT_EQUAL(rc, 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, ".sandbox"));
		free(out);
		free(err);
		free(nodir);
	}
	free(a);
	free(b);
	free(c);
	sbx_queue_close(q);
}

SBX_TEST(queue, cli_approve_deny_exit_codes)
{
	NEED_BIN();
	cli_approve_deny_exit_codes_body();
}

static void cli_command_runs_with_result_body(void)
{
	struct sbx_queue *q = tq_open("clicmd");
	char *cwd = tq_dir("clicmd-cwd");
	/* 1.5 MB of output, a file in the cwd, exit 7 */
	char *id = tq_submit(q, tq_cmd_req("head -c 1500000 /dev/zero | tr '\\0' a; "
					   "echo done >&2; pwd > here.txt; exit 7", cwd));
	char *out = NULL, *err = NULL, outname[128], *here;
	const json_t *r;
	json_t *d;
	struct stat st;
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(id);
	{
		/* a command takes scope once only */
		char *argv[] = { "bpfsbx", "approve", id, "--scope", "always", "--dir",
				 (char *)sbx_queue_project(q), NULL };

		rc = tq_run(NULL, argv, NULL, &out, &err);
		CU_ASSERT_EQUAL(rc, 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "can only be approved once"));
		free(out);
		free(err);
		/* and nothing happened */
		CU_ASSERT_TRUE(tq_exists(sbx_queue_dirfd(q, SBX_QDIR_PENDING), "") || true);
		CU_ASSERT_EQUAL(tq_count(sbx_queue_dirfd(q, SBX_QDIR_PENDING), 0), 1);
	}
	{
		char *argv[] = { "bpfsbx", "approve", id, "--dir", (char *)sbx_queue_project(q), NULL };

		rc = tq_run(NULL, argv, NULL, &out, &err);
		CU_ASSERT_EQUAL(rc, 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "command exited 7"));
		CU_ASSERT_PTR_NOT_NULL(strstr(out, "output cut at 1 MiB"));
		free(out);
		free(err);
	}
	d = done_of(q, id);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	r = json_object_get(d, "result");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "exit_code")), 7);
	CU_ASSERT_TRUE(json_is_true(json_object_get(r, "truncated")));
	CU_ASSERT_TRUE(json_is_false(json_object_get(r, "timed_out")));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "bytes")), 1500000 + 5);
	snprintf(outname, sizeof(outname), "out/%s.txt", id);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "output")) ?: "", outname);
	snprintf(outname, sizeof(outname), "%s.txt", id);
	CU_ASSERT_EQUAL(fstatat(sbx_queue_dirfd(q, SBX_QDIR_OUT), outname, &st, 0), 0);
	CU_ASSERT_EQUAL(st.st_size, SBX_CMD_OUTPUT_MAX);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	/* readers get the output of the record's own id only */
	{
		json_t *forged = json_deep_copy(d), *fr = json_object_get(forged, "result");
		char *buf = NULL;
		size_t len = 0;

		CU_ASSERT_EQUAL(sbx_queue_read_output(q, d, &buf, &len), 0);
		CU_ASSERT_EQUAL(len, SBX_CMD_OUTPUT_MAX);
		free(buf);
		json_object_set_new(fr, "output", json_string("out/../pending/x.json"));
		CU_ASSERT_EQUAL(sbx_queue_read_output(q, forged, &buf, &len), -ENOENT);
		CU_ASSERT_PTR_NULL(buf);
		json_object_set_new(forged, "id", json_string("20990101T000000.000000Z-1-00000000"));
		json_object_set_new(fr, "output", json_string(outname));
		CU_ASSERT_EQUAL(sbx_queue_read_output(q, forged, &buf, &len), -ENOENT);
		json_decref(forged);
	}
	/* it ran in the request's cwd */
	{
		char *p = NULL;

		if (asprintf(&p, "%s/here.txt", cwd) < 0)
			abort();
		here = tq_read(AT_FDCWD, p);
		free(p);
	}
	CU_ASSERT_PTR_NOT_NULL(here);
	CU_ASSERT_PTR_NOT_NULL(strstr(here ? here : "", "clicmd-cwd"));
	free(here);
	CU_ASSERT_TRUE(sbx_queue_validate_done(d, id, NULL));
	json_decref(d);
	free(id);

	/* a short one: the whole output, not truncated; stdin is /dev/null */
	id = tq_submit(q, tq_cmd_req("echo out; echo err >&2; cat; exit 0", "/nonexistent/dir"));
	{
		char *argv[] = { "bpfsbx", "approve", id, "--dir", (char *)sbx_queue_project(q), NULL };
		char *text;

		rc = tq_run(NULL, argv, "this must not reach the command\n", &out, &err);
		CU_ASSERT_EQUAL(rc, 0);
		free(out);
		free(err);
		d = done_of(q, id);
		r = json_object_get(d, "result");
		CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "exit_code")), 0);
		CU_ASSERT_TRUE(json_is_false(json_object_get(r, "truncated")));
		snprintf(outname, sizeof(outname), "%s.txt", id);
		text = tq_read(sbx_queue_dirfd(q, SBX_QDIR_OUT), outname);
		CU_ASSERT_STRING_EQUAL(text ? text : "", "out\nerr\n");
		free(text);
		json_decref(d);
	}
	free(id);

	/* a deny does not run it */
	id = tq_submit(q, tq_cmd_req("touch ran.txt", cwd));
	{
		char *argv[] = { "bpfsbx", "deny", id, "--dir", (char *)sbx_queue_project(q), NULL };
		char *p = NULL;

		rc = tq_run(NULL, argv, NULL, &out, &err);
		CU_ASSERT_EQUAL(rc, 0);
		free(out);
		free(err);
		if (asprintf(&p, "%s/ran.txt", cwd) < 0)
			abort();
		CU_ASSERT_NOT_EQUAL(access(p, F_OK), 0);
		free(p);
		d = done_of(q, id);
		CU_ASSERT_PTR_NULL(json_object_get(d, "result"));
		json_decref(d);
	}
	free(id);
	free(cwd);
	sbx_queue_close(q);
}

SBX_TEST(queue, cli_command_runs_with_result)
{
	NEED_BIN();
	cli_command_runs_with_result_body();
}

static void cli_command_timeout_body(void)
{
	struct sbx_queue *q = tq_open("clito");
	char *id = tq_submit(q, tq_cmd_req("echo started; sleep 30; echo never", NULL));
	char *argv[] = { "bpfsbx", "approve", id, "--cmd-timeout", "1", "--dir",
			 (char *)sbx_queue_project(q), NULL };
	char *out = NULL, *err = NULL;
	const json_t *r;
	int64_t t0 = tq_ms();
	json_t *d;
	int rc;

	rc = tq_run(NULL, argv, NULL, &out, &err);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_TRUE(tq_ms() - t0 < 10000);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "timed out"));
	free(out);
	free(err);
	d = done_of(q, id);
	r = json_object_get(d, "result");
	CU_ASSERT_TRUE(json_is_true(json_object_get(r, "timed_out")));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "signal")), SIGTERM);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "exit_code")), 128 + SIGTERM);
	json_decref(d);
	free(id);
	sbx_queue_close(q);
}

SBX_TEST(queue, cli_command_timeout)
{
	NEED_BIN();
	cli_command_timeout_body();
}

/* ---- watch, line mode ------------------------------------------------------ */

struct child {
	pid_t pid;
	int in, out;	/* our ends */
	char buf[65536];
	size_t len;
};

static bool spawn(struct child *c, char *const argv[], const char *cwd)
{
	int pi[2], po[2];

	memset(c, 0, sizeof(*c));
	if (pipe(pi) || pipe(po))
		return false;
	fflush(NULL);
	c->pid = fork();
	if (c->pid == 0) {
		dup2(pi[0], 0);
		dup2(po[1], 1);
		close(pi[0]); close(pi[1]); close(po[0]); close(po[1]);
		if (cwd && chdir(cwd) < 0)
			_exit(126);
		execv(tq_bin(), argv);
		_exit(127);
	}
	close(pi[0]);
	close(po[1]);
	c->in = pi[1];
	c->out = po[0];
	return c->pid > 0;
}

/* one line of the child's stdout within ms, or NULL */
static char *read_line(struct child *c, int ms)
{
	int64_t end = tq_ms() + ms;

	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		struct pollfd p = { .fd = c->out, .events = POLLIN };
		ssize_t n;
		int left = (int)(end - tq_ms());

		if (nl) {
			size_t len = (size_t)(nl - c->buf);
			char *line = strndup(c->buf, len);

			memmove(c->buf, nl + 1, c->len - len - 1);
			c->len -= len + 1;
			return line;
		}
		if (left <= 0 || poll(&p, 1, left) <= 0)
			return NULL;
		n = read(c->out, c->buf + c->len, sizeof(c->buf) - c->len - 1);
		if (n <= 0)
			return NULL;
		c->len += (size_t)n;
	}
}

static void send_line(struct child *c, const char *s)
{
	if (write(c->in, s, strlen(s)) < 0)
		CU_FAIL("write to watch");
}

static int finish(struct child *c, int ms)
{
	int64_t end = tq_ms() + ms;
	int st = 0;

	close(c->in);
	while (waitpid(c->pid, &st, WNOHANG) == 0) {
		if (tq_ms() > end) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &st, 0);
			break;
		}
		usleep(10000);
	}
	close(c->out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void cli_watch_line_mode_body(void)
{
	struct sbx_queue *q = tq_open("watchl");
	char *argv[] = { "bpfsbx", "watch", (char *)sbx_queue_project(q), NULL };
	char *early, *late, *line, cmd[256];
	struct child c;
	json_t *j, *d;

	/* one request waits before watch starts, one arrives while it runs */
	early = tq_submit(q, tq_file_req("/home/u/.aws/credentials"));
	CU_ASSERT_TRUE_FATAL(spawn(&c, argv, NULL));
	line = read_line(&c, 10000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	j = json_loads(line, 0, NULL);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "id")) ?: "", early);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "kind")) ?: "", "file");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "queue")) ?: "",
			       sbx_queue_project(q));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_object_get(j, "rule"),
								  "reason")) ?: "", "cloud credentials");
	json_decref(j);
	free(line);

	late = tq_submit(q, tq_file_req("/home/u/.netrc"));
	line = read_line(&c, 10000);	/* via inotify */
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	j = json_loads(line, 0, NULL);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "id")) ?: "", late);
	json_decref(j);
	free(line);

	snprintf(cmd, sizeof(cmd), "approve %s session\n", early);
	send_line(&c, cmd);
	line = read_line(&c, 10000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	j = json_loads(line, 0, NULL);
	CU_ASSERT_TRUE(json_is_true(json_object_get(j, "ok")));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "id")) ?: "", early);
	CU_ASSERT_TRUE(json_is_null(json_object_get(j, "error")));
	json_decref(j);
	free(line);
	d = done_of(q, early);
	CU_ASSERT_STRING_EQUAL(tq_decision(d, "scope") ?: "", "session");
	json_decref(d);

	snprintf(cmd, sizeof(cmd), "deny %s not today, thanks\n", late);
	send_line(&c, cmd);
	line = read_line(&c, 10000);
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	j = json_loads(line, 0, NULL);
	CU_ASSERT_TRUE(json_is_true(json_object_get(j, "ok")));
	json_decref(j);
	free(line);
	d = done_of(q, late);
	CU_ASSERT_STRING_EQUAL(tq_decision(d, "verdict") ?: "", "deny");
	CU_ASSERT_STRING_EQUAL(tq_decision(d, "note") ?: "", "not today, thanks");
	json_decref(d);

	/* errors are answers too */
	snprintf(cmd, sizeof(cmd), "approve %s\n", late);
	send_line(&c, cmd);
	line = read_line(&c, 10000);
	j = json_loads(line ? line : "{}", 0, NULL);
	CU_ASSERT_TRUE(json_is_false(json_object_get(j, "ok")));
	CU_ASSERT_PTR_NOT_NULL(strstr(json_string_value(json_object_get(j, "error")) ?: "",
				      "already decided"));
	json_decref(j);
	free(line);
	send_line(&c, "frobnicate\n");
	line = read_line(&c, 10000);
	j = json_loads(line ? line : "{}", 0, NULL);
	CU_ASSERT_TRUE(json_is_false(json_object_get(j, "ok")));
	json_decref(j);
	free(line);
	send_line(&c, "approve 20261130T101503.123456Z-4242-1a2b3c4d forever\n");
	line = read_line(&c, 10000);
	j = json_loads(line ? line : "{}", 0, NULL);
	CU_ASSERT_TRUE(json_is_false(json_object_get(j, "ok")));
	CU_ASSERT_PTR_NOT_NULL(strstr(json_string_value(json_object_get(j, "error")) ?: "", "scope"));
	json_decref(j);
	free(line);

	send_line(&c, "quit\n");
	CU_ASSERT_EQUAL(finish(&c, 10000), 0);
	free(early);
	free(late);
	sbx_queue_close(q);
}

SBX_TEST(queue, cli_watch_line_mode)
{
	NEED_BIN();
	cli_watch_line_mode_body();
}

static void cli_watch_auto_body(void)
{
	struct sbx_queue *q = tq_open("watcha");
	char *argv_once[] = { "bpfsbx", "watch", "--auto", "deny", "--once",
			      (char *)sbx_queue_project(q), NULL };
	char *argv_live[] = { "bpfsbx", "watch", "--auto", "approve", "--scope", "always",
			      (char *)sbx_queue_project(q), NULL };
	char *a, *b, *c_id, *cmd, *out = NULL, *err = NULL, *line;
	struct child c;
	json_t *d = NULL;
	int rc;

	a = tq_submit(q, tq_file_req("/a"));
	b = tq_submit(q, tq_file_req("/b"));
	rc = tq_run(NULL, argv_once, NULL, &out, &err);
	CU_ASSERT_EQUAL(rc, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "denied "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, a));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, b));
	free(out);
	free(err);
	d = done_of(q, a);
	CU_ASSERT_STRING_EQUAL(tq_decision(d, "verdict") ?: "", "deny");
	json_decref(d);
	CU_ASSERT_EQUAL(tq_count(sbx_queue_dirfd(q, SBX_QDIR_PENDING), 0), 0);

	/* live: decides what arrives; a command gets scope once */
	CU_ASSERT_TRUE_FATAL(spawn(&c, argv_live, NULL));
	usleep(300 * 1000);
	c_id = tq_submit(q, tq_file_req("/c"));
	cmd = tq_submit(q, tq_cmd_req("echo from-watch", NULL));
	CU_ASSERT_EQUAL(sbx_queue_wait_done(q, c_id, 10000, &d, NULL), 0);
	CU_ASSERT_STRING_EQUAL(tq_decision(d, "scope") ?: "", "always");
	json_decref(d);
	CU_ASSERT_EQUAL(sbx_queue_wait_done(q, cmd, 10000, &d, NULL), 0);
	CU_ASSERT_STRING_EQUAL(tq_decision(d, "scope") ?: "", "once");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(d, "result"),
							   "exit_code")), 0);
	json_decref(d);
	line = read_line(&c, 5000);
	CU_ASSERT_PTR_NOT_NULL(line);
	CU_ASSERT_PTR_NOT_NULL(strstr(line ? line : "", "approved "));
	free(line);
	kill(c.pid, SIGTERM);
	CU_ASSERT_EQUAL(finish(&c, 10000), 0);
	free(a);
	free(b);
	free(c_id);
	free(cmd);
	sbx_queue_close(q);
}

SBX_TEST(queue, cli_watch_auto)
{
	NEED_BIN();
	cli_watch_auto_body();
}

static void cli_watch_once_lines_body(void)
{
	struct sbx_queue *q = tq_open("watcho");
	char *argv[] = { "bpfsbx", "watch", "--once", (char *)sbx_queue_project(q), NULL };
	char *a, *out = NULL, *err = NULL, *in = NULL;
	json_t *d;
	int rc;

	a = tq_submit(q, tq_file_req("/a"));
	if (asprintf(&in, "approve %s always\n", a) < 0)
		abort();
	rc = tq_run(NULL, argv, in, &out, &err);
	CU_ASSERT_EQUAL(rc, 0);
	/* one request line, one answer line */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"queue\":"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "{\"ok\":true"));
	d = done_of(q, a);
	CU_ASSERT_STRING_EQUAL(tq_decision(d, "scope") ?: "", "always");
	json_decref(d);
	free(in);
	free(out);
	free(err);
	free(a);
	sbx_queue_close(q);
}

SBX_TEST(queue, cli_watch_once_lines)
{
	NEED_BIN();
	cli_watch_once_lines_body();
}

/* ---- watch on a terminal (a pty) ------------------------------------------ */

static void cli_watch_terminal_keys_body(void)
{
	struct sbx_queue *q = tq_open("watcht");
	/* an escape sequence in a path must reach the screen as text */
	char *a = tq_submit(q, tq_file_req("/home/u/evil\x1b[2J\xe2\x80\xaename"));
	char *b = tq_submit(q, tq_cmd_req("echo via-tty", NULL));
	char screen[262144], *slave;
	size_t len = 0;
	int master, st = 0;
	json_t *d = NULL;
	pid_t pid;

	master = posix_openpt(O_RDWR | O_NOCTTY);
	CU_ASSERT_TRUE_FATAL(master >= 0);
	CU_ASSERT_EQUAL_FATAL(grantpt(master), 0);
	CU_ASSERT_EQUAL_FATAL(unlockpt(master), 0);
	slave = ptsname(master);
	CU_ASSERT_PTR_NOT_NULL_FATAL(slave);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		int fd;

		setsid();
		fd = open(slave, O_RDWR);
		if (fd < 0)
			_exit(126);
		dup2(fd, 0);
		dup2(fd, 1);
		if (chdir(sbx_queue_project(q)) < 0)
			_exit(126);
		execl(tq_bin(), "bpfsbx", "watch", (char *)NULL);
		_exit(127);
	}
	/* read the screen until both requests and the selected one's
	 * details are drawn (the terminal may deliver them in pieces) */
	{
		int64_t end = tq_ms() + 10000;

		while (tq_ms() < end && (!memmem(screen, len, "2 pending", 9) ||
					 !memmem(screen, len, "cloud credentials", 17))) {
			struct pollfd p = { .fd = master, .events = POLLIN };
			ssize_t n;

			if (poll(&p, 1, 200) <= 0)
				continue;
			n = read(master, screen + len, sizeof(screen) - len - 1);
			if (n > 0)
				len += (size_t)n;
		}
	}
	CU_ASSERT_PTR_NOT_NULL(memmem(screen, len, "2 pending", 9));
	CU_ASSERT_PTR_NOT_NULL(memmem(screen, len, "evil\\x1b[2J\\u202ename", 20));
	CU_ASSERT_PTR_NULL(memmem(screen, len, "\x1b[2J", 4));
	CU_ASSERT_PTR_NOT_NULL(memmem(screen, len, "cloud credentials", 17));
	/* the first (oldest) is selected: approve it for the session */
	CU_ASSERT_EQUAL(write(master, "s", 1), 1);
	CU_ASSERT_EQUAL(sbx_queue_wait_done(q, a, 10000, &d, NULL), 0);
	CU_ASSERT_STRING_EQUAL(tq_decision(d, "scope") ?: "", "session");
	json_decref(d);
	d = NULL;
	/* the command: 'a' is refused (commands run once), 'o' runs it */
	CU_ASSERT_EQUAL(write(master, "a", 1), 1);
	usleep(500 * 1000);
	CU_ASSERT_EQUAL(sbx_queue_read(q, SBX_QDIR_PENDING, b, &d, NULL), 0);
	json_decref(d);
	d = NULL;
	CU_ASSERT_EQUAL(write(master, "o", 1), 1);
	CU_ASSERT_EQUAL(sbx_queue_wait_done(q, b, 10000, &d, NULL), 0);
	CU_ASSERT_STRING_EQUAL(tq_decision(d, "scope") ?: "", "once");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(d, "result"),
							   "exit_code")), 0);
	json_decref(d);
	/* watch drops keys typed while a command ran (TCSAFLUSH: a key meant
	 * for the command must not decide the next request); q goes after
	 * the screen is back, which the status line with the result shows */
	{
		int64_t end = tq_ms() + 10000;
		char *back = NULL, want[128];

		snprintf(want, sizeof(want), "approved %s (once)", b);
		while (tq_ms() < end) {
			struct pollfd p = { .fd = master, .events = POLLIN };
			ssize_t n;

			back = memmem(screen, len, "back to watch", 13);
			if (back && memmem(back, len - (size_t)(back - screen), want, strlen(want)))
				break;
			if (len + 1 >= sizeof(screen) || poll(&p, 1, 200) <= 0)
				continue;
			n = read(master, screen + len, sizeof(screen) - len - 1);
			if (n > 0)
				len += (size_t)n;
		}
		CU_ASSERT_PTR_NOT_NULL(back);
	}
	CU_ASSERT_EQUAL(write(master, "q", 1), 1);
	{
		int64_t end = tq_ms() + 10000;
		char sink[4096];

		while (waitpid(pid, &st, WNOHANG) == 0 && tq_ms() < end) {
			if (read(master, sink, sizeof(sink)) < 0)
				usleep(10000);
		}
		if (tq_ms() >= end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
		}
	}
	CU_ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(master);
	free(a);
	free(b);
	sbx_queue_close(q);
}

SBX_TEST(queue, cli_watch_terminal_keys)
{
	NEED_BIN();
	cli_watch_terminal_keys_body();
}
