// SPDX-License-Identifier: GPL-2.0
/*
 * bpfsbx policy check|explain|compile|suggest|diff|sign|verify: the policy
 * language for people.
 *
 *   check FILE          load and compile; print every diagnostic as
 *                       FILE:LINE:COL: error|warning: FIELD: MESSAGE
 *   explain FILE X      which rule decides X (a path, HOST:PORT or -- CMD)
 *   compile --dump FILE the map entries the daemon would install
 *   suggest, diff       from recorded events (policy_suggest.c)
 *
 * explain and check compile against the real file system (identities of
 * existing paths), exactly as a session start would. Host names are not
 * resolved: the daemon decides each query by name (explain HOST says how),
 * and `explain ADDRESS:PORT` asks a running daemon which names its live
 * sessions learned that address from.
 */
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "lib/alloc.h"
#include "lib/fileio.h"
#include "lib/project.h"
#include "lib/shipped.h"
#include "policy/policy.h"
#include "user/cmd/cmd.h"
#include "user/cmd/policy_cli.h"
#include "user/daemon/state.h"
#include "user/control/control_client.h"
#include "user/connector/classify/classify.h"
#include "user/connector/conn_policy.h"
#include "lib/json.h"


static const struct sbx_opt policy_opts[] = {
	{ .sub = "check", .val = PS_CHECK, .help = "load and compile FILE; print each problem as "
	  "FILE:LINE:COL: error|warning: FIELD: MESSAGE" },
	{ .sub = "explain", .val = PS_EXPLAIN, .help = "which rule decides PATH, @ABSTRACT, HOST, HOST:PORT, "
	  "ADDRESS:PORT, [IPV6]:PORT or -- CMD [ARGS...] (classified as the Claude Code hook does)" },
	{ .sub = "compile", .val = PS_COMPILE, .help = "with --dump: the exact map entries the daemon would install" },
	{ .sub = "suggest", .val = PS_SUGGEST, .help = "the smallest rules that would have allowed what "
	  "sessions were refused (a YAML patch that extends FILE); protected accesses listed apart" },
	{ .sub = "diff", .val = PS_DIFF, .help = "OLD NEW: per rule, the recorded accesses whose verdict "
	  "changes from OLD to NEW" },
	{ .sub = "sign", .val = PS_SIGN, .help = "FILE...: sign machine policy files with --key; "
	  "each signature is written beside its file as FILE.sig" },
	{ .sub = "verify", .val = PS_VERIFY, .help = "FILE...: is each signed by a key in the machine "
	  "policy's keys/ ($BPFSBX_MACHINE_DIR/keys, else /etc/bpfsbx/keys), as the daemon checks" },
	{ "key", 'K', 0, 'f', "FILE", NULL, "the Ed25519 private key in PEM "
	  "(openssl genpkey -algorithm ed25519)", "sign" },
	{ "project", 'P', 0, 'd', "DIR", "the current directory",
	  "the directory ${PROJECT} stands for", NULL },
	{ "home", 'H', 0, 'd', "DIR", "$HOME", "the directory ~ and ${HOME} stand for", NULL },
	{ "no-resolve", 'R', 0, 0, NULL, NULL,
	  "accepted for old scripts; nothing is resolved any more", NULL },
	{ "learn", 'W', 0, 0, NULL, NULL,
	  "the policy as a learning session (run --learn) has it: its denies and asks audit, "
	  "the protected set as it is", NULL },
	{ "paths-from", 'L', 0, 'f', "LIST", NULL,
	  "explain every path in LIST (one a line; - is standard input) with one compile, each as "
	  "explain PATH would", "explain" },
	{ "dump", 'D', 0, 0, NULL, NULL, "print the map entries (the only output form)",
	  "compile" },
	{ "policy-id", 'I', 0, 0, "N", "1", "the policy id the entries carry", "compile" },
	{ "events", 'E', 0, 'f', "FILE", SBX_EVENT_LOG,
	  "the daemon's event log (or a session's audit log) to read; suggest and diff", NULL },
	{ "session", 'S', 0, 0, "ID", "every session",
	  "only the events of this session (again for more); suggest and diff", NULL },
	{ "policy", 'F', 0, 'y', "FILE", "the project's .sandbox/policy.yaml, else agent-default",
	  "the policy the patch extends", "suggest" },
	{ 0 }
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bpfsbx policy: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	sbx_cmd_help(stderr, sbx_cmd_find("policy"));
	return SBX_EXIT_USAGE;
}

