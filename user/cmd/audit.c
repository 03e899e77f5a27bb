// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx audit verify FILE|DIR...
 * bpfsbx audit tail [-f] [-n N] [--json] [FILE|DIR]
 *
 * verify checks the hash chain of each log (queue/audit_chain.c): it prints
 * "FILE: ok, N records" or "FILE: record SEQ (line L): PROBLEM" and exits
 * 1 when any log was tampered with or could not be read. A DIR means
 * every DIR/.sandbox/audit/SESSION.jsonl (or DIR/audit/SESSION.jsonl, or
 * DIR/SESSION.jsonl).
 *
 * tail prints the last N records (default 10, 0 = all), one line each,
 * and with -f follows new ones as they are written (inotify).
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "lib/project.h"
#include "queue/queue.h"
#include "queue/watch.h"
#include "user/cmd/cmd.h"
#include "user/connector/conn_policy.h"
#include "lib/json.h"

struct logs {
	char **path;
	size_t n;
};

static void logs_free(struct logs *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->path[i]);
	free(l->path);
	l->path = NULL;
	l->n = 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* the directory that holds the logs of a project, an audit dir, or DIR */
static char *audit_dir_of(const char *dir)
{
	char *p = NULL;

	if (asprintf(&p, "%s/.sandbox/audit", dir) >= 0 && is_dir(p))
		return p;
	free(p);
	if (asprintf(&p, "%s/audit", dir) >= 0 && is_dir(p))
		return p;
	free(p);
	return strdup(dir);
}

/* *.jsonl in dir, sorted; 0 or -errno */
static int find_logs(const char *dir, struct logs *l)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		char **np, *p;

		if (de->d_name[0] == '.' || n < 7 || strcmp(de->d_name + n - 6, ".jsonl"))
			continue;
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0)
			continue;
		np = realloc(l->path, (l->n + 1) * sizeof(*np));
		if (!np) {
			free(p);
			break;
		}
		l->path = np;
		l->path[l->n++] = p;
	}
	closedir(d);
	qsort(l->path, l->n, sizeof(*l->path), cmp_str);
	return 0;
}

static int verify_one(const char *path)
{
	struct sbx_audit_report r;
	int rc = sbx_audit_verify(path, &r);

	if (rc < 0) {
		printf("%s: cannot read: %s\n", path, strerror(-rc));
		return SBX_EXIT_FAIL;
	}
	if (rc == 0) {
		printf("%s: ok, %llu record%s\n", path, (unsigned long long)r.records,
		       r.records == 1 ? "" : "s");
		sbx_audit_report_free(&r);
		return SBX_EXIT_OK;
	}
	printf("%s: record %llu (line %llu): %s\n", path, (unsigned long long)r.first_bad,
	       (unsigned long long)r.line, r.problem ? r.problem : "tampered");
	sbx_audit_report_free(&r);
	return SBX_EXIT_FAIL;
}

/* No FILE|DIR: the project around the current directory, as `init` made it. */
static char *current_project(const char *cmd)
{
	char *project = NULL, *err = NULL;

	if (sbx_project_resolve(NULL, &project, &err) < 0) {
		fprintf(stderr, "bpfsbx audit %s: %s; or name a FILE or DIR\n", cmd,
			err ? err : "not in a project");
		free(err);
		project = NULL;
	}
	return project;
}

