// SPDX-License-Identifier: GPL-2.0
/*
 * sbxbench_kernel.c - the kernel side of the benchmarks (root only).
 *
 *   detach / attach   remove / restore the LSM and fexit links of the pinned
 *                     programs: "bpfsbx not loaded" without unloading,
 *                     so that it can be interleaved with the other
 *                     conditions and costs no second verification
 *   progstats         run_cnt and run_time_ns of every pinned program
 *                     (counted while kernel.bpf_stats_enabled=1)
 *   status / drain    the daemon's counters (bpfsbx status --json);
 *                     drain waits until the daemon has received every
 *                     event the kernel sent
 *   qcount            requests in a project's queue and their folded counts
 *
 * The daemon pins programs under PINS/progs/NAME and their links under
 * PINS/links/NAME. A link detaches its program when its last reference
 * goes, which for a pinned link is the pin: unlinking it detaches.
 * bpf_link_create(prog, 0, BPF_LSM_MAC) makes a new link from the loaded
 * (already verified) program.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "queue/queue.h"
#include "tools/bench/bench.h"

#define DEFAULT_PINS "/sys/fs/bpf/bpfsbx"

static const char *pins_opt(int argc, char **argv)
{
	static const struct option lo[] = { { "pins", required_argument, NULL, 'p' }, {} };
	const char *pins = DEFAULT_PINS;
	int c;

	while ((c = getopt_long(argc, argv, "p:", lo, NULL)) != -1) {
		if (c != 'p')
			return NULL;
		pins = optarg;
	}
	return optind == argc ? pins : NULL;
}

/* names of the entries of DIR (not . or ..), sorted */
static json_t *list_dir(const char *dir)
{
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort);
	json_t *a;

	if (n < 0)
		return NULL;
	a = json_array();
	for (int i = 0; i < n; i++) {
		if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, ".."))
			json_array_append_new(a, json_string(ents[i]->d_name));
		free(ents[i]);
	}
	free(ents);
	return a;
}

/*
 * Condition A takes the LSM hooks away, and the fexit programs that run
 * for every process (bpf/ports.bpf.c). The cgroup programs (DNS and the
 * loopback listener check, bpf/dns.bpf.c) stay: they cannot be attached
 * again without the sessions' cgroup, and they run only for sessions'
 * sockets anyway.
 */
static bool is_hook_prog(const char *pins, const char *name)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char p[PATH_MAX + 256];
	bool hook;
	int fd;

	snprintf(p, sizeof(p), "%s/progs/%s", pins, name);
	fd = bpf_obj_get(p);
	if (fd < 0)
		return true;	/* not knowable: treated as the hooks are */
	hook = bpf_obj_get_info_by_fd(fd, &info, &len) || info.type == BPF_PROG_TYPE_LSM ||
	       info.type == BPF_PROG_TYPE_TRACING;
	close(fd);
	return hook;
}