static int no_resolve(const char *host, struct sbx_addr **out, size_t *n, void *ctx)
{
	(void)host;
	(void)ctx;
	*out = NULL;
	*n = 0;
	return ECANCELED;	/* not looked up on purpose: no warning */
}

static int parse_opts(int argc, char **argv, enum policy_sub mode, struct popts *o)
{
	int npos = 0;

	o->policy_id = 1;
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			if (mode != PS_EXPLAIN)
				return usage_error("'--' is only for explain");
			o->cmd = argv + i + 1;
			o->ncmd = argc - i - 1;
			if (o->ncmd == 0)
				return usage_error("missing command after '--'");
			break;
		}
		if (a[0] == '-' && a[1] == '-' && a[2]) {
			const struct sbx_opt *op = sbx_opt_find(policy_opts, a + 2);
			const char *v = NULL;

			if (!op)
				return usage_error("unknown option '%s'", a);
			if (op->sub && strcmp(op->sub, argv[1]))
				return usage_error("%s is only for %s", a, op->sub);
			if ((op->val == 'E' || op->val == 'S') && mode != PS_SUGGEST && mode != PS_DIFF)
				return usage_error("%s is only for suggest and diff", a);
			if (op->arg) {
				if (i + 1 >= argc)
					return usage_error("%s needs an argument", a);
				v = argv[++i];
			}
			switch (op->val) {
			case 'P':
				o->project = v;
				break;
			case 'H':
				o->home = v;
				break;
			case 'R':
				o->no_resolve = true;
				break;
			case 'W':
				o->learn = true;
				break;
			case 'L':
				o->paths_from = v;
				break;
			case 'D':
				o->dump = true;
				break;
			case 'E':
				o->events = v;
				break;
			case 'S':
				o->sessions = sbx_realloc_array(o->sessions, o->nsessions + 1,
								sizeof(*o->sessions));
				o->sessions[o->nsessions++] = v;
				break;
			case 'F':
				o->file = v;
				break;
			case 'K':
				o->key = v;
				break;
			case 'I': {
				char *end;
				unsigned long id;

				errno = 0;
				id = strtoul(v, &end, 10);
				if (errno || *end || id == 0 || id > 0xffffffffUL)
					return usage_error("bad --policy-id '%s': a number from 1", v);
				o->policy_id = (uint32_t)id;
				break;
			}
			}
			continue;
		}
		if (a[0] == '-' && a[1]) {
			return usage_error("unknown option '%s'", a);
		}
		if (mode == PS_SIGN || mode == PS_VERIFY) {
			o->files = sbx_realloc_array(o->files, o->nfiles + 1, sizeof(*o->files));
			o->files[o->nfiles++] = a;
			continue;
		}
		if (mode == PS_SUGGEST) {
			/* the issue's form: policy suggest [SESSION...] */
			o->sessions = sbx_realloc_array(o->sessions, o->nsessions + 1,
							sizeof(*o->sessions));
			o->sessions[o->nsessions++] = a;
			continue;
		}
		if (npos == 0)
			o->file = a;
		else if (npos == 1 && (mode == PS_EXPLAIN || mode == PS_DIFF))
			o->target = a;
		else
			return usage_error("unexpected argument '%s'", a);
		npos++;
	}
	if (mode == PS_SIGN || mode == PS_VERIFY) {
		if (!o->nfiles)
			return usage_error("%s needs a FILE", argv[1]);
		if (mode == PS_SIGN && !o->key)
			return usage_error("sign needs --key FILE (openssl genpkey -algorithm ed25519)");
		return 0;
	}
	/* explain X: X is the target, FILE the default */
	if (mode == PS_EXPLAIN && npos == 1 && !o->cmd && !o->paths_from) {
		o->target = o->file;
		o->file = NULL;
	}
	/* a shipped policy by name, as extends: takes it; a file of that name wins */
	if (o->file && access(o->file, F_OK) < 0 && sbx_shipped_name_ok(o->file)) {
		o->found_file = sbx_shipped_policy(o->file, NULL, NULL);
		if (o->found_file)
			o->file = o->found_file;
	}
	/* from a subdirectory, the project around it, as for every command */
	if (!o->project && sbx_project_resolve(NULL, &o->found_project, NULL) == 0)
		o->project = o->found_project;
	if (mode == PS_DIFF && !o->target)
		return usage_error("diff needs OLD and NEW");
	if (!o->file && mode == PS_SUGGEST) {
		/* the project's policy if there is one, else agent-default */
		if (o->found_project)
			o->found_file = sbx_asprintf("%s/%s", o->found_project, SBX_POLICY_FILE);
		if (o->found_file && access(o->found_file, F_OK) == 0)
			o->file = o->found_file;
		return 0;
	}
	if (!o->file) {
		char *cwd = getcwd(NULL, 0);

		/* named as a person would from here: relative in the project */
		if (o->found_project)
			o->found_file = cwd && !strcmp(cwd, o->found_project) ?
				sbx_strdup(SBX_POLICY_FILE) :
				sbx_asprintf("%s/%s", o->found_project, SBX_POLICY_FILE);
		free(cwd);
		if (!o->found_file || access(o->found_file, F_OK))
			return usage_error("no FILE given and no %s here or above (run `bpfsbx "
					   "init`, or name the policy file)", SBX_POLICY_FILE);
		o->file = o->found_file;
	}
	if (mode == PS_EXPLAIN && (!!o->target + !!o->cmd + !!o->paths_from) != 1)
		return usage_error("explain needs one PATH, HOST:PORT, -- CMD or --paths-from LIST");
	if (mode == PS_COMPILE && !o->dump)
		return usage_error("compile needs --dump (the only output form)");
	return 0;
}

