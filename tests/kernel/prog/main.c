// SPDX-License-Identifier: GPL-2.0
/*
 * main.c - the per-program test runner: `prog-tests [-t NAME]...` runs
 * every test (or those named), one ok/FAIL line each, as the suites do.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "prog_tests.h"

#define PT_CGROOT "/sys/fs/cgroup/sbx-prog-tests"

extern const struct pt_test __start_pt_tests[], __stop_pt_tests[];

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* the verifier's log only when a load fails, which pt_setup says */
	return level == LIBBPF_WARN && getenv("PT_VERBOSE") ? vfprintf(stderr, fmt, ap) : 0;
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct pt *t = ctx;

	if (len >= sizeof(struct sbx_event) && t->nev < (int)(sizeof(t->ev) / sizeof(t->ev[0])))
		memcpy(&t->ev[t->nev++], data, sizeof(struct sbx_event));
	return 0;
}

uint32_t pt_kdev(uint64_t st_dev)
{
	return (uint32_t)(major(st_dev) << 20 | minor(st_dev));	/* the kernel's s_dev */
}

int pt_setup(struct pt *t, const char *prog, const struct sbx_policy_hdr *pol)
{
	struct bpf_program *p;
	struct stat st;
	bool found = false, cgroup_prog = false;
	int err;

	memset(t, 0, sizeof(*t));
	t->prog = prog;
	t->skel = sbx_bpf__open();
	if (!t->skel) {
		printf("FAIL: %s: opening the object: %s\n", prog, strerror(errno));
		return -1;
	}
	/* the daemon's: sessions are <cgroup2>/<dir>/<session> */
	t->skel->rodata->sbx_session_level = 2;
	bpf_object__for_each_program(p, t->skel->obj) {
		bool it = !strcmp(bpf_program__name(p), prog);

		bpf_program__set_autoload(p, it);
		found |= it;
	}
	if (!found) {
		printf("FAIL: %s: no such program in the object\n", prog);
		return -1;
	}
	bpf_map__set_max_entries(t->skel->maps.sbx_events, 1 << 20);
	err = sbx_bpf__load(t->skel);
	if (err) {
		printf("FAIL: %s: load: %s (PT_VERBOSE=1 for the verifier's log)\n", prog,
		       strerror(-err));
		return -1;
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.sbx_events), on_event, t, NULL);
	if (!t->rb) {
		printf("FAIL: %s: ring buffer: %s\n", prog, strerror(errno));
		return -1;
	}
	if (mkdir(PT_CGROOT, 0755) && errno != EEXIST) {
		printf("FAIL: %s: mkdir %s: %s\n", prog, PT_CGROOT, strerror(errno));
		return -1;
	}
	snprintf(t->cg, sizeof(t->cg), PT_CGROOT "/%d", (int)getpid());
	if ((mkdir(t->cg, 0755) && errno != EEXIST) || stat(t->cg, &st)) {
		printf("FAIL: %s: cgroup %s: %s\n", prog, t->cg, strerror(errno));
		return -1;
	}
	t->cgid = st.st_ino;	/* a cgroup2 directory's inode is its id */
	/* a cgroup program on the session's cgroup, as the daemon's are on
	 * the sessions' root; the others where their section says */
	p = bpf_object__find_program_by_name(t->skel->obj, prog);
	switch (bpf_program__type(p)) {
	case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
	case BPF_PROG_TYPE_CGROUP_SOCK:
	case BPF_PROG_TYPE_CGROUP_SKB:
		cgroup_prog = true;
		break;
	default:
		break;
	}
	if (cgroup_prog) {
		int cfd = open(t->cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		t->link = cfd < 0 ? NULL : bpf_program__attach_cgroup(p, cfd);
		if (cfd >= 0)
			close(cfd);
	} else {
		t->link = bpf_program__attach(p);
	}
	if (!t->link) {
		printf("FAIL: %s: attach: %s\n", prog, strerror(errno));
		return -1;
	}
	t->sess.pol = *pol;
	t->sess.uid = getuid();
	t->sess.serial = 4242;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.sbx_sessions), &t->cgid, &t->sess,
				BPF_ANY)) {
		printf("FAIL: %s: session entry: %s\n", prog, strerror(errno));
		return -1;
	}
	return 0;
}

