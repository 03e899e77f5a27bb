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
#include <fnmatch.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
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
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <mqueue.h>
#include <sched.h>
#include <termios.h>
#include <sys/personality.h>
#include <linux/membarrier.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

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

/* "WHAT: ERR EXXX" for a step of a loop that failed */
static int report_at(const char *what, int rc)
{
	printf("%s: ", what);
	return report(rc);
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

/*
 * udp-seq FAM STEP...: one datagram socket, the steps in order.
 *   ADDR,PORT[,N]  send N datagrams (default 1) to ADDR:PORT; one line:
 *                  "OK", or "ERR <errno name>" of the first that failed
 *   @FILE          wait (up to 60 s) until FILE exists
 * The verdict a socket remembers (bpf/network.bpf.c, sbx_dcache) is
 * tried by the same socket sending again, after a change or to another
 * destination.
 */
static int do_udp_seq(char **a, int n)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd = -1, rc = 0;

	for (int i = 1; i < n; i++) {
		char spec[256], *port, *count;
		long k = 1, sent = 0;
		int err = 0;

		if (a[i][0] == '@') {
			for (int t = 0; t < 1200 && access(a[i] + 1, F_OK); t++)
				usleep(50000);
			continue;
		}
		snprintf(spec, sizeof(spec), "%s", a[i]);
		port = strchr(spec, ',');
		if (!port)
			return EINVAL;
		*port++ = 0;
		count = strchr(port, ',');
		if (count) {
			*count++ = 0;
			k = atol(count);
		}
		if (parse_sa(a[0], spec, port, &ss, &len))
			return EINVAL;
		if (fd < 0 && (fd = socket(ss.ss_family, SOCK_DGRAM, 0)) < 0)
			return errno;
		for (; sent < k && !err; sent++)
			if (sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len) < 0)
				err = errno;
		report(err);
		fflush(stdout);
		rc |= err != 0;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/*
 * udp-race ADDR,PORT ADDR,PORT N: one IPv4 datagram socket, two threads
 * sending at once, N datagrams each: the first to a destination the
 * policy allows (its socket remembers it), the second to one it denies.
 * Prints "allowed A denied B" for the second thread's sends: a torn read
 * of what the socket remembers would let some of them through.
 */
struct race_arg {
	int fd;
	struct sockaddr_storage ss;
	socklen_t len;
	long n, ok;
	int first_err;		/* errno of the first send that failed */
};

static void *race_thread(void *p)
{
	struct race_arg *r = p;

	for (long i = 0; i < r->n; i++) {
		if (sendto(r->fd, "x", 1, 0, (struct sockaddr *)&r->ss, r->len) == 1)
			r->ok++;
		else if (!r->first_err)
			r->first_err = errno;
	}
	return NULL;
}

static int do_udp_race(char **a)
{
	struct race_arg ra = { .n = atol(a[2]) }, rb;
	char s1[128], s2[128], *p1, *p2;
	pthread_t t;

	snprintf(s1, sizeof(s1), "%s", a[0]);
	snprintf(s2, sizeof(s2), "%s", a[1]);
	p1 = strchr(s1, ',');
	p2 = strchr(s2, ',');
	if (!p1 || !p2 || ra.n <= 0)
		return EINVAL;
	*p1++ = 0;
	*p2++ = 0;
	rb = ra;
	if (parse_sa("4", s1, p1, &ra.ss, &ra.len) || parse_sa("4", s2, p2, &rb.ss, &rb.len))
		return EINVAL;
	ra.fd = rb.fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (ra.fd < 0)
		return errno;
	if (pthread_create(&t, NULL, race_thread, &ra))
		return EAGAIN;
	race_thread(&rb);
	pthread_join(t, NULL);
	/* a send to the allowed destination that failed says why */
	if (ra.ok != ra.n)
		printf("allowed %ld denied %ld (first failure on the allowed side: %s)\n", ra.ok,
		       rb.ok, strerrorname_np(ra.first_err) ? strerrorname_np(ra.first_err) : "?");
	else
		printf("allowed %ld denied %ld\n", ra.ok, rb.ok);
	close(ra.fd);
	return 0;
}

/*
 * udp-first ADDR,PORT ROUNDS: each round a new datagram socket whose first
 * datagram two threads send at once, released together by a barrier: the
 * first send makes the socket's storage in the kernel, and both make it
 * at once. Prints "failed K of N", with the first errno when K > 0.
 */
struct first_arg {
	pthread_barrier_t *go;
	struct sockaddr_storage *ss;
	socklen_t len;
	int fd, err;
};

static void *first_thread(void *p)
{
	struct first_arg *f = p;

	pthread_barrier_wait(f->go);
	f->err = sendto(f->fd, "x", 1, 0, (struct sockaddr *)f->ss, f->len) == 1 ? 0 : errno;
	return NULL;
}

static int do_udp_first(char **a)
{
	struct sockaddr_storage ss;
	char spec[128], *port;
	long rounds = atol(a[1]), failed = 0;
	int first = 0;
	socklen_t len;

	snprintf(spec, sizeof(spec), "%s", a[0]);
	port = strchr(spec, ',');
	if (!port || rounds <= 0)
		return EINVAL;
	*port++ = 0;
	if (parse_sa("4", spec, port, &ss, &len))
		return EINVAL;
	for (long i = 0; i < rounds; i++) {
		pthread_barrier_t go;
		struct first_arg f[2];
		pthread_t t;
		int fd = socket(AF_INET, SOCK_DGRAM, 0);

		if (fd < 0)
			return errno;
		pthread_barrier_init(&go, NULL, 2);
		for (int k = 0; k < 2; k++)
			f[k] = (struct first_arg){ .go = &go, .ss = &ss, .len = len, .fd = fd };
		if (pthread_create(&t, NULL, first_thread, &f[0]))
			return EAGAIN;
		first_thread(&f[1]);
		pthread_join(t, NULL);
		pthread_barrier_destroy(&go);
		close(fd);
		for (int k = 0; k < 2; k++) {
			if (!f[k].err)
				continue;
			failed++;
			if (!first)
				first = f[k].err;
		}
	}
	if (failed)
		printf("failed %ld of %ld (first: %s)\n", failed, 2 * rounds,
		       strerrorname_np(first) ? strerrorname_np(first) : "?");
	else
		printf("failed 0 of %ld\n", 2 * rounds);
	return 0;
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

/* renameat2(RENAME_EXCHANGE): each name takes the other's object */
static int do_exchange(const char *a, const char *b)
{
	return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) ? errno : 0;
}

/*
 * An unnamed file made in dir (O_TMPFILE), written, then given the name
 * `name` through /proc/self/fd (linkat with AT_SYMLINK_FOLLOW: AT_EMPTY_PATH
 * needs CAP_DAC_READ_SEARCH). A file that appears whole under a name that
 * no create or open of that name made.
 */
static int do_tmpfile_link(const char *dir, const char *name)
{
	char proc[64];
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600), rc = 0;

	if (fd < 0)
		return errno;
	if (write(fd, "planted\n", 8) != 8)
		rc = errno ? errno : EIO;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (!rc && name && linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW))
		rc = errno;
	close(fd);
	return rc;
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
 * paths allowed: rule.id) has the value (compared as text); key~=GLOB
 * matches a string value by fnmatch(3) (a name with a pid in it). */
