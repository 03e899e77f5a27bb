// SPDX-License-Identifier: GPL-2.0
/*
 * sbxbench_ops.c - the timed operations.
 *
 *   op NAME --iters N [--path P]   N iterations of one operation
 *   calibrate NAME --target-ns T   how many iterations take T ns here
 *   spawn [--iters N] -- CMD...    N runs of a command, one after another; ns
 *                                  is guest time, cpu_ns the CPU time of the
 *                                  runs (their instructions, under -icount)
 *   gen --path P --rate R --count N  paced opens (denial events per second)
 *
 * Operations: getppid, open and stat (--path), the same on the guest's
 * ext4 image and on a tmpfs (open_ext4, stat_ext4, open_tmpfs,
 * stat_tmpfs: their own names, so that each is a row; --path says where),
 * exec, tcp and udp over loopback, tcp_send (64 bytes on a connected TCP
 * socket: every write to a socket), udp_recv (recvfrom with the sender's
 * address, from a connected sender), tcp_to (--path ADDR: a listener of its
 * own on ADDR, which must be on lo), and dns (--path SERVER,PORT,NAME: an
 * A query over UDP and its answer, built and read by ldns).
 *
 * Each loop is timed as a whole with CLOCK_MONOTONIC; set-up (the
 * loopback listener, the receiving socket) is outside the timed region.
 * Every iteration checks its result: an operation that fails is a failed
 * cell, never a fast one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <ldns/ldns.h>
#include "tools/bench/bench.h"

extern char **environ;

struct op_ctx {
	const char *path;
	int lfd;			/* tcp: listener */
	int sfd, rfd;			/* udp: sender, receiver; dns: the socket */
	struct sockaddr_in addr;	/* where to connect / send */
	uint8_t *query;			/* dns: the question, on the wire */
	size_t qlen;
};

static int op_getppid(struct op_ctx *c, uint64_t n)
{
	(void)c;
	for (uint64_t i = 0; i < n; i++)
		syscall(SYS_getppid);
	return 0;
}

static int op_open(struct op_ctx *c, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		int fd = open(c->path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return -errno;
		close(fd);
	}
	return 0;
}

static int op_stat(struct op_ctx *c, uint64_t n)
{
	struct stat st;

	for (uint64_t i = 0; i < n; i++)
		if (stat(c->path, &st))
			return -errno;
	return 0;
}

static int op_exec(struct op_ctx *c, uint64_t n)
{
	char *const argv[] = { (char *)c->path, NULL };

	for (uint64_t i = 0; i < n; i++) {
		int st;
		pid_t pid = fork();

		if (pid < 0)
			return -errno;
		if (pid == 0) {
			execve(c->path, argv, environ);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) < 0)
			return -errno;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			return -ECHILD;
	}
	return 0;
}

static int tcp_listen_on(struct op_ctx *c, in_addr_t addr)
{
	socklen_t l = sizeof(c->addr);
	int one = 1;

	c->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->lfd < 0)
		return -errno;
	setsockopt(c->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	c->addr.sin_family = AF_INET;
	c->addr.sin_addr.s_addr = addr;
	/* tcp_to: the port the policy's rules name; tcp: any */
	c->addr.sin_port = addr == htonl(INADDR_LOOPBACK) ? 0 : htons(8080);
	if (bind(c->lfd, (struct sockaddr *)&c->addr, sizeof(c->addr)) ||
	    listen(c->lfd, 128) || getsockname(c->lfd, (struct sockaddr *)&c->addr, &l))
		return -errno;
	return 0;
}

static int tcp_setup(struct op_ctx *c)
{
	return tcp_listen_on(c, htonl(INADDR_LOOPBACK));
}

/* tcp_to --path ADDR: the same as tcp, to a listener on ADDR:8080 */
static int tcp_to_setup(struct op_ctx *c)
{
	struct in_addr a;

	if (!c->path || inet_pton(AF_INET, c->path, &a) != 1)
		return -EINVAL;
	return tcp_listen_on(c, a.s_addr);
}

/*
 * One connection: socket, connect (the handshake completes in the kernel
 * over loopback), accept, and an abortive close of both ends (linger 0),
 * so that no TIME_WAIT sockets pile up and exhaust the ephemeral ports.
 */
static int op_tcp(struct op_ctx *c, uint64_t n)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	for (uint64_t i = 0; i < n; i++) {
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), a;

		if (s < 0)
			return -errno;
		if (connect(s, (struct sockaddr *)&c->addr, sizeof(c->addr))) {
			int e = errno;

			close(s);
			return -e;
		}
		a = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (a < 0) {
			int e = errno;

			close(s);
			return -e;
		}
		setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		setsockopt(a, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(s);
		close(a);
	}
	return 0;
}

