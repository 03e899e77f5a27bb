// SPDX-License-Identifier: GPL-2.0
/*
 * sbxtest - the syscalls the kernel suite triggers, one per subcommand, so
 * that a test states exactly which syscall it makes (a shell's `cat` or
 * `>` hides whether it was open, openat, O_TRUNC or O_APPEND).
 *
 * Each prints "OK" or "ERR <ERRNO-NAME>" and exits 0 or 1. Tests assert on
 * the printed result, then on the effect (file unchanged, event logged).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>

#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif

static int report(int rc)
{
	if (rc == 0) {
		printf("OK\n");
		return 0;
	}
	printf("ERR %s\n", strerrorname_np(rc) ? strerrorname_np(rc) : "?");
	return 1;
}

static int open_flags(const char *m)
{
	if (!m || !strcmp(m, "r"))
		return O_RDONLY;
	if (!strcmp(m, "w"))
		return O_WRONLY;
	if (!strcmp(m, "rw"))
		return O_RDWR;
	if (!strcmp(m, "a"))
		return O_WRONLY | O_APPEND;
	if (!strcmp(m, "trunc"))
		return O_WRONLY | O_TRUNC;
	if (!strcmp(m, "creat"))
		return O_WRONLY | O_CREAT;
	if (!strcmp(m, "dir"))
		return O_RDONLY | O_DIRECTORY;
	fprintf(stderr, "sbxtest: bad mode %s\n", m);
	exit(2);
}

static int do_open(const char *path, const char *mode)
{
	int fd = open(path, open_flags(mode) | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	/* a read that works proves the open was real */
	if (!mode || !strcmp(mode, "r")) {
		char b[64];

		if (read(fd, b, sizeof(b)) < 0) {
			int e = errno;

			close(fd);
			return e;
		}
	}
	close(fd);
	return 0;
}

static void *thread_open(void *arg)
{
	return (void *)(long)do_open(arg, "r");
}

static int parse_sa(const char *fam, const char *addr, const char *port,
		    struct sockaddr_storage *ss, socklen_t *len)
{
	memset(ss, 0, sizeof(*ss));
	if (!strcmp(fam, "4")) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(atoi(port));
		if (inet_pton(AF_INET, addr, &s->sin_addr) != 1)
			return -1;
		*len = sizeof(*s);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		s->sin6_port = htons(atoi(port));
		if (inet_pton(AF_INET6, addr, &s->sin6_addr) != 1)
			return -1;
		*len = sizeof(*s);
	}
	return 0;
}

/* connect FAM ADDR PORT [tcp|udp]; FAM 4 or 6 */
static int do_connect(char **a, int udp)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, rc = 0;

	if (parse_sa(a[0], a[1], a[2], &ss, &len))
		return EINVAL;
	fd = socket(ss.ss_family, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	if (fd < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&ss, len))
		rc = errno;
	close(fd);
	return rc;
}

static int do_sendto(char **a, int fastopen)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, rc = 0;

	if (parse_sa(a[0], a[1], a[2], &ss, &len))
		return EINVAL;
	fd = socket(ss.ss_family, fastopen ? SOCK_STREAM : SOCK_DGRAM, 0);
	if (fd < 0)
		return errno;
	if (sendto(fd, "x", 1, fastopen ? MSG_FASTOPEN : 0, (struct sockaddr *)&ss, len) < 0)
		rc = errno;
	close(fd);
	return rc;
}

/* listen FAM ADDR PORT N: accept N connections, print each, then exit */
static int do_listen(char **a, int n)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1;

	if (parse_sa(a[0], a[1], a[2], &ss, &len))
		return EINVAL;
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 8))
		return errno;
	printf("LISTENING\n");
	fflush(stdout);
	for (int i = 0; i < n; i++) {
		int c = accept(fd, NULL, NULL);

		if (c < 0)
			return errno;
		printf("ACCEPTED\n");
		fflush(stdout);
		close(c);
	}
	close(fd);
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return errno;
	if (write(fd, s, strlen(s)) < 0)
		rc = errno;
	close(fd);
	return rc;
}

/* event-match FILE key=value ...: count JSON lines where every key (dotted
 * paths allowed: rule.id) has the value (compared as text). */
