// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the queue_*.c and audit_*.c tests (declared in
 * tests/unit/queue_helpers.h).
 */
#include <dirent.h>
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
#include "queue/queue.h"
#include "lib/json.h"
#include "tests/unit/queue_helpers.h"
#include "tests/unit/unit.h"

/* <tmp>/<name>, created */
char *tq_dir(const char *name)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s", sbx_unit_tmpdir(), name) < 0)
		abort();
	mkdir(p, 0700);
	return p;
}

struct sbx_queue *tq_open(const char *name)
{
	char *dir = tq_dir(name), *err = NULL;
	struct sbx_queue *q = sbx_queue_open(dir, SBX_Q_CREATE, (uid_t)-1, (gid_t)-1, &err);

	if (!q)
		fprintf(stderr, "tq_open %s: %s\n", dir, err ? err : "?");
	free(err);
	free(dir);
	return q;
}

json_t *tq_file_req(const char *path)
{
	return json_pack("{s:s, s:s, s:{s:i, s:i, s:s, s:s, s:[s, s], s:s}, "
			 "s:{s:s, s:s}, s:{s:s, s:s, s:s}}",
			 "kind", "file", "session", "s1",
			 "process", "pid", 4242, "uid", 1000, "comm", "cat", "exe", "/usr/bin/cat",
			 "cmdline", "cat", path, "cwd", "/home/u",
			 "object", "path", path, "access", "read",
			 "rule", "pattern", "~/.aws/**", "verdict", "ask", "reason", "cloud credentials");
}

json_t *tq_cmd_req(const char *command, const char *cwd)
{
	json_t *j = json_pack("{s:s, s:s, s:{s:s}}", "kind", "command", "session", "s1",
			      "object", "command", command);

	if (cwd)
		json_object_set_new(json_object_get(j, "object"), "cwd", json_string(cwd));
	return j;
}

/* submit; returns the id (malloc'd) or NULL */
char *tq_submit(struct sbx_queue *q, json_t *req)
{
	char *id = NULL, *err = NULL;

	if (sbx_queue_submit(q, req, &id, &err))
		fprintf(stderr, "submit: %s\n", err ? err : "?");
	free(err);
	json_decref(req);
	return id;
}

/* entries of a directory fd whose names do (dot=1) or do not (0) start with '.' */
int tq_count(int dirfd, int dot)
{
	struct dirent *de;
	int n = 0, fd = dup(dirfd);
	DIR *d = fdopendir(fd);

	if (!d)
		return -1;
	rewinddir(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((de->d_name[0] == '.') == (dot != 0))
			n++;
	}
	closedir(d);
	return n;
}

bool tq_exists(int dirfd, const char *name)
{
	return faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int tq_write_raw(int dirfd, const char *name, const void *data, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

static char *tq_read_abs(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &cap, 0, f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

/* contents of <dirfd>/<name> or NULL */
char *tq_read(int dirfd, const char *name)
{
	char *buf = NULL;
	int fd = dirfd;

	/* an absolute path is the test's own: no need to stay beneath */
	if (name[0] == '/')
		return tq_read_abs(name);
	if (sbx_read_file_at(fd, name, 64u << 20, &buf, NULL, NULL))
		return NULL;
	return buf;
}

/*
 * The sanitizer build of the CLI: $BPFSBX_SAN, else bpfsbx-san next to
 * this test binary (both live in the build directory); NULL when it was
 * not built.
 */
const char *tq_bin(void)
{
	static char path[PATH_MAX + 16];
	const char *env = getenv("BPFSBX_SAN");
	char self[PATH_MAX], *abs;
	ssize_t n;

	if (env && *env) {
		snprintf(path, sizeof(path), "%s", env);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n <= 0)
			return NULL;
		self[n] = 0;
		*strrchr(self, '/') = 0;
		snprintf(path, sizeof(path), "%s/bpfsbx-san", self);
	}
	if (access(path, X_OK) < 0)
		return NULL;
	abs = realpath(path, NULL);
	if (abs && strlen(abs) < sizeof(path))
		memcpy(path, abs, strlen(abs) + 1);
	free(abs);
	return path;
}

static void slurp(int fd, char **out)
{
	size_t len = 0, cap = 4096;
	char *b = malloc(cap);
	ssize_t n;

	while ((n = read(fd, b + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (cap - len < 2)
			b = realloc(b, cap *= 2);
	}
	b[len] = 0;
	*out = b;
}

/*
 * Run the CLI with argv (argv[0] ignored), in cwd (or NULL); stdin from
 * in (or /dev/null). Returns the exit status (128+sig if killed); *out
 * and *err get stdout and stderr (malloc'd).
 */
int tq_run(const char *cwd, char *const argv[], const char *in, char **out, char **err)
{
	int po[2], pe[2], pi[2], status = 0;
	const char *bin = tq_bin();
	pid_t pid;

	if (!bin)
		return -1;
	if (pipe(po) || pipe(pe) || pipe(pi))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(pi[0], 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(pi[0]); close(pi[1]); close(po[0]); close(po[1]); close(pe[0]); close(pe[1]);
		if (cwd && chdir(cwd) < 0)
			_exit(126);
		setenv("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1", 1);
		execv(bin, argv);
		_exit(127);
	}
	close(pi[0]);
	close(po[1]);
	close(pe[1]);
	if (in && write(pi[1], in, strlen(in)) < 0) {
		/* the child may have exited already */
	}
	close(pi[1]);
	/* stderr is small; read stdout first, then stderr */
	slurp(po[0], out);
	slurp(pe[0], err);
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* set a file's mtime into the past */
void tq_age(int dirfd, const char *name, time_t secs)
{
	struct timespec ts[2];

	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= secs;
	ts[1] = ts[0];
	utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW);
}

const char *tq_decision(const json_t *done, const char *key)
{
	return sbx_json_str(json_object_get(done, "decision"), key);
}

int64_t tq_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* first directory entry (non-dot) whose name contains sub, or NULL */
char *tq_find(int dirfd, const char *sub)
{
	struct dirent *de;
	int fd = dup(dirfd);
	DIR *d = fdopendir(fd);
	char *r = NULL;

	if (!d)
		return NULL;
	rewinddir(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && strstr(de->d_name, sub) && !r)
			r = strdup(de->d_name);
	closedir(d);
	return r;
}