static int udp_setup(struct op_ctx *c)
{
	socklen_t l = sizeof(c->addr);

	c->rfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	c->sfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (c->rfd < 0 || c->sfd < 0)
		return -errno;
	c->addr.sin_family = AF_INET;
	c->addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->addr.sin_port = 0;
	if (bind(c->rfd, (struct sockaddr *)&c->addr, sizeof(c->addr)) ||
	    getsockname(c->rfd, (struct sockaddr *)&c->addr, &l))
		return -errno;
	return 0;
}

/* sendto on an unconnected socket (the destination is checked on every
 * datagram); the receiver is drained every 32 datagrams so that its
 * buffer never fills and drops */
static int op_udp(struct op_ctx *c, uint64_t n)
{
	char buf[64] = "sbxbench";

	for (uint64_t i = 0; i < n; i++) {
		if (sendto(c->sfd, buf, 16, 0, (struct sockaddr *)&c->addr, sizeof(c->addr)) != 16)
			return -errno;
		if ((i & 31) == 31 || i + 1 == n)
			while (recv(c->rfd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
				;
	}
	return 0;
}

/* a connected pair over loopback: sfd sends, rfd receives */
static int tcp_send_setup(struct op_ctx *c)
{
	int rc = tcp_setup(c);

	if (rc)
		return rc;
	c->sfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->sfd < 0 || connect(c->sfd, (struct sockaddr *)&c->addr, sizeof(c->addr)))
		return -errno;
	c->rfd = accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
	return c->rfd < 0 ? -errno : 0;
}

/* send(64 B) on the connected socket; the receiver drains every 32 */
static int op_tcp_send(struct op_ctx *c, uint64_t n)
{
	char buf[4096] = "sbxbench";

	for (uint64_t i = 0; i < n; i++) {
		if (send(c->sfd, buf, 64, 0) != 64)
			return -errno;
		if ((i & 31) == 31 || i + 1 == n)
			while (recv(c->rfd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
				;
	}
	return 0;
}

/* the udp pair with the sender connected: its sends run no sock_addr
 * program, so the receiver's recvfrom (which asks for the address) is
 * what changes */
static int udp_recv_setup(struct op_ctx *c)
{
	int rc = udp_setup(c);

	if (rc)
		return rc;
	return connect(c->sfd, (struct sockaddr *)&c->addr, sizeof(c->addr)) ? -errno : 0;
}

static int op_udp_recv(struct op_ctx *c, uint64_t n)
{
	char buf[64] = "sbxbench";

	for (uint64_t i = 0; i < n; i++) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);

		if (send(c->sfd, buf, 16, 0) != 16)
			return -errno;
		if (recvfrom(c->rfd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl) != 16)
			return -errno;
	}
	return 0;
}

/* dns --path SERVER,PORT,NAME: the query is built once; each iteration
 * sends it and reads the answer, which must be NOERROR with an answer */
static int dns_setup(struct op_ctx *c)
{
	char spec[300], *port, *name;
	ldns_rdf *dn;
	ldns_pkt *q;
	struct timeval tv = { .tv_sec = 5 };

	if (!c->path || snprintf(spec, sizeof(spec), "%s", c->path) >= (int)sizeof(spec))
		return -EINVAL;
	port = strchr(spec, ',');
	name = port ? strchr(port + 1, ',') : NULL;
	if (!name)
		return -EINVAL;
	*port++ = 0;
	*name++ = 0;
	c->addr.sin_family = AF_INET;
	c->addr.sin_port = htons((uint16_t)atoi(port));
	if (inet_pton(AF_INET, spec, &c->addr.sin_addr) != 1)
		return -EINVAL;
	dn = ldns_dname_new_frm_str(name);
	q = dn ? ldns_pkt_query_new(dn, LDNS_RR_TYPE_A, LDNS_RR_CLASS_IN, LDNS_RD) : NULL;
	if (!q || ldns_pkt2wire(&c->query, q, &c->qlen) != LDNS_STATUS_OK) {
		ldns_pkt_free(q);
		return -EINVAL;
	}
	ldns_pkt_free(q);
	c->sfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (c->sfd < 0)
		return -errno;
	setsockopt(c->sfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return 0;
}

static int op_dns(struct op_ctx *c, uint64_t n)
{
	uint8_t buf[4096];

	for (uint64_t i = 0; i < n; i++) {
		ldns_pkt *a = NULL;
		ssize_t r;
		int ok;

		/* a new id each time: the daemon must not take one for a retry */
		c->query[0] = (uint8_t)(i >> 8);
		c->query[1] = (uint8_t)i;
		if (sendto(c->sfd, c->query, c->qlen, 0, (struct sockaddr *)&c->addr,
			   sizeof(c->addr)) != (ssize_t)c->qlen)
			return -errno;
		r = recv(c->sfd, buf, sizeof(buf), 0);
		if (r < 0)
			return -errno;
		ok = ldns_wire2pkt(&a, buf, (size_t)r) == LDNS_STATUS_OK &&
		     ldns_pkt_id(a) == (uint16_t)i && ldns_pkt_get_rcode(a) == LDNS_RCODE_NOERROR &&
		     ldns_pkt_ancount(a) > 0;
		ldns_pkt_free(a);
		if (!ok)
			return -EPROTO;
	}
	return 0;
}

struct op_def {
	const char *name;
	int (*setup)(struct op_ctx *c);
	int (*run)(struct op_ctx *c, uint64_t n);
	const char *default_path;
};

static const struct op_def ops[] = {
	{ "getppid", NULL, op_getppid, NULL },
	{ "open", NULL, op_open, NULL },
	{ "stat", NULL, op_stat, NULL },
	{ "open_ext4", NULL, op_open, NULL },
	{ "stat_ext4", NULL, op_stat, NULL },
	{ "open_tmpfs", NULL, op_open, NULL },
	{ "stat_tmpfs", NULL, op_stat, NULL },
	{ "exec", NULL, op_exec, "/bin/true" },
	{ "tcp", tcp_setup, op_tcp, NULL },
	{ "udp", udp_setup, op_udp, NULL },
	{ "tcp_send", tcp_send_setup, op_tcp_send, NULL },
	{ "udp_recv", udp_recv_setup, op_udp_recv, NULL },
	{ "tcp_to", tcp_to_setup, op_tcp, NULL },
	{ "dns", dns_setup, op_dns, NULL },
};

static const struct op_def *op_find(const char *name)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(ops[i].name, name))
			return &ops[i];
	return NULL;
}

