// SPDX-License-Identifier: GPL-2.0
/*
 * Rule order never matters: a 30-rule policy, its rules shuffled 60 times
 * (seeded, so a failure can be replayed), compiles to a byte-identical
 * dump and gives the same decision, rule id included, for every probe.
 * Also: compiling twice gives the same dump.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "policy/policy.h"
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"

/* overlapping on purpose: same keys, nested paths, names vs paths, ties;
 * tests/unit/landlock_tier.c holds the Landlock plan to these too */
const char *const pt_permute_file_rules[] = {
	"{path: \"${PROJECT}\", access: write, verdict: allow, reason: ws}",
	"{path: \"${PROJECT}/secret/\", access: read, verdict: deny, reason: s1}",
	"{path: \"${PROJECT}/secret\", access: read, verdict: ask, reason: s2}",
	"{path: \"${PROJECT}/secret/ok.txt\", access: read, verdict: allow, reason: s3}",
	"{path: \"*.pem\", access: read, verdict: ask, reason: p1}",
	"{path: \"*.pem\", access: read, verdict: ask, reason: p2}",
	"{path: \"cert*\", access: read, verdict: deny, reason: p3}",
	"{path: \"cacert.pem\", access: read, verdict: allow, reason: p4}",
	"{path: [.env, \".env.*\"], verdict: ask, reason: e1}",
	"{path: .env, access: write, verdict: deny, reason: e2}",
	"{path: ~/.aws/, access: read, verdict: ask, reason: a1}",
	"{path: ~/.aws/credentials, access: read, verdict: deny, reason: a2}",
	"{path: ~/.ssh/, verdict: deny, reason: k1}",
	"{path: ~/.ssh/known_hosts, access: read, verdict: allow, reason: k2}",
	"{path: \"${PROJECT}/new/deep/x\", access: [read, exec], verdict: deny, reason: n1}",
	"{path: \"${PROJECT}/new/deep\", access: exec, verdict: audit, reason: n2}",
	"{path: [/proc/*/environ, /proc/*/mem, /proc/*/fd], verdict: deny, reason: pr}",
	"{path: [sudo, su], access: exec, verdict: deny, reason: x1}",
	"{path: /tmp, access: write, verdict: allow, reason: t1}",
	"{path: \"${PROJECT}/build/\", access: write, verdict: audit, reason: b1}",
};
static const char *const net_rules[] = {
	"{cidr: 10.0.0.0/8, verdict: ask, reason: r1}",
	"{cidr: 10.1.0.0/16, port: 443, protocol: tcp, verdict: allow, reason: r2}",
	"{cidr: 10.1.0.0/16, port: 443, verdict: deny, reason: r3}",
	"{cidr: 10.1.2.3, port: [22, \"8000-8100\"], verdict: deny, reason: r4}",
	"{host: [a.example, b.example], port: 443, verdict: allow, reason: r5}",
	"{cidr: [\"2001:db8::/32\", \"::ffff:192.0.2.0/120\"], verdict: ask, reason: r6}",
	"{cidr: \"2001:db8::2\", port: 443, verdict: audit, reason: r7}",
};
static const char *const cmd_rules[] = {
	"{command: git, verdict: allow, reason: c1}",
	"{command: git, args: \"push*--force*\", verdict: ask, reason: c2}",
	"{command: [sudo, su], verdict: deny, reason: c3}",
};
#define file_rules pt_permute_file_rules
#define NF (sizeof(file_rules) / sizeof(file_rules[0]))
const size_t pt_permute_n_file_rules = NF;
#define NN (sizeof(net_rules) / sizeof(net_rules[0]))
#define NC (sizeof(cmd_rules) / sizeof(cmd_rules[0]))

static unsigned long long rng = 0x5eed5eedULL;

static unsigned rnd(unsigned n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((rng >> 33) % n);
}

