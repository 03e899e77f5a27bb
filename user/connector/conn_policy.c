// SPDX-License-Identifier: GPL-2.0
/*
 * The project's policy as the connectors see it. Decisions come from
 * policy/ (sbx_decide_path/net/command) so that the hook, the MCP server
 * and the kernel answer the same question the same way; this file only
 * finds the policy, turns rule ids into reasons, and resolves host names.
 */
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "lib/alloc.h"
#include "user/connector/conn_policy.h"
#include "user/control/control_client.h"

void sbx_cv_init(struct sbx_conn_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->verdict = SBX_V_NONE;
	v->access = -1;
	v->rule.id = -1;
}

void sbx_cv_clear(struct sbx_conn_verdict *v)
{
	free(v->reason);
	free(v->what);
	free(v->path);
	free(v->host);
	free(v->rule_source);
	sbx_cv_init(v);
}

void sbx_cv_set(struct sbx_conn_verdict *v, uint8_t verdict, const char *what,
		const char *fmt, ...)
{
	va_list ap;

	sbx_cv_clear(v);
	v->verdict = verdict;
	v->what = what ? strdup(what) : NULL;
	va_start(ap, fmt);
	v->reason = sbx_vformat(fmt, ap);
	va_end(ap);
}

void sbx_cv_merge(struct sbx_conn_verdict *acc, struct sbx_conn_verdict *part)
{
	if (part->verdict > acc->verdict) {
		sbx_cv_clear(acc);
		*acc = *part;
		sbx_cv_init(part);
		return;
	}
	sbx_cv_clear(part);
}

const char *sbx_conn_home(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && h[0] == '/')
		return h;
	pw = getpwuid(getuid());
	if (pw && pw->pw_dir && pw->pw_dir[0] == '/')
		return pw->pw_dir;
	return "/";
}

sbx_resolve_fn sbx_conn_resolver;

/* getaddrinfo (or sbx_conn_resolver) -> addresses. 0 or a positive errno. */
static int resolve_addrs(const char *host, struct sbx_addr **out, size_t *n)
{
	if (sbx_conn_resolver) {
		*out = NULL;
		*n = 0;
		return sbx_conn_resolver(host, out, n, NULL);
	}
	return sbx_resolve_system(host, out, n, NULL) ? EHOSTUNREACH : 0;
}

/* The policy's resolver: nothing until cp->dns is set (see the header). */
static int conn_resolve(const char *host, struct sbx_addr **out, size_t *n, void *ctx)
{
	struct sbx_conn_policy *cp = ctx;

	*out = NULL;
	*n = 0;
	if (!cp->dns)
		return EAGAIN;
	return resolve_addrs(host, out, n);
}

/* Compile again with host names resolved, before the first network
 * decision. On failure the old compiled form stays and we fail closed. */
static int compile_with_dns(struct sbx_conn_policy *cp)
{
	struct sbx_compiled c = { 0 };
	struct sbx_diags diags = { 0 };
	int rc;

	if (cp->dns)
		return 0;
	cp->dns = true;
	rc = sbx_policy_compile(cp->pol, 1, &c, &diags);
	if (rc == 0 && !diags.errors) {
		sbx_compiled_free(&cp->comp);
		cp->comp = c;
	} else {
		if (rc == 0)
			sbx_compiled_free(&c);
		rc = -EINVAL;
	}
	sbx_diags_free(&diags);
	return rc;
}

/* Does the daemon say the caller's session is learning? */
static bool session_learning(void)
{
	json_t *req = json_pack("{s:s}", "op", "status"), *reply = NULL;
	char *err = NULL;
	bool yes = false;

	if (req && sbx_ctl_call(req, &reply, &err) == 0)
		yes = json_is_true(json_object_get(json_object_get(reply, "caller"), "learning"));
	json_decref(req);
	json_decref(reply);
	free(err);
	return yes;
}

int sbx_conn_policy_load(const char *project, struct sbx_conn_policy **out, char **err)
{
	return sbx_conn_policy_load_path(NULL, project, NULL, out, err);
}

int sbx_conn_policy_load_path(const char *policy_path, const char *project, const char *home,
			      struct sbx_conn_policy **out, char **err)
{
	struct sbx_conn_policy *cp;
	struct sbx_diags diags = { 0 };
	struct sbx_policy_env env = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;

