// SPDX-License-Identifier: GPL-2.0
/*
 * Network compile and decisions (LPM keys, push-down, port and protocol
 * order, v4-mapped addresses, resolved hosts, resolvers) and the commands
 * section's specificity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "policy/policy.h"
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"

static struct sbx_policy *net_policy(const char *rules, struct sbx_compiled *c, struct sbx_diags *d)
{
	char *y = pt_path("version: 1\nfiles: {default: allow}\nnetwork:\n  default: deny\n  rules:\n%s",
			  rules);
	struct sbx_policy *p = pt_compile(y, "/home/u", "/proj", c, d);

	free(y);
	return p;
}

/* an LPM entry of the built-in DoH resolver denials (compile_doh) */
static bool builtin4(const struct sbx_compiled *c, size_t i)
{
	return c->net4[i].v.count >= 1 && c->net4[i].v.r[0].rule_id == SBX_RULE_DNS_PATH;
}

static size_t user_net4(const struct sbx_compiled *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_net4; i++)
		n += !builtin4(c, i);
	return n;
}

static size_t user_net6(const struct sbx_compiled *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n_net6; i++)
		n += !(c->net6[i].v.count >= 1 && c->net6[i].v.r[0].rule_id == SBX_RULE_DNS_PATH);
	return n;
}

/* verdict for "addr" (v4 or v6 text), port, proto; rule id in *rule */
static int nv(const struct sbx_compiled *c, const char *addr, uint16_t port, uint8_t proto,
	      uint32_t *rule)
{
	uint8_t a[16];
	struct sbx_decision d;
	int fam = strchr(addr, ':') ? AF_INET6 : AF_INET;

	if (inet_pton(fam, addr, a) != 1 || sbx_decide_net(c, fam, a, port, proto, &d))
		return -1;
	if (rule)
		*rule = d.rule_id;
	return d.verdict;
}

SBX_TEST(policy_net, lpm_and_push_down)
{
	struct sbx_compiled c;
	struct sbx_diags d = { 0 };
	struct sbx_policy *p = net_policy(
		"    - {cidr: 10.0.0.0/8, verdict: ask, reason: private}\n"
		"    - {cidr: 10.1.0.0/16, port: 443, protocol: tcp, verdict: allow, reason: svc}\n"
		"    - {cidr: 10.1.2.3, verdict: deny, reason: one host}\n", &c, &d);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(nv(&c, "10.1.2.3", 443, 6, NULL), SBX_V_DENY);
	CU_ASSERT_EQUAL(nv(&c, "10.1.9.9", 443, 6, NULL), SBX_V_ALLOW);
	/* the /16 entry carries the /8's rules for other ports and protocols */
	CU_ASSERT_EQUAL(nv(&c, "10.1.9.9", 80, 6, NULL), SBX_V_ASK);
	CU_ASSERT_EQUAL(nv(&c, "10.1.9.9", 443, 17, NULL), SBX_V_ASK);
	CU_ASSERT_EQUAL(nv(&c, "10.2.0.1", 443, 6, NULL), SBX_V_ASK);
	CU_ASSERT_EQUAL(nv(&c, "11.0.0.1", 443, 6, NULL), SBX_V_DENY);	/* default */
	/* keys: prefixlen = 32 + bits, policy id big-endian, address in order */
	CU_ASSERT_EQUAL_FATAL(user_net4(&c), 3);
	for (size_t i = 0; i < c.n_net4; i++) {
		const uint8_t *pid = (const uint8_t *)&c.net4[i].k.policy_id;

		if (builtin4(&c, i))
			continue;
		CU_ASSERT(pid[0] == 0 && pid[1] == 0 && pid[2] == 0 && pid[3] == 7);
		CU_ASSERT_EQUAL(c.net4[i].k.addr[0], 10);
		if (c.net4[i].k.prefixlen == 32 + 16) {
			CU_ASSERT_EQUAL(c.net4[i].k.addr[1], 1);
			CU_ASSERT_EQUAL(c.net4[i].k.addr[2], 0);
			CU_ASSERT_EQUAL(c.net4[i].v.count, 2);
			/* most specific first */
			CU_ASSERT_EQUAL(c.net4[i].v.r[0].port_lo, 443);
			CU_ASSERT_EQUAL(c.net4[i].v.r[0].port_hi, 443);
			CU_ASSERT_EQUAL(c.net4[i].v.r[0].proto, 6);
			CU_ASSERT_EQUAL(c.net4[i].v.r[1].port_lo, 0);
			CU_ASSERT_EQUAL(c.net4[i].v.r[1].port_hi, 65535);
			CU_ASSERT_EQUAL(c.net4[i].v.r[1].verdict, SBX_V_ASK);
		}
	}
	for (size_t i = 1; i < c.n_net4; i++)
		CU_ASSERT(memcmp(&c.net4[i - 1].k, &c.net4[i].k, sizeof(c.net4[i].k)) < 0);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
}

