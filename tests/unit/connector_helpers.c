// SPDX-License-Identifier: GPL-2.0
/* Helpers for the connector tests (see connector_helpers.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <jansson.h>
#include "queue/queue.h"
#include "tests/unit/connector_helpers.h"
#include "tests/unit/unit.h"

extern char **environ;

char *tc_path(const char *a, const char *b)
{
	char *p;

	if (asprintf(&p, "%s/%s", a, b) < 0)
		abort();
	return p;
}

static void mkdirs(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

void tc_write(const char *path, const char *text)
{
	char *dir = strdup(path), *sl = strrchr(dir, '/');
	FILE *f;

	if (sl) {
		*sl = 0;
		mkdirs(dir);
	}
	free(dir);
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

char *tc_read(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;

	if (!f)
		return NULL;
	do {
		if (n + 4096 > cap) {
			cap = cap * 2 + 8192;
			buf = realloc(buf, cap + 1);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

void tc_setup(struct tc_env *e, const char *extra)
{
	char *pol, *text;

	e->tmp = strdup(sbx_unit_tmpdir());
	e->home = tc_path(e->tmp, "home");
	e->project = tc_path(e->home, "proj");
	mkdirs(e->project);
	pol = tc_path(e->project, ".sandbox/policy.yaml");
	if (asprintf(&text, "version: 1\nextends: agent-default\n%s", extra ? extra : "") < 0)
		abort();
	tc_write(pol, text);
	free(text);
	free(pol);
}

void tc_teardown(struct tc_env *e)
{
	free(e->tmp);
	free(e->home);
	free(e->project);
}

const char *tc_bin(void)
{
	static char path[PATH_MAX + 16];
	char self[PATH_MAX];
	ssize_t n;

	if (path[0])
		return path;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	*strrchr(self, '/') = 0;
	snprintf(path, sizeof(path), "%s/bpfsbx-san", self);
	if (access(path, X_OK) < 0) {
		path[0] = 0;
		return NULL;
	}
	return path;
}

int tc_spawn(struct tc_child *c, char *const argv[], const char *const env[])
{
	int pin[2], pout[2], perr[2];
	size_t n = 0, k = 0;
	char **envp;

	memset(c, 0, sizeof(*c));
	c->in = c->out = c->err = -1;
	if (!tc_bin())
		return -ENOENT;
	while (environ[n])
		n++;
	for (size_t j = 0; env && env[j]; j++)
		n++;
	envp = calloc(n + 1, sizeof(*envp));
	for (size_t j = 0; env && env[j]; j++)
		envp[k++] = (char *)env[j];
	for (size_t j = 0; environ[j]; j++) {
		bool over = false;
		size_t l = strcspn(environ[j], "=");

		for (size_t i = 0; env && env[i]; i++)
			over = over || (!strncmp(env[i], environ[j], l) && env[i][l] == '=');
		/* the sanitizers' own options would make the child noisy */
		if (!over)
			envp[k++] = environ[j];
	}
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC))
		abort();
	c->pid = fork();
	if (c->pid == 0) {
		char **av;
		size_t ac = 0;

		while (argv[ac])
			ac++;
		av = calloc(ac + 1, sizeof(*av));
		av[0] = (char *)tc_bin();
		for (size_t j = 1; j < ac; j++)
			av[j] = argv[j];
		dup2(pin[0], 0);
		dup2(pout[1], 1);
		dup2(perr[1], 2);
		execve(av[0], av, envp);
		_exit(127);
	}
	free(envp);
	close(pin[0]);
	close(pout[1]);
	close(perr[1]);
	c->in = pin[1];
	c->out = pout[0];
	c->err = perr[0];
	fcntl(c->out, F_SETFL, O_NONBLOCK);
	fcntl(c->err, F_SETFL, O_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

void tc_send(struct tc_child *c, const char *text)
{
	size_t n = strlen(text), off = 0;

	while (off < n) {
		ssize_t w = write(c->in, text + off, n - off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		off += w;
	}
}

void tc_close_in(struct tc_child *c)
{
	if (c->in >= 0)
		close(c->in);
	c->in = -1;
}

static void drain(int fd, char **buf, size_t *len)
{
	char tmp[65536];
	ssize_t n;

	while ((n = read(fd, tmp, sizeof(tmp))) > 0) {
		*buf = realloc(*buf, *len + n + 1);
		memcpy(*buf + *len, tmp, n);
		*len += n;
		(*buf)[*len] = 0;
	}
}

static int64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for output; false on timeout or EOF of both. */
static bool pump(struct tc_child *c, int timeout_ms)
{
	struct pollfd p[2] = { { .fd = c->out, .events = POLLIN }, { .fd = c->err, .events = POLLIN } };
	int r = poll(p, 2, timeout_ms);

	if (r <= 0)
		return false;
	if (p[0].revents)
		drain(c->out, &c->obuf, &c->olen);
	if (p[1].revents)
		drain(c->err, &c->ebuf, &c->elen);
	return !((p[0].revents & POLLHUP) && !(p[0].revents & POLLIN));
}

char *tc_line(struct tc_child *c, int timeout_ms)
{
	int64_t end = ms_now() + timeout_ms;

	for (;;) {
		char *nl = c->obuf ? memchr(c->obuf + c->opos, '\n', c->olen - c->opos) : NULL;

		if (nl) {
			char *line = strndup(c->obuf + c->opos, nl - (c->obuf + c->opos));

			c->opos = nl - c->obuf + 1;
			return line;
		}
		int64_t left = end - ms_now();
		if (left <= 0 || !pump(c, (int)left))
			return NULL;
	}
}

int tc_finish(struct tc_child *c, int timeout_ms)
{
	int64_t end = ms_now() + timeout_ms;
	int status;

	tc_close_in(c);
	for (;;) {
		pid_t r = waitpid(c->pid, &status, WNOHANG);

		if (r == c->pid) {
			drain(c->out, &c->obuf, &c->olen);
			drain(c->err, &c->ebuf, &c->elen);
			c->pid = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		if (ms_now() > end) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &status, 0);
			c->pid = 0;
			return -1;
		}
		pump(c, 20);
	}
}

void tc_child_free(struct tc_child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	tc_close_in(c);
	if (c->out >= 0)
		close(c->out);
	if (c->err >= 0)
		close(c->err);
	free(c->obuf);
	free(c->ebuf);
	memset(c, 0, sizeof(*c));
}

int tc_run(char *const argv[], const char *const env[], const char *input, size_t len,
	   char **out, char **err)
{
	struct tc_child c;
	int st;

	if (tc_spawn(&c, argv, env) < 0)
		return -1;
	/* write and read together: a big input must not deadlock on a full pipe */
	size_t off = 0;
	while (input && off < len) {
		struct pollfd p = { .fd = c.in, .events = POLLOUT };

		if (poll(&p, 1, 50) > 0) {
			ssize_t w = write(c.in, input + off, len - off > 65536 ? 65536 : len - off);

			if (w < 0 && errno != EINTR && errno != EAGAIN)
				break;
			if (w > 0)
				off += w;
		}
		drain(c.out, &c.obuf, &c.olen);
		drain(c.err, &c.ebuf, &c.elen);
	}
	st = tc_finish(&c, 60000);
	*out = c.obuf ? c.obuf : strdup("");
	*err = c.ebuf ? c.ebuf : strdup("");
	c.obuf = c.ebuf = NULL;
	tc_child_free(&c);
	return st;
}

char *tc_decide_next(const char *project, bool approve, const char *note, int timeout_ms)
{
	int64_t end = ms_now() + timeout_ms;
	struct sbx_queue *q = NULL;
	char *id = NULL, *err = NULL;

	while (ms_now() < end) {
		json_t *arr = NULL;

		if (!q)
			q = sbx_queue_open(project, 0, (uid_t)-1, (gid_t)-1, NULL);
		if (q && sbx_queue_list(q, SBX_QDIR_PENDING, &arr, NULL) == 0 && json_array_size(arr)) {
			id = strdup(json_string_value(json_object_get(json_array_get(arr, 0), "id")));
			json_decref(arr);
			break;
		}
		json_decref(arr);
		usleep(20000);
	}
	if (id) {
		struct sbx_resolve_opts o = { .approve = approve, .scope = SBX_SCOPE_ONCE,
					      .note = note, .by = "tester" };
		json_t *done = NULL;

		if (sbx_queue_resolve(q, id, &o, &done, &err) < 0) {
			fprintf(stderr, "tc_decide_next: %s\n", err ? err : "?");
			free(id);
			id = NULL;
		}
		json_decref(done);
		free(err);
	}
	if (q)
		sbx_queue_close(q);
	return id;
}