	*out = NULL;
	cp = calloc(1, sizeof(*cp));
	if (!cp)
		return -ENOMEM;
	cp->project = realpath(project, NULL);
	cp->home = strdup(home ? home : sbx_conn_home());
	if (cp->project)
		cp->policy_path = policy_path ? sbx_strdup(policy_path) :
			sbx_asprintf("%s/%s", cp->project, SBX_POLICY_FILE);
	if (!cp->project || !cp->home) {
		if (err)
			asprintf(err, "%s: %s", project, strerror(errno));
		sbx_conn_policy_free(cp);
		return -ENOENT;
	}
	cp->kernel_enforced = sbx_in_session(NULL);
	/* in a session the kernel has the hard links' inode entries; our own
	 * scan of an asked directory would be a read the kernel asks about */
	env.no_hardlink_scan = cp->kernel_enforced;
	env.no_generations = cp->kernel_enforced;
	env.home = cp->home;
	env.project = cp->project;
	env.resolve = conn_resolve;
	env.resolve_ctx = cp;
	cp->pol = sbx_policy_load_file(cp->policy_path, &env, &diags);
	/* a learning session (run --learn) records what its policy would
	 * refuse, and so do its connectors: the same transformation, asked of
	 * the daemon, which knows the caller's session by the kernel. An
	 * answer that cannot be had leaves the policy enforced. */
	if (cp->pol && cp->kernel_enforced && session_learning()) {
		cp->learning = true;
		if (sbx_policy_learn(cp->pol, NULL, &diags)) {
			sbx_policy_free(cp->pol);
			cp->pol = NULL;
		}
	}
	if (cp->pol && sbx_policy_compile(cp->pol, 1, &cp->comp, &diags) == 0 &&
	    !diags.errors) {
		cp->compiled = true;
		sbx_diags_free(&diags);
		*out = cp;
		return 0;
	}
	mem = open_memstream(&buf, &len);
	if (mem) {
		sbx_diags_print(&diags, mem);
		fclose(mem);
	}
	if (err)
		asprintf(err, "the policy %s is not valid:\n%s", cp->policy_path,
			 buf && *buf ? buf : "(no details)\n");
	free(buf);
	sbx_diags_free(&diags);
	sbx_conn_policy_free(cp);
	return -EINVAL;
}

void sbx_conn_policy_free(struct sbx_conn_policy *cp)
{
	if (!cp)
		return;
	if (cp->compiled)
		sbx_compiled_free(&cp->comp);
	sbx_policy_free(cp->pol);
	free(cp->project);
	free(cp->policy_path);
	free(cp->home);
	free(cp);
}

/* "Denied: A, B. Asked: C." with the defaults, each list cut at max bytes */
/* the order in which the session's context names rules (see below) */
static int pattern_kind(const struct sbx_rule_info *ri, size_t l)
{
	int k = ri->pattern[0] == '~' ? (l && ri->pattern[l - 1] == '/' ? 0 : 1) :
		!strchr(ri->pattern, '/') ? 2 : 3;

	return k + (ri->section == SBX_SEC_FILES && !(ri->access & SBX_ACCBIT(SBX_ACC_READ)) ? 4 : 0);
}

char *sbx_conn_policy_patterns(const struct sbx_conn_policy *cp, size_t max)
{
	char *buf = NULL;
	size_t len = 0, n = sbx_policy_rule_count(cp->pol);
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "Defaults: file read %s, file write %s, exec %s, network %s.\n",
		sbx_verdict_name(cp->comp.hdr.file_default[SBX_ACC_READ]),
		sbx_verdict_name(cp->comp.hdr.file_default[SBX_ACC_WRITE]),
		sbx_verdict_name(cp->comp.hdr.file_default[SBX_ACC_EXEC]),
		sbx_verdict_name(cp->comp.hdr.net_default));
	for (int pass = 0; pass < 2; pass++) {
		uint8_t want = pass ? SBX_V_ASK : SBX_V_DENY;
		size_t used = 0;
		bool any = false, cut = false;

		/* what may not even be read first (secrets), then what may not
		 * be written; within each, the home directory's directories
		 * (one pattern covers many files), its files, then names
		 * anywhere, then the rest; within those, the shortest first:
		 * the broad, well-known places (~/.ssh/) before the long tail */
		for (int kind = 0; kind < 8 && !cut; kind++)
			for (size_t want_len = 1; want_len <= 256 && !cut; want_len++)
				for (uint32_t id = 1; id <= n && !cut; id++) {
					const struct sbx_rule_info *ri = sbx_policy_rule(cp->pol, id);
					size_t l;

					if (!ri || ri->is_default || ri->verdict != want)
						continue;
					l = strlen(ri->pattern);
					if ((l < 256 ? l : 256) != want_len || pattern_kind(ri, l) != kind)
						continue;
					if (used + l > max) {
						fputs(", ... (see the policy)", f);
						cut = true;
						break;
					}
					fprintf(f, "%s%s", any ? ", " : pass ? "Asked (a person decides): " :
						"Denied: ", ri->pattern);
					used += l + 2;
					any = true;
				}
		if (any)
			fputs(".\n", f);
	}
	fclose(f);
	return buf;
}

