// SPDX-License-Identifier: GPL-2.0
/*
 * The machine policy (policy/machine.c, policy/floor.c): its files are
 * read only when nobody but their owner can have written them, its rules
 * are a floor no project rule lowers, and its projects: section refuses a
 * project that uses what it does not allow, naming both lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define SBX_POLICY_INTERNAL
#include "lib/fileio.h"
#include "lib/sign.h"
#include "policy/policy.h"
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"

#define R SBX_ACC_READ
#define W SBX_ACC_WRITE

struct mfix {
	char *home, *proj, *mdir;
	struct sbx_policy_env env;
	struct sbx_diags d;
	struct sbx_policy *p;
	struct sbx_compiled c;
	bool compiled;
};

static void mfix_start(struct mfix *f, const char *machine_yaml)
{
	char *path;

	memset(f, 0, sizeof(*f));
	pt_dirs(sbx_unit_tmpdir(), &f->home, &f->proj);
	f->mdir = pt_path("%s/machine", sbx_unit_tmpdir());
	pt_mkdirs(f->mdir);
	chmod(f->mdir, 0755);
	if (machine_yaml) {
		path = pt_path("%s/machine.yaml", f->mdir);
		CU_ASSERT_EQUAL(pt_write(path, machine_yaml), 0);
		chmod(path, 0644);
		free(path);
	}
	pt_env(&f->env, f->home, f->proj);
	f->env.machine_dir = f->mdir;
}

/* the project's policy (agent-default's shape of defaults) under the floor */
static bool mfix_load(struct mfix *f, const char *project_rules)
{
	char *y = pt_path("version: 1\n"
			  "files:\n"
			  "  default: {read: allow, write: deny, exec: allow}\n"
			  "  rules:\n%s"
			  "network: {default: deny}\n", project_rules);

	f->p = sbx_policy_load_buffer("test.yaml", y, strlen(y), &f->env, &f->d);
	free(y);
	if (f->p && sbx_policy_compile(f->p, 7, &f->c, &f->d) == 0)
		f->compiled = true;
	return f->compiled;
}

static void mfix_end(struct mfix *f)
{
	if (f->compiled)
		sbx_compiled_free(&f->c);
	sbx_policy_free(f->p);
	sbx_diags_free(&f->d);
	free(f->home);
	free(f->proj);
	free(f->mdir);
}

static struct sbx_decision decide(struct mfix *f, const char *rel, enum sbx_access a)
{
	struct sbx_decision d = { 0 };
	char *p = pt_path("%s/%s", f->home, rel);

	CU_ASSERT_EQUAL(sbx_decide_path(&f->c, p, a, &d), 0);
	free(p);
	return d;
}

static void touch(const char *dir, const char *rel)
{
	char *p = pt_path("%s/%s", dir, rel), *sl = strrchr(p, '/');

	*sl = 0;
	pt_mkdirs(p);
	*sl = '/';
	pt_write(p, "x\n");
	free(p);
}

static const char ssh_floor[] =
	"version: 1\n"
	"files:\n"
	"  rules:\n"
	"    - path: ~/.ssh/\n"
	"      access: [read, write]\n"
	"      verdict: deny\n"
	"      reason: keys stay on this machine\n";

SBX_TEST(policy_machine, floor_holds_over_a_more_specific_project_allow)
{
	struct mfix f;
	static const char allow_key[] =
		"    - {path: ~/.ssh/id_rsa, access: read, verdict: allow, reason: deploy key}\n";

	/* without a machine policy the project's allow decides */
	mfix_start(&f, NULL);
	touch(f.home, ".ssh/id_rsa");
	CU_ASSERT_FATAL(mfix_load(&f, allow_key));
	CU_ASSERT_EQUAL(f.p->n_machine_rules, 0);
	CU_ASSERT_EQUAL(decide(&f, ".ssh/id_rsa", R).verdict, SBX_V_ALLOW);
	mfix_end(&f);

	/* the project's own allow under the floor: refused, both rules named */
	mfix_start(&f, ssh_floor);
	touch(f.home, ".ssh/id_rsa");
	CU_ASSERT_FALSE(mfix_load(&f, allow_key));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "where the machine policy says deny"));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "machine.yaml:4:7: \"~/.ssh/\""));
	CU_ASSERT_STRING_EQUAL(f.d.v[0].file, "test.yaml");
	CU_ASSERT_EQUAL(f.d.v[0].line, 5);
	mfix_end(&f);
}