static int cmd_verify(int argc, char **argv)
{
	int status = SBX_EXIT_OK;
	char *project = NULL, *dflt[3];

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: bpfsbx audit verify [FILE|DIR...]\n\n"
		       "Check the hash chain of each audit log: a record edited, removed or\n"
		       "inserted is reported with its line. DIR: a project, its .sandbox or its\n"
		       "audit directory. Default: the project around the current directory.\n");
		return SBX_EXIT_OK;
	}
	if (argc < 2) {
		project = current_project("verify");
		if (!project)
			return SBX_EXIT_FAIL;
		dflt[0] = argv[0];
		dflt[1] = project;
		dflt[2] = NULL;
		argv = dflt;
		argc = 2;
	}
	for (int i = 1; i < argc; i++) {
		struct logs l = { 0 };
		char *dir;
		int rc;

		if (argv[i][0] == '-') {
			fprintf(stderr, "bpfsbx audit verify: unknown option '%s'\n", argv[i]);
			return SBX_EXIT_USAGE;
		}
		if (!is_dir(argv[i])) {
			if (verify_one(argv[i]))
				status = SBX_EXIT_FAIL;
			continue;
		}
		dir = audit_dir_of(argv[i]);
		rc = find_logs(dir, &l);
		if (rc) {
			printf("%s: cannot read: %s\n", dir, strerror(-rc));
			status = SBX_EXIT_FAIL;
		} else if (!l.n) {
			printf("%s: no audit logs\n", dir);
		}
		for (size_t k = 0; k < l.n; k++)
			if (verify_one(l.path[k]))
				status = SBX_EXIT_FAIL;
		logs_free(&l);
		free(dir);
	}
	free(project);
	return status;
}

/* ---- tail ------------------------------------------------------------ */

/* Text from a log can hold escape sequences; a terminal must not run them. */
static void put_safe(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			printf("\\x%02x", *p);
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			printf("\\u%04x", p[1]), p++;	/* C1 controls */
		else
			putchar(*p);
	}
}

static const char *const first_keys[] = {
	"event", "verdict", "decision", "kind", "op", "access", "path", "addr", "port",
	"command", "pid", "comm", "exe", "id", "request", "rule", "reason", NULL
};

static bool skip_key(const char *k)
{
	return !strcmp(k, "seq") || !strcmp(k, "time") || !strcmp(k, "prev") ||
	       !strcmp(k, "hash") || !strcmp(k, "session");
}

static void put_kv(const char *k, const json_t *v)
{
	printf(" %s=", k);
	if (json_is_string(v)) {
		put_safe(json_string_value(v));
	} else {
		char *t = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

		put_safe(t ? t : "?");
		free(t);
	}
}

static void print_record(const char *label, const char *line, size_t len, bool as_json)
{
	json_error_t jerr;
	json_t *j = json_loadb(line, len, 0, &jerr), *v;
	const char *k;

	if (as_json) {
		/* the line as written, so that it still verifies */
		fwrite(line, 1, len, stdout);
		putchar('\n');
		json_decref(j);
		return;
	}
	if (!json_is_object(j)) {
		printf("%s: (not a record) ", label);
		put_safe(line);
		putchar('\n');
		json_decref(j);
		return;
	}
	put_safe(sbx_json_str(j, "time") ?: "?");
	printf(" %s #%lld", label, (long long)json_integer_value(json_object_get(j, "seq")));
	for (int i = 0; first_keys[i]; i++)
		if ((v = json_object_get(j, first_keys[i])))
			put_kv(first_keys[i], v);
	{
		const char **keys = NULL;
		size_t n = 0;

		json_object_foreach(j, k, v) {
			bool first = false;

			for (int i = 0; first_keys[i]; i++)
				first |= !strcmp(k, first_keys[i]);
			if (first || skip_key(k))
				continue;
			const char **nk = realloc(keys, (n + 1) * sizeof(*keys));

			if (!nk)
				break;
			keys = nk;
			keys[n++] = k;
		}
		if (n)
			qsort(keys, n, sizeof(*keys), cmp_str);
		for (size_t i = 0; i < n; i++)
			put_kv(keys[i], json_object_get(j, keys[i]));
		free(keys);
	}
	putchar('\n');
	json_decref(j);
}

struct tailed {
	char *path;
	char *label;	/* session name */
	off_t off;	/* bytes consumed (complete lines) */
};

static char *label_of(const char *path)
{
	const char *b = strrchr(path, '/');
	char *l = strdup(b ? b + 1 : path);
	size_t n = l ? strlen(l) : 0;

	if (n > 6 && !strcmp(l + n - 6, ".jsonl"))
		l[n - 6] = 0;
	return l;
}