int cmd_detach(int argc, char **argv)
{
	const char *pins = pins_opt(argc, argv);
	char dir[PATH_MAX], p[PATH_MAX + 256];
	json_t *names, *v;
	size_t i;
	int n = 0;

	if (!pins)
		return bench_fail("usage: detach [--pins DIR]");
	snprintf(dir, sizeof(dir), "%s/links", pins);
	names = list_dir(dir);
	if (!names)
		return bench_fail("detach: %s: %s", dir, strerror(errno));
	json_array_foreach(names, i, v) {
		if (!is_hook_prog(pins, json_string_value(v)))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, json_string_value(v));
		if (unlink(p)) {
			json_decref(names);
			return bench_fail("detach: unlink %s: %s", p, strerror(errno));
		}
		n++;
	}
	json_decref(names);
	bench_emit(json_pack("{s:i}", "detached", n));
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	const char *pins = pins_opt(argc, argv);
	char pdir[PATH_MAX], ldir[PATH_MAX], p[PATH_MAX + 256];
	json_t *names, *v;
	size_t i;
	int n = 0, already = 0;

	if (!pins)
		return bench_fail("usage: attach [--pins DIR]");
	snprintf(pdir, sizeof(pdir), "%s/progs", pins);
	snprintf(ldir, sizeof(ldir), "%s/links", pins);
	names = list_dir(pdir);
	if (!names || !json_array_size(names)) {
		json_decref(names);
		return bench_fail("attach: no pinned programs under %s (a daemon that pins its "
				  "programs is needed)", pdir);
	}
	json_array_foreach(names, i, v) {
		const char *name = json_string_value(v);
		struct stat st;
		int pfd, lfd;

		snprintf(p, sizeof(p), "%s/%s", ldir, name);
		if (stat(p, &st) == 0) {
			already++;
			continue;
		}
		if (!is_hook_prog(pins, name))
			continue;	/* a cgroup program without its link: not ours to make */
		snprintf(p, sizeof(p), "%s/%s", pdir, name);
		pfd = bpf_obj_get(p);
		if (pfd < 0) {
			json_decref(names);
			return bench_fail("attach: %s: %s", p, strerror(errno));
		}
		lfd = bpf_link_create(pfd, 0, BPF_LSM_MAC, NULL);
		if (lfd < 0)	/* fexit, or the older way to attach an LSM program */
			lfd = bpf_raw_tracepoint_open(NULL, pfd);
		close(pfd);
		if (lfd < 0) {
			json_decref(names);
			return bench_fail("attach: link for %s: %s", name, strerror(errno));
		}
		snprintf(p, sizeof(p), "%s/%s", ldir, name);
		if (bpf_obj_pin(lfd, p)) {
			int e = errno;

			close(lfd);
			json_decref(names);
			return bench_fail("attach: pin %s: %s", p, strerror(e));
		}
		close(lfd);
		n++;
	}
	json_decref(names);
	bench_emit(json_pack("{s:i,s:i}", "attached", n, "already", already));
	return 0;
}

int cmd_progstats(int argc, char **argv)
{
	const char *pins = pins_opt(argc, argv);
	char pdir[PATH_MAX], p[PATH_MAX + 256];
	json_t *names, *v, *progs;
	size_t i;
	FILE *f;
	int enabled = -1;

	if (!pins)
		return bench_fail("usage: progstats [--pins DIR]");
	snprintf(pdir, sizeof(pdir), "%s/progs", pins);
	names = list_dir(pdir);
	if (!names)
		return bench_fail("progstats: %s: %s", pdir, strerror(errno));
	progs = json_object();
	json_array_foreach(names, i, v) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd;

		snprintf(p, sizeof(p), "%s/%s", pdir, json_string_value(v));
		fd = bpf_obj_get(p);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
			int e = errno;

			if (fd >= 0)
				close(fd);
			json_decref(names);
			json_decref(progs);
			return bench_fail("progstats: %s: %s", p, strerror(e));
		}
		close(fd);
		json_object_set_new(progs, json_string_value(v),
				    json_pack("{s:I,s:I}", "run_cnt", (json_int_t)info.run_cnt,
					      "run_time_ns", (json_int_t)info.run_time_ns));
	}
	json_decref(names);
	f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
	if (f) {
		if (fscanf(f, "%d", &enabled) != 1)
			enabled = -1;
		fclose(f);
	}
	bench_emit(json_pack("{s:o,s:i}", "progs", progs, "bpf_stats_enabled", enabled));
	return 0;
}

/* bpfsbx status --json, parsed */
static json_t *read_status(char **err)
{
	char cmd[PATH_MAX + 64];
	json_error_t je;
	json_t *v;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' status --json 2>/dev/null", bench_sbx());
	f = popen(cmd, "r");
	if (!f) {
		*err = strdup(strerror(errno));
		return NULL;
	}
	v = json_loadf(f, 0, &je);
	if (pclose(f) != 0 || !v) {
		json_decref(v);
		if (asprintf(err, "bpfsbx status --json failed (%s)", v ? "exit status" : je.text) < 0)
			*err = NULL;
		return NULL;
	}
	return v;
}