/* A shipped policy's more specific allow is raised to the floor quietly:
 * agent-default lets ~/.claude/projects/ be written, the machine denies
 * writes to ~/.claude/. */
SBX_TEST(policy_machine, floor_holds_over_a_shipped_allow)
{
	struct mfix f;
	struct sbx_decision d;
	char *y;

	mfix_start(&f, "version: 1\n"
		       "files:\n"
		       "  rules:\n"
		       "    - {path: ~/.claude/, access: write, verdict: deny, reason: agent state}\n"
		       "    - {path: ~/.ssh/, access: read, verdict: deny, reason: keys}\n");
	touch(f.home, ".claude/projects/t.jsonl");
	touch(f.home, ".ssh/cacert.pem");
	touch(f.home, "work/cacert.pem");
	y = pt_path("%s/policy.yaml", f.proj);
	pt_write(y, "version: 1\nextends: agent-default\n");
	f.p = sbx_policy_load_file(y, &f.env, &f.d);
	free(y);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.p);
	CU_ASSERT_EQUAL_FATAL(sbx_policy_compile(f.p, 7, &f.c, &f.d), 0);
	f.compiled = true;
	d = decide(&f, ".claude/projects/t.jsonl", W);
	CU_ASSERT_EQUAL(d.verdict, SBX_V_DENY);
	CU_ASSERT(sbx_rule_is_machine(f.p, d.rule_id));
	CU_ASSERT_EQUAL(sbx_policy_rule(f.p, d.rule_id)->line, 4);
	/* a file made after the compile below the shipped allow */
	CU_ASSERT_EQUAL(decide(&f, ".claude/projects/new.jsonl", W).verdict, SBX_V_DENY);
	/* agent-default's cacert.pem name allow does not reach below ~/.ssh */
	d = decide(&f, ".ssh/cacert.pem", R);
	CU_ASSERT_EQUAL(d.verdict, SBX_V_DENY);
	CU_ASSERT(sbx_rule_is_machine(f.p, d.rule_id));
	CU_ASSERT_EQUAL(decide(&f, "work/cacert.pem", R).verdict, SBX_V_ALLOW);
	/* the floor's file is protected like the project's */
	{
		bool found = false;

		for (size_t i = 0; i < sbx_policy_source_count(f.p); i++)
			found |= strstr(sbx_policy_source(f.p, i), "machine.yaml") != NULL;
		CU_ASSERT(found);
	}
	mfix_end(&f);
}

SBX_TEST(policy_machine, project_name_rules_do_not_reach_below_the_floor)
{
	struct mfix f;
	struct sbx_decision d;

	mfix_start(&f, ssh_floor);
	touch(f.home, ".ssh/cacert.pem");
	touch(f.home, ".ssh/sub/cacert.pem");
	touch(f.home, "work/cacert.pem");
	CU_ASSERT_FATAL(mfix_load(&f,
		"    - {path: cacert.pem, access: read, verdict: allow, reason: CA bundle}\n"
		"    - {path: \"*.txt\", access: read, verdict: audit, reason: text}\n"));
	d = decide(&f, ".ssh/cacert.pem", R);
	CU_ASSERT_EQUAL(d.verdict, SBX_V_DENY);
	CU_ASSERT(sbx_rule_is_machine(f.p, d.rule_id));
	CU_ASSERT_EQUAL(decide(&f, ".ssh/sub/cacert.pem", R).verdict, SBX_V_DENY);
	CU_ASSERT_EQUAL(decide(&f, "work/cacert.pem", R).verdict, SBX_V_ALLOW);
	mfix_end(&f);
}

SBX_TEST(policy_machine, names_against_names)
{
	struct mfix f;

	/* a project exact name would beat a machine glob by rank alone */
	mfix_start(&f, "version: 1\n"
		       "files:\n"
		       "  rules:\n"
		       "    - {path: \"*.pem\", access: read, verdict: ask, reason: keys}\n");
	CU_ASSERT_FALSE(mfix_load(&f,
		"    - {path: cacert.pem, access: read, verdict: allow, reason: CA bundle}\n"));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "allow read of cacert.pem, where the machine "
			      "policy says ask"));
	mfix_end(&f);
}

