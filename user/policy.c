// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx policy check|explain|compile: the policy language for people.
 *
 *   check FILE          load and compile; print every diagnostic as
 *                       FILE:LINE:COL: error|warning: FIELD: MESSAGE
 *   explain FILE X      which rule decides X (a path, HOST:PORT or -- CMD)
 *   compile --dump FILE the map entries the daemon would install
 *
 * explain and check compile against the real file system (identities of
 * existing paths) and resolve host names, exactly as a session start would.
 */
#include <errno.h>
#include <netdb.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include "policy/policy.h"
#include "user/cmd.h"

static const char policy_usage[] =
	"usage: bpfsbx policy check FILE [--project DIR] [--home DIR] [--no-resolve]\n"
	"       bpfsbx policy explain FILE [--project DIR] [--home DIR] [--no-resolve]\n"
	"                             (PATH | HOST:PORT | [IPV6]:PORT | -- CMD [ARGS...])\n"
	"       bpfsbx policy compile --dump FILE [--project DIR] [--home DIR] [--no-resolve]\n"
	"                             [--policy-id N]\n"
	"\n"
	"  --project DIR   the directory ${PROJECT} stands for (default: the current directory)\n"
	"  --home DIR      the directory ~ and ${HOME} stand for (default: $HOME)\n"
	"  --no-resolve    do not look host names up in DNS (their rules then match nothing)\n";

struct popts {
	const char *file;
	const char *project;
	const char *home;
	const char *target;
	char **cmd;
	int ncmd;
	bool dump;
	bool no_resolve;
	uint32_t policy_id;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bpfsbx policy: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", policy_usage);
	return SBX_EXIT_USAGE;
}

static int no_resolve(const char *host, struct sbx_addr **out, size_t *n, void *ctx)
{
	(void)host;
	(void)ctx;
	*out = NULL;
	*n = 0;
	return EAGAIN;	/* reported as "did not resolve (...)" */
}

/* Parse options; mode: 'c' check, 'e' explain, 'd' compile. */
static int parse_opts(int argc, char **argv, char mode, struct popts *o)
{
	int npos = 0;

	o->policy_id = 1;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			if (mode != 'e')
				return usage_error("'--' is only for explain");
			o->cmd = argv + i + 1;
			o->ncmd = argc - i - 1;
			if (o->ncmd == 0)
				return usage_error("missing command after '--'");
			break;
		}
		if (!strcmp(a, "--project") || !strcmp(a, "--home") || !strcmp(a, "--policy-id")) {
			if (i + 1 >= argc)
				return usage_error("%s needs an argument", a);
			if (!strcmp(a, "--project"))
				o->project = argv[++i];
			else if (!strcmp(a, "--home"))
				o->home = argv[++i];
			else {
				char *end;
				unsigned long v;

				if (mode != 'd')
					return usage_error("%s is only for compile", a);
				errno = 0;
				v = strtoul(argv[++i], &end, 10);
				if (errno || *end || v == 0 || v > 0xffffffffUL)
					return usage_error("bad --policy-id '%s': a number from 1", argv[i]);
				o->policy_id = (uint32_t)v;
			}
			continue;
		}
		if (!strcmp(a, "--no-resolve")) {
			o->no_resolve = true;
			continue;
		}
		if (!strcmp(a, "--dump")) {
			if (mode != 'd')
				return usage_error("--dump is only for compile");
			o->dump = true;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		}
		if (npos == 0)
			o->file = a;
		else if (npos == 1 && mode == 'e')
			o->target = a;
		else
			return usage_error("unexpected argument '%s'", a);
		npos++;
	}
	if (!o->file)
		return usage_error("missing the policy FILE");
	if (mode == 'e' && !o->target == !o->cmd)
		return usage_error("explain needs one PATH, HOST:PORT or -- CMD");
	if (mode == 'd' && !o->dump)
		return usage_error("compile needs --dump (the only output form)");
	return 0;
}

struct loaded {
	struct sbx_policy *p;
	struct sbx_compiled c;
	struct sbx_diags d;
	char *project;
	char *home;
};