static json_t *status_stats(json_t *st)
{
	json_t *o = json_object();

	json_object_set(o, "stats", json_object_get(st, "stats"));
	json_object_set_new(o, "sessions", json_integer(json_array_size(json_object_get(st,
											  "sessions"))));
	return o;
}

int cmd_status(int argc, char **argv)
{
	char *err = NULL;
	json_t *st;

	(void)argc;
	(void)argv;
	st = read_status(&err);
	if (!st) {
		bench_fail("status: %s", err ? err : "?");
		free(err);
		return 1;
	}
	bench_emit(status_stats(st));
	json_decref(st);
	return 0;
}

static json_int_t stat_of(json_t *st, const char *k)
{
	return json_integer_value(json_object_get(json_object_get(st, "stats"), k));
}

/*
 * Wait until the daemon has taken every event the kernel submitted
 * (events_received == events) and the counters stay put for 100 ms, or
 * until the timeout. drain_ns counts from the call.
 */
int cmd_drain(int argc, char **argv)
{
	static const struct option lo[] = { { "timeout-ms", required_argument, NULL, 't' }, {} };
	uint64_t timeout_ms = 60000, t0 = bench_now_ns(), t_caught = 0;
	json_int_t last_recv = -1;
	json_t *st = NULL;
	bool drained = false;
	char *err = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "t:", lo, NULL)) != -1)
		if (c != 't' || !bench_parse_u64(optarg, &timeout_ms))
			return bench_fail("usage: drain [--timeout-ms MS]");
	for (;;) {
		json_decref(st);
		st = read_status(&err);
		if (!st) {
			bench_fail("drain: %s", err ? err : "?");
			free(err);
			return 1;
		}
		if (stat_of(st, "events_received") >= stat_of(st, "events")) {
			if (!t_caught)
				t_caught = bench_now_ns();
			if (stat_of(st, "events_received") == last_recv &&
			    bench_now_ns() - t_caught >= 100000000ull) {
				drained = true;
				break;
			}
		} else {
			t_caught = 0;
		}
		last_recv = stat_of(st, "events_received");
		if (bench_now_ns() - t0 > timeout_ms * 1000000ull)
			break;
		usleep(20000);
	}
	{
		json_t *o = status_stats(st);

		json_object_set_new(o, "drained", json_boolean(drained));
		json_object_set_new(o, "drain_ns", json_integer((json_int_t)((t_caught ? t_caught :
								bench_now_ns()) - t0)));
		bench_emit(o);
	}
	json_decref(st);
	return 0;
}

/* qcount --dir PROJECT: requests under pending/ and done/, and the sum of
 * their folded "count" fields */
int cmd_qcount(int argc, char **argv)
{
	static const struct option lo[] = { { "dir", required_argument, NULL, 'd' }, {} };
	const char *proj = NULL, *subs[] = { sbx_qdir_name(SBX_QDIR_PENDING),
					     sbx_qdir_name(SBX_QDIR_DONE) };
	json_t *o = json_object();
	int c;

	while ((c = getopt_long(argc, argv, "d:", lo, NULL)) != -1) {
		if (c != 'd') {
			json_decref(o);
			return bench_fail("usage: qcount --dir PROJECT");
		}
		proj = optarg;
	}
	if (!proj) {
		json_decref(o);
		return bench_fail("usage: qcount --dir PROJECT");
	}
	for (size_t s = 0; s < 2; s++) {
		char dir[PATH_MAX], p[PATH_MAX + 256];
		json_int_t reqs = 0, sum = 0;
		struct dirent *de;
		DIR *d;

		snprintf(dir, sizeof(dir), "%s/.sandbox/escalations/%s", proj, subs[s]);
		d = opendir(dir);
		if (!d) {
			json_decref(o);
			return bench_fail("qcount: %s: %s", dir, strerror(errno));
		}
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name);
			json_t *r;

			if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5, ".json"))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			r = json_load_file(p, 0, NULL);
			reqs++;
			sum += json_integer_value(json_object_get(r, "count"));
			json_decref(r);
		}
		closedir(d);
		json_object_set_new(o, subs[s], json_pack("{s:I,s:I}", "requests", reqs,
							  "count_sum", sum));
	}
	bench_emit(o);
	return 0;
}