/* print complete lines from t->off on; keep_last: only the last N (0: all) */
static void drain(struct tailed *t, long keep_last, bool as_json)
{
	char *buf = NULL;
	size_t cap = 0, nl = 0;
	ssize_t n;
	FILE *f = fopen(t->path, "re");
	off_t pos;

	if (!f)
		return;
	if (fseeko(f, t->off, SEEK_SET) < 0) {
		fclose(f);
		return;
	}
	if (keep_last > 0) {
		/* count complete lines first, then skip all but the last N */
		while ((n = getline(&buf, &cap, f)) > 0)
			if (buf[n - 1] == '\n')
				nl++;
		fseeko(f, t->off, SEEK_SET);
	}
	pos = t->off;
	for (size_t i = 0; (n = getline(&buf, &cap, f)) > 0; i++) {
		if (buf[n - 1] != '\n')
			break;	/* being written: wait for the rest */
		pos += n;
		if (keep_last > 0 && nl > (size_t)keep_last && i < nl - (size_t)keep_last)
			continue;
		print_record(t->label, buf, (size_t)n - 1, as_json);
	}
	t->off = pos;
	free(buf);
	fclose(f);
	fflush(stdout);
}

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const struct sbx_opt audit_opts[] = {
	{ .sub = "verify", .help = "check the hash chains of FILE, or of every log in DIR "
	  "(default: the current project's); exit status 1 on a broken chain" },
	{ .sub = "tail", .help = "print the records of a log, or of every log of a project" },
	{ "follow", 'f', 'f', 0, NULL, NULL, "keep printing records as they are written", "tail" },
	{ "lines", 'n', 'n', 0, "N", "10", "the last N records of each log (0: all)", "tail" },
	{ "json", 'j', 0, 0, NULL, NULL, "the records as JSON lines", "tail" },
	{ 0 }
};