int policy_cli_env(const struct popts *o, struct loaded *L, struct sbx_policy_env *env)
{
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
	memset(env, 0, sizeof(*env));
	env->home = L->home;
	env->project = L->project;
	if (o->no_resolve)
		env->resolve = no_resolve;
	return 0;
}

int policy_cli_load(const struct popts *o, const char *file, struct loaded *L, FILE *diag_out)
{
	struct sbx_policy_env env;
	int rc = -1;

	if (policy_cli_env(o, L, &env))
		return -1;
	L->p = sbx_policy_load_file(file, &env, &L->d);
	if (L->p && o->learn && sbx_policy_learn(L->p, env.shipped_dir, &L->d)) {
		sbx_policy_free(L->p);
		L->p = NULL;
	}
	if (L->p && sbx_policy_compile(L->p, o->policy_id, &L->c, &L->d) == 0)
		rc = 0;
	sbx_diags_print(&L->d, diag_out);
	return rc;
}

/* Load and compile; diagnostics are printed to `diag_out`. 0 on success. */
static int load_and_compile(const struct popts *o, struct loaded *L, FILE *diag_out)
{
	return policy_cli_load(o, o->file, L, diag_out);
}

void policy_cli_free(struct loaded *L)
{
	sbx_compiled_free(&L->c);
	sbx_policy_free(L->p);
	sbx_diags_free(&L->d);
	free(L->project);
	free(L->home);
}

static size_t written_rules(const struct sbx_policy *p, bool machine)
{
	size_t n = 0;

	for (uint32_t id = 1; id <= sbx_policy_rule_count(p); id++)
		if (!sbx_policy_rule(p, id)->is_default && sbx_policy_rule(p, id)->machine == machine)
			n++;
	return n;
}