/*
 * copyup --list FILE: in the vmtest guest, whose root is an overlay of a
 * tmpfs on the host's 9p share, give each listed file (and every symlink
 * on the way to it) a copy in the tmpfs layer, by setting its times to
 * what they are (any setattr makes overlayfs copy a file up). Opening a
 * file of the 9p layer, or following one of its symlinks (/bin, /lib,
 * /lib64 on Debian), is a round trip to the host, and under -icount the
 * guest clock jumps while the vCPU waits for it: the workload's files
 * must not live there.
 */
struct copyup_count {
	int files, links, missing;
};

static void touch_same(const char *p, const struct stat *st, int flags)
{
	struct timespec ts[2] = { st->st_atim, st->st_mtim };

	utimensat(AT_FDCWD, p, ts, flags);
}

static void copyup_path(const char *path, int depth, struct copyup_count *n)
{
	char cur[PATH_MAX] = "", rest[PATH_MAX], *save = NULL, *comp;
	struct stat st;

	if (depth > 40 || path[0] != '/') {
		n->missing++;
		return;
	}
	snprintf(rest, sizeof(rest), "%s", path);
	for (comp = strtok_r(rest, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		size_t l = strlen(cur);

		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			char *slash = strrchr(cur, '/');

			if (slash)
				*slash = 0;
			continue;
		}
		if (l + strlen(comp) + 2 >= sizeof(cur)) {
			n->missing++;
			return;
		}
		cur[l] = '/';
		strcpy(cur + l + 1, comp);
		if (lstat(cur, &st)) {
			n->missing++;
			return;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX], next[PATH_MAX * 2 + 2];
			const char *tail = save && *save ? save : "";
			ssize_t tl = readlink(cur, target, sizeof(target) - 1);

			if (tl < 0) {
				n->missing++;
				return;
			}
			target[tl] = 0;
			touch_same(cur, &st, AT_SYMLINK_NOFOLLOW);
			n->links++;
			if (target[0] == '/') {
				snprintf(next, sizeof(next), "%s/%s", target, tail);
			} else {
				char *slash = strrchr(cur, '/');

				*slash = 0;
				snprintf(next, sizeof(next), "%s/%s/%s", cur, target, tail);
			}
			copyup_path(next, depth + 1, n);
			return;
		}
	}
	if (stat(cur, &st) == 0 && S_ISREG(st.st_mode)) {
		touch_same(cur, &st, 0);
		n->files++;
	}
}

int cmd_copyup(int argc, char **argv)
{
	static const struct option lo[] = { { "list", required_argument, NULL, 'l' }, {} };
	struct copyup_count n = {};
	const char *list = NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t l;
	FILE *f;
	int c;

	while ((c = getopt_long(argc, argv, "l:", lo, NULL)) != -1) {
		if (c != 'l')
			return bench_fail("usage: copyup --list FILE");
		list = optarg;
	}
	if (!list)
		return bench_fail("usage: copyup --list FILE");
	f = fopen(list, "re");
	if (!f)
		return bench_fail("copyup: %s: %s", list, strerror(errno));
	while ((l = getline(&line, &cap, f)) > 0) {
		if (line[l - 1] == '\n')
			line[l - 1] = 0;
		if (line[0] == '/')
			copyup_path(line, 0, &n);
	}
	free(line);
	fclose(f);
	bench_emit(json_pack("{s:i,s:i,s:i}", "files", n.files, "symlinks", n.links,
			     "missing", n.missing));
	return 0;
}