static const char *section_name(enum sbx_section s)
{
	switch (s) {
	case SBX_SEC_FILES: return "files";
	case SBX_SEC_NETWORK: return "network";
	case SBX_SEC_COMMANDS: return "commands";
	}
	return "?";
}

static const char *builtin_reason(uint32_t id)
{
	switch (id) {
	case SBX_RULE_SANDBOX_DIR:
		return "agents may not change .sandbox/ (the policy, the queue and the audit log)";
	case SBX_RULE_PROTECTED:
		return "the policy files are protected from the agent";
	case SBX_RULE_PSEUDOFS:
		return "kernel control file systems (bpffs, cgroupfs, securityfs) are off limits";
	case SBX_RULE_WALK_LIMIT:
		return "the path is too deep to check; the policy default applies";
	case SBX_RULE_ERROR:
		return "internal error while checking (fail closed)";
	case SBX_RULE_LAUNDER:
		return "renaming or linking a protected object is not allowed";
	case SBX_RULE_SELF_PROTECT:
		return "bpfsbx protects itself and the kernel from the agent";
	case SBX_RULE_GRANT:
		return "allowed by a person's earlier approval";
	case SBX_RULE_PROC:
		return "other processes' /proc files are protected";
	case SBX_RULE_EXEC_KIND:
		return "this kind of executable (memfd, deleted) is not allowed";
	case SBX_RULE_EXEC_PRIV:
		return "programs that gain privileges (setuid, setgid, file capabilities) are not "
		       "allowed";
	case SBX_RULE_IPC_OUTSIDE:
		return "IPC objects made outside the session are not reachable";
	case SBX_RULE_KEY_OUTSIDE:
		return "kernel keys made outside the session are not readable";
	case SBX_RULE_SOCKET_FAMILY:
		return "this socket family is not allowed";
	case SBX_RULE_SOCKET_OUTSIDE:
		return "an IP socket made outside the session cannot be used in it";
	case SBX_RULE_DNS_PATH:
		return "names are resolved by bpfsbx; other DNS paths are not allowed";
	case SBX_RULE_TERMINAL:
		return "a session may use only its own terminal, never the approver's or another";
	}
	return NULL;
}

/* Fill v->reason and v->rule from a decision's rule id. */
static void explain(struct sbx_conn_policy *cp, const struct sbx_decision *d,
		    struct sbx_conn_verdict *v, const char *default_what)
{
	const struct sbx_rule_info *ri = NULL;
	const char *b;

	if (d->rule_id && d->rule_id < SBX_RULE_BUILTIN)
		ri = sbx_policy_rule(cp->pol, d->rule_id);
	free(v->reason);
	v->reason = NULL;
	if (ri) {
		free(v->rule_source);
		if (asprintf(&v->rule_source, "%s:%d", ri->file ? ri->file : "?", ri->line) < 0)
			v->rule_source = NULL;
		v->rule = (struct sbx_req_rule){
			.present = true,
			.id = ri->id,
			.section = section_name(ri->section),
			.pattern = ri->pattern ? ri->pattern : "",
			.verdict = sbx_verdict_name(ri->verdict),
			.reason = ri->reason ? ri->reason : "",
			.source = v->rule_source ? v->rule_source : "",
			.would = ri->would ? sbx_verdict_name(ri->would) : NULL,
		};
		if (asprintf(&v->reason, "%s (policy rule \"%s\" in the %s section)",
			     ri->reason && *ri->reason ? ri->reason : "no reason given",
			     ri->pattern ? ri->pattern : "?", section_name(ri->section)) < 0)
			v->reason = NULL;
	} else if ((b = builtin_reason(d->rule_id))) {
		v->reason = strdup(b);
	} else {
		if (asprintf(&v->reason, "no rule matches; the policy's default for %s is %s",
			     default_what, sbx_verdict_name(d->verdict)) < 0)
			v->reason = NULL;
	}
}

int sbx_conn_decide_path(struct sbx_conn_policy *cp, const char *abs_path,
			 enum sbx_access acc, struct sbx_conn_verdict *v)
{
	struct sbx_decision d = { 0 };
	char what[64];
	int r;