/* does event j match every KEY=VALUE (KEY a.b.c) of filters? */
static int event_matches(json_t *j, int n, char **filters)
{
	for (int i = 0; i < n; i++) {
		char *eq = strchr(filters[i], '='), key[256], *dot, *tok;
		bool glob = eq && eq > filters[i] && eq[-1] == '~';
		size_t klen = eq ? (size_t)(eq - filters[i]) - glob : 0;
		json_t *v = j;
		int ok;

		if (!eq || klen >= sizeof(key))
			return 0;
		memcpy(key, filters[i], klen);
		key[klen] = 0;
		for (tok = key; tok && v; tok = dot ? dot + 1 : NULL) {
			dot = strchr(tok, '.');
			if (dot)
				*dot = 0;
			v = json_object_get(v, tok);
		}
		if (!v) {
			ok = 0;
		} else if (json_is_string(v)) {
			ok = glob ? !fnmatch(eq + 1, json_string_value(v), 0) :
				    !strcmp(json_string_value(v), eq + 1);
		} else {
			char *t = json_dumps(v, JSON_ENCODE_ANY);

			ok = t && !strcmp(t, eq + 1);
			free(t);
		}
		if (!ok)
			return 0;
	}
	return 1;
}

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

		count += j && event_matches(j, argc - 1, argv + 1);
		json_decref(j);
	}
	free(line);
	fclose(f);
	printf("%d\n", count);
	return count ? 0 : 1;
}

/*
 * events-missing EVENTS SPECS [MS]: SPECS has one expected event a line,
 * its KEY=VALUE filters separated by tabs. Reads EVENTS again until every
 * spec has a matching event or MS (default 3000) have passed; prints the
 * specs still missing; 0 when none is.
 */
static int events_missing(char **a, int n)
{
	char *specs[4096][16], *buf = NULL, *line = NULL;
	int nf[4096], ns = 0, left, found[4096] = { 0 };
	long wait_ms = n > 2 ? atol(a[2]) : 3000;
	size_t cap = 0, len = 0;
	FILE *f = fopen(a[1], "r");

	if (!f || getdelim(&buf, &len, 0, f) < 0)
		return 2;
	fclose(f);
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l && ns < 4096;
	     l = strtok_r(NULL, "\n", &save)) {
		char *s2 = NULL;

		nf[ns] = 0;
		for (char *t = strtok_r(l, "\t", &s2); t && nf[ns] < 16; t = strtok_r(NULL, "\t", &s2))
			specs[ns][nf[ns]++] = t;
		ns++;
	}
	left = ns;
	for (long waited = 0; left && waited <= wait_ms; waited += 100) {
		FILE *ev = fopen(a[0], "r");

		while (ev && left && getline(&line, &cap, ev) > 0) {
			json_t *j = json_loads(line, 0, NULL);

			for (int i = 0; j && i < ns; i++)
				if (!found[i] && event_matches(j, nf[i], specs[i])) {
					found[i] = 1;
					left--;
				}
			json_decref(j);
		}
		if (ev)
			fclose(ev);
		if (left)
			usleep(100000);
	}
	for (int i = 0; i < ns; i++)
		if (!found[i]) {
			for (int k = 0; k < nf[i]; k++)
				printf("%s%s", k ? " " : "", specs[i][k]);
			printf("\n");
		}
	free(line);
	free(buf);
	return left ? 1 : 0;
}