static void op_close(struct op_ctx *c)
{
	if (c->lfd >= 0)
		close(c->lfd);
	if (c->sfd >= 0)
		close(c->sfd);
	if (c->rfd >= 0)
		close(c->rfd);
	free(c->query);
}

/* Run n iterations; *ns is the time of the loop alone. */
static int op_timed(const struct op_def *d, const char *path, uint64_t n, uint64_t *ns)
{
	struct op_ctx c = { .path = path ? path : d->default_path, .lfd = -1, .sfd = -1,
			    .rfd = -1 };
	uint64_t t0;
	int rc;

	if (!c.path && (d->run == op_open || d->run == op_stat))
		return -EINVAL;
	rc = d->setup ? d->setup(&c) : 0;
	if (!rc) {
		t0 = bench_now_ns();
		rc = d->run(&c, n);
		*ns = bench_now_ns() - t0;
	}
	op_close(&c);
	return rc;
}

static int parse_common(int argc, char **argv, const char **path, uint64_t *num,
			const char *numopt)
{
	static const struct option lo[] = {
		{ "path", required_argument, NULL, 'p' },
		{ "iters", required_argument, NULL, 'n' },
		{ "target-ns", required_argument, NULL, 't' },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "p:n:t:", lo, NULL)) != -1) {
		if (c == 'p')
			*path = optarg;
		else if ((c == 'n' && !strcmp(numopt, "iters")) ||
			 (c == 't' && !strcmp(numopt, "target-ns"))) {
			if (!bench_parse_u64(optarg, num) || !*num)
				return -1;
		} else
			return -1;
	}
	return optind == argc - 1 ? optind : -1;
}

int cmd_op(int argc, char **argv)
{
	const char *path = NULL;
	const struct op_def *d;
	uint64_t n = 0, ns = 0;
	int i = parse_common(argc, argv, &path, &n, "iters"), rc;

	if (i < 0 || !n)
		return bench_fail("usage: op NAME --iters N [--path P]");
	d = op_find(argv[i]);
	if (!d)
		return bench_fail("unknown operation '%s'", argv[i]);
	rc = op_timed(d, path, n, &ns);
	if (rc)
		return bench_fail("op %s (%s): %s", d->name, path ? path : "-", strerror(-rc));
	bench_emit(json_pack("{s:s,s:I,s:I,s:f}", "op", d->name, "iters", (json_int_t)n,
			     "ns", (json_int_t)ns, "ns_per_op", (double)ns / (double)n));
	return 0;
}

/*
 * How many iterations fill target_ns: grow a trial run by 4x until it
 * takes a twentieth of the target, then scale. Done once per operation
 * before the repetitions, so that every condition runs the same count.
 */