SBX_TEST(policy_machine, a_machine_exception_does_not_loosen_the_project)
{
	struct mfix f;
	struct sbx_decision d;

	mfix_start(&f, "version: 1\n"
		       "files:\n"
		       "  rules:\n"
		       "    - {path: ~/.ssh/known_hosts, access: read, verdict: allow, reason: hosts}\n"
		       "    - {path: ~/.ssh/, access: read, verdict: ask, reason: keys}\n");
	touch(f.home, ".ssh/known_hosts");
	touch(f.home, ".ssh/id_ed25519");
	CU_ASSERT_FATAL(mfix_load(&f,
		"    - {path: ~/.ssh/, access: read, verdict: deny, reason: project says no}\n"));
	d = decide(&f, ".ssh/known_hosts", R);
	CU_ASSERT_EQUAL(d.verdict, SBX_V_DENY);
	CU_ASSERT_FALSE(sbx_rule_is_machine(f.p, d.rule_id));
	/* the project's deny is stricter than the machine's ask */
	CU_ASSERT_EQUAL(decide(&f, ".ssh/id_ed25519", R).verdict, SBX_V_DENY);
	mfix_end(&f);
}

SBX_TEST(policy_machine, commands_and_network)
{
	struct mfix f;
	struct sbx_decision d;
	char *argv[] = { "curl", "https://example.org", NULL };
	static const char api[] =
		"version: 1\nfiles: {default: {read: allow, write: deny, exec: allow}}\n"
		"network:\n  default: deny\n  rules:\n"
		"    - {host: api.example.com, verdict: allow, reason: the api}\n";

	mfix_start(&f, "version: 1\n"
		       "network:\n"
		       "  rules:\n"
		       "    - {host: \"*.example.com\", verdict: deny, reason: no}\n"
		       "commands:\n"
		       "  rules:\n"
		       "    - {command: curl, verdict: ask, reason: downloads are asked}\n");
	CU_ASSERT_FATAL(mfix_load(&f, ""));
	CU_ASSERT_EQUAL(sbx_decide_command(f.p, 2, argv, &d), 0);
	CU_ASSERT_EQUAL(d.verdict, SBX_V_ASK);
	CU_ASSERT(sbx_rule_is_machine(f.p, d.rule_id));
	mfix_end(&f);

	/* a more specific project host under a machine deny: refused, both named */
	mfix_start(&f, "version: 1\n"
		       "network:\n"
		       "  rules:\n"
		       "    - {host: \"*.example.com\", verdict: deny, reason: no}\n");
	f.p = sbx_policy_load_buffer("test.yaml", api, strlen(api), &f.env, &f.d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.p);
	CU_ASSERT_NOT_EQUAL(sbx_policy_compile(f.p, 7, &f.c, &f.d), 0);
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "machine.yaml:4:"));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "'api.example.com' (allow) is looser"));
	mfix_end(&f);
}

/* A running session's policy under a changed floor (floor_live): the
 * floor is applied over what the project says, with a warning, instead of
 * refusing the policy and leaving the session under the old floor. */
SBX_TEST(policy_machine, a_running_sessions_policy_takes_the_floor)
{
	struct mfix f;
	struct sbx_host_decision h;
	static const char allow_key[] =
		"    - {path: ~/.ssh/id_rsa, access: read, verdict: allow, reason: deploy key}\n";
	static const char api[] =
		"version: 1\nfiles: {default: {read: allow, write: deny, exec: allow}}\n"
		"network:\n  default: deny\n  rules:\n"
		"    - {host: api.example.com, verdict: allow, reason: the api}\n"
		"    - {host: other.example.org, verdict: allow, reason: another}\n";

	mfix_start(&f, ssh_floor);
	f.env.floor_live = true;
	touch(f.home, ".ssh/id_rsa");
	CU_ASSERT_FATAL(mfix_load(&f, allow_key));
	CU_ASSERT_EQUAL(f.d.errors, 0);
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_WARNING, "the machine's verdict holds in the running session"));
	CU_ASSERT_EQUAL(decide(&f, ".ssh/id_rsa", R).verdict, SBX_V_DENY);
	CU_ASSERT(sbx_rule_is_machine(f.p, decide(&f, ".ssh/id_rsa", R).rule_id));
	mfix_end(&f);

	mfix_start(&f, "version: 1\n"
		       "network:\n"
		       "  rules:\n"
		       "    - {host: \"*.example.com\", verdict: deny, reason: no}\n");
	f.env.floor_live = true;
	f.p = sbx_policy_load_buffer("test.yaml", api, strlen(api), &f.env, &f.d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.p);
	CU_ASSERT_EQUAL_FATAL(sbx_policy_compile(f.p, 7, &f.c, &f.d), 0);
	f.compiled = true;
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_WARNING, "'api.example.com' (allow) is looser"));
	CU_ASSERT_EQUAL(sbx_decide_host(&f.c, "api.example.com", &h), 0);
	CU_ASSERT_EQUAL(h.verdict, SBX_V_DENY);
	CU_ASSERT(sbx_rule_is_machine(f.p, h.rule_id));
	/* what the floor does not cover stays the project's */
	CU_ASSERT_EQUAL(sbx_decide_host(&f.c, "other.example.org", &h), 0);
	CU_ASSERT_EQUAL(h.verdict, SBX_V_ALLOW);
	mfix_end(&f);
}