/* open-list FILE: open(2) each path (one a line), read-only; one line each:
 * "PATH<TAB>OK <its first line>" or "PATH<TAB>ERR <errno name>" */
static int open_list(const char *list)
{
	FILE *f = fopen(list, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t l;

	if (!f)
		return 2;
	while ((l = getline(&line, &cap, f)) > 0) {
		char first[256] = "";
		int fd;

		if (line[l - 1] == '\n')
			line[--l] = 0;
		fd = open(line, O_RDONLY);
		if (fd < 0) {
			const char *e = strerrorname_np(errno);

			printf("%s\tERR %s\n", line, e ? e : "?");
			continue;
		}
		l = read(fd, first, sizeof(first) - 1);
		first[l > 0 ? l : 0] = 0;
		first[strcspn(first, "\n")] = 0;
		printf("%s\tOK %s\n", line, first);
		close(fd);
	}
	free(line);
	fclose(f);
	return 0;
}


/* ---- the red-team suite's syscalls ------------------------------------ */

static int copy_to_fd(const char *src, int out)
{
	char buf[65536];
	int in = open(src, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (in < 0)
		return errno;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			close(in);
			return EIO;
		}
	close(in);
	return n < 0 ? errno : 0;
}

/* the fileless way to run a program: memfd_create + execveat(AT_EMPTY_PATH) */
/* via_proc: execve(/proc/self/fd/N), which no seccomp rule on
 * execveat(AT_EMPTY_PATH) sees */
static int memfd_exec(const char *src, bool via_proc)
{
	int fd = syscall(SYS_memfd_create, "payload", 0), rc;
	char path[64], *argv[] = { "payload", NULL }, *envp[] = { NULL };

	if (fd < 0)
		return errno;
	rc = copy_to_fd(src, fd);
	if (rc)
		return rc;
	if (via_proc) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		execve(path, argv, envp);
	} else {
		syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
	}
	return errno;
}

/* run a file after unlinking it, through the fd that is still open
 * (via_proc: as memfd_exec) */
static int exec_deleted(const char *src, const char *dir, bool via_proc)
{
	char path[4096], *argv[] = { "deleted", NULL }, *envp[] = { NULL };
	int fd, ro;

	snprintf(path, sizeof(path), "%s/sbx-deleted-%d", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0)
		return errno;
	if (copy_to_fd(src, fd)) {
		close(fd);
		return EIO;
	}
	close(fd);
	ro = open(path, O_RDONLY);
	unlink(path);
	if (ro < 0)
		return errno;
	if (via_proc) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", ro);
		execve(path, argv, envp);
	} else {
		syscall(SYS_execveat, ro, "", argv, envp, AT_EMPTY_PATH);
	}
	return errno;
}

/* how: 0 mmap PROT_EXEC, 1 mmap readable then mprotect, 2 mmap readable
 * under READ_IMPLIES_EXEC, which the kernel makes executable (mmap_prot),
 * 3 mmap readable only */
static int map_exec(const char *path, int how)
{
	int via_mprotect = how == 1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return errno;
	if (how == 2 && personality(READ_IMPLIES_EXEC) < 0) {
		int e = errno;

		close(fd);
		return e;
	}
	p = mmap(NULL, 4096, PROT_READ | (how == 0 ? PROT_EXEC : 0), MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return errno;
	if (via_mprotect && mprotect(p, 4096, PROT_READ | PROT_EXEC)) {
		int e = errno;

		munmap(p, 4096);
		return e;
	}
	munmap(p, 4096);
	return 0;
}

static int do_ptrace(pid_t pid)
{
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL))
		return errno;
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return 0;
}

static int do_bpf(void)
{
	unsigned int attr[32] = { 0 };	/* BPF_PROG_GET_NEXT_ID: start_id 0 */

	if (syscall(SYS_bpf, 11 /* BPF_PROG_GET_NEXT_ID */, attr, sizeof(attr)) < 0)
		return errno;
	return 0;
}

static int do_socket(int family, int type, int protocol)
{
	int fd = socket(family, type, protocol);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* io_uring: one SQE, submitted and waited for; returns the CQE's -res */
struct uring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int uring_setup(struct uring *u)
{
	struct io_uring_params p = { 0 };
	void *sq, *cq;

	u->fd = syscall(SYS_io_uring_setup, 4, &p);
	if (u->fd < 0)
		return errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_CQ_RING);
	u->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || u->sqes == MAP_FAILED)
		return errno;
	u->sq_tail = sq + p.sq_off.tail;
	u->sq_mask = sq + p.sq_off.ring_mask;
	u->sq_array = sq + p.sq_off.array;
	u->cq_head = cq + p.cq_off.head;
	u->cq_tail = cq + p.cq_off.tail;
	u->cq_mask = cq + p.cq_off.ring_mask;
	u->cqes = cq + p.cq_off.cqes;
	return 0;
}