int cmd_calibrate(int argc, char **argv)
{
	const char *path = NULL;
	const struct op_def *d;
	uint64_t target = 0, n = 4, ns = 0, iters;
	int i = parse_common(argc, argv, &path, &target, "target-ns"), rc;

	if (i < 0 || !target)
		return bench_fail("usage: calibrate NAME --target-ns NS [--path P]");
	d = op_find(argv[i]);
	if (!d)
		return bench_fail("unknown operation '%s'", argv[i]);
	for (;;) {
		rc = op_timed(d, path, n, &ns);
		if (rc)
			return bench_fail("calibrate %s: %s", d->name, strerror(-rc));
		if (ns >= target / 20 || n >= (1ull << 32))
			break;
		n *= 4;
	}
	iters = (uint64_t)((double)n * (double)target / (double)(ns ? ns : 1));
	if (iters < 1)
		iters = 1;
	bench_emit(json_pack("{s:s,s:I,s:I,s:I}", "op", d->name, "iters", (json_int_t)iters,
			     "trial_iters", (json_int_t)n, "trial_ns", (json_int_t)ns));
	return 0;
}

/* spawn: like hyperfine without the statistics: N runs in a row */
int cmd_spawn(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "iters", required_argument, NULL, 'n' },
		{ "quiet", no_argument, NULL, 'q' },
		{}
	};
	uint64_t n = 1, t0, ns, cpu_ns = 0;
	bool quiet = false;
	int c;

	while ((c = getopt_long(argc, argv, "+n:q", lo, NULL)) != -1) {
		if (c == 'n' && bench_parse_u64(optarg, &n) && n)
			continue;
		if (c == 'q') {
			quiet = true;
			continue;
		}
		return bench_fail("usage: spawn [--iters N] [--quiet] -- CMD ARGS...");
	}
	if (optind >= argc)
		return bench_fail("spawn: no command");
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		int st = bench_run(argv + optind, quiet, &cpu_ns);

		if (st < 0)
			return bench_fail("spawn %s: %s", argv[optind], strerror(-st));
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			return bench_fail("spawn %s: run %llu of %llu exited with %s %d", argv[optind],
					  (unsigned long long)i + 1, (unsigned long long)n,
					  WIFEXITED(st) ? "status" : "signal",
					  WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	ns = bench_now_ns() - t0;
	bench_emit(json_pack("{s:s,s:I,s:I,s:f,s:I}", "cmd", argv[optind], "iters", (json_int_t)n,
			     "ns", (json_int_t)ns, "ns_per_op", (double)ns / (double)n,
			     "cpu_ns", (json_int_t)cpu_ns));
	return 0;
}

/*
 * gen: opens of one path at a fixed offered rate, in guest time: open k
 * is due at t0 + k/rate; the loop sleeps only when it is more than 200 us
 * ahead, so that high rates are not limited by the timer. Counts what the
 * kernel answered; the caller reads the kernel's and the daemon's counters
 * before and after.
 */
int cmd_gen(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "path", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },
		{ "count", required_argument, NULL, 'n' },
		{}
	};
	const char *path = NULL;
	uint64_t rate = 0, n = 0, t0, ns, ok = 0, eperm = 0, other = 0, late = 0;
	int c;

	while ((c = getopt_long(argc, argv, "p:r:n:", lo, NULL)) != -1) {
		if (c == 'p')
			path = optarg;
		else if (c == 'r' && bench_parse_u64(optarg, &rate) && rate)
			;
		else if (c == 'n' && bench_parse_u64(optarg, &n) && n)
			;
		else
			return bench_fail("usage: gen --path P --rate PER_S --count N");
	}
	if (!path || !rate || !n)
		return bench_fail("usage: gen --path P --rate PER_S --count N");
	t0 = bench_now_ns();
	for (uint64_t k = 0; k < n; k++) {
		uint64_t due = t0 + (uint64_t)((double)k * 1e9 / (double)rate), now = bench_now_ns();
		int fd;

		if (due > now + 200000) {
			struct timespec ts = { .tv_sec = due / 1000000000ull,
					       .tv_nsec = due % 1000000000ull };

			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
		} else if (now > due + 1000000) {
			late++;		/* more than 1 ms behind schedule */
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ok++;
			close(fd);
		} else if (errno == EPERM || errno == EACCES) {
			eperm++;
		} else {
			other++;
		}
	}
	ns = bench_now_ns() - t0;
	bench_emit(json_pack("{s:s,s:I,s:I,s:I,s:f,s:I,s:I,s:I,s:I}", "path", path,
			     "rate_offered", (json_int_t)rate, "count", (json_int_t)n,
			     "ns", (json_int_t)ns, "rate_achieved", (double)n * 1e9 / (double)ns,
			     "denied", (json_int_t)eperm, "allowed", (json_int_t)ok,
			     "other_errors", (json_int_t)other, "late", (json_int_t)late));
	return 0;
}