SBX_TEST(policy_net, ports_and_protocols_order)
{
	struct sbx_compiled c;
	struct sbx_diags d = { 0 };
	uint32_t rid;
	struct sbx_policy *p = net_policy(
		"    - {cidr: 192.0.2.0/24, port: \"8000-9000\", verdict: allow, reason: range}\n"
		"    - {cidr: 192.0.2.0/24, port: 8080, verdict: deny, reason: one port}\n"
		"    - {cidr: 192.0.2.0/24, port: 53, protocol: udp, verdict: allow, reason: dns}\n"
		"    - {cidr: 192.0.2.0/24, port: 53, verdict: ask, reason: dns any}\n"
		"    - {cidr: 192.0.2.0/24, port: 7000, verdict: allow, reason: tie a}\n"
		"    - {cidr: 192.0.2.0/24, port: 7000, verdict: audit, reason: tie b}\n", &c, &d);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(nv(&c, "192.0.2.9", 8080, 6, NULL), SBX_V_DENY);
	CU_ASSERT_EQUAL(nv(&c, "192.0.2.9", 8081, 6, NULL), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(nv(&c, "192.0.2.9", 53, 17, NULL), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(nv(&c, "192.0.2.9", 53, 6, NULL), SBX_V_ASK);
	CU_ASSERT_EQUAL(nv(&c, "192.0.2.9", 7000, 6, &rid), SBX_V_AUDIT);
	CU_ASSERT_STRING_EQUAL(sbx_policy_rule(p, rid)->reason, "tie b");
	CU_ASSERT_EQUAL(nv(&c, "192.0.2.9", 22, 6, &rid), SBX_V_DENY);
	CU_ASSERT(sbx_policy_rule(p, rid)->is_default);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
}

SBX_TEST(policy_net, v4_mapped_and_v6)
{
	struct sbx_compiled c;
	struct sbx_diags d = { 0 };
	struct sbx_policy *p = net_policy(
		"    - {cidr: \"::ffff:198.51.100.0/120\", verdict: allow, reason: mapped cidr}\n"
		"    - {cidr: \"::ffff:198.51.100.7\", verdict: audit, reason: one mapped}\n"
		"    - {cidr: \"2001:db8::/32\", verdict: ask, reason: doc v6}\n"
		"    - {cidr: \"2001:db8::1\", port: 22, verdict: deny, reason: one v6}\n",
		&c, &d);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	/* the mapped CIDR was stored as IPv4 198.51.100.0/24 */
	CU_ASSERT_EQUAL(user_net4(&c), 2);
	CU_ASSERT_EQUAL(nv(&c, "198.51.100.9", 1, 6, NULL), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(nv(&c, "::ffff:198.51.100.9", 1, 6, NULL), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(nv(&c, "::ffff:198.51.100.7", 1, 6, NULL), SBX_V_AUDIT);
	CU_ASSERT_EQUAL(nv(&c, "198.51.100.7", 1, 6, NULL), SBX_V_AUDIT);
	CU_ASSERT_EQUAL(nv(&c, "2001:db8::1", 22, 6, NULL), SBX_V_DENY);
	CU_ASSERT_EQUAL(nv(&c, "2001:db8::1", 23, 6, NULL), SBX_V_ASK);
	CU_ASSERT_EQUAL(nv(&c, "2001:db8:1::1", 22, 6, NULL), SBX_V_ASK);
	CU_ASSERT_EQUAL(nv(&c, "2001:db9::1", 22, 6, NULL), SBX_V_DENY);
	for (size_t i = 0; i < c.n_net6; i++)
		CU_ASSERT(c.net6[i].k.prefixlen == 32 + 32 || c.net6[i].k.prefixlen == 32 + 128);
	/* DoH to a public resolver by address: denied in every policy */
	CU_ASSERT_EQUAL(nv(&c, "1.1.1.1", 443, 6, NULL), SBX_V_DENY);
	CU_ASSERT_EQUAL(nv(&c, "2001:4860:4860::8888", 443, 6, NULL), SBX_V_DENY);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
}

SBX_TEST(policy_net, hosts_and_resolvers)
{
	struct sbx_compiled c;
	struct sbx_diags d = { 0 };
	char *rc = pt_path("%s/resolv.conf", sbx_unit_tmpdir());
	char *y = pt_path("version: 1\nfiles: {default: allow}\nnetwork:\n  default: ask\n  rules:\n"
			  "    - {host: [a.example, b.example, nowhere.example], port: 443, verdict: allow, reason: web}\n"
			  "    - {cidr: resolvers, port: 53, verdict: allow, reason: dns}\n");
	struct sbx_policy_env env;
	struct sbx_policy *p;

	pt_write(rc, "# comment\nsearch example\nnameserver 192.0.2.53\nnameserver fe80::53%eth0\n");
	pt_env(&env, "/home/u", "/proj");
	env.resolv_conf = rc;
	p = sbx_policy_load_buffer("n.yaml", y, strlen(y), &env, &d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL_FATAL(sbx_policy_compile(p, 1, &c, &d), 0);
	/* host names are not resolved at compile time: no warning, no address */
	CU_ASSERT(!pt_has_diag(&d, SBX_DIAG_WARNING, "did not resolve"));
	CU_ASSERT_EQUAL(d.errors, 0);
	CU_ASSERT_EQUAL(c.n_hosts, 3);
	CU_ASSERT_EQUAL(nv(&c, "192.0.2.1", 443, 6, NULL), SBX_V_ASK);
	CU_ASSERT_EQUAL(nv(&c, "192.0.2.53", 53, 17, NULL), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(nv(&c, "fe80::53", 53, 17, NULL), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(nv(&c, "192.0.2.54", 53, 17, NULL), SBX_V_ASK);
	CU_ASSERT_EQUAL(user_net4(&c), 1);
	CU_ASSERT_EQUAL(user_net6(&c), 1);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
	free(rc);
	free(y);
}

/* host verdict and rule reason for name */
static int hv_(const struct sbx_policy *p, const struct sbx_compiled *c, const char *name,
	       const char **reason)
{
	struct sbx_host_decision h;

	if (sbx_decide_host(c, name, &h))
		return -1;
	if (reason) {
		const struct sbx_rule_info *r = sbx_policy_rule(p, h.rule_id);

		*reason = !r || r->is_default || !r->reason ? "" : r->reason;
	}
	return h.verdict;
}

SBX_TEST(policy_net, names_exact_wildcard_most_specific)
{
	struct sbx_compiled c;
	struct sbx_diags d = { 0 };
	const char *why = NULL;
	struct sbx_policy *p = net_policy(
		"    - {host: \"*.example.com\", verdict: allow, reason: all of example}\n"
		"    - {host: \"*.evil.example.com\", verdict: deny, reason: evil below}\n"
		"    - {host: evil.example.com, verdict: ask, reason: evil itself}\n"
		"    - {host: Pkg.Example.Org., port: 443, verdict: allow, reason: pkg}\n"
		"    - {host: pkg.example.org, port: 22, verdict: deny, reason: no ssh}\n"
		"    - {host: \"*.cdn.example.net\", verdict: deny, reason: cdn tie deny}\n"
		"    - {host: \"*.cdn.example.net\", verdict: allow, reason: cdn tie allow}\n", &c, &d);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(d.errors, 0);
	CU_ASSERT_EQUAL(hv_(p, &c, "www.example.com", &why), SBX_V_ALLOW);
	CU_ASSERT_STRING_EQUAL(why, "all of example");
	CU_ASSERT_EQUAL(hv_(p, &c, "A.B.Example.COM.", NULL), SBX_V_ALLOW);
	/* "*." covers names below, not the name itself */
	CU_ASSERT_EQUAL(hv_(p, &c, "example.com", &why), SBX_V_DENY);
	CU_ASSERT_STRING_EQUAL(why, "");	/* network.default */
	/* the longest suffix wins, and an exact name beats every wildcard */
	CU_ASSERT_EQUAL(hv_(p, &c, "x.evil.example.com", &why), SBX_V_DENY);
	CU_ASSERT_STRING_EQUAL(why, "evil below");
	CU_ASSERT_EQUAL(hv_(p, &c, "evil.example.com", &why), SBX_V_ASK);
	CU_ASSERT_STRING_EQUAL(why, "evil itself");
	/* a name allowed on one port resolves; its other ports come along */
	CU_ASSERT_EQUAL(hv_(p, &c, "pkg.example.org", NULL), SBX_V_ALLOW);
	/* equally specific: deny wins, whatever the order written */
	CU_ASSERT_EQUAL(hv_(p, &c, "a.cdn.example.net", NULL), SBX_V_DENY);
	CU_ASSERT_EQUAL(hv_(p, &c, "no such name!", NULL), -1);
	CU_ASSERT_EQUAL(hv_(p, &c, "other.example", NULL), SBX_V_DENY);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
}

SBX_TEST(policy_net, too_many_port_rules)
{
	struct sbx_compiled c;
	struct sbx_diags d = { 0 };
	char *rules = NULL;
	struct sbx_policy *p;

	/* 15 on the /24 and 2 pushed down from the /8: 17 */
	for (int i = 0; i < 15; i++) {
		char *r = pt_path("%s    - {cidr: 10.9.9.0/24, port: %d, verdict: allow, reason: r%d}\n",
				  rules ? rules : "", 1000 + i, i);
		free(rules);
		rules = r;
	}
	{
		char *r = pt_path("%s    - {cidr: 10.0.0.0/8, port: [1, 2], verdict: deny, reason: wide}\n", rules);

		free(rules);
		rules = r;
	}
	p = net_policy(rules, &c, &d);
	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT(pt_has_diag(&d, SBX_DIAG_ERROR, "too many port rules apply to 10.9.9.0/24: 17"));
	sbx_diags_free(&d);
	free(rules);
}

static int cv(const struct sbx_policy *p, const char *cmdline, uint32_t *rule)
{
	char *copy = strdup(cmdline), *argv[16], *save = NULL;
	int argc = 0, v;
	struct sbx_decision d;

	for (char *t = strtok_r(copy, " ", &save); t && argc < 15; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	v = sbx_decide_command(p, argc, argv, &d) ? -1 : d.verdict;
	if (rule)
		*rule = d.rule_id;
	free(copy);
	return v;
}

SBX_TEST(policy_net, command_specificity)
{
	static const char y[] =
		"version: 1\nfiles: {default: allow}\nnetwork: {default: deny}\n"
		"commands:\n"
		"  default: audit\n"
		"  rules:\n"
		"    - {command: git, verdict: allow, reason: git}\n"
		"    - {command: git, args: [\"push* --force*\", \"push* -f\"], verdict: ask, reason: force}\n"
		"    - {command: /opt/git/bin/git, verdict: deny, reason: odd git}\n"
		"    - {command: [sudo, su], verdict: deny, reason: priv}\n"
		"    - {command: sudo, args: \"-n true\", verdict: allow, reason: probe}\n"
		"    - {command: make, verdict: allow, reason: a}\n"
		"    - {command: make, verdict: ask, reason: b}\n";
	struct sbx_diags d = { 0 };
	struct sbx_policy *p = pt_load(y, "/home/u", "/proj", &d);
	uint32_t rid;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(cv(p, "git status", NULL), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(cv(p, "/usr/bin/git push --force origin", NULL), SBX_V_ASK);
	CU_ASSERT_EQUAL(cv(p, "git push origin topic-f", NULL), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(cv(p, "git push -f", NULL), SBX_V_ASK);
	/* an absolute path beats a basename... */
	CU_ASSERT_EQUAL(cv(p, "/opt/git/bin/git status", NULL), SBX_V_DENY);
	/* ...but a rule with args beats one without */
	CU_ASSERT_EQUAL(cv(p, "/opt/git/bin/git push --force", NULL), SBX_V_ASK);
	CU_ASSERT_EQUAL(cv(p, "sudo -n true", NULL), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(cv(p, "sudo rm -rf /", NULL), SBX_V_DENY);
	CU_ASSERT_EQUAL(cv(p, "/bin/su -", NULL), SBX_V_DENY);
	/* equal specificity: the larger verdict */
	CU_ASSERT_EQUAL(cv(p, "make all", &rid), SBX_V_ASK);
	CU_ASSERT_STRING_EQUAL(sbx_policy_rule(p, rid)->reason, "b");
	CU_ASSERT_EQUAL(cv(p, "ls -l", &rid), SBX_V_AUDIT);
	CU_ASSERT(sbx_policy_rule(p, rid)->is_default);
	sbx_policy_free(p);
	sbx_diags_free(&d);
}

SBX_TEST(policy_net, commands_default_when_absent)
{
	static const char y[] = "version: 1\nfiles: {default: allow}\nnetwork: {default: deny}\n";
	struct sbx_diags d = { 0 };
	struct sbx_policy *p = pt_load(y, "/home/u", "/proj", &d);
	uint32_t rid = 99;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(cv(p, "anything", &rid), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(rid, SBX_RULE_DEFAULT);
	sbx_policy_free(p);
	sbx_diags_free(&d);
}

/* what bpf/dns.bpf.c decides for a loopback listener outside the session */
static int lv(const struct sbx_compiled *c, const char *addr, uint16_t port)
{
	uint8_t a[16];
	struct sbx_decision d;
	int fam = strchr(addr, ':') ? AF_INET6 : AF_INET;

	if (inet_pton(fam, addr, a) != 1 || sbx_decide_loopback(c, fam, a, port, 6, &d))
		return -1;
	return d.verdict;
}

SBX_TEST(policy_net, loopback_listener_outside)
{
	struct sbx_compiled c;
	struct sbx_diags d = { 0 };
	struct sbx_policy *p = net_policy(
		"    - {cidr: [127.0.0.0/8, \"::1\"], verdict: allow, reason: loopback}\n"
		"    - {cidr: 127.0.0.1, port: 5432, verdict: allow, reason: the user's database}\n"
		"    - {cidr: 127.0.0.1, port: 9222, verdict: audit, reason: devtools audited}\n", &c, &d);

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	/* network.loopback unset: ask; a rule for every port does not name one */
	CU_ASSERT_EQUAL(lv(&c, "127.0.0.1", 8080), SBX_V_ASK);
	CU_ASSERT_EQUAL(lv(&c, "127.9.9.9", 5432), SBX_V_ASK);
	CU_ASSERT_EQUAL(lv(&c, "127.0.0.1", 5432), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(lv(&c, "::ffff:127.0.0.1", 5432), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(lv(&c, "127.0.0.1", 9222), SBX_V_AUDIT);
	CU_ASSERT_EQUAL(lv(&c, "::1", 5432), SBX_V_ASK);
	CU_ASSERT_EQUAL(lv(&c, "0.0.0.0", 80), SBX_V_ASK);
	CU_ASSERT_EQUAL(lv(&c, "::", 80), SBX_V_ASK);
	CU_ASSERT_EQUAL(lv(&c, "10.0.0.1", 80), -1);	/* not loopback */
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
	/* network.loopback: deny */
	{
		char *y = pt_path("version: 1\nfiles: {default: allow}\nnetwork:\n  default: allow\n"
				  "  loopback: deny\n");

		p = pt_compile(y, "/home/u", "/proj", &c, &d);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		CU_ASSERT_EQUAL(lv(&c, "127.0.0.1", 8080), SBX_V_DENY);
		sbx_compiled_free(&c);
		sbx_policy_free(p);
		sbx_diags_free(&d);
		free(y);
	}
}

/* the port entries of network.reserved_ports, inbound_ports and inbound */
static const struct sbx_file_rule *port_entry(const struct sbx_compiled *c, uint64_t port)
{
	for (size_t i = 0; i < c->n_name; i++)
		if (c->name[i].k.kind == SBX_NAME_PORT && c->name[i].k.hash == port)
			return &c->name[i].v;
	return NULL;
}

SBX_TEST(policy_net, reserved_and_inbound_ports)
{
	struct sbx_compiled c;
	struct sbx_diags d = { 0 };
	const struct sbx_file_rule *r;
	char *y = pt_path("version: 1\nfiles: {default: allow}\nnetwork:\n  default: deny\n  inbound: audit\n"
			  "  reserved_ports: [5432, \"6000-6002\"]\n  inbound_ports: [8080]\n");
	struct sbx_policy *p = pt_compile(y, "/home/u", "/proj", &c, &d);

	if (!p)
		sbx_diags_print(&d, stderr);
	CU_ASSERT_FATAL(p != NULL);
	r = port_entry(&c, 0);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_EQUAL(r->verdict[SBX_PORT_INBOUND], SBX_V_AUDIT);
	CU_ASSERT(r->rule_id[SBX_PORT_INBOUND] != 0 && r->rule_id[SBX_PORT_INBOUND] < SBX_RULE_BUILTIN);
	for (uint64_t port = 6000; port <= 6002; port++) {
		r = port_entry(&c, port);
		CU_ASSERT_FATAL(r != NULL);
		CU_ASSERT_EQUAL(r->verdict[SBX_PORT_BIND], SBX_V_DENY);
		CU_ASSERT_EQUAL(r->rule_id[SBX_PORT_BIND], SBX_RULE_RESERVED_PORT);
	}
	CU_ASSERT(port_entry(&c, 6003) == NULL);
	CU_ASSERT_EQUAL(port_entry(&c, 5432)->verdict[SBX_PORT_BIND], SBX_V_DENY);
	r = port_entry(&c, 8080);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_EQUAL(r->verdict[SBX_PORT_INBOUND], SBX_V_ALLOW);
	CU_ASSERT_EQUAL(r->verdict[SBX_PORT_BIND], SBX_V_NONE);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
	free(y);

	/* no network.inbound: outside clients are refused; ask is an error */
	y = pt_path("version: 1\nfiles: {default: allow}\nnetwork: {default: deny}\n");
	p = pt_compile(y, "/home/u", "/proj", &c, &d);
	CU_ASSERT_FATAL(p != NULL);
	r = port_entry(&c, 0);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_EQUAL(r->verdict[SBX_PORT_INBOUND], SBX_V_DENY);
	CU_ASSERT_EQUAL(r->rule_id[SBX_PORT_INBOUND], SBX_RULE_INBOUND);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	sbx_diags_free(&d);
	free(y);
	y = pt_path("version: 1\nfiles: {default: allow}\nnetwork: {default: deny, inbound: ask, reserved_ports: [0]}\n");
	p = pt_load(y, "/home/u", "/proj", &d);
	CU_ASSERT(p == NULL);
	CU_ASSERT(pt_has_diag(&d, SBX_DIAG_ERROR, "ask is not a verdict for inbound"));
	CU_ASSERT(pt_has_diag(&d, SBX_DIAG_ERROR, "port 0"));
	sbx_policy_free(p);
	sbx_diags_free(&d);
	free(y);
}