	sbx_cv_clear(v);
	if (!cp) {
		v->verdict = SBX_V_ALLOW;
		return 0;
	}
	r = sbx_decide_path(&cp->comp, abs_path, acc, &d);
	if (r < 0) {
		sbx_cv_set(v, SBX_V_DENY, NULL, "could not check %s of %s: %s (fail closed)",
			   sbx_access_name(acc), abs_path, strerror(-r));
	} else {
		v->verdict = d.verdict;
		snprintf(what, sizeof(what), "%s", sbx_access_name(acc));
		explain(cp, &d, v, what);
	}
	if (asprintf(&v->what, "%s %s", sbx_access_name(acc), abs_path) < 0)
		v->what = NULL;
	v->path = strdup(abs_path);
	v->access = acc;
	return 0;
}

static int decide_addr(struct sbx_conn_policy *cp, int family, const void *addr,
		       int port, struct sbx_conn_verdict *v, const char *host)
{
	struct sbx_decision d = { 0 };
	char txt[INET6_ADDRSTRLEN] = "";
	int r;

	inet_ntop(family, addr, txt, sizeof(txt));
	r = sbx_decide_net(&cp->comp, family, addr, (uint16_t)port, IPPROTO_TCP, &d);
	if (r < 0) {
		sbx_cv_set(v, SBX_V_DENY, NULL, "could not check %s (%s) port %d: %s (fail closed)",
			   host, txt, port, strerror(-r));
		return 0;
	}
	sbx_cv_clear(v);
	v->verdict = d.verdict;
	explain(cp, &d, v, "network connections");
	if (asprintf(&v->what, "connect %s:%d (%s)", host, port, txt) < 0)
		v->what = NULL;
	return 0;
}

int sbx_conn_decide_host(struct sbx_conn_policy *cp, const char *host, int port,
			 struct sbx_conn_verdict *v)
{
	struct sbx_conn_verdict part;
	struct sbx_addr *addrs = NULL;
	size_t naddrs = 0;
	struct in6_addr a6;
	struct in_addr a4;
	int r;

	sbx_cv_clear(v);
	if (!cp) {
		v->verdict = SBX_V_ALLOW;
		goto out;
	}
	if (compile_with_dns(cp) < 0) {
		sbx_cv_set(v, SBX_V_DENY, NULL, "the policy's network rules could not be compiled "
			   "(fail closed)");
		goto out;
	}
	if (inet_pton(AF_INET, host, &a4) == 1) {
		decide_addr(cp, AF_INET, &a4, port, v, host);
		goto out;
	}
	if (inet_pton(AF_INET6, host, &a6) == 1) {
		if (IN6_IS_ADDR_V4MAPPED(&a6))
			decide_addr(cp, AF_INET, &a6.s6_addr[12], port, v, host);
		else
			decide_addr(cp, AF_INET6, &a6, port, v, host);
		goto out;
	}
	r = resolve_addrs(host, &addrs, &naddrs);
	if (r != 0 || naddrs == 0) {
		struct sbx_decision d = { .verdict = cp->comp.hdr.net_default,
					  .rule_id = cp->comp.hdr.net_default_rule };

		v->verdict = d.verdict;
		explain(cp, &d, v, "network connections");
		char *why = v->reason;
		if (asprintf(&v->reason, "%s cannot be resolved here (%s); %s", host,
			     r ? strerror(r) : "no address", why ? why : "") < 0)
			v->reason = NULL;
		free(why);
		if (asprintf(&v->what, "connect %s:%d", host, port) < 0)
			v->what = NULL;
		free(addrs);
		goto out;
	}
	sbx_cv_init(&part);
	for (size_t k = 0; k < naddrs; k++) {
		if (addrs[k].family != AF_INET && addrs[k].family != AF_INET6)
			continue;
		decide_addr(cp, addrs[k].family, addrs[k].addr, port, &part, host);
		sbx_cv_merge(v, &part);
	}
	free(addrs);
	if (v->verdict == SBX_V_NONE)
		sbx_cv_set(v, SBX_V_DENY, NULL, "%s has no usable address (fail closed)", host);
out:
	free(v->host);
	v->host = strdup(host);
	v->port = port;
	return 0;
}

int sbx_conn_decide_argv(struct sbx_conn_policy *cp, int argc, char *const argv[],
			 struct sbx_conn_verdict *v)
{
	struct sbx_decision d = { 0 };
	int r;