/* Load and compile; diagnostics are printed to `diag_out`. 0 on success. */
static int load_and_compile(const struct popts *o, struct loaded *L, FILE *diag_out)
{
	struct sbx_policy_env env = { 0 };
	int rc = -1;

	memset(L, 0, sizeof(*L));
	if (o->project) {
		L->project = realpath(o->project, NULL);
		if (!L->project) {
			fprintf(stderr, "bpfsbx policy: --project %s: %s\n", o->project, strerror(errno));
			return -1;
		}
	} else {
		L->project = getcwd(NULL, 0);
	}
	if (o->home) {
		L->home = realpath(o->home, NULL);
		if (!L->home) {
			fprintf(stderr, "bpfsbx policy: --home %s: %s\n", o->home, strerror(errno));
			return -1;
		}
	} else {
		const char *h = getenv("HOME");
		struct passwd *pw;

		if ((!h || h[0] != '/') && (pw = getpwuid(getuid())))
			h = pw->pw_dir;
		L->home = h ? strdup(h) : NULL;
	}
	env.home = L->home;
	env.project = L->project;
	if (o->no_resolve)
		env.resolve = no_resolve;
	L->p = sbx_policy_load_file(o->file, &env, &L->d);
	if (L->p && sbx_policy_compile(L->p, o->policy_id, &L->c, &L->d) == 0)
		rc = 0;
	sbx_diags_print(&L->d, diag_out);
	return rc;
}

static void loaded_free(struct loaded *L)
{
	sbx_compiled_free(&L->c);
	sbx_policy_free(L->p);
	sbx_diags_free(&L->d);
	free(L->project);
	free(L->home);
}

static size_t written_rules(const struct sbx_policy *p)
{
	size_t n = 0;

	for (uint32_t id = 1; id <= sbx_policy_rule_count(p); id++)
		if (!sbx_policy_rule(p, id)->is_default)
			n++;
	return n;
}

static int cmd_check(const struct popts *o)
{
	struct loaded L;
	int rc = load_and_compile(o, &L, stdout);

	if (rc == 0)
		printf("%s: ok, %zu rules\n", o->file, written_rules(L.p));
	loaded_free(&L);
	return rc ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

static const char *builtin_text(uint32_t id)
{
	switch (id) {
	case SBX_RULE_SANDBOX_DIR:
		return "built-in sandbox-dir: .sandbox directories (policy, queue, audit log) are never writable";
	case SBX_RULE_PROTECTED:
		return "built-in protected: the policy files of a session are never writable";
	case SBX_RULE_PSEUDOFS:
		return "built-in pseudofs: bpffs, cgroupfs, securityfs, debugfs and tracefs are never writable";
	case SBX_RULE_ERROR:
		return "built-in error: the path could not be resolved or identified (fail closed)";
	default:
		return "built-in rule";
	}
}

/* "by rule #5 "~/.ssh/" at FILE:LINE: REASON" and its kin */
static void print_source(const struct sbx_policy *p, uint32_t id)
{
	const struct sbx_rule_info *r;

	if (id >= SBX_RULE_BUILTIN) {
		printf("by %s\n", builtin_text(id));
		return;
	}
	r = sbx_policy_rule(p, id);
	if (!r) {
		printf("by the section default\n");
		return;
	}
	if (r->is_default)
		printf("by default (%s at %s:%d)", r->pattern, r->file, r->line);
	else
		printf("by rule #%u \"%s\" at %s:%d", r->id, r->pattern, r->file, r->line);
	if (r->reason)
		printf(": %s", r->reason);
	printf("\n");
}

static int explain_path(const struct loaded *L, const char *path)
{
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		struct sbx_decision d;
		int err = sbx_decide_path(&L->c, path, a, &d);

		if (err) {
			fprintf(stderr, "bpfsbx policy: %s: %s\n", path, strerror(-err));
			return SBX_EXIT_FAIL;
		}
		printf("%-5s %-5s ", sbx_access_name(a), sbx_verdict_name(d.verdict));
		print_source(L->p, d.rule_id);
	}
	return SBX_EXIT_OK;
}

static int explain_addr(const struct loaded *L, int family, const uint8_t *addr, uint16_t port)
{
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(family, addr, ip, sizeof(ip));
	for (int i = 0; i < 2; i++) {
		uint8_t proto = i == 0 ? 6 : 17;
		struct sbx_decision d;

		if (sbx_decide_net(&L->c, family, addr, port, proto, &d))
			return SBX_EXIT_FAIL;
		printf("%s%s%s port %u/%s %-5s ", family == AF_INET6 ? "[" : "", ip,
		       family == AF_INET6 ? "]" : "", port, proto == 6 ? "tcp" : "udp",
		       sbx_verdict_name(d.verdict));
		print_source(L->p, d.rule_id);
	}
	return SBX_EXIT_OK;
}