static int cmd_check(const struct popts *o)
{
	struct loaded L;
	int rc = load_and_compile(o, &L, stdout);

	if (rc == 0 && written_rules(L.p, true))
		printf("%s: ok, %zu rules, under %zu of the machine policy (%s)\n", o->file,
		       written_rules(L.p, false), written_rules(L.p, true), sbx_machine_dir(NULL));
	else if (rc == 0)
		printf("%s: ok, %zu rules\n", o->file, written_rules(L.p, false));
	policy_cli_free(&L);
	return rc ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

static void print_source(const struct sbx_policy *p, uint32_t id)
{
	char *w = sbx_policy_rule_words(p, id);

	printf("%s\n", w);
	free(w);
}

/* The accesses that can happen to what is at path: connect only to a
 * socket, exec never to a directory. What does not exist yet may become
 * a file. */
static unsigned path_accesses(const char *path, const char **kind)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		*kind = "does not exist";
		return 1u << SBX_ACC_READ | 1u << SBX_ACC_WRITE | 1u << SBX_ACC_EXEC;
	}
	if (S_ISSOCK(st.st_mode)) {
		*kind = "a unix socket";
		return 1u << SBX_ACC_WRITE | 1u << SBX_ACC_CONNECT;
	}
	if (S_ISDIR(st.st_mode)) {
		*kind = "a directory";
		return 1u << SBX_ACC_READ | 1u << SBX_ACC_WRITE;
	}
	*kind = S_ISREG(st.st_mode) ? "a regular file" : "a special file";
	return 1u << SBX_ACC_READ | 1u << SBX_ACC_WRITE | 1u << SBX_ACC_EXEC;
}

static int explain_path(const struct loaded *L, const char *path)
{
	const char *kind;
	unsigned acc = path_accesses(path, &kind);

	for (int a = 0; a < SBX_ACC_MAX; a++) {
		struct sbx_decision d;
		int err;

		if (!(acc & 1u << a))
			continue;
		err = sbx_decide_path(&L->c, path, a, &d);

		if (err) {
			fprintf(stderr, "bpfsbx policy: %s: %s\n", path, strerror(-err));
			return SBX_EXIT_FAIL;
		}
		printf("%-5s %-5s ", sbx_access_name(a), sbx_verdict_name(d.verdict));
		print_source(L->p, d.rule_id);
	}
	return SBX_EXIT_OK;
}

/* "@name": an abstract unix socket, which only connect applies to */
static int explain_abstract(const struct loaded *L, const char *target)
{
	struct sbx_decision d;

	if (sbx_decide_abstract(&L->c, target + 1, strlen(target + 1), &d))
		return SBX_EXIT_FAIL;
	printf("abstract unix socket %s: connect %-5s ", target, sbx_verdict_name(d.verdict));
	print_source(L->p, d.rule_id);
	return SBX_EXIT_OK;
}

static int explain_addr(const struct loaded *L, int family, const uint8_t *addr, uint16_t port)
{
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(family, addr, ip, sizeof(ip));
	for (int i = 0; i < 2; i++) {
		uint8_t proto = i == 0 ? IPPROTO_TCP : IPPROTO_UDP;
		struct sbx_decision d;

		if (sbx_decide_net(&L->c, family, addr, port, proto, &d))
			return SBX_EXIT_FAIL;
		printf("%s%s%s port %u/%s %-5s ", family == AF_INET6 ? "[" : "", ip,
		       family == AF_INET6 ? "]" : "", port, sbx_proto_name(proto),
		       sbx_verdict_name(d.verdict));
		print_source(L->p, d.rule_id);
		/* the kernel decides a loopback listener by who serves it */
		if (d.verdict <= SBX_V_AUDIT &&
		    !sbx_decide_loopback(&L->c, family, addr, port, proto, &d)) {
			printf("  a listener outside the session: %-5s ", sbx_verdict_name(d.verdict));
			print_source(L->p, d.rule_id);
		}
	}
	return SBX_EXIT_OK;
}

/* The names live sessions learned an address from (the daemon's "learned" op). */
static void explain_learned(int family, const void *addr, uint16_t port)
{
	char ip[INET6_ADDRSTRLEN];
	json_t *req, *r = NULL, *v;
	char *err = NULL;
	size_t i;

	inet_ntop(family, addr, ip, sizeof(ip));
	req = json_pack("{s:s,s:s}", "op", "learned", "addr", ip);
	if (sbx_ctl_call(req, &r, &err) || !json_is_true(json_object_get(r, "ok"))) {
		free(err);
		json_decref(req);
		json_decref(r);
		return;	/* no daemon: nothing is learned */
	}
	json_array_foreach(json_object_get(r, "names"), i, v)
		printf("learned %s (%s) in session %s, for %llds more\n", ip,
		       sbx_json_str(v, "name"),
		       sbx_json_str(v, "session"),
		       (long long)json_integer_value(json_object_get(v, "expires_in_s")));
	if (!json_array_size(json_object_get(r, "names")))
		printf("learned %s: no live session has it from a name\n", ip);
	(void)port;
	json_decref(req);
	json_decref(r);
}