SBX_TEST(policy_machine, bad_machine_input_names_file_line_and_field)
{
	struct mfix f;

	mfix_start(&f, "version: 1\n"
		       "files:\n"
		       "  default: {read: deny}\n");
	CU_ASSERT_FALSE(mfix_load(&f, ""));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "rules, not defaults"));
	CU_ASSERT_EQUAL(f.d.v[0].line, 3);
	mfix_end(&f);

	mfix_start(&f, "version: 1\n"
		       "projects:\n"
		       "  max_always_ttl: forever\n"
		       "  sandbox_switches: [userns, teleport]\n"
		       "  colour: blue\n");
	CU_ASSERT_FALSE(mfix_load(&f, ""));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "'forever' is not a duration"));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "unknown sandbox: key 'teleport'"));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "colour"));
	for (size_t i = 0; i < f.d.n; i++)
		CU_ASSERT_PTR_NOT_NULL(strstr(f.d.v[i].file, "machine.yaml"));
	mfix_end(&f);

	/* extends and sandbox: are the project's */
	mfix_start(&f, "version: 1\nextends: strict\n");
	CU_ASSERT_FALSE(mfix_load(&f, ""));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "extends"));
	mfix_end(&f);
}

SBX_TEST(policy_machine, settings_outlive_loading)
{
	struct mfix f;
	const char *const *a;

	mfix_start(&f, "version: 1\n"
		       "projects:\n"
		       "  require: bpf-lsm\n"
		       "  max_always_ttl: 30d\n"
		       "  approvers: [alice, \"@secteam\"]\n");
	CU_ASSERT_FATAL(mfix_load(&f, ""));
	CU_ASSERT(sbx_policy_requires_bpf_lsm(f.p));
	CU_ASSERT_EQUAL(sbx_policy_max_always_ttl(f.p), 30u * 86400);
	a = sbx_policy_approvers(f.p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_STRING_EQUAL(a[0], "alice");
	CU_ASSERT_STRING_EQUAL(a[1], "@secteam");
	CU_ASSERT_PTR_NULL(a[2]);
	mfix_end(&f);
}

SBX_TEST(policy_machine, machine_d_files_are_read_in_order)
{
	struct mfix f;
	char *d, *p;

	mfix_start(&f, NULL);
	d = pt_path("%s/machine.d", f.mdir);
	pt_mkdirs(d);
	chmod(d, 0755);
	p = pt_path("%s/20-b.yaml", d);
	pt_write(p, "version: 1\nprojects: {audit_only: true}\n");
	chmod(p, 0644);
	free(p);
	p = pt_path("%s/10-a.yaml", d);
	pt_write(p, "version: 1\nprojects: {audit_only: false}\n");
	chmod(p, 0644);
	free(p);
	p = pt_path("%s/ignored.yml", d);
	pt_write(p, "not: [a policy\n");
	free(p);
	/* one setting, two files: the second is refused, naming the first */
	CU_ASSERT_FALSE(mfix_load(&f, ""));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "10-a.yaml:2:"));
	CU_ASSERT_EQUAL(f.d.errors, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.d.v[0].file, "20-b.yaml"));
	free(d);
	mfix_end(&f);
}