static int cmd_tail(int argc, char **argv)
{
	const char *target = ".";
	char *project_buf = NULL;
	struct tailed *t = NULL;
	bool follow = false, as_json = false, single;
	long last = 10;
	size_t nt = 0;
	char *dir = NULL;
	struct sbx_qwatch *qw = NULL;
	int c, status = SBX_EXIT_OK;

	opterr = 0;
	optind = 1;
	while ((c = sbx_getopt(argc, argv, audit_opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'f':
			follow = true;
			break;
		case 'n':
			errno = 0;
			last = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || last < 0) {
				fprintf(stderr, "bpfsbx audit tail: -n takes a number (0 = all)\n");
				return SBX_EXIT_USAGE;
			}
			break;
		case 'j':
			as_json = true;
			break;
		case 'h':
			printf("usage: bpfsbx audit tail [-f] [-n N] [--json] [FILE|DIR]\n\n"
			       "Print the audit records of a log, or of every log of a project.\n"
			       "Default: the project around the current directory.\n\n"
			       "  -f, --follow  keep printing records as they are written\n"
			       "  -n, --lines N the last N records of each log (0: all)\n"
			       "  --json        the records as JSON lines\n"
			       "  -h, --help    this help\n");
			return SBX_EXIT_OK;
		default:
			fprintf(stderr, "bpfsbx audit tail: unknown option '%s'\n", argv[optind - 1]);
			return SBX_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		fprintf(stderr, "usage: bpfsbx audit tail [-f] [-n N] [--json] [FILE|DIR]\n");
		return SBX_EXIT_USAGE;
	}
	if (optind < argc) {
		target = argv[optind];
	} else {
		project_buf = current_project("tail");
		if (!project_buf)
			return SBX_EXIT_FAIL;
		target = project_buf;
	}
	single = !is_dir(target);
	if (single) {
		const char *slash = strrchr(target, '/');

		if (access(target, R_OK) < 0) {
			fprintf(stderr, "bpfsbx audit tail: %s: %s\n", target, strerror(errno));
			free(project_buf);
			return SBX_EXIT_FAIL;
		}
		dir = slash ? strndup(target, (size_t)(slash - target) + (slash == target))
			    : strdup(".");
		t = calloc(1, sizeof(*t));
		t->path = strdup(target);
		t->label = label_of(target);
		nt = 1;
	} else {
		struct logs l = { 0 };

		dir = audit_dir_of(target);
		if (find_logs(dir, &l) < 0 && !follow) {
			fprintf(stderr, "bpfsbx audit tail: %s: %s\n", dir, strerror(errno));
			free(dir);
			free(project_buf);
			return SBX_EXIT_FAIL;
		}
		t = calloc(l.n ? l.n : 1, sizeof(*t));
		for (size_t i = 0; i < l.n; i++) {
			t[i].path = l.path[i];
			t[i].label = label_of(l.path[i]);
		}
		nt = l.n;
		free(l.path);
	}
	for (size_t i = 0; i < nt; i++)
		drain(&t[i], last ? last : -1, as_json);

	if (follow) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		signal(SIGPIPE, on_signal);
		qw = sbx_qwatch_new();
		int rc = qw ? sbx_qwatch_add_path(qw, dir, SBX_QW_APPENDED | SBX_QW_CREATED |
							    SBX_QW_ARRIVED) : -errno;

		if (rc < 0) {
			fprintf(stderr, "bpfsbx audit tail: cannot watch %s: %s\n", dir,
				strerror(-rc));
			status = SBX_EXIT_FAIL;
			stop = 1;
		}
		while (!stop) {
			struct pollfd p = { .fd = sbx_qwatch_fd(qw), .events = POLLIN };

			if (poll(&p, 1, 1000) < 0 && errno != EINTR)
				break;
			if (p.revents & POLLIN && sbx_qwatch_read(qw, NULL, NULL) < 0)
				break;
			if (!single) {
				/* a new session started: tail its log from the start */
				struct logs l = { 0 };

				find_logs(dir, &l);
				for (size_t i = 0; i < l.n; i++) {
					bool known = false;

					for (size_t k = 0; k < nt; k++)
						known |= !strcmp(t[k].path, l.path[i]);
					if (known)
						continue;
					struct tailed *nt2 = realloc(t, (nt + 1) * sizeof(*t));

					if (!nt2)
						break;
					t = nt2;
					memset(&t[nt], 0, sizeof(*t));
					t[nt].path = strdup(l.path[i]);
					t[nt].label = label_of(l.path[i]);
					nt++;
				}
				logs_free(&l);
			}
			for (size_t i = 0; i < nt; i++)
				drain(&t[i], -1, as_json);
		}
		sbx_qwatch_free(qw);
	}
	for (size_t i = 0; i < nt; i++) {
		free(t[i].path);
		free(t[i].label);
	}
	free(t);
	free(dir);
	free(project_buf);
	return status;
}

static int cmd_audit(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "verify"))
		return cmd_verify(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "tail"))
		return cmd_tail(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: bpfsbx audit verify [FILE|DIR...]\n"
		       "       bpfsbx audit tail [-f|--follow] [-n|--lines N] [--json] [FILE|DIR]\n\n"
		       "verify checks the hash chains; tail prints records. Without FILE|DIR:\n"
		       "the project around the current directory. `bpfsbx help audit verify`\n"
		       "and `bpfsbx audit tail --help` say more.\n");
		return SBX_EXIT_OK;
	}
	fprintf(stderr, "usage: bpfsbx audit verify [FILE|DIR...]\n"
		"       bpfsbx audit tail [-f] [-n N] [--json] [FILE|DIR]\n");
	return SBX_EXIT_USAGE;
}

SBX_COMMAND(audit, "audit", "verify [FILE|DIR...] | tail [OPTIONS] [FILE|DIR]",
	    "check or follow the hash-chained audit logs", cmd_audit, audit_opts);