static int uring_run(struct uring *u, const struct io_uring_sqe *sqe, int *res)
{
	unsigned tail = *u->sq_tail, idx = tail & *u->sq_mask;

	u->sqes[idx] = *sqe;
	u->sq_array[idx] = idx;
	__atomic_store_n(u->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, u->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return errno;
	unsigned head = *u->cq_head;

	if (head == __atomic_load_n(u->cq_tail, __ATOMIC_ACQUIRE))
		return EAGAIN;
	*res = u->cqes[head & *u->cq_mask].res;
	__atomic_store_n(u->cq_head, head + 1, __ATOMIC_RELEASE);
	return 0;
}

static int uring_open(const char *path)
{
	struct io_uring_sqe sqe = { 0 };
	struct uring u;
	int rc, res;

	if ((rc = uring_setup(&u)))
		return rc;
	sqe.opcode = IORING_OP_OPENAT;
	sqe.fd = AT_FDCWD;
	sqe.addr = (unsigned long)path;
	sqe.open_flags = O_RDONLY;
	if ((rc = uring_run(&u, &sqe, &res)))
		return rc;
	if (res < 0)
		return -res;
	close(res);
	return 0;
}

static int uring_connect(char **a)
{
	struct io_uring_sqe sqe = { 0 };
	struct sockaddr_storage ss;
	socklen_t len;
	struct uring u;
	int rc, res, fd;

	if (parse_sa(a[0], a[1], a[2], &ss, &len))
		return EINVAL;
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		return errno;
	if ((rc = uring_setup(&u)))
		return rc;
	sqe.opcode = IORING_OP_CONNECT;
	sqe.fd = fd;
	sqe.addr = (unsigned long)&ss;
	sqe.off = len;
	if ((rc = uring_run(&u, &sqe, &res)))
		return rc;
	return res < 0 ? -res : 0;
}

/* fd-server SOCK FILE: hand FILE's descriptor to the first client (the
 * way a helper outside the session could smuggle one in) */
static int fd_server(const char *sock, const char *file)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, x = 'x';
	struct iovec iov = { &x, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	int ls, c, fd = open(file, O_RDONLY);

	if (fd < 0)
		return errno;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	unlink(sock);
	ls = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1))
		return errno;
	chmod(sock, 0777);
	printf("LISTENING\n");
	c = accept(ls, NULL, NULL);
	if (c < 0)
		return errno;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(c, &mh, 0) < 0)
		return errno;
	close(c);
	return 0;
}

/* a unix socket address: "@name" the abstract namespace, else a path */
static socklen_t unix_addr(const char *name, struct sockaddr_un *sa)
{
	size_t n = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n >= sizeof(sa->sun_path))
		n = sizeof(sa->sun_path) - 1;
	memcpy(sa->sun_path, name, n);
	if (name[0] == '@')
		sa->sun_path[0] = 0;
	else
		n++;	/* a path's terminating NUL */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
}

/* unix-listen ADDR: a stream listener on ADDR; prints LISTENING, then
 * ACCEPTED for the first client */
static int unix_listen(const char *addr)
{
	struct sockaddr_un sa;
	socklen_t len = unix_addr(addr, &sa);
	int ls = socket(AF_UNIX, SOCK_STREAM, 0), c;

	if (ls < 0 || bind(ls, (struct sockaddr *)&sa, len) || listen(ls, 4))
		return errno;
	printf("LISTENING\n");
	fflush(stdout);
	c = accept(ls, NULL, NULL);
	if (c < 0)
		return errno;
	printf("ACCEPTED\n");
	close(c);
	close(ls);
	return 0;
}

/* unix-connect stream|dgram ADDR: connect (stream) or send a datagram */
static int unix_connect(const char *kind, const char *addr)
{
	struct sockaddr_un sa;
	socklen_t len = unix_addr(addr, &sa);
	int dgram = !strcmp(kind, "dgram"), rc = 0;
	int s = socket(AF_UNIX, dgram ? SOCK_DGRAM : SOCK_STREAM, 0);

	if (s < 0)
		return errno;
	if (dgram ? sendto(s, "x", 1, 0, (struct sockaddr *)&sa, len) < 0 :
		    connect(s, (struct sockaddr *)&sa, len) != 0)
		rc = errno;
	close(s);
	return rc;
}

/* recv-fd SOCK: take a descriptor from the server and read it */
static int recv_fd(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, x, data[64];
	struct iovec iov = { &x, 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int s = socket(AF_UNIX, SOCK_STREAM, 0), fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)))
		return errno;
	if (recvmsg(s, &mh, 0) < 0)
		return errno;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS) {
		/* the kernel dropped the descriptor: MSG_CTRUNC */
		return (mh.msg_flags & MSG_CTRUNC) ? EPERM : ENOENT;
	}
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	if (read(fd, data, sizeof(data)) < 0)
		return errno;
	return 0;
}

/* inject a keystroke into our own controlling terminal */
static int tiocsti(void)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), t;
	char c = 'x';

	if (m < 0 || grantpt(m) || unlockpt(m))
		return errno;
	setsid();
	t = open(ptsname(m), O_RDWR);	/* becomes the controlling tty */
	if (t < 0)
		return errno;
	if (ioctl(t, TIOCSTI, &c))
		return errno;
	return 0;
}

/* open a file by handle (the 2014 "shocker" container escape) */
static int open_by_handle(const char *path, const char *mntdir)
{
	struct file_handle *h = calloc(1, sizeof(*h) + 128);
	int mnt_id, mfd, fd;
	char b[16];

	h->handle_bytes = 128;
	if (name_to_handle_at(AT_FDCWD, path, h, &mnt_id, 0))
		return errno;
	/* any descriptor on the file's mount */
	mfd = open(mntdir, O_RDONLY | O_DIRECTORY);
	if (mfd < 0)
		return errno;
	fd = open_by_handle_at(mfd, h, O_RDONLY);
	if (fd < 0)
		return errno;
	if (read(fd, b, sizeof(b)) < 0)
		return errno;
	return 0;
}