static void refused(const char *what, const char *why)
{
	struct mfix f;
	char *path;

	mfix_start(&f, ssh_floor);
	path = pt_path("%s/machine.yaml", f.mdir);
	if (!strcmp(what, "file-group"))
		chmod(path, 0664);
	else if (!strcmp(what, "file-world"))
		chmod(path, 0646);
	else if (!strcmp(what, "dir-world"))
		chmod(f.mdir, 0757);
	else if (!strcmp(what, "symlink")) {
		char *real = pt_path("%s/real.yaml", f.mdir);

		rename(path, real);
		CU_ASSERT_EQUAL(symlink(real, path), 0);
		free(real);
	} else if (!strcmp(what, "owner")) {
		CU_ASSERT_EQUAL(chown(path, 65534, 65534), 0);
	}
	CU_ASSERT_FALSE(mfix_load(&f, ""));
	CU_ASSERT_PTR_NULL(f.p);
	if (!pt_has_diag(&f.d, SBX_DIAG_ERROR, why))
		fprintf(stderr, "    %s: expected '%s', got '%s'\n", what, why,
			f.d.n ? f.d.v[0].msg : "nothing");
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, why));
	/* the next case starts from the same scratch directory */
	chmod(f.mdir, 0755);
	if (!strcmp(what, "symlink")) {
		char *real = pt_path("%s/real.yaml", f.mdir);

		unlink(path);
		rename(real, path);
		free(real);
	}
	free(path);
	mfix_end(&f);
}

SBX_TEST(policy_machine, files_others_could_write_are_refused)
{
	refused("file-group", "writable by its group");
	refused("file-world", "writable by everyone");
	refused("dir-world", "writable by everyone");
	refused("symlink", "a symlink");
	if (geteuid() == 0)
		refused("owner", "owned by neither root nor you");
}

SBX_TEST(policy_machine, projects_that_break_it_are_refused_with_both_lines)
{
	struct mfix f;
	char *proj;

	mfix_start(&f, "version: 1\n"
		       "projects:\n"
		       "  extends: [strict]\n"
		       "  audit_only: false\n"
		       "  sandbox_switches: [userns]\n");
	proj = pt_path("%s/policy.yaml", f.proj);
	pt_write(proj, "version: 1\n"
		       "extends: agent-default\n"
		       "sandbox:\n"
		       "  userns: allow\n"
		       "  raw_sockets: allow\n");
	f.p = sbx_policy_load_file(proj, &f.env, &f.d);
	CU_ASSERT_PTR_NULL(f.p);
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "extends 'agent-default', which the machine "
			      "policy does not allow"));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "machine.yaml:3:12: projects.extends"));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "sets sandbox.raw_sockets"));
	CU_ASSERT_FALSE(pt_has_diag(&f.d, SBX_DIAG_ERROR, "sets sandbox.userns"));
	for (size_t i = 0; i < f.d.n; i++)
		CU_ASSERT(f.d.v[i].line > 0 && strstr(f.d.v[i].file, "policy.yaml"));
	sbx_diags_free(&f.d);

	/* audit-only, as the policy itself or extended */
	pt_write(proj, "version: 1\nextends: audit-only\n");
	f.p = sbx_policy_load_file(proj, &f.env, &f.d);
	CU_ASSERT_PTR_NULL(f.p);
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "extends audit-only"));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "projects.audit_only: false"));
	sbx_diags_free(&f.d);

	/* what the machine lists is fine, and what it extends is its own */
	pt_write(proj, "version: 1\nextends: strict\n");
	f.p = sbx_policy_load_file(proj, &f.env, &f.d);
	CU_ASSERT_PTR_NOT_NULL(f.p);
	free(proj);
	mfix_end(&f);
}

/* keys/ NAME.pub from tests/unit/data/sign/ into the machine directory */
static void put_key(struct mfix *f, const char *name)
{
	char *src = pt_path("tests/unit/data/sign/%s", name), *dst, *pem = NULL;
	char *kdir = pt_path("%s/keys", f->mdir);

	pt_mkdirs(kdir);
	chmod(kdir, 0755);
	dst = pt_path("%s/%s", kdir, name);
	CU_ASSERT_EQUAL_FATAL(sbx_read_file(src, 1 << 16, &pem, NULL), 0);
	CU_ASSERT_EQUAL(pt_write(dst, pem), 0);
	chmod(dst, 0644);
	free(pem);
	free(dst);
	free(kdir);
	free(src);
}