static int explain_hostport(const struct loaded *L, const char *target, bool no_res)
{
	char host[256];
	const char *colon, *ps;
	unsigned long port;
	char *end;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	int rc = SBX_EXIT_OK;
	size_t hl;

	if (target[0] == '[') {
		const char *rb = strchr(target, ']');

		if (!rb || rb[1] != ':')
			return usage_error("bad address '%s': write [IPV6]:PORT", target);
		hl = (size_t)(rb - target - 1);
		ps = rb + 2;
		if (hl >= sizeof(host))
			return usage_error("host too long: %s", target);
		memcpy(host, target + 1, hl);
	} else {
		colon = strrchr(target, ':');
		hl = (size_t)(colon - target);
		ps = colon + 1;
		if (hl >= sizeof(host) || hl == 0)
			return usage_error("bad HOST:PORT '%s'", target);
		memcpy(host, target, hl);
	}
	host[hl] = 0;
	errno = 0;
	port = strtoul(ps, &end, 10);
	if (!*ps || *end || errno || port == 0 || port > 65535)
		return usage_error("bad port in '%s': 1-65535", target);
	if (no_res)
		hints.ai_flags = AI_NUMERICHOST;
	if (getaddrinfo(host, NULL, &hints, &res)) {
		fprintf(stderr, "bpfsbx policy: cannot resolve '%s'%s\n", host,
			no_res ? " (--no-resolve: give an address)" : "");
		return SBX_EXIT_FAIL;
	}
	for (struct addrinfo *ai = res; ai && rc == SBX_EXIT_OK; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET)
			rc = explain_addr(L, AF_INET,
					  (const uint8_t *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr,
					  (uint16_t)port);
		else if (ai->ai_family == AF_INET6)
			rc = explain_addr(L, AF_INET6,
					  (const uint8_t *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr,
					  (uint16_t)port);
	}
	freeaddrinfo(res);
	return rc;
}

static bool looks_like_hostport(const char *t)
{
	const char *colon = strrchr(t, ':');

	if (t[0] == '[')
		return true;
	if (t[0] == '/' || t[0] == '.' || t[0] == '~' || !colon || strchr(t, '/'))
		return false;
	if (!colon[1])
		return false;
	for (const char *p = colon + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	/* an IPv6 address without brackets is ambiguous: require them */
	return strchr(t, ':') == colon;
}

static int cmd_explain(const struct popts *o)
{
	struct loaded L;
	int rc;

	if (load_and_compile(o, &L, stderr)) {
		loaded_free(&L);
		return SBX_EXIT_FAIL;
	}
	if (o->cmd) {
		struct sbx_decision d;

		if (sbx_decide_command(L.p, o->ncmd, o->cmd, &d)) {
			rc = SBX_EXIT_FAIL;
		} else {
			printf("command ");
			for (int i = 0; i < o->ncmd; i++)
				printf("%s%s", i ? " " : "", o->cmd[i]);
			printf(": %s ", sbx_verdict_name(d.verdict));
			print_source(L.p, d.rule_id);
			rc = SBX_EXIT_OK;
		}
	} else if (looks_like_hostport(o->target)) {
		rc = explain_hostport(&L, o->target, o->no_resolve);
	} else if (o->target[0] == '~' && (o->target[1] == '/' || !o->target[1])) {
		char *p = NULL;

		if (asprintf(&p, "%s%s", L.home, o->target + 1) < 0) {
			rc = SBX_EXIT_FAIL;
		} else {
			rc = explain_path(&L, p);
			free(p);
		}
	} else {
		rc = explain_path(&L, o->target);
	}
	loaded_free(&L);
	return rc;
}

static int cmd_compile(const struct popts *o)
{
	struct loaded L;
	int rc = load_and_compile(o, &L, stderr);

	if (rc == 0)
		sbx_compiled_dump(&L.c, L.p, stdout);
	loaded_free(&L);
	return rc ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

static int policy_main(int argc, char **argv)
{
	struct popts o = { 0 };
	char mode;
	int rc;

	if (argc < 2) {
		fputs(policy_usage, stderr);
		return SBX_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(policy_usage, stdout);
		return SBX_EXIT_OK;
	}
	if (!strcmp(argv[1], "check"))
		mode = 'c';
	else if (!strcmp(argv[1], "explain"))
		mode = 'e';
	else if (!strcmp(argv[1], "compile"))
		mode = 'd';
	else
		return usage_error("unknown subcommand '%s'", argv[1]);
	rc = parse_opts(argc, argv, mode, &o);
	if (rc)
		return rc;
	switch (mode) {
	case 'c':
		return cmd_check(&o);
	case 'e':
		return cmd_explain(&o);
	default:
		return cmd_compile(&o);
	}
}

SBX_COMMAND(policy, "policy", "check|explain|compile FILE ...",
	    "check a policy, explain a decision, dump the compiled maps", policy_main);