static int event_match(int argc, char **argv)
{
	FILE *f = fopen(argv[0], "r");
	char *line = NULL;
	size_t cap = 0;
	int count = 0;

	if (!f) {
		printf("0\n");
		return 1;
	}
	while (getline(&line, &cap, f) > 0) {
		json_t *j = json_loads(line, 0, NULL);
		int all = j != NULL;

		for (int i = 1; all && i < argc; i++) {
			char *eq = strchr(argv[i], '='), key[256], *dot, *tok;
			json_t *v = j;

			if (!eq || eq - argv[i] >= (int)sizeof(key)) {
				all = 0;
				break;
			}
			memcpy(key, argv[i], eq - argv[i]);
			key[eq - argv[i]] = 0;
			for (tok = key; tok && v; tok = dot ? dot + 1 : NULL) {
				dot = strchr(tok, '.');
				if (dot)
					*dot = 0;
				v = json_object_get(v, tok);
			}
			if (!v) {
				all = 0;
			} else if (json_is_string(v)) {
				all = !strcmp(json_string_value(v), eq + 1);
			} else {
				char *t = json_dumps(v, JSON_ENCODE_ANY);

				all = t && !strcmp(t, eq + 1);
				free(t);
			}
		}
		count += all;
		json_decref(j);
	}
	free(line);
	fclose(f);
	printf("%d\n", count);
	return count ? 0 : 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: sbxtest CMD ARGS (see tests/kernel/sbxtest.c)\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *c;
	char **a = argv + 2;
	int n = argc - 2;

	if (argc < 2)
		return usage();
	c = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("SBXTEST_PID"))
		printf("PID %d\n", (int)getpid());

	if (!strcmp(c, "open") && n >= 1)
		return report(do_open(a[0], n > 1 ? a[1] : "r"));
	if (!strcmp(c, "openat") && n >= 2) {
		int dfd = open(a[0], O_RDONLY | O_DIRECTORY), fd;

		if (dfd < 0)
			return report(errno);
		fd = openat(dfd, a[1], open_flags(n > 2 ? a[2] : "r"), 0644);
		close(dfd);
		if (fd < 0)
			return report(errno);
		close(fd);
		return report(0);
	}
	if (!strcmp(c, "write") && n >= 2) {
		int fd = open(a[0], O_WRONLY | O_CLOEXEC);

		if (fd < 0)
			return report(errno);
		if (write(fd, a[1], strlen(a[1])) < 0) {
			close(fd);
			return report(errno);
		}
		close(fd);
		return report(0);
	}
	if (!strcmp(c, "exec") && n >= 1) {
		execv(a[0], a);
		return report(errno);
	}
	if (!strcmp(c, "thread-open") && n >= 1) {
		pthread_t t;
		void *r;

		if (pthread_create(&t, NULL, thread_open, a[0]))
			return report(EAGAIN);
		pthread_join(t, &r);
		return report((int)(long)r);
	}
	if ((!strcmp(c, "child-open") || !strcmp(c, "grandchild-open")) && n >= 1) {
		int depth = !strcmp(c, "child-open") ? 1 : 2, st;
		pid_t p;

		for (int d = 0; d < depth; d++) {
			p = fork();
			if (p < 0)
				return report(errno);
			if (p > 0) {
				waitpid(p, &st, 0);
				return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
			}
		}
		return report(do_open(a[0], "r"));
	}
	if (!strcmp(c, "daemon-open") && n >= 2) {
		/* double fork + setsid: the classic way to leave a process tree */
		pid_t p = fork();

		if (p < 0)
			return report(errno);
		if (p > 0) {
			waitpid(p, NULL, 0);
			return 0;
		}
		setsid();
		if (fork() > 0)
			_exit(0);
		usleep(100000);	/* parent gone: we are reparented */
		{
			int rc = do_open(a[0], "r");
			char res[64];
			FILE *f;

			snprintf(res, sizeof(res), "%s ppid=%d sid=%d\n",
				 rc ? strerrorname_np(rc) : "OK", (int)getppid(), (int)getsid(0));
			f = fopen(a[1], "w");
			if (f) {
				fputs(res, f);
				fclose(f);
			}
		}
		_exit(0);
	}
	if (!strcmp(c, "connect") && n >= 3)
		return report(do_connect(a, n > 3 && !strcmp(a[3], "udp")));
	if (!strcmp(c, "sendto") && n >= 3)
		return report(do_sendto(a, 0));
	if (!strcmp(c, "fastopen") && n >= 3)
		return report(do_sendto(a, 1));
	if (!strcmp(c, "listen") && n >= 3)
		return report(do_listen(a, n > 3 ? atoi(a[3]) : 1));
	if (!strcmp(c, "unlink") && n >= 1)
		return report(unlink(a[0]) ? errno : 0);
	if (!strcmp(c, "rmdir") && n >= 1)
		return report(rmdir(a[0]) ? errno : 0);
	if (!strcmp(c, "mkdir") && n >= 1)
		return report(mkdir(a[0], 0755) ? errno : 0);
	if (!strcmp(c, "rename") && n >= 2)
		return report(rename(a[0], a[1]) ? errno : 0);
	if (!strcmp(c, "link") && n >= 2)
		return report(link(a[0], a[1]) ? errno : 0);
	if (!strcmp(c, "symlink") && n >= 2)
		return report(symlink(a[0], a[1]) ? errno : 0);
	if (!strcmp(c, "truncate") && n >= 1)
		return report(truncate(a[0], 0) ? errno : 0);
	if (!strcmp(c, "chmod") && n >= 1)
		return report(chmod(a[0], 0600) ? errno : 0);
	if (!strcmp(c, "chown") && n >= 1)
		return report(chown(a[0], getuid(), getgid()) ? errno : 0);
	if (!strcmp(c, "write-file") && n >= 2)
		return report(write_str(a[0], a[1]));
	if (!strcmp(c, "event-match") && n >= 1)
		return event_match(n, a);
	if (!strcmp(c, "json-get") && n == 2) {
		/* json-get FILE a.b.c: print the value (strings bare) */
		json_t *j = json_load_file(a[0], 0, NULL), *v = j;
		char key[512], *tok, *dot;

		snprintf(key, sizeof(key), "%s", a[1]);
		for (tok = key; tok && v; tok = dot ? dot + 1 : NULL) {
			dot = strchr(tok, '.');
			if (dot)
				*dot = 0;
			v = json_is_array(v) ? json_array_get(v, atoi(tok)) : json_object_get(v, tok);
		}
		if (!v) {
			json_decref(j);
			return 1;
		}
		if (json_is_string(v)) {
			printf("%s\n", json_string_value(v));
		} else {
			char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);

			printf("%s\n", t ? t : "");
			free(t);
		}
		json_decref(j);
		return 0;
	}
	if (!strcmp(c, "json-approve") && n == 0) {
		/* stdin: a request; stdout: the same with an approval added */
		json_t *j = json_loadf(stdin, 0, NULL);

		if (!j)
			return 1;
		json_object_set_new(j, "decision", json_pack("{s:s,s:s,s:s,s:s}", "verdict",
			"approve", "scope", "session", "by", "mallory", "at",
			"2026-01-01T00:00:00.000Z"));
		json_dumpf(j, stdout, JSON_COMPACT);
		json_decref(j);
		return 0;
	}
	if (!strcmp(c, "open-loop") && n >= 2) {
		/* open-loop PATH N: N read opens; prints "EPERM <count> OK <count>" */
		long k = atol(a[1]), eperm = 0, ok = 0;

		for (long i = 0; i < k; i++) {
			int fd = open(a[0], O_RDONLY | O_CLOEXEC);

			if (fd >= 0) {
				ok++;
				close(fd);
			} else if (errno == EPERM) {
				eperm++;
			}
		}
		printf("EPERM %ld OK %ld\n", eperm, ok);
		return 0;
	}
	if (!strcmp(c, "cgroup") && n == 0) {
		char buf[4096];
		FILE *f = fopen("/proc/self/cgroup", "r");

		while (f && fgets(buf, sizeof(buf), f))
			fputs(buf, stdout);
		if (f)
			fclose(f);
		return 0;
	}
	return usage();
}