static void shuffle(size_t *v, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rnd((unsigned)i), t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

static char *build(const size_t *fo, const size_t *no, const size_t *co)
{
	char *y = pt_path("version: 1\nfiles:\n  default: {read: allow, write: deny, exec: allow}\n  rules:\n");

	for (size_t i = 0; i < NF; i++) {
		char *t = pt_path("%s    - %s\n", y, file_rules[fo[i]]);
		free(y);
		y = t;
	}
	{
		char *t = pt_path("%snetwork:\n  default: deny\n  rules:\n", y);
		free(y);
		y = t;
	}
	for (size_t i = 0; i < NN; i++) {
		char *t = pt_path("%s    - %s\n", y, net_rules[no[i]]);
		free(y);
		y = t;
	}
	{
		char *t = pt_path("%scommands:\n  default: allow\n  rules:\n", y);
		free(y);
		y = t;
	}
	for (size_t i = 0; i < NC; i++) {
		char *t = pt_path("%s    - %s\n", y, cmd_rules[co[i]]);
		free(y);
		y = t;
	}
	return y;
}

const char *const pt_permute_probes[] = {
	"P/secret/a", "P/secret/ok.txt", "P/secret", "P/x.pem", "P/cacert.pem", "P/cert.pem",
	"P/certs/a", "P/.env", "P/sub/.env.local", "P/new/deep/x/y", "P/new/deep/z", "P/new",
	"P/build/out.o", "P/src/main.c", "H/.aws/credentials", "H/.aws/config", "H/.ssh/id_rsa",
	"H/.ssh/known_hosts", "H/.bashrc", "/tmp/x", "/usr/bin/sudo", "/opt/su/tool", "/etc/passwd",
};
#define probe_rel pt_permute_probes
const size_t pt_permute_n_probes = sizeof(probe_rel) / sizeof(probe_rel[0]);
static const char *const probe_addr[] = {
	"10.1.2.3", "10.1.9.9", "10.9.9.9", "192.0.2.1", "192.0.2.2", "2001:db8::2", "2001:db8::9",
	"::ffff:192.0.2.7", "8.8.8.8",
};
static const uint16_t probe_port[] = { 22, 443, 8050, 53 };
static const char *const probe_cmd[] = { "git status", "git push --force", "sudo ls", "ls" };

/* every decision, as text */
static char *decisions(const struct sbx_compiled *c, const struct sbx_policy *p,
		       const char *home, const char *proj)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (size_t i = 0; i < sizeof(probe_rel) / sizeof(probe_rel[0]); i++) {
		const char *r = probe_rel[i];
		char *path = r[0] == 'P' ? pt_path("%s%s", proj, r + 1) :
			     r[0] == 'H' ? pt_path("%s%s", home, r + 1) : pt_path("%s", r);

		for (int a = 0; a < SBX_ACC_MAX; a++) {
			struct sbx_decision d = { 0 };

			sbx_decide_path(c, path, a, &d);
			fprintf(f, "%s %d %u %u %d %d\n", r, a, d.verdict, d.rule_id, d.level, d.rank);
		}
		free(path);
	}
	for (size_t i = 0; i < sizeof(probe_addr) / sizeof(probe_addr[0]); i++)
		for (size_t j = 0; j < sizeof(probe_port) / sizeof(probe_port[0]); j++)
			for (int pr = 0; pr < 2; pr++) {
				uint8_t a[16];
				int fam = strchr(probe_addr[i], ':') ? AF_INET6 : AF_INET;
				struct sbx_decision d = { 0 };

				inet_pton(fam, probe_addr[i], a);
				sbx_decide_net(c, fam, a, probe_port[j], pr ? 17 : 6, &d);
				fprintf(f, "%s:%u/%d %u %u\n", probe_addr[i], probe_port[j], pr, d.verdict,
					d.rule_id);
			}
	for (size_t i = 0; i < sizeof(probe_cmd) / sizeof(probe_cmd[0]); i++) {
		char *copy = strdup(probe_cmd[i]), *argv[8], *save = NULL;
		int argc = 0;
		struct sbx_decision d = { 0 };

		for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
			argv[argc++] = t;
		sbx_decide_command(p, argc, argv, &d);
		fprintf(f, "%s %u %u\n", probe_cmd[i], d.verdict, d.rule_id);
		free(copy);
	}
	fclose(f);
	return buf;
}

struct result {
	char *dump;
	char *dec;
};