static int perf_open(void)
{
	struct perf_event_attr pa = { .type = PERF_TYPE_SOFTWARE, .size = sizeof(pa),
				      .config = PERF_COUNT_SW_CPU_CLOCK };
	int fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int init_module_garbage(void)
{
	static const char junk[64] = "not a module";

	if (syscall(SYS_init_module, junk, sizeof(junk), "") < 0)
		return errno;
	return 0;
}

static int clone_into_cgroup(const char *dir)
{
	struct clone_args ca = { 0 };
	int cfd = open(dir, O_PATH | O_DIRECTORY);
	long pid;

	if (cfd < 0)
		return errno;
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = cfd;
	pid = syscall(SYS_clone3, &ca, sizeof(ca));
	if (pid < 0)
		return errno;
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return 0;
}

static int vm_read(pid_t pid)
{
	char buf[8];
	struct iovec l = { buf, sizeof(buf) }, r = { (void *)0x10000, sizeof(buf) };

	if (process_vm_readv(pid, &l, 1, &r, 1, 0) < 0)
		return errno;
	return 0;
}

static int pidfd_getfd(pid_t pid, int fd)
{
	int pfd = syscall(SYS_pidfd_open, pid, 0), got;

	if (pfd < 0)
		return errno;
	got = syscall(SYS_pidfd_getfd, pfd, fd, 0);
	if (got < 0)
		return errno;
	close(got);
	return 0;
}

/* race-symlink LINK A B SECONDS: flip LINK between A and B while opening
 * it; count opens that read B's first line (a leak if B is denied) */
static volatile int racing = 1;
static const char *race_link, *race_a, *race_b;

static void *flipper(void *arg)
{
	char tmp[4096];

	(void)arg;
	snprintf(tmp, sizeof(tmp), "%s.tmp", race_link);
	for (unsigned i = 0; racing; i++) {
		unlink(tmp);
		if (symlink(i & 1 ? race_b : race_a, tmp) == 0)
			rename(tmp, race_link);
	}
	return NULL;
}

static int race_symlink(char **a)
{
	pthread_t t;
	long opens = 0, leaks = 0, eperm = 0;
	struct timespec end, now;
	char first[256] = "", line[256];

	/* B's first line, as read before the session (a[4]) */
	snprintf(first, sizeof(first), "%s", a[4]);
	race_link = a[0];
	race_a = a[1];
	race_b = a[2];
	symlink(race_a, race_link);
	pthread_create(&t, NULL, flipper, NULL);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += atoi(a[3]);
	do {
		int fd = open(race_link, O_RDONLY);

		if (fd >= 0) {
			ssize_t n = read(fd, line, sizeof(line) - 1);

			if (n > 0) {
				line[n] = 0;
				line[strcspn(line, "\n")] = 0;
				if (!strcmp(line, first))
					leaks++;
			}
			close(fd);
			opens++;
		} else if (errno == EPERM || errno == EACCES) {
			eperm++;	/* refused: EACCES is Landlock's */
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	racing = 0;
	pthread_join(t, NULL);
	printf("OPENS %ld REFUSED %ld LEAKS %ld\n", opens, eperm, leaks);
	return 0;
}

static int dispatch_redteam(const char *c, char **a, int n, int *handled)
{
	*handled = 1;
	if (!strcmp(c, "memfd-exec") && n >= 1)
		return report(memfd_exec(a[0], n >= 2 && !strcmp(a[1], "proc")));
	if (!strcmp(c, "exec-deleted") && n >= 2)
		return report(exec_deleted(a[0], a[1], n >= 3 && !strcmp(a[2], "proc")));
	if (!strcmp(c, "mmap-exec") && n >= 1)
		return report(map_exec(a[0], 0));
	if (!strcmp(c, "mprotect-exec") && n >= 1)
		return report(map_exec(a[0], 1));
	if (!strcmp(c, "rie-mmap") && n >= 1)
		return report(map_exec(a[0], 2));
	if (!strcmp(c, "mmap-read") && n >= 1)
		return report(map_exec(a[0], 3));
	if (!strcmp(c, "kill") && n >= 2)
		return report(kill(atoi(a[0]), atoi(a[1])) ? errno : 0);
	if (!strcmp(c, "ptrace") && n >= 1)
		return report(do_ptrace(atoi(a[0])));
	if (!strcmp(c, "bpf") && n == 0)
		return report(do_bpf());
	if (!strcmp(c, "unshare-user") && n == 0)
		return report(unshare(CLONE_NEWUSER) ? errno : 0);
	if (!strcmp(c, "unshare-mount") && n == 0)
		return report(unshare(CLONE_NEWNS) ? errno : 0);
	if (!strcmp(c, "mount-bind") && n >= 2)
		return report(mount(a[0], a[1], NULL, MS_BIND, NULL) ? errno : 0);
	if (!strcmp(c, "mount-tmpfs") && n >= 1)
		return report(mount("x", a[0], "tmpfs", 0, NULL) ? errno : 0);
	if (!strcmp(c, "mount-move") && n >= 2)	/* mount(2) MS_MOVE, as util-linux's */
		return report(mount(a[0], a[1], NULL, MS_MOVE, NULL) ? errno : 0);
	if (!strcmp(c, "move-mount") && n >= 2)	/* the new mount API's move_mount(2) */
		return report(syscall(SYS_move_mount, AT_FDCWD, a[0], AT_FDCWD, a[1], 0) ? errno : 0);
	if (!strcmp(c, "umount") && n >= 1)
		return report(umount2(a[0], MNT_DETACH) ? errno : 0);
	if (!strcmp(c, "socket") && n >= 2)
		return report(do_socket(atoi(a[0]), atoi(a[1]), n > 2 ? atoi(a[2]) : 0));
	if (!strcmp(c, "uring-open") && n >= 1)
		return report(uring_open(a[0]));
	if (!strcmp(c, "uring-connect") && n >= 3)
		return report(uring_connect(a));
	if (!strcmp(c, "fd-server") && n >= 2)
		return report(fd_server(a[0], a[1]));
	if (!strcmp(c, "recv-fd") && n >= 1)
		return report(recv_fd(a[0]));
	if (!strcmp(c, "unix-listen") && n >= 1)
		return report(unix_listen(a[0]));
	if (!strcmp(c, "unix-connect") && n >= 2)
		return report(unix_connect(a[0], a[1]));
	if (!strcmp(c, "tiocsti") && n == 0)
		return report(tiocsti());
	if (!strcmp(c, "open-by-handle") && n >= 2)
		return report(open_by_handle(a[0], a[1]));
	if (!strcmp(c, "perf-open") && n == 0)
		return report(perf_open());
	if (!strcmp(c, "init-module") && n == 0)
		return report(init_module_garbage());
	if (!strcmp(c, "clone-into-cgroup") && n >= 1)
		return report(clone_into_cgroup(a[0]));
	if (!strcmp(c, "vm-read") && n >= 1)
		return report(vm_read(atoi(a[0])));
	if (!strcmp(c, "pidfd-getfd") && n >= 2)
		return report(pidfd_getfd(atoi(a[0]), atoi(a[1])));
	if (!strcmp(c, "race-symlink") && n >= 5)
		return race_symlink(a);
	*handled = 0;
	return 0;
}

/* ---- IPC without sockets (t_ipc.sh) ------------------------------------ */

struct sbx_msgbuf {
	long mtype;
	char mtext[128];
};

/* sysv make KEY MARKER: a message queue, a shm segment holding MARKER and
 * a semaphore set, all under KEY, mode 0666; prints "MSQ SHM SEM" ids */
static int sysv_make(key_t key, const char *marker)
{
	int q = msgget(key, IPC_CREAT | 0666), m = shmget(key, 4096, IPC_CREAT | 0666);
	int s = semget(key, 1, IPC_CREAT | 0666);
	char *p;

	if (q < 0 || m < 0 || s < 0)
		return report(errno);
	p = shmat(m, NULL, 0);
	if (p == (void *)-1)
		return report(errno);
	snprintf(p, 4096, "%s", marker);
	shmdt(p);
	printf("%d %d %d\n", q, m, s);
	return 0;
}

static int sysv_rm(const char *kind, int id)
{
	int rc;

	if (!strcmp(kind, "msg"))
		rc = msgctl(id, IPC_RMID, NULL);
	else if (!strcmp(kind, "shm"))
		rc = shmctl(id, IPC_RMID, NULL);
	else
		rc = semctl(id, 0, IPC_RMID);
	return report(rc ? errno : 0);
}

static int sysv_stat(const char *kind, int id)
{
	struct msqid_ds q;
	struct shmid_ds m;
	struct semid_ds s;
	int rc;

	if (!strcmp(kind, "msg"))
		rc = msgctl(id, IPC_STAT, &q);
	else if (!strcmp(kind, "shm"))
		rc = shmctl(id, IPC_STAT, &m);
	else
		rc = semctl(id, 0, IPC_STAT, &s);
	return report(rc < 0 ? errno : 0);
}

static int sysv_get(const char *kind, key_t key)
{
	int rc;

	if (!strcmp(kind, "msg"))
		rc = msgget(key, 0);
	else if (!strcmp(kind, "shm"))
		rc = shmget(key, 0, 0);
	else
		rc = semget(key, 0, 0);
	return report(rc < 0 ? errno : 0);
}

static int sysv_send(int id, const char *text)
{
	struct sbx_msgbuf b = { .mtype = 1 };

	snprintf(b.mtext, sizeof(b.mtext), "%s", text);
	return report(msgsnd(id, &b, strlen(b.mtext) + 1, IPC_NOWAIT) ? errno : 0);
}

/* prints "GOT TEXT", or ERR ENOMSG when the queue is empty */
static int sysv_recv(int id)
{
	struct sbx_msgbuf b;

	if (msgrcv(id, &b, sizeof(b.mtext), 0, IPC_NOWAIT) < 0)
		return report(errno);
	b.mtext[sizeof(b.mtext) - 1] = 0;
	printf("GOT %s\n", b.mtext);
	return 0;
}

/* prints what the segment holds, then OK */
static int sysv_shmread(int id)
{
	char *p = shmat(id, NULL, SHM_RDONLY);

	if (p == (void *)-1)
		return report(errno);
	printf("READ %.64s\n", p);
	shmdt(p);
	return report(0);
}

static int sysv_semop(int id)
{
	struct sembuf op = { .sem_num = 0, .sem_op = 1, .sem_flg = IPC_NOWAIT };

	return report(semop(id, &op, 1) ? errno : 0);
}

static int sysv_semval(int id)
{
	int v = semctl(id, 0, GETVAL);

	if (v < 0)
		return report(errno);
	printf("%d\n", v);
	return 0;
}

/* objects of one's own, made and used: every step must work */
static int sysv_own(void)
{
	struct sbx_msgbuf b = { .mtype = 1, .mtext = "mine" };
	struct sembuf op = { .sem_num = 0, .sem_op = 1, .sem_flg = IPC_NOWAIT };
	int q = msgget(IPC_PRIVATE, 0600), m = shmget(IPC_PRIVATE, 4096, 0600);
	int s = semget(IPC_PRIVATE, 1, 0600);
	struct msqid_ds qs;
	char *p;

	if (q < 0 || m < 0 || s < 0)
		return report(errno);
	if (msgsnd(q, &b, 5, IPC_NOWAIT) || msgrcv(q, &b, sizeof(b.mtext), 0, IPC_NOWAIT) != 5 ||
	    strcmp(b.mtext, "mine") || msgctl(q, IPC_STAT, &qs))
		return report(errno ? errno : EIO);
	p = shmat(m, NULL, 0);
	if (p == (void *)-1)
		return report(errno);
	strcpy(p, "mine");
	shmdt(p);
	p = shmat(m, NULL, SHM_RDONLY);
	if (p == (void *)-1 || strcmp(p, "mine"))
		return report(p == (void *)-1 ? errno : EIO);
	shmdt(p);
	if (semop(s, &op, 1) || semctl(s, 0, GETVAL) != 1)
		return report(errno ? errno : EIO);
	if (msgctl(q, IPC_RMID, NULL) || shmctl(m, IPC_RMID, NULL) || semctl(s, 0, IPC_RMID))
		return report(errno);
	return report(0);
}

/* POSIX message queues: mq make|send|recv|own NAME [TEXT] */
static int mq_cmd(const char *op, const char *name, const char *text)
{
	struct mq_attr at = { .mq_maxmsg = 4, .mq_msgsize = 64 };
	char buf[64];
	mqd_t q;
	ssize_t n;

	if (!strcmp(op, "make")) {
		q = mq_open(name, O_CREAT | O_RDWR, 0666, &at);
		return report(q == (mqd_t)-1 ? errno : 0);
	}
	if (!strcmp(op, "send")) {
		q = mq_open(name, O_WRONLY | O_NONBLOCK);
		if (q == (mqd_t)-1)
			return report(errno);
		return report(mq_send(q, text, strlen(text), 0) ? errno : 0);
	}
	if (!strcmp(op, "recv")) {
		q = mq_open(name, O_RDONLY | O_NONBLOCK);
		if (q == (mqd_t)-1)
			return report(errno);
		n = mq_receive(q, buf, sizeof(buf), NULL);
		if (n < 0)
			return report(errno);
		printf("GOT %.*s\n", (int)n, buf);
		return 0;
	}
	if (!strcmp(op, "own")) {
		q = mq_open(name, O_CREAT | O_EXCL | O_RDWR | O_NONBLOCK, 0600, &at);
		if (q == (mqd_t)-1)
			return report(errno);
		mq_close(q);
		q = mq_open(name, O_RDWR | O_NONBLOCK);	/* reopened by name */
		if (q == (mqd_t)-1 || mq_send(q, "mine", 4, 0) ||
		    mq_receive(q, buf, sizeof(buf), NULL) != 4)
			return report(errno);
		return report(mq_unlink(name) ? errno : 0);
	}
	return 2;
}

static int dispatch_ipc(const char *c, char **a, int n, int *handled)
{
	*handled = 1;
	if (!strcmp(c, "sysv") && n >= 1) {
		const char *op = a[0];

		if (!strcmp(op, "make") && n >= 3)
			return sysv_make((key_t)strtol(a[1], NULL, 0), a[2]);
		if (!strcmp(op, "get") && n >= 3)
			return sysv_get(a[1], (key_t)strtol(a[2], NULL, 0));
		if (!strcmp(op, "rm") && n >= 3)
			return sysv_rm(a[1], atoi(a[2]));
		if (!strcmp(op, "stat") && n >= 3)
			return sysv_stat(a[1], atoi(a[2]));
		if (!strcmp(op, "send") && n >= 3)
			return sysv_send(atoi(a[1]), a[2]);
		if (!strcmp(op, "recv") && n >= 2)
			return sysv_recv(atoi(a[1]));
		if (!strcmp(op, "shmread") && n >= 2)
			return sysv_shmread(atoi(a[1]));
		if (!strcmp(op, "semop") && n >= 2)
			return sysv_semop(atoi(a[1]));
		if (!strcmp(op, "semval") && n >= 2)
			return sysv_semval(atoi(a[1]));
		if (!strcmp(op, "own"))
			return sysv_own();
	}
	if (!strcmp(c, "mq") && n >= 2)
		return mq_cmd(a[0], a[1], n > 2 ? a[2] : "");
	*handled = 0;
	return 0;
}

static int usage(void);

/*
 * as-user UID NAME HOME SHELL CMD...: CMD as the suite's test user, as
 * `setpriv --reuid=UID --regid=UID --init-groups --reset-env` runs it (its
 * one group, its own; TERM kept, HOME, USER, LOGNAME, SHELL and PATH set),
 * without the passwd and group lookups through NSS that cost setpriv a
 * tenth of a second per call under TCG. The kernel drops root's
 * capabilities at the uid change, as for setpriv.
 */
static int as_user(char **a, int n)
{
	uid_t uid = (uid_t)strtoul(a[0], NULL, 10);
	gid_t gid = (gid_t)uid;
	const char *term = getenv("TERM");
	char *env[7] = { 0 };
	int k = 0;

	if (n < 5 || !uid)
		return usage();
	if (setgroups(1, &gid) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)) {
		perror("sbxtest as-user");
		return 126;
	}
	if (asprintf(&env[k++], "HOME=%s", a[2]) < 0 || asprintf(&env[k++], "USER=%s", a[1]) < 0 ||
	    asprintf(&env[k++], "LOGNAME=%s", a[1]) < 0 ||
	    asprintf(&env[k++], "SHELL=%s", a[3]) < 0 ||
	    (term && asprintf(&env[k++], "TERM=%s", term) < 0))
		return 126;
	env[k++] = "PATH=/usr/local/bin:/bin:/usr/bin";
	execvpe(a[4], a + 4, env);
	perror(a[4]);
	return 127;
}

/*
 * no-statx CMD...: CMD with statx(2) refused (EPERM), as the seccomp
 * profiles of older container runtimes refuse it: glibc emulates statx
 * only on ENOSYS, so a caller that does not fall back sees the error.
 * Exits 3 when the filter is not in force (the test would prove nothing).
 */
static int no_statx(char **a, int n)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_statx, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct statx sx;

	if (n < 1)
		return usage();
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("sbxtest no-statx");
		return 126;
	}
	if (statx(AT_FDCWD, "/", 0, STATX_BASIC_STATS, &sx) != -1 || errno != EPERM)
		return 3;
	execvp(a[0], a);
	perror(a[0]);
	return 127;
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
	{
		int handled, rc = dispatch_redteam(c, a, n, &handled);

		if (handled)
			return rc;
		rc = dispatch_ipc(c, a, n, &handled);
		if (handled)
			return rc;
	}

	if (!strcmp(c, "as-user"))
		return as_user(a, n);
	if (!strcmp(c, "no-statx"))
		return no_statx(a, n);
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
	if (!strcmp(c, "udp-seq") && n >= 2)
		return do_udp_seq(a, n);
	if (!strcmp(c, "udp-race") && n == 3)
		return do_udp_race(a);
	if (!strcmp(c, "udp-first") && n == 2)
		return do_udp_first(a);
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
	if (!strcmp(c, "exchange") && n == 2)
		return report(do_exchange(a[0], a[1]));
	if (!strcmp(c, "tmpfile") && (n == 1 || n == 2))	/* tmpfile DIR [NAME] */
		return report(do_tmpfile_link(a[0], n == 2 ? a[1] : NULL));
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
	if (!strcmp(c, "events-missing") && n >= 2)
		return events_missing(a, n);
	if (!strcmp(c, "open-list") && n == 1)
		return open_list(a[0]);
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
	if (!strcmp(c, "tcflow") && n == 2) {
		/* tcflow FD off|on: stop or restart output to a terminal, as ^S
		 * and ^Q do */
		int act = !strcmp(a[1], "off") ? TCOOFF : TCOON;

		return tcflow(atoi(a[0]), act) ? report(errno) : 0;
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
	if (!strcmp(c, "reuse-loop") && n == 2) {
		/* reuse-loop DIR N: N times, a.txt is made, read twice (its
		 * verdicts cached) and deleted, then b.pem is made where the
		 * freed inode can come back, and read. Prints "DENIED d
		 * LEAKED l SAME_INO s": s counts the rounds whose b.pem took
		 * a.txt's inode number, which shows the reuse happened. */
		long k = atol(a[1]), denied = 0, leaked = 0, same = 0;
		char pa[4096], pb[4096];

		snprintf(pa, sizeof(pa), "%s/a.txt", a[0]);
		snprintf(pb, sizeof(pb), "%s/b.pem", a[0]);
		for (long i = 0; i < k; i++) {
			struct stat sa, sb;
			int fd;

			fd = open(pa, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
			if (fd < 0 || write(fd, "a\n", 2) != 2 || fstat(fd, &sa))
				return report_at("a.txt", errno);
			close(fd);
			for (int r = 0; r < 2; r++) {
				fd = open(pa, O_RDONLY | O_CLOEXEC);
				if (fd < 0)
					return report_at("read a.txt", errno);
				close(fd);
			}
			if (unlink(pa))
				return report_at("unlink a.txt", errno);
			/* a grace period, so that the inode's memory is free
			 * for the next one (destroy_inode frees it by RCU) */
			syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
			usleep(1000);
			fd = open(pb, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
			if (fd < 0 || write(fd, "KEY\n", 4) != 4 || fstat(fd, &sb))
				return report_at("b.pem", errno);
			close(fd);
			same += sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
			fd = open(pb, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				leaked++;
				close(fd);
			} else if (errno == EPERM) {
				denied++;
			}
			if (unlink(pb))
				return report_at("unlink b.pem", errno);
		}
		printf("DENIED %ld LEAKED %ld SAME_INO %ld\n", denied, leaked, same);
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
