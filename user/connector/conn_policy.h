/* SPDX-License-Identifier: GPL-2.0 */
/*
 * conn_policy.h - the project's policy as the connectors (hook, MCP
 * server) see it: found from a directory upward, loaded and compiled with
 * policy/, and asked about paths, hosts and command lines. Every answer is
 * a struct sbx_conn_verdict carrying the reason a person or a model reads.
 */
#ifndef SBX_CONNECTOR_POLICY_H
#define SBX_CONNECTOR_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "lib/project.h"
#include "policy/policy.h"
#include "queue/request.h"


struct sbx_conn_policy {
	char *project;		/* absolute directory holding .sandbox/ */
	char *policy_path;	/* project/.sandbox/policy.yaml */
	char *home;
	struct sbx_policy *pol;
	struct sbx_compiled comp;
	bool compiled;
	/* Host names in network rules are resolved only when a network
	 * question is asked: file and command checks never wait for DNS. */
	bool dns;
	/* The caller runs in a kernel-confined session (sbx_in_session() at
	 * load): what the classifier cannot see through is then left to the
	 * kernel; with hooks only it is asked. */
	bool kernel_enforced;
	/* The daemon says the session is learning (run --learn): the policy
	 * was learned as the daemon's was (sbx_policy_learn), so what it
	 * would ask or deny is audit with its rule's "would" */
	bool learning;
};

/*
 * One decision with its explanation. what: the object ("read
 * /home/u/.ssh/id_rsa", "connect example.com:443", "command sudo").
 * rule: the policy rule as a request names it (id, section, pattern,
 * verdict, reason, source), not present for defaults and built-in rules;
 * its strings are the policy's, so a verdict lives no longer than the
 * sbx_conn_policy that gave it, except source, which is the verdict's.
 * For file and network parts, path/access or host/port say what an
 * "access" request would have to ask for.
 */
struct sbx_conn_verdict {
	uint8_t verdict;	/* enum sbx_verdict; SBX_V_NONE = nothing decided yet */
	char *reason;
	char *what;
	struct sbx_req_rule rule;
	char *rule_source;	/* rule.source: "FILE:LINE" */
	char *path;
	int access;		/* enum sbx_access, with path */
	char *host;
	int port;		/* with host */
};

void sbx_cv_init(struct sbx_conn_verdict *v);
void sbx_cv_clear(struct sbx_conn_verdict *v);
/* Fill v (cleared first); strings are copied. */
void sbx_cv_set(struct sbx_conn_verdict *v, uint8_t verdict, const char *what,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* acc = max(acc, part): the strictly more restrictive part wins and its
 * fields move into acc; part is cleared either way. */
void sbx_cv_merge(struct sbx_conn_verdict *acc, struct sbx_conn_verdict *part);

/* How host names become addresses, for network rules and for the hosts
 * in commands; NULL: getaddrinfo. The fuzzers set a fake that never
 * touches the network. */
extern sbx_resolve_fn sbx_conn_resolver;

/* Load and compile project/.sandbox/policy.yaml with PROJECT = project.
 * On failure *err says why, with the policy's diagnostics. */
int sbx_conn_policy_load(const char *project, struct sbx_conn_policy **out, char **err);
/* The same for any policy file (policy explain): home NULL is $HOME. */
int sbx_conn_policy_load_path(const char *policy_path, const char *project, const char *home,
			      struct sbx_conn_policy **out, char **err);
void sbx_conn_policy_free(struct sbx_conn_policy *cp);

/* Home directory: $HOME, else the passwd entry. Never NULL. */
const char *sbx_conn_home(void);

int sbx_conn_decide_path(struct sbx_conn_policy *cp, const char *abs_path,
			 enum sbx_access acc, struct sbx_conn_verdict *v);
/* host: a name or an address literal; resolved with getaddrinfo; a name
 * that does not resolve gets the network default. */
int sbx_conn_decide_host(struct sbx_conn_policy *cp, const char *host, int port,
			 struct sbx_conn_verdict *v);
int sbx_conn_decide_argv(struct sbx_conn_policy *cp, int argc, char *const argv[],
			 struct sbx_conn_verdict *v);

/* A few lines for the agent (session-start) and sandbox_status: the
 * defaults and the deny/ask rules with their reasons. malloc'd. */
char *sbx_conn_policy_summary(const struct sbx_conn_policy *cp, size_t max_rules);
/* Shorter (SessionStart): the defaults, and the deny and ask patterns
 * without their reasons, each list at most max bytes. malloc'd. */
char *sbx_conn_policy_patterns(const struct sbx_conn_policy *cp, size_t max);

/* Parse a URL or "host[:port]" into host and port (default_port when
 * none is given or the scheme does not say). 0 or -EINVAL. */
int sbx_conn_parse_url(const char *url, int default_port, char **host, int *port);

#endif