static bool run(const size_t *fo, const size_t *no, const size_t *co, const char *home,
		const char *proj, struct result *out)
{
	char *y = build(fo, no, co);
	struct sbx_compiled c;
	struct sbx_diags d = { 0 };
	struct sbx_policy *p = pt_compile(y, home, proj, &c, &d);

	free(y);
	sbx_diags_free(&d);
	if (!p)
		return false;
	out->dump = pt_dump(&c, p);
	out->dec = decisions(&c, p, home, proj);
	sbx_compiled_free(&c);
	sbx_policy_free(p);
	return out->dump && out->dec;
}

/* the files the probes find; the rest of their paths are missing */
#define make_tree pt_permute_tree
void make_tree(const char *home, const char *proj)
{
	char *p;

	p = pt_path("%s/secret", proj); pt_mkdirs(p); free(p);
	p = pt_path("%s/secret/ok.txt", proj); pt_write(p, "ok"); free(p);
	p = pt_path("%s/build", proj); pt_mkdirs(p); free(p);
	p = pt_path("%s/.ssh", home); pt_mkdirs(p); free(p);
	p = pt_path("%s/.ssh/id_rsa", home); pt_write(p, "k"); free(p);
}

SBX_TEST(policy_permute, order_never_matters)
{
	size_t fo[NF], no[NN], co[NC];
	struct result base, r;
	char *home, *proj;
	int diff_dump = 0, diff_dec = 0;

	CU_ASSERT_EQUAL(NF + NN + NC, 30);
	pt_dirs(sbx_unit_tmpdir(), &home, &proj);
	make_tree(home, proj);
	for (size_t i = 0; i < NF; i++)
		fo[i] = i;
	for (size_t i = 0; i < NN; i++)
		no[i] = i;
	for (size_t i = 0; i < NC; i++)
		co[i] = i;
	CU_ASSERT_FATAL(run(fo, no, co, home, proj, &base));
	/* the probes exercise all verdicts, or the comparison proves little */
	CU_ASSERT(strstr(base.dec, " 4 ") && strstr(base.dec, " 3 ") && strstr(base.dec, " 2 "));
	for (int it = 0; it < 60; it++) {
		shuffle(fo, NF);
		shuffle(no, NN);
		shuffle(co, NC);
		if (!run(fo, no, co, home, proj, &r)) {
			CU_FAIL("permuted policy did not compile");
			break;
		}
		if (strcmp(base.dump, r.dump))
			diff_dump++;
		if (strcmp(base.dec, r.dec))
			diff_dec++;
		free(r.dump);
		free(r.dec);
	}
	CU_ASSERT_EQUAL(diff_dump, 0);
	CU_ASSERT_EQUAL(diff_dec, 0);
	free(base.dump);
	free(base.dec);
	free(home);
	free(proj);
}

SBX_TEST(policy_permute, compile_twice_same_dump)
{
	size_t fo[NF], no[NN], co[NC];
	struct result a, b;
	char *home, *proj;

	pt_dirs(sbx_unit_tmpdir(), &home, &proj);
	make_tree(home, proj);
	for (size_t i = 0; i < NF; i++)
		fo[i] = NF - 1 - i;
	for (size_t i = 0; i < NN; i++)
		no[i] = i;
	for (size_t i = 0; i < NC; i++)
		co[i] = i;
	CU_ASSERT_FATAL(run(fo, no, co, home, proj, &a));
	CU_ASSERT_FATAL(run(fo, no, co, home, proj, &b));
	CU_ASSERT_STRING_EQUAL(a.dump, b.dump);
	CU_ASSERT_STRING_EQUAL(a.dec, b.dec);
	/* and the dump really holds the entries */
	CU_ASSERT_PTR_NOT_NULL(strstr(a.dump, "name suffix len=4"));
	CU_ASSERT_PTR_NOT_NULL(strstr(a.dump, "net4 10.1.0.0/16 rules="));
	CU_ASSERT_PTR_NOT_NULL(strstr(a.dump, "chain dev="));
	free(a.dump);
	free(a.dec);
	free(b.dump);
	free(b.dec);
	free(home);
	free(proj);
}
