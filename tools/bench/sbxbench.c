// SPDX-License-Identifier: GPL-2.0
/*
 * sbxbench - the benchmark helper of tools/bench (see bench.h).
 *
 *   sbxbench [-k KEY=VALUE]... COMMAND ARGS...
 *
 * -k adds a label to the command's JSON line (section, condition,
 * repetition: the guest script's bookkeeping travels with the numbers).
 * `sbxbench worker` reads one command per line on stdin and answers one
 * JSON line each: the guest script starts workers inside sessions (or
 * under Landlock) once, then sends them the cells of every repetition,
 * so that no session start is ever inside a timed region.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "tools/bench/bench.h"

static json_t *labels;		/* -k KEY=VALUE of the current command */
static int emitted;		/* lines printed by the current command */

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool bench_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

json_t *bench_scalar(const char *s)
{
	uint64_t v;

	if (bench_parse_u64(s, &v) && v <= (uint64_t)INT64_MAX)
		return json_integer((json_int_t)v);
	return json_string(s);
}

void bench_emit(json_t *o)
{
	char *txt;

	if (labels)
		json_object_update_missing(o, labels);
	txt = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(o);
	if (!txt)
		txt = strdup("{\"error\":\"could not encode the result\"}");
	printf("%s\n", txt ? txt : "{}");
	fflush(stdout);
	free(txt);
	emitted++;
}

int bench_fail(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	bench_emit(json_pack("{s:s}", "error", buf));
	return 1;
}

json_t *bench_load(const char *path, char **err)
{
	json_error_t je;
	json_t *v = json_load_file(path, JSON_DISABLE_EOF_CHECK, &je);

	if (!v && err) {
		if (asprintf(err, "%s:%d: %s", path, je.line, je.text) < 0)
			*err = NULL;
	}
	return v;
}

const char *bench_sbx(void)
{
	static char path[PATH_MAX + 16];
	const char *env = getenv("BENCH_SBX");
	char self[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return env;
	if (path[0])
		return path;
	/* build/bench/sbxbench -> build/bpfsbx */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(path, sizeof(path), "%s/../bpfsbx", self);
			return path;
		}
	}
	return "bpfsbx";
}

int bench_run(char *const argv[], bool quiet, uint64_t *cpu_ns)
{
	struct rusage ru;
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			if (quiet)
				dup2(nul, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	while (wait4(pid, &st, 0, &ru) < 0)
		if (errno != EINTR)
			return -errno;
	/* the kernel scales utime + stime to the exact runtime of the child
	 * and of the children it waited for (cputime_adjust) */
	*cpu_ns += ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
		   ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
	return st;
}

/* combine NAME=FILE...: one object holding each file's JSON under NAME */
static int cmd_combine(int argc, char **argv)
{
	json_t *o = json_object();

	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '='), *err = NULL;
		json_t *v;

		if (!eq || eq == argv[i]) {
			json_decref(o);
			return bench_fail("combine: expected NAME=FILE, got '%s'", argv[i]);
		}
		*eq = 0;
		v = bench_load(eq + 1, &err);
		if (!v) {
			json_decref(o);
			bench_fail("combine: %s", err ? err : eq + 1);
			free(err);
			return 1;
		}
		json_object_set_new(o, argv[i], v);
	}
	bench_emit(o);
	return 0;
}

/* get FILE KEY[.KEY...]: print one value of a JSON file, as text (for sh) */
static int cmd_get(int argc, char **argv)
{
	char *err = NULL, *save = NULL, *path;
	json_t *root, *v;

	if (argc != 3)
		return bench_fail("usage: get FILE KEY[.KEY...]");
	root = bench_load(argv[1], &err);
	if (!root) {
		bench_fail("get: %s", err ? err : argv[1]);
		free(err);
		return 1;
	}
	v = root;
	path = strdup(argv[2]);
	for (char *k = strtok_r(path, ".", &save); k && v; k = strtok_r(NULL, ".", &save))
		v = json_object_get(v, k);
	free(path);
	if (!v) {
		json_decref(root);
		return 1;
	}
	if (json_is_string(v))
		printf("%s\n", json_string_value(v));
	else if (json_is_integer(v))
		printf("%lld\n", (long long)json_integer_value(v));
	else {
		char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		printf("%s\n", t ? t : "");
		free(t);
	}
	json_decref(root);
	return 0;
}

/* error MESSAGE: a failed cell, recorded by the script that ran it */
static int cmd_error(int argc, char **argv)
{
	return bench_fail("%s", argc > 1 ? argv[1] : "unknown error");
}

static int cmd_worker(int argc, char **argv);