void pt_teardown(struct pt *t)
{
	ring_buffer__free(t->rb);
	bpf_link__destroy(t->link);
	sbx_bpf__destroy(t->skel);
	if (t->cg[0])
		rmdir(t->cg);
	rmdir(PT_CGROOT);
}

int pt_in_session(struct pt *t, int (*fn)(void *), void *arg)
{
	char procs[160];
	pid_t pid;
	int st, fd;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", t->cg);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fd = open(procs, O_WRONLY);
		if (fd < 0 || write(fd, "0", 1) != 1)
			_exit(255);
		close(fd);
		_exit(fn(arg) & 0xff);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) == 255)
		return -1;
	return WEXITSTATUS(st);
}

int pt_socket_in_session(struct pt *t, int domain, int type)
{
	char procs[160], back[PATH_MAX + 32], line[PATH_MAX];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int fd = -1, pfd;

	/* "0::/path": the cgroup this process returns to */
	if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "0::", 3)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	line[strcspn(line, "\n")] = 0;
	snprintf(back, sizeof(back), "/sys/fs/cgroup%s/cgroup.procs", line + 3);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", t->cg);
	pfd = open(procs, O_WRONLY | O_CLOEXEC);
	if (pfd < 0 || write(pfd, "0", 1) != 1)
		goto out;
	fd = socket(domain, type | SOCK_CLOEXEC, 0);
out:
	if (pfd >= 0)
		close(pfd);
	pfd = open(back, O_WRONLY | O_CLOEXEC);
	if (pfd < 0 || write(pfd, "0", 1) != 1) {
		/* a test left in the session would judge everything after it */
		printf("FAIL: %s: leaving the session's cgroup: %s\n", t->prog, strerror(errno));
		exit(1);
	}
	close(pfd);
	return fd;
}

int pt_events(struct pt *t)
{
	t->nev = 0;
	ring_buffer__consume(t->rb);
	return t->nev;
}

uint64_t pt_stat(struct pt *t, uint32_t idx)
{
	int n = libbpf_num_possible_cpus();
	uint64_t v[n > 0 ? n : 1], sum = 0;

	if (n <= 0 || bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.sbx_stats), &idx, v))
		return ~0ull;
	for (int i = 0; i < n; i++)
		sum += v[i];
	return sum;
}

int pt_inode_rule(struct pt *t, const char *path, int acc, uint8_t verdict, uint32_t id,
		  bool pinned)
{
	struct sbx_inode_key k = { .policy_id = t->sess.pol.policy_id };
	struct sbx_file_rule r = { .pinned = pinned };
	struct stat st;

	if (stat(path, &st))
		return -1;
	k.dev = pt_kdev(st.st_dev);
	k.ino = st.st_ino;
	if (verdict) {
		r.verdict[acc] = verdict;
		r.rule_id[acc] = id;
	}
	return bpf_map_update_elem(bpf_map__fd(t->skel->maps.sbx_inode_rules), &k, &r, BPF_ANY);
}

uint64_t pt_epoch(struct pt *t, uint32_t idx)
{
	uint64_t v = ~0ull;

	bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.sbx_epoch), &idx, &v);
	return v;
}

void pt_epoch_bump(struct pt *t, uint32_t idx)
{
	uint64_t v = pt_epoch(t, idx) + 1;

	bpf_map_update_elem(bpf_map__fd(t->skel->maps.sbx_epoch), &idx, &v, BPF_ANY);
}

static bool wanted(const char *name, int argc, char **argv)
{
	bool any = false;

	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "-t"))
			continue;
		any = true;
		if (!strcmp(argv[++i], name))
			return true;
	}
	return !any;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: prog-tests [-t NAME]...\n");
		for (const struct pt_test *t = __start_pt_tests; t < __stop_pt_tests; t++)
			printf("  %s\n", t->name);
		return 0;
	}
	libbpf_set_print(libbpf_quiet);
	for (const struct pt_test *t = __start_pt_tests; t < __stop_pt_tests; t++) {
		if (!wanted(t->name, argc, argv))
			continue;
		if (t->fn() == 0) {
			printf("ok prog.%s\n", t->name);
			passed++;
		} else {
			printf("FAIL prog.%s\n", t->name);
			failed++;
		}
		fflush(stdout);
	}
	printf("# prog-tests: %d passed, %d failed\n", passed, failed);
	return failed || !passed ? 1 : 0;
}