/* machine.yaml.sig: the signature of text by the fleet's test key */
static void put_sig(struct mfix *f, const char *text)
{
	char *key = NULL, *err = NULL, *sig, *p = pt_path("%s/machine.yaml.sig", f->mdir);
	size_t klen = 0;

	CU_ASSERT_EQUAL_FATAL(sbx_read_file("tests/unit/data/sign/fleet.pem", 1 << 16, &key, &klen), 0);
	sig = sbx_sign(key, klen, text, strlen(text), &err);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sig);
	CU_ASSERT_EQUAL(pt_write(p, sig), 0);
	free(sig);
	free(err);
	free(key);
	free(p);
}

/* unlink, rmdir or chmod rel in the machine directory */
static void in_mdir(struct mfix *f, const char *rel, int mode)
{
	char *p = pt_path("%s/%s", f->mdir, rel);

	if (mode > 0)
		chmod(p, (mode_t)mode);
	else if (mode < 0)
		rmdir(p);
	else
		unlink(p);
	free(p);
}

static bool mfix_reload(struct mfix *f)
{
	if (f->compiled)
		sbx_compiled_free(&f->c);
	f->compiled = false;
	sbx_policy_free(f->p);
	f->p = NULL;
	sbx_diags_free(&f->d);
	memset(&f->d, 0, sizeof(f->d));
	return mfix_load(f, "");
}

SBX_TEST(policy_machine, with_keys_only_signed_files_are_taken)
{
	struct mfix f;
	char *mp, *sp;

	mfix_start(&f, ssh_floor);
	mp = pt_path("%s/machine.yaml", f.mdir);
	sp = pt_path("%s/machine.yaml.sig", f.mdir);
	CU_ASSERT(mfix_load(&f, ""));	/* no keys/: unsigned is taken */

	put_key(&f, "fleet.pub");
	CU_ASSERT_FALSE(mfix_reload(&f));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "not signed: there is no machine.yaml.sig"));

	put_sig(&f, ssh_floor);
	CU_ASSERT(mfix_reload(&f));
	touch(f.home, ".ssh/id_rsa");
	if (f.compiled)
		CU_ASSERT_EQUAL(decide(&f, ".ssh/id_rsa", R).verdict, SBX_V_DENY);

	/* a byte changed after signing: the whole machine policy is refused */
	CU_ASSERT_EQUAL(pt_write(mp, "version: 1\n"), 0);
	CU_ASSERT_FALSE(mfix_reload(&f));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "machine.yaml.sig: the signature is not by any"));

	/* signed by a key the machine does not hold */
	CU_ASSERT_EQUAL(pt_write(mp, ssh_floor), 0);
	in_mdir(&f, "keys/fleet.pub", 0);
	put_key(&f, "other.pub");
	CU_ASSERT_FALSE(mfix_reload(&f));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "the signature is not by any of the 1 key"));

	/* not a signature at all */
	put_key(&f, "fleet.pub");
	CU_ASSERT_EQUAL(pt_write(sp, "hello\n"), 0);
	CU_ASSERT_FALSE(mfix_reload(&f));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "not a signature"));
	put_sig(&f, ssh_floor);
	CU_ASSERT(mfix_reload(&f));

	/* a key that is not Ed25519, and a keys/ others may write */
	put_key(&f, "rsa.pub");
	CU_ASSERT_FALSE(mfix_reload(&f));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "not an Ed25519 key"));
	in_mdir(&f, "keys/rsa.pub", 0);
	in_mdir(&f, "keys", 0777);
	CU_ASSERT_FALSE(mfix_reload(&f));
	if (!pt_has_diag(&f.d, SBX_DIAG_ERROR, "writable by its group"))
		fprintf(stderr, "    keys/ 0777: got '%s'\n", f.d.n ? f.d.v[0].msg : "nothing");
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "writable by its group"));
	in_mdir(&f, "keys", 0755);

	/* keys/ with no key: nothing is taken, rather than everything */
	in_mdir(&f, "keys/fleet.pub", 0);
	in_mdir(&f, "keys/other.pub", 0);
	CU_ASSERT_FALSE(mfix_reload(&f));
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_ERROR, "keys/ holds no key"));
	in_mdir(&f, "keys", -1);
	in_mdir(&f, "machine.yaml.sig", 0);
	free(mp);
	free(sp);
	mfix_end(&f);
}