static const struct bench_cmd cmds[] = {
	{ "op", cmd_op, "op NAME --iters N [--path P] (sbxbench_ops.c lists the names)" },
	{ "calibrate", cmd_calibrate, "calibrate OP --target-ns NS [--path P]" },
	{ "spawn", cmd_spawn, "spawn [--iters N] [--quiet] -- CMD ARGS..." },
	{ "gen", cmd_gen, "gen --path P --rate PER_S --count N" },
	{ "attach", cmd_attach, "attach [--pins DIR]" },
	{ "detach", cmd_detach, "detach [--pins DIR]" },
	{ "progstats", cmd_progstats, "progstats [--pins DIR]" },
	{ "status", cmd_status, "status" },
	{ "drain", cmd_drain, "drain [--timeout-ms MS]" },
	{ "qcount", cmd_qcount, "qcount --dir PROJECT" },
	{ "copyup", cmd_copyup, "copyup --list FILE (guest: files into the overlay's tmpfs layer)" },
	{ "agent", cmd_agent, "agent --dir PROJECT --files DIR --count N" },
	{ "approver", cmd_approver, "approver --dir PROJECT --count N" },
	{ "join", cmd_join, "join AGENT.json APPROVER.json" },
	{ "gen-policy", cmd_gen_policy, "gen-policy --rules N --existing LIST --out FILE" },
	{ "gen-cproject", cmd_gen_cproject, "gen-cproject --dir DIR --files N" },
	{ "report", cmd_report, "report --raw RAW.jsonl --meta META.json [--md F] [--json F] [--check]" },
	{ "combine", cmd_combine, "combine NAME=FILE..." },
	{ "get", cmd_get, "get FILE KEY[.KEY...]" },
	{ "error", cmd_error, "error MESSAGE" },
	{ "worker", cmd_worker, "worker (commands on stdin, one per line)" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: sbxbench [-k KEY=VALUE]... COMMAND ARGS...\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %s\n", cmds[i].usage);
}

/* Parse the -k labels, then run the command; always one line of output. */
static int dispatch(int argc, char **argv)
{
	int i = 0, rc;

	json_decref(labels);
	labels = json_object();
	emitted = 0;
	while (i < argc && !strcmp(argv[i], "-k") && i + 1 < argc) {
		char *eq = strchr(argv[i + 1], '=');

		if (!eq || eq == argv[i + 1])
			return bench_fail("-k takes KEY=VALUE, got '%s'", argv[i + 1]);
		*eq = 0;
		json_object_set_new(labels, argv[i + 1], bench_scalar(eq + 1));
		i += 2;
	}
	if (i >= argc)
		return bench_fail("no command (sbxbench --help)");
	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		if (strcmp(cmds[c].name, argv[i]))
			continue;
		optind = 0;	/* glibc: full getopt reset between commands */
		rc = cmds[c].fn(argc - i, argv + i);
		if (!emitted && strcmp(cmds[c].name, "get") && strcmp(cmds[c].name, "worker") &&
		    strcmp(cmds[c].name, "report"))
			bench_fail("%s printed no result", argv[i]);
		return rc;
	}
	return bench_fail("unknown command '%s'", argv[i]);
}

static int cmd_worker(int argc, char **argv)
{
	char *line = NULL;
	size_t cap = 0;

	(void)argc;
	(void)argv;
	/* stdout is a pipe: make each answer visible at once (bench_emit
	 * flushes too; this covers anything a child might print) */
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (getline(&line, &cap, stdin) > 0) {
		char *av[256], *save = NULL;
		int ac = 0;

		for (char *t = strtok_r(line, " \t\n", &save); t && ac < 255;
		     t = strtok_r(NULL, " \t\n", &save))
			av[ac++] = t;
		av[ac] = NULL;
		if (!ac)
			continue;
		if (!strcmp(av[0], "quit"))
			break;
		if (!strcmp(av[0], "worker")) {
			bench_fail("a worker does not start workers");
			continue;
		}
		dispatch(ac, av);
	}
	free(line);
	emitted = 1;
	return 0;
}

/*
 * A worker's fork+exec cost depends on where ASLR put its own mappings
 * (how many page-table pages a fork copies): two workers of one condition
 * differed by up to 0.6%, more than the effects measured. So a worker runs
 * without address randomization, and every condition's has one layout.
 */
static void worker_layout(char **argv)
{
	int p = personality(0xffffffff);

	if (p < 0 || (p & ADDR_NO_RANDOMIZE))
		return;
	if (personality((unsigned long)p | ADDR_NO_RANDOMIZE) < 0) {
		fprintf(stderr, "sbxbench: worker: personality: %s\n", strerror(errno));
		exit(1);
	}
	execv("/proc/self/exe", argv);
	fprintf(stderr, "sbxbench: worker: re-exec without ASLR: %s\n", strerror(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[argc - 1], "worker"))
		worker_layout(argv);
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	return dispatch(argc - 1, argv + 1);
}