/* How the daemon decides a query for name, and what its addresses get. */
static int explain_name(const struct loaded *L, const char *name, unsigned port)
{
	struct sbx_host_decision h;

	if (sbx_decide_host(&L->c, name, &h)) {
		fprintf(stderr, "bpfsbx policy: '%s' is not a host name\n", name);
		return SBX_EXIT_FAIL;
	}
	printf("name %s: query %s ", name, h.verdict == SBX_V_DENY ? "deny (NXDOMAIN)" :
	       h.verdict == SBX_V_ASK ? "ask (REFUSED until a person approves)" :
	       h.verdict == SBX_V_AUDIT ? "audit (resolved, recorded)" : "allow (resolved)");
	print_source(L->p, h.rule_id);
	if (!h.matched) {
		printf("  its addresses: no host rule; the CIDR rules and network.default decide\n");
		return SBX_EXIT_OK;
	}
	for (size_t i = h.first; i < h.first + h.n; i++) {
		const struct sbx_net_port_rule *r = &L->c.hosts[i].pr;

		if (port && (port < r->port_lo || port > r->port_hi))
			continue;
		printf("  its addresses: port %u-%u/%s %-5s ", r->port_lo, r->port_hi,
		       r->proto ? sbx_proto_name(r->proto) : "any", sbx_verdict_name(r->verdict));
		print_source(L->p, r->rule_id);
	}
	printf("  (a stricter CIDR rule still decides the addresses it covers)\n");
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
	(void)no_res;
	hints.ai_flags = AI_NUMERICHOST;
	if (getaddrinfo(host, NULL, &hints, &res))
		return explain_name(L, host, (unsigned)port);	/* a name: never resolved */
	for (struct addrinfo *ai = res; ai && rc == SBX_EXIT_OK; ai = ai->ai_next) {
		if (rc == SBX_EXIT_OK)
			explain_learned(ai->ai_family, ai->ai_family == AF_INET ?
					(const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr :
					(const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr,
					(uint16_t)port);
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

/* "https://github.com/x" -> "github.com:443" in out; false: not a URL */
static bool url_hostport(const char *t, char *out, size_t n, bool *has_port)
{
	static const struct { const char *scheme; unsigned port; } known[] = {
		{ "https", 443 }, { "http", 80 }, { "wss", 443 }, { "ws", 80 },
		{ "ssh", 22 }, { "git", 9418 }, { "ftp", 21 },
	};
	const char *sep = strstr(t, "://"), *h, *end;
	size_t sl = sep ? (size_t)(sep - t) : 0, hl;
	unsigned port = 0;

	if (!sep || !sl || !isalpha((unsigned char)t[0]) ||
	    strspn(t, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-") != sl)
		return false;
	h = sep + 3;
	if (strchr(h, '@') && strchr(h, '@') < h + strcspn(h, "/?#"))	/* user@host */
		h = strchr(h, '@') + 1;
	end = h + strcspn(h, "/?#");
	hl = (size_t)(end - h);
	if (!hl || hl >= n)
		return false;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strlen(known[i].scheme) == sl && !strncasecmp(t, known[i].scheme, sl))
			port = known[i].port;
	/* a port in the URL: "host:8080", "[::1]:22" */
	*has_port = h[0] == '[' ? memchr(h, ']', hl) && ((const char *)memchr(h, ']', hl))[1] == ':'
				: memchr(h, ':', hl) != NULL;
	if (*has_port || !port)
		snprintf(out, n, "%.*s", (int)hl, h);
	else
		snprintf(out, n, "%.*s:%u", (int)hl, h, port);
	*has_port = *has_port || port;
	return true;
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

/* a bare name with a dot that is no file here: "github.com", "*.example.com" is not */
static bool looks_like_host(const char *t)
{
	char norm[256];

	return !strchr(t, '/') && strchr(t, '.') && t[0] != '.' &&
	       sbx_host_normalize(t, norm, sizeof(norm)) && access(t, F_OK) != 0;
}

/* The words after --, as one command line: one word is a whole line;
 * several are quoted back where the shell would split or expand them. */
static char *command_text(const struct popts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (o->ncmd == 1)
		return sbx_strdup(o->cmd[0]);
	f = open_memstream(&buf, &len);
	for (int i = 0; f && i < o->ncmd; i++) {
		const char *a = o->cmd[i];

		fputs(i ? " " : "", f);
		if (*a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789_/.:=@%+,-") == strlen(a)) {
			fputs(a, f);
			continue;
		}
		fputc('\'', f);
		for (; *a; a++)
			*a == '\'' ? fputs("'\\''", f) : fputc(*a, f);
		fputc('\'', f);
	}
	if (f)
		fclose(f);
	return buf;
}

static int no_dns(const char *host, struct sbx_addr **out, size_t *n, void *ctx)
{
	return no_resolve(host, out, n, ctx);
}

/* The hook's own code path (sbx_sh_classify), in both modes of enforcement. */
static int explain_command(const struct popts *o, const struct loaded *L)
{
	struct sbx_conn_policy *cp = NULL;
	struct sbx_conn_verdict v;
	char *err = NULL, *text = command_text(o), *cwd = getcwd(NULL, 0);
	uint8_t hooks;
	int rc = SBX_EXIT_OK;

	if (o->no_resolve)
		sbx_conn_resolver = no_dns;
	if (sbx_conn_policy_load_path(o->file, L->project, L->home, &cp, &err) < 0) {
		fprintf(stderr, "bpfsbx policy: %s\n", err ? err : "the policy could not be loaded");
		free(err);
		free(text);
		free(cwd);
		return SBX_EXIT_FAIL;
	}
	printf("%s: a command line, classified as the hook does from %s\n", text, cwd ? cwd : "?");
	sbx_cv_init(&v);
	cp->kernel_enforced = false;
	sbx_sh_classify(cp, text, cwd ? cwd : L->project, &v);
	printf("verdict: %s (hooks only)\nreason: %s\n", sbx_verdict_name(v.verdict),
	       v.reason ? v.reason : "");
	hooks = v.verdict;
	cp->kernel_enforced = true;
	sbx_sh_classify(cp, text, cwd ? cwd : L->project, &v);
	if (v.verdict != hooks)
		printf("verdict: %s (kernel-enforced session)\nreason: %s\n",
		       sbx_verdict_name(v.verdict), v.reason ? v.reason : "");
	if (v.verdict == SBX_V_NONE)
		rc = SBX_EXIT_FAIL;
	sbx_cv_clear(&v);
	sbx_conn_policy_free(cp);
	free(text);
	free(cwd);
	return rc;
}

static int explain_one_path(const struct loaded *L, const char *target)
{
	char *p = target[0] == '~' && (target[1] == '/' || !target[1]) ?
		sbx_asprintf("%s%s", L->home, target + 1) : sbx_abspath(target);
	int rc;

	const char *kind = "?";

	if (p)
		path_accesses(p, &kind);
	printf("%s: a path, %s (%s)\n", target, p ? p : "?", kind);
	rc = p ? explain_path(L, p) : SBX_EXIT_FAIL;
	free(p);
	return rc;
}

/* --paths-from: every line a path, one compile for all; the first failure's
 * status, after every path was tried */
static int explain_paths_from(const struct loaded *L, const char *list)
{
	FILE *f = strcmp(list, "-") ? fopen(list, "re") : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = SBX_EXIT_OK, lineno = 0;

	if (!f) {
		fprintf(stderr, "bpfsbx policy: --paths-from %s: %s\n", list, strerror(errno));
		return SBX_EXIT_FAIL;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[n - 1] == '\n')
			line[--n] = 0;
		if (!n)
			continue;
		if (strlen(line) != (size_t)n) {
			fprintf(stderr, "bpfsbx policy: %s:%d: a NUL byte in a path\n", list, lineno);
			rc = SBX_EXIT_FAIL;
			continue;
		}
		if (explain_one_path(L, line) && rc == SBX_EXIT_OK)
			rc = SBX_EXIT_FAIL;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return rc;
}

/* What explain takes the target for, before the answer (flushed: the
 * answer may write to stderr too, and a person reads the two in order). */
static void say_kind(const char *target, const char *kind, const char *detail)
{
	printf("%s: %s%s%s\n", target, kind, detail ? ", " : "", detail ? detail : "");
	fflush(stdout);
}

/* One target, by what it looks like: URL, @abstract, HOST:PORT, host, path. */
static int explain_target(const struct popts *o, const struct loaded *L)
{
	const char *t = o->target;
	char url[300];
	bool url_port = false;

	if (url_hostport(t, url, sizeof(url), &url_port)) {
		say_kind(t, "a URL", url);
		if (url_port)
			return explain_hostport(L, url, o->no_resolve);
		if (url[0] == '[' || strspn(url, "0123456789.") == strlen(url))
			return usage_error("%s: no port: the scheme has no known port; write "
					   "HOST:PORT", t);
		return explain_name(L, url, 0);
	}
	if (t[0] == '@' && t[1]) {
		say_kind(t, "an abstract unix socket name", NULL);
		return explain_abstract(L, t);
	}
	if (looks_like_hostport(t)) {
		say_kind(t, t[0] == '[' || isdigit((unsigned char)t[0]) ? "an address and port" :
			 "a host and port", NULL);
		return explain_hostport(L, t, o->no_resolve);
	}
	if (looks_like_host(t)) {
		say_kind(t, "a host name", NULL);
		return explain_name(L, t, 0);
	}
	return explain_one_path(L, t);
}

static int cmd_explain(const struct popts *o)
{
	struct loaded L;
	int rc;

	if (load_and_compile(o, &L, stderr)) {
		policy_cli_free(&L);
		return SBX_EXIT_FAIL;
	}
	if (o->paths_from)
		rc = explain_paths_from(&L, o->paths_from);
	else if (o->cmd)
		rc = explain_command(o, &L);
	else
		rc = explain_target(o, &L);
	policy_cli_free(&L);
	return rc;
}

static int cmd_compile(const struct popts *o)
{
	struct loaded L;
	int rc = load_and_compile(o, &L, stderr);

	if (rc == 0)
		sbx_compiled_dump(&L.c, L.p, stdout);
	policy_cli_free(&L);
	return rc ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

static int (*const policy_subs[])(const struct popts *) = {
	[PS_CHECK] = cmd_check,
	[PS_EXPLAIN] = cmd_explain,
	[PS_COMPILE] = cmd_compile,
	[PS_SUGGEST] = policy_suggest,
	[PS_DIFF] = policy_diff,
	[PS_SIGN] = policy_sign,
	[PS_VERIFY] = policy_verify,
};

/* what parse_opts allocated */
static void popts_release(struct popts *o)
{
	free(o->found_project);
	free(o->found_file);
	free(o->sessions);
	free(o->files);
}

static int policy_main(int argc, char **argv)
{
	struct popts o = { 0 };
	const struct sbx_opt *sub;
	int rc;

	if (argc < 2) {
		sbx_cmd_help(stderr, sbx_cmd_find("policy"));
		return SBX_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		sbx_cmd_help(stdout, sbx_cmd_find("policy"));
		return SBX_EXIT_OK;
	}
	sub = sbx_sub_find(policy_opts, argv[1]);
	if (!sub)
		return usage_error("unknown subcommand '%s'", argv[1]);
	rc = parse_opts(argc, argv, sub->val, &o);
	if (rc == 0)
		rc = policy_subs[sub->val](&o);
	popts_release(&o);
	return rc;
}

SBX_COMMAND(policy, "policy", "check|explain|compile|suggest|diff|sign|verify [FILE...] [OPTIONS] [PATH | HOST:PORT | -- CMD | NEW]",
	    "check a policy, explain a decision, dump the compiled maps, sign a machine policy",
	    policy_main, policy_opts);