	sbx_cv_clear(v);
	if (!cp || argc < 1) {
		v->verdict = SBX_V_ALLOW;
		return 0;
	}
	r = sbx_decide_command(cp->pol, argc, argv, &d);
	if (r < 0) {
		sbx_cv_set(v, SBX_V_DENY, NULL, "could not check the command %s: %s (fail closed)",
			   argv[0], strerror(-r));
	} else {
		v->verdict = d.verdict;
		explain(cp, &d, v, "commands");
	}
	if (asprintf(&v->what, "command %s", argv[0]) < 0)
		v->what = NULL;
	return 0;
}

char *sbx_conn_policy_summary(const struct sbx_conn_policy *cp, size_t max_rules)
{
	char *buf = NULL;
	size_t len = 0, n, shown = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "Policy: %s\n", cp->policy_path);
	fprintf(f, "Defaults: file read %s, file write %s, exec %s, network %s.\n",
		sbx_verdict_name(cp->comp.hdr.file_default[SBX_ACC_READ]),
		sbx_verdict_name(cp->comp.hdr.file_default[SBX_ACC_WRITE]),
		sbx_verdict_name(cp->comp.hdr.file_default[SBX_ACC_EXEC]),
		sbx_verdict_name(cp->comp.hdr.net_default));
	n = sbx_policy_rule_count(cp->pol);
	for (uint32_t id = 1; id <= n; id++) {
		const struct sbx_rule_info *ri = sbx_policy_rule(cp->pol, id);

		if (!ri || (ri->verdict != SBX_V_DENY && ri->verdict != SBX_V_ASK))
			continue;
		if (shown == max_rules) {
			fprintf(f, "- ... (more rules: see the policy file)\n");
			break;
		}
		fprintf(f, "- %s %s", sbx_verdict_name(ri->verdict), section_name(ri->section));
		if (ri->section == SBX_SEC_FILES) {
			bool first = true;

			fprintf(f, " (");
			for (int a = 0; a < SBX_ACC_MAX; a++)
				if (ri->access & SBX_ACCBIT(a)) {
					fprintf(f, "%s%s", first ? "" : ",", sbx_access_name(a));
					first = false;
				}
			fprintf(f, ")");
		}
		fprintf(f, " %s: %s\n", ri->pattern ? ri->pattern : "?",
			ri->reason ? ri->reason : "");
		shown++;
	}
	fprintf(f, "- deny files (write) %s/.sandbox/ and the policy files: built in, not removable\n",
		cp->project);
	fclose(f);
	return buf;
}

int sbx_conn_parse_url(const char *url, int default_port, char **host, int *port)
{
	static const struct { const char *scheme; int port; } schemes[] = {
		{ "https", 443 }, { "http", 80 }, { "ftp", 21 }, { "ftps", 990 },
		{ "ssh", 22 }, { "git+ssh", 22 }, { "ssh+git", 22 }, { "sftp", 22 },
		{ "git", 9418 }, { "ws", 80 }, { "wss", 443 }, { "rsync", 873 },
	};
	const char *p = url, *sep, *h, *hend, *end;
	int dport = default_port;
	long pv;

	*host = NULL;
	sep = strstr(url, "://");
	if (sep) {
		bool known = false;

		for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
			if ((size_t)(sep - url) == strlen(schemes[i].scheme) &&
			    !strncasecmp(url, schemes[i].scheme, sep - url)) {
				dport = schemes[i].port;
				known = true;
			}
		if (!known && !strncasecmp(url, "file", 4) && sep - url == 4)
			return -EINVAL;
		p = sep + 3;
	}
	end = p + strcspn(p, "/?#");
	/* user:password@ */
	for (const char *q = end; q > p; q--)
		if (q[-1] == '@') {
			p = q;
			break;
		}
	if (p == end)
		return -EINVAL;
	if (*p == '[') {
		h = p + 1;
		hend = memchr(h, ']', end - h);
		if (!hend)
			return -EINVAL;
		p = hend + 1;
	} else {
		h = p;
		hend = memchr(p, ':', end - p);
		if (!hend)
			hend = end;
		p = hend;
	}
	if (hend == h)
		return -EINVAL;
	*port = dport;
	if (p < end && *p == ':' && p + 1 < end) {
		char *e;

		pv = strtol(p + 1, &e, 10);
		if (e != end || pv <= 0 || pv > 65535)
			return -EINVAL;
		*port = (int)pv;
	}
	*host = strndup(h, hend - h);
	if (!*host)
		return -ENOMEM;
	for (char *c = *host; *c; c++)
		if (!(isalnum((unsigned char)*c) || strchr(".-_:%", *c))) {
			free(*host);
			*host = NULL;
			return -EINVAL;
		}
	return 0;
}
