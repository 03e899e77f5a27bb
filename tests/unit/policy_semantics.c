// SPDX-License-Identifier: GPL-2.0
/*
 * What compiled policies decide, on a real scratch tree: specificity,
 * deny wins ties, names anywhere, chains for paths that do not exist yet,
 * symlinks, hard links and the built-in protections.
 */
#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"

#define R SBX_ACC_READ
#define W SBX_ACC_WRITE
#define X SBX_ACC_EXEC

struct fix {
	char *home, *proj;
	struct sbx_compiled c;
	struct sbx_diags d;
	struct sbx_policy *p;
};

static void fix_start(struct fix *f)
{
	memset(f, 0, sizeof(*f));
	pt_dirs(sbx_unit_tmpdir(), &f->home, &f->proj);
}

static bool fix_compile(struct fix *f, const char *rules)
{
	char *y = pt_path("version: 1\n"
			  "files:\n"
			  "  default: {read: allow, write: deny, exec: allow}\n"
			  "  rules:\n%s"
			  "network: {default: deny}\n", rules);

	f->p = pt_compile(y, f->home, f->proj, &f->c, &f->d);
	free(y);
	return f->p != NULL;
}

static void fix_end(struct fix *f)
{
	if (f->p)
		sbx_compiled_free(&f->c);
	sbx_policy_free(f->p);
	sbx_diags_free(&f->d);
	free(f->home);
	free(f->proj);
}

/* verdict of PROJECT/rel */
static int pv(struct fix *f, const char *rel, enum sbx_access a)
{
	char *p = pt_path("%s/%s", f->proj, rel);
	int v = pt_verdict(&f->c, p, a);

	free(p);
	return v;
}

static int hv(struct fix *f, const char *rel, enum sbx_access a)
{
	char *p = pt_path("%s/%s", f->home, rel);
	int v = pt_verdict(&f->c, p, a);

	free(p);
	return v;
}

static void touch(struct fix *f, const char *rel)
{
	char *p = pt_path("%s/%s", f->proj, rel), *sl = strrchr(p, '/');

	*sl = 0;
	pt_mkdirs(p);
	*sl = '/';
	pt_write(p, "x\n");
	free(p);
}

SBX_TEST(policy_semantics, most_specific_wins)
{
	struct fix f;

	fix_start(&f);
	touch(&f, "secret/public.txt");
	touch(&f, "secret/sub/key");
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: \"${PROJECT}/secret/\", access: read, verdict: deny, reason: secrets}\n"
		"    - {path: \"${PROJECT}/secret/public.txt\", access: read, verdict: allow, reason: public}\n"
		"    - {path: \"${PROJECT}\", access: write, verdict: allow, reason: workspace}\n"));
	CU_ASSERT_EQUAL(pv(&f, "secret/sub/key", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "secret/public.txt", R), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(pv(&f, "secret", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "other.txt", R), SBX_V_ALLOW);	/* default */
	CU_ASSERT_EQUAL(pv(&f, "secret/sub/key", W), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(pt_verdict(&f.c, "/etc/passwd", W), SBX_V_DENY);	/* default */
	{
		struct sbx_decision d;
		char *p = pt_path("%s/secret/sub/key", f.proj);

		CU_ASSERT_EQUAL(sbx_decide_path(&f.c, p, R, &d), 0);
		CU_ASSERT_EQUAL(d.level, 2);
		CU_ASSERT_EQUAL(d.rank, SBX_RANK_EXACT);
		CU_ASSERT_STRING_EQUAL(sbx_policy_rule(f.p, d.rule_id)->pattern, "${PROJECT}/secret/");
		free(p);
		p = pt_path("%s/none", f.proj);
		CU_ASSERT_EQUAL(sbx_decide_path(&f.c, p, R, &d), 0);
		CU_ASSERT_EQUAL(d.level, -1);
		CU_ASSERT(sbx_policy_rule(f.p, d.rule_id)->is_default);
		CU_ASSERT_EQUAL(d.rule_id, f.c.hdr.file_default_rule[R]);
		free(p);
	}
	fix_end(&f);
}

/* walk.bpf.c's generation check, mirrored: a compiled allow for a file
 * that was deleted does not pass to the next file that takes its inode
 * number (ext4 hands it out again), and the directory's deny decides */
SBX_TEST(policy_semantics, a_reused_inode_number_keeps_only_refusals)
{
	struct fix f;
	struct statfs sf;
	struct stat old, st;
	char *cfg, *key;

	fix_start(&f);
	touch(&f, "keys/config");
	cfg = pt_path("%s/keys/config", f.proj);
	key = pt_path("%s/keys/id_new", f.proj);
	if (statfs(f.proj, &sf) || sf.f_type != 0xEF53) {
		sbx_unit_skip("the scratch directory is not on ext2/3/4");
		goto out;
	}
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: \"${PROJECT}/keys/\", access: read, verdict: deny, reason: keys}\n"
		"    - {path: \"${PROJECT}/keys/config\", access: read, verdict: allow, reason: c}\n"));
	CU_ASSERT_EQUAL(pv(&f, "keys/config", R), SBX_V_ALLOW);
	CU_ASSERT_FATAL(stat(cfg, &old) == 0);
	unlink(cfg);
	touch(&f, "keys/id_new");
	CU_ASSERT_FATAL(stat(key, &st) == 0);
	if (st.st_ino != old.st_ino) {
		sbx_unit_skip("ext4 gave the new file another inode number");
		goto out;
	}
	CU_ASSERT_EQUAL(pv(&f, "keys/id_new", R), SBX_V_DENY);
out:
	free(cfg);
	free(key);
	fix_end(&f);
}

SBX_TEST(policy_semantics, deny_wins_ties)
{
	struct fix f;

	fix_start(&f);
	touch(&f, "logs/debug.log");
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: \"${PROJECT}/logs\", access: read, verdict: allow, reason: a}\n"
		"    - {path: \"${PROJECT}/logs/\", access: read, verdict: ask, reason: b}\n"
		"    - {path: \"*.log\", access: write, verdict: allow, reason: c}\n"
		"    - {path: \"debug*\", access: write, verdict: deny, reason: d}\n"));
	/* the same directory twice: the stricter verdict */
	CU_ASSERT_EQUAL(pv(&f, "logs/x", R), SBX_V_ASK);
	/* two wildcard names on the same component: deny */
	CU_ASSERT_EQUAL(pv(&f, "logs/debug.log", W), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "logs/app.log", W), SBX_V_ALLOW);
	fix_end(&f);
}

SBX_TEST(policy_semantics, names_and_subtrees)
{
	struct fix f;

	fix_start(&f);
	touch(&f, "keys/a.pem");
	touch(&f, "keys/b.pem");
	touch(&f, "keys/notes.txt");
	touch(&f, "sub/.env/inner");
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: \"${PROJECT}/keys/\", access: read, verdict: allow, reason: a}\n"
		"    - {path: \"*.pem\", access: read, verdict: deny, reason: b}\n"
		"    - {path: \"${PROJECT}/keys/b.pem\", access: read, verdict: allow, reason: c}\n"
		"    - {path: \"**/.env\", verdict: ask, reason: d}\n"));
	/* a name on the object beats a path rule on its directory */
	CU_ASSERT_EQUAL(pv(&f, "keys/a.pem", R), SBX_V_DENY);
	/* at the same level, an exact path beats a wildcard name */
	CU_ASSERT_EQUAL(pv(&f, "keys/b.pem", R), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(pv(&f, "keys/notes.txt", R), SBX_V_ALLOW);
	/* names match anywhere, below a matching directory, and on paths
	 * that do not exist yet */
	CU_ASSERT_EQUAL(pv(&f, "sub/.env/inner", R), SBX_V_ASK);
	CU_ASSERT_EQUAL(pv(&f, "new/dir/.env", W), SBX_V_ASK);
	CU_ASSERT_EQUAL(pt_verdict(&f.c, "/nonexistent/x.pem", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "keys/a.pem.bak", R), SBX_V_ALLOW);
	fix_end(&f);
}

SBX_TEST(policy_semantics, long_exact_names)
{
	struct fix f;
	char name[81];

	memset(name, 'n', 80);
	name[80] = 0;
	fix_start(&f);
	{
		char *rules = pt_path("    - {path: %s, access: read, verdict: deny, reason: long}\n"
				      "    - {path: \"%.60s*\", access: write, verdict: ask, reason: pre}\n",
				      name, name);

		CU_ASSERT_FATAL(fix_compile(&f, rules));
		free(rules);
	}
	/* names over 63 bytes share length bit 0 */
	CU_ASSERT((f.c.hdr.exact_len_mask & 1) != 0);
	CU_ASSERT((f.c.hdr.prefix_len_mask & (1ULL << 60)) != 0);
	CU_ASSERT_EQUAL(pv(&f, name, R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, name, W), SBX_V_ASK);
	name[79] = 'x';
	CU_ASSERT_EQUAL(pv(&f, name, R), SBX_V_ALLOW);
	fix_end(&f);
}

SBX_TEST(policy_semantics, chain_before_and_after_creation)
{
	struct fix f;
	char *aws;

	fix_start(&f);
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: ~/.aws/, access: read, verdict: ask, reason: cloud}\n"
		"    - {path: \"${PROJECT}/a/b/c/\", access: write, verdict: deny, reason: deep}\n"
		"    - {path: \"${PROJECT}\", access: write, verdict: allow, reason: ws}\n"));
	CU_ASSERT_EQUAL(f.c.hdr.max_chain, 3);
	/* before ~/.aws exists */
	CU_ASSERT_EQUAL(hv(&f, ".aws/credentials", R), SBX_V_ASK);
	CU_ASSERT_EQUAL(hv(&f, ".aws", R), SBX_V_ASK);
	CU_ASSERT_EQUAL(hv(&f, ".awsx", R), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(pv(&f, "a/b/c/d", W), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "a/b/x", W), SBX_V_ALLOW);
	/* create them: the same compiled policy still matches */
	aws = pt_path("%s/.aws", f.home);
	CU_ASSERT_EQUAL(mkdir(aws, 0700), 0);
	free(aws);
	aws = pt_path("%s/.aws/credentials", f.home);
	pt_write(aws, "[default]\n");
	free(aws);
	touch(&f, "a/b/c/d");
	CU_ASSERT_EQUAL(hv(&f, ".aws/credentials", R), SBX_V_ASK);
	CU_ASSERT_EQUAL(pv(&f, "a/b/c/d", W), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "a/b/c", W), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "a/b", W), SBX_V_ALLOW);
	fix_end(&f);
}

SBX_TEST(policy_semantics, replaced_file_stays_covered)
{
	struct fix f;
	char *a, *b;

	fix_start(&f);
	touch(&f, "conf.txt");
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: \"${PROJECT}/conf.txt\", access: read, verdict: deny, reason: r}\n"));
	/* an atomic replace gives the name a new inode */
	a = pt_path("%s/conf.txt.new", f.proj);
	b = pt_path("%s/conf.txt", f.proj);
	pt_write(a, "new\n");
	CU_ASSERT_EQUAL(rename(a, b), 0);
	CU_ASSERT_EQUAL(pt_verdict(&f.c, b, R), SBX_V_DENY);
	free(a);
	free(b);
	fix_end(&f);
}

SBX_TEST(policy_semantics, symlinked_rule_path)
{
	struct fix f;
	char *real, *link;

	fix_start(&f);
	touch(&f, "real/file");
	real = pt_path("%s/real", f.proj);
	link = pt_path("%s/link", f.proj);
	CU_ASSERT_EQUAL_FATAL(symlink(real, link), 0);
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: \"${PROJECT}/link/\", access: read, verdict: deny, reason: r}\n"));
	/* the rule names the target, whichever path reaches it */
	CU_ASSERT_EQUAL(pv(&f, "real/file", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "link/file", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "real/../other", R), SBX_V_ALLOW);
	free(real);
	free(link);
	fix_end(&f);
}

/*
 * The compiler resolves each rule's path with its parent directory
 * remembered from earlier rules; every shape must land where realpath()
 * would: below a symlinked directory, a symlink as the last name, "..",
 * a name below a regular file, and names below a directory that is
 * missing (several rules share each parent).
 */
SBX_TEST(policy_semantics, resolution_matches_realpath)
{
	struct fix f;
	char *tgt, *lnk, *flink;

	fix_start(&f);
	touch(&f, "real/sub/file");
	touch(&f, "real/sub/other");
	touch(&f, "real/target");
	touch(&f, "real/file2");
	tgt = pt_path("%s/real", f.proj);
	lnk = pt_path("%s/link", f.proj);
	flink = pt_path("%s/real/flink", f.proj);
	CU_ASSERT_EQUAL_FATAL(symlink(tgt, lnk), 0);
	CU_ASSERT_EQUAL_FATAL(symlink("target", flink), 0);
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: \"${PROJECT}/link/sub/file\", access: read, verdict: deny, reason: r}\n"
		"    - {path: \"${PROJECT}/link/sub/nope\", access: read, verdict: deny, reason: r}\n"
		"    - {path: \"${PROJECT}/real/flink\", access: read, verdict: deny, reason: r}\n"
		"    - {path: \"${PROJECT}/real/sub/../file2\", access: read, verdict: deny, reason: r}\n"
		"    - {path: \"${PROJECT}/real/file2/x\", access: read, verdict: deny, reason: r}\n"
		"    - {path: \"${PROJECT}/gone/a/b\", access: read, verdict: deny, reason: r}\n"
		"    - {path: \"${PROJECT}/gone/a/c\", access: read, verdict: deny, reason: r}\n"));
	CU_ASSERT_EQUAL(pv(&f, "real/sub/file", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "real/sub/other", R), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(pv(&f, "real/target", R), SBX_V_DENY);	/* the symlink's target */
	CU_ASSERT_EQUAL(pv(&f, "real/file2", R), SBX_V_DENY);
	/* names that do not exist yet: the chain below the nearest directory */
	touch(&f, "real/sub/nope");
	CU_ASSERT_EQUAL(pv(&f, "real/sub/nope", R), SBX_V_DENY);
	touch(&f, "gone/a/b");
	touch(&f, "gone/a/c");
	touch(&f, "gone/a/d");
	CU_ASSERT_EQUAL(pv(&f, "gone/a/b", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "gone/a/c", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "gone/a/d", R), SBX_V_ALLOW);
	free(tgt);
	free(lnk);
	free(flink);
	fix_end(&f);
}

/* is the directory at path an inode entry with pinned set? */
static bool pinned_dir(const struct sbx_compiled *c, const char *path)
{
	uint32_t dev;
	uint64_t ino;

	if (sbx_kident(path, true, &dev, &ino))
		return false;
	for (size_t i = 0; i < c->n_inode; i++)
		if (c->inode[i].k.dev == dev && c->inode[i].k.ino == ino)
			return c->inode[i].v.pinned;
	return false;
}

/*
 * The compiler asks the file system about a path once and pins a
 * directory's ancestors once: a path named by two rules keeps both
 * rules, a missing path named twice keeps both, and every directory
 * above each rule's path is pinned, however many rules share it.
 */
SBX_TEST(policy_semantics, repeated_paths_and_shared_ancestors)
{
	const char *dirs[] = { "a", "a/b", "a/b/c", "a/d" };
	struct fix f;
	char *p;

	fix_start(&f);
	touch(&f, "a/b/c/file");
	touch(&f, "a/d/other");
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: \"${PROJECT}/a/b/c/file\", access: read, verdict: deny, reason: r}\n"
		"    - {path: \"${PROJECT}/a/b/c/file\", access: exec, verdict: ask, reason: r}\n"
		"    - {path: \"${PROJECT}/a/b/gone/x\", access: read, verdict: deny, reason: r}\n"
		"    - {path: \"${PROJECT}/a/b/gone/x\", access: exec, verdict: deny, reason: r}\n"
		"    - {path: \"${PROJECT}/a/d/other\", access: read, verdict: ask, reason: r}\n"));
	CU_ASSERT_EQUAL(pv(&f, "a/b/c/file", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "a/b/c/file", X), SBX_V_ASK);
	CU_ASSERT_EQUAL(pv(&f, "a/d/other", R), SBX_V_ASK);
	touch(&f, "a/b/gone/x");
	CU_ASSERT_EQUAL(pv(&f, "a/b/gone/x", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "a/b/gone/x", X), SBX_V_DENY);
	CU_ASSERT(pinned_dir(&f.c, "/"));
	CU_ASSERT(pinned_dir(&f.c, f.proj));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		p = pt_path("%s/%s", f.proj, dirs[i]);
		if (!pinned_dir(&f.c, p))
			CU_FAIL("a directory above a rule's path is not pinned");
		free(p);
	}
	fix_end(&f);
}

SBX_TEST(policy_semantics, hard_link_made_before)
{
	struct fix f;
	char *ssh, *key, *kh, *copy, *khcopy;
	struct stat st;

	fix_start(&f);
	ssh = pt_path("%s/.ssh", f.home);
	key = pt_path("%s/.ssh/id_rsa", f.home);
	kh = pt_path("%s/.ssh/known_hosts", f.home);
	copy = pt_path("%s/innocent.txt", f.proj);
	khcopy = pt_path("%s/hosts.txt", f.proj);
	pt_mkdirs(ssh);
	pt_write(key, "PRIVATE\n");
	pt_write(kh, "host\n");
	CU_ASSERT_EQUAL_FATAL(link(key, copy), 0);
	CU_ASSERT_EQUAL_FATAL(link(kh, khcopy), 0);
	CU_ASSERT_EQUAL_FATAL(stat(copy, &st), 0);
	CU_ASSERT_EQUAL(st.st_nlink, 2);
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: ~/.ssh/, access: [read, write], verdict: deny, reason: keys}\n"
		"    - {path: ~/.ssh/known_hosts, access: read, verdict: allow, reason: hosts}\n"));
	CU_ASSERT_EQUAL(pt_verdict(&f.c, key, R), SBX_V_DENY);
	/* the other name of the key is denied too... */
	CU_ASSERT_EQUAL(pt_verdict(&f.c, copy, R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pt_verdict(&f.c, copy, W), SBX_V_DENY);
	/* ...but a file the policy allows inside keeps its verdict */
	CU_ASSERT_EQUAL(pt_verdict(&f.c, kh, R), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(pt_verdict(&f.c, khcopy, R), SBX_V_ALLOW);
	free(ssh);
	free(key);
	free(kh);
	free(copy);
	free(khcopy);
	fix_end(&f);
}

/*
 * The same where statx is refused (the seccomp profile of an older
 * container runtime answers EPERM; the landlock tier's run compiles in
 * the caller's environment): the scan falls back to lstat instead of
 * finding no link. In a child, whose filter dies with it.
 */
SBX_TEST(policy_semantics, hard_link_found_where_statx_is_refused)
{
	struct fix f;
	int st = -1;
	pid_t pid;

	fix_start(&f);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
		char *key = pt_path("%s/.ssh/id_rsa", f.home), *copy;
		struct statx sx;

		copy = pt_path("%s/innocent.txt", f.proj);
		pt_mkdirs(pt_path("%s/.ssh", f.home));
		pt_write(key, "PRIVATE\n");
		if (!ctx || link(key, copy) ||
		    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(statx), 0) ||
		    seccomp_load(ctx))
			_exit(2);
		if (statx(AT_FDCWD, key, 0, STATX_BASIC_STATS, &sx) != -1 || errno != EPERM)
			_exit(3);	/* the filter is not in force: no test */
		if (!fix_compile(&f, "    - {path: ~/.ssh/, access: read, verdict: deny, "
				     "reason: keys}\n"))
			_exit(4);
		_exit(pt_verdict(&f.c, copy, R) == SBX_V_DENY ? 0 : 1);
	}
	CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
	CU_ASSERT(WIFEXITED(st));
	if (WIFEXITED(st) && WEXITSTATUS(st))
		fprintf(stderr, "child: exit %d (1: the key's second name is not denied)\n",
			WEXITSTATUS(st));
	CU_ASSERT_EQUAL(WEXITSTATUS(st), 0);
	fix_end(&f);
}

SBX_TEST(policy_semantics, builtins_override_policy)
{
	struct fix f;
	struct sbx_policy_env env;
	struct sbx_decision d;
	char *pol, *sb, *y;

	fix_start(&f);
	pol = pt_path("%s/.sandbox/policy.yaml", f.proj);
	sb = pt_path("%s/.sandbox", f.proj);
	pt_mkdirs(sb);
	y = pt_path("version: 1\n"
		    "files:\n"
		    "  default: allow\n"
		    "  rules:\n"
		    "    - {path: \"${PROJECT}\", verdict: allow, reason: everything}\n"
		    "    - {path: \"${PROJECT}/.sandbox/\", access: write, verdict: allow, reason: bad idea}\n"
		    "network: {default: allow}\n");
	pt_write(pol, y);
	/* the same policy file, out of .sandbox, to test "protected" alone */
	free(pol);
	pol = pt_path("%s/policy.yaml", f.proj);
	pt_write(pol, y);
	pt_env(&env, f.home, f.proj);
	f.p = sbx_policy_load_file(pol, &env, &f.d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.p);
	CU_ASSERT(pt_has_diag(&f.d, SBX_DIAG_WARNING, "never takes effect"));
	CU_ASSERT_EQUAL_FATAL(sbx_policy_compile(f.p, 3, &f.c, &f.d), 0);
	CU_ASSERT_EQUAL(f.c.n_protect, 1);
	CU_ASSERT_EQUAL(sbx_decide_path(&f.c, sb, W, &d), 0);
	CU_ASSERT_EQUAL(d.verdict, SBX_V_DENY);
	CU_ASSERT_EQUAL(d.rule_id, SBX_RULE_SANDBOX_DIR);
	CU_ASSERT_EQUAL(pv(&f, ".sandbox/escalations/pending/x.json", W), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "deep/.sandbox/new", W), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, ".sandbox/policy.yaml", R), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(sbx_decide_path(&f.c, pol, W, &d), 0);
	CU_ASSERT_EQUAL(d.verdict, SBX_V_DENY);
	CU_ASSERT_EQUAL(d.rule_id, SBX_RULE_PROTECTED);
	CU_ASSERT_EQUAL(pv(&f, "src.c", W), SBX_V_ALLOW);
	/* the policy-only decision used while compiling ignores built-ins */
	CU_ASSERT_EQUAL(sbx_decide_path_policy(&f.c, sb, W, &d), 0);
	CU_ASSERT_EQUAL(d.verdict, SBX_V_ALLOW);
	{
		struct statfs sf;

		/* pseudo file systems, where the host has one mounted */
		if (!statfs("/sys/fs/bpf", &sf) && sf.f_type == 0xcafe4a11) {
			CU_ASSERT_EQUAL(sbx_decide_path(&f.c, "/sys/fs/bpf/x", W, &d), 0);
			CU_ASSERT_EQUAL(d.rule_id, SBX_RULE_PSEUDOFS);
		}
	}
	free(pol);
	free(sb);
	free(y);
	fix_end(&f);
}

SBX_TEST(policy_semantics, extends_merge_and_ids)
{
	struct fix f;
	struct sbx_policy_env env;
	char *parent, *child, *cyc;

	fix_start(&f);
	parent = pt_path("%s/parent.yaml", f.proj);
	child = pt_path("%s/child.yaml", f.proj);
	cyc = pt_path("%s/cyc.yaml", f.proj);
	pt_write(parent, "version: 1\n"
		 "files:\n"
		 "  default: {read: allow, write: deny, exec: allow}\n"
		 "  rules:\n"
		 "    - {path: \"${PROJECT}/p\", access: read, verdict: deny, reason: from parent}\n"
		 "network: {default: ask}\n");
	pt_write(child, "version: 1\n"
		 "extends: ./parent.yaml\n"
		 "files:\n"
		 "  default: {write: allow}\n"
		 "  rules:\n"
		 "    - {path: \"${PROJECT}/p\", access: read, verdict: allow, reason: child tries}\n"
		 "    - {path: \"${PROJECT}/c\", access: read, verdict: deny, reason: from child}\n");
	pt_env(&env, f.home, f.proj);
	f.p = sbx_policy_load_file(child, &env, &f.d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.p);
	CU_ASSERT_EQUAL_FATAL(sbx_policy_compile(f.p, 1, &f.c, &f.d), 0);
	/* parent's entries first: 3 defaults, its rule, network default */
	CU_ASSERT_STRING_EQUAL(sbx_policy_rule(f.p, 4)->reason, "from parent");
	CU_ASSERT(sbx_policy_rule(f.p, 5)->is_default);
	CU_ASSERT(sbx_policy_rule(f.p, 6)->is_default);
	CU_ASSERT_EQUAL(sbx_policy_source_count(f.p), 2);
	CU_ASSERT_EQUAL(f.c.n_protect, 2);
	/* the child's write default replaces the parent's; read stays */
	CU_ASSERT_EQUAL(f.c.hdr.file_default[W], SBX_V_ALLOW);
	CU_ASSERT_EQUAL(f.c.hdr.file_default_rule[W], 6);
	CU_ASSERT_EQUAL(f.c.hdr.file_default_rule[R], 1);
	CU_ASSERT_EQUAL(f.c.hdr.net_default, SBX_V_ASK);
	/* rules add up: a child cannot undo a parent's deny on the same path */
	CU_ASSERT_EQUAL(pv(&f, "p", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "c", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "x", W), SBX_V_ALLOW);
	/* a two-file cycle */
	pt_write(cyc, "version: 1\nextends: ./child.yaml\n");
	pt_write(parent, "version: 1\nextends: ./cyc.yaml\n");
	{
		struct sbx_diags d = { 0 };

		CU_ASSERT_PTR_NULL(sbx_policy_load_file(child, &env, &d));
		CU_ASSERT(pt_has_diag(&d, SBX_DIAG_ERROR, "extends cycle"));
		sbx_diags_free(&d);
	}
	free(parent);
	free(child);
	free(cyc);
	fix_end(&f);
}

SBX_TEST(policy_semantics, proc_rules_and_header)
{
	struct fix f;

	fix_start(&f);
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: [/proc/*/environ, /proc/*/mem, /proc/*/fd], verdict: ask, reason: a}\n"
		"    - {path: /proc/*/mem, access: read, verdict: deny, reason: b}\n"));
	CU_ASSERT((f.c.hdr.flags & SBX_PF_PROC_OTHERS) != 0);
	CU_ASSERT_EQUAL(f.c.hdr.proc_verdict, SBX_V_DENY);
	/* no files.default.connect: a listener outside the session is refused */
	CU_ASSERT_EQUAL(f.c.hdr.file_default[SBX_ACC_CONNECT], SBX_V_DENY);
	CU_ASSERT_EQUAL(f.c.hdr.file_default_rule[SBX_ACC_CONNECT], SBX_RULE_LISTENER_OUTSIDE);
	CU_ASSERT_EQUAL(f.c.hdr.policy_id, 7);
	fix_end(&f);
}

SBX_TEST(policy_semantics, entries_sorted_unique)
{
	struct fix f;

	fix_start(&f);
	touch(&f, "a/b");
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: [\"${PROJECT}/a\", \"${PROJECT}/a/\", \"${PROJECT}/a/**\"], access: read, verdict: deny, reason: a}\n"
		"    - {path: \"${PROJECT}/a\", access: write, verdict: ask, reason: b}\n"
		"    - {path: [x, y, \"z*\", \"*w\", \"${PROJECT}/new/deep\"], verdict: deny, reason: c}\n"));
	for (size_t i = 1; i < f.c.n_inode; i++)
		CU_ASSERT(memcmp(&f.c.inode[i - 1].k, &f.c.inode[i].k, sizeof(f.c.inode[i].k)) < 0);
	for (size_t i = 1; i < f.c.n_chain; i++)
		CU_ASSERT(memcmp(&f.c.chain[i - 1].k, &f.c.chain[i].k, sizeof(f.c.chain[i].k)) < 0);
	for (size_t i = 1; i < f.c.n_name; i++)
		CU_ASSERT(memcmp(&f.c.name[i - 1].k, &f.c.name[i].k, sizeof(f.c.name[i].k)) < 0);
	CU_ASSERT_EQUAL(f.c.n_name, 5);	/* and network.inbound's port-0 entry */
	/* the three spellings of a/ merged into one inode entry (plus the
	 * parent's anchor with chain_mask, and the new/deep anchor) */
	{
		size_t with_a = 0;

		for (size_t i = 0; i < f.c.n_inode; i++)
			if (f.c.inode[i].v.verdict[R] == SBX_V_DENY) {
				with_a++;
				CU_ASSERT_EQUAL(f.c.inode[i].v.verdict[W], SBX_V_ASK);
			}
		CU_ASSERT_EQUAL(with_a, 1);
	}
	fix_end(&f);
}

/*
 * A second name of a file below a denied directory stays denied: the
 * compiler scans the directory for hard links. A connector inside a
 * session compiles without that scan (the kernel has the entries, and the
 * scan would read a directory the policy asks a person about); its
 * compiled form then names no scanned directory at all.
 */
SBX_TEST(policy_semantics, hard_links_scanned_unless_told_not_to)
{
	const char *rules =
		"    - {path: \"${PROJECT}/vault/\", access: read, verdict: deny, reason: r}\n";
	struct fix f;
	char *k, *k2, *y;

	fix_start(&f);
	touch(&f, "vault/key");
	k = pt_path("%s/vault/key", f.proj);
	k2 = pt_path("%s/elsewhere", f.proj);
	CU_ASSERT_EQUAL_FATAL(link(k, k2), 0);
	CU_ASSERT_FATAL(fix_compile(&f, rules));
	CU_ASSERT_EQUAL(f.c.n_scan_dirs, 1);
	CU_ASSERT_EQUAL(pt_verdict(&f.c, k2, R), SBX_V_DENY);
	sbx_compiled_free(&f.c);
	sbx_policy_free(f.p);
	sbx_diags_free(&f.d);

	y = pt_path("version: 1\nfiles:\n  default: {read: allow, write: deny, exec: allow}\n"
		    "  rules:\n%snetwork: {default: deny}\n", rules);
	f.p = pt_load(y, f.home, f.proj, &f.d);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f.p);
	f.p->no_hardlink_scan = true;
	CU_ASSERT_EQUAL_FATAL(sbx_policy_compile(f.p, 7, &f.c, &f.d), 0);
	CU_ASSERT_EQUAL(f.c.n_scan_dirs, 0);
	/* the directory's own files are still denied by the rule */
	CU_ASSERT_EQUAL(pt_verdict(&f.c, k, R), SBX_V_DENY);
	free(y);
	free(k);
	free(k2);
	fix_end(&f);
}

/* The inode entry of path in c, or NULL. */
static const struct sbx_inode_entry *entry_of(const struct sbx_compiled *c, const char *path)
{
	uint32_t dev;
	uint64_t ino;

	if (sbx_kident(path, true, &dev, &ino))
		return NULL;
	for (size_t i = 0; i < c->n_inode; i++)
		if (c->inode[i].k.dev == dev && c->inode[i].k.ino == ino &&
		    c->inode[i].k.policy_id == c->hdr.policy_id)
			return &c->inode[i];
	return NULL;
}

/* A graft of path with what is there now, as a container adopted now has
 * it (user/daemon/containers.c). */
static int graft_now(struct sbx_compiled *c, const char *path, char **why)
{
	struct sbx_graft g = { .path = (char *)path };

	if (sbx_kident(path, true, &g.dev, &g.ino))
		return -ENOENT;
	return sbx_compiled_graft(c, &g, why);
}

/*
 * A container's bind mount is entered at its root, from the container's
 * side (policy/graft.c): the root carries what the host decides there,
 * for every access its own rules leave open, the default included; host
 * decisions do not move; a mount inside .sandbox is refused.
 */
SBX_TEST(policy_semantics, a_graft_carries_the_host_decision_onto_a_mount_root)
{
	struct fix f;
	char *why = NULL, *sub, *pub, *sb;
	const struct sbx_inode_entry *e;

	fix_start(&f);
	touch(&f, "secret/sub/key");
	touch(&f, "secret/public/readme");
	touch(&f, ".sandbox/escalations/done/x");
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: \"${PROJECT}/secret/\", access: read, verdict: deny, reason: secrets}\n"
		"    - {path: \"${PROJECT}/secret/public\", access: read, verdict: allow, reason: p}\n"
		"    - {path: \"${PROJECT}\", access: write, verdict: allow, reason: workspace}\n"));
	sub = pt_path("%s/secret/sub", f.proj);
	pub = pt_path("%s/secret/public", f.proj);
	sb = pt_path("%s/.sandbox/escalations", f.proj);
	CU_ASSERT_PTR_NULL(entry_of(&f.c, sub));
	CU_ASSERT_EQUAL(graft_now(&f.c, sub, &why), 0);
	e = entry_of(&f.c, sub);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(e->v.verdict[R], SBX_V_DENY);	/* secret/'s, from above */
	CU_ASSERT_EQUAL(e->v.verdict[W], SBX_V_ALLOW);	/* the project's */
	CU_ASSERT_EQUAL(e->v.verdict[X], SBX_V_ALLOW);	/* the default, said */
	CU_ASSERT_STRING_EQUAL(sbx_policy_rule(f.p, e->v.rule_id[R])->pattern,
			       "${PROJECT}/secret/");
	/* an object of its own rule keeps it, and gets the rest */
	CU_ASSERT_EQUAL(graft_now(&f.c, pub, &why), 0);
	e = entry_of(&f.c, pub);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(e->v.verdict[R], SBX_V_ALLOW);
	CU_ASSERT_EQUAL(e->v.verdict[W], SBX_V_ALLOW);
	/* still sorted: every host decision as before */
	for (size_t i = 1; i < f.c.n_inode; i++)
		CU_ASSERT(memcmp(&f.c.inode[i - 1].k, &f.c.inode[i].k, sizeof(f.c.inode[i].k)) < 0);
	CU_ASSERT_EQUAL(pv(&f, "secret/sub/key", R), SBX_V_DENY);
	CU_ASSERT_EQUAL(pv(&f, "secret/public/readme", R), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(pv(&f, "secret/sub/key", W), SBX_V_ALLOW);
	/* the queue cannot be mounted into a session */
	CU_ASSERT_EQUAL(graft_now(&f.c, sb, &why), -EPERM);
	CU_ASSERT_PTR_NOT_NULL(why && strstr(why, ".sandbox"));
	free(why);
	why = NULL;
	free(sub);
	free(pub);
	free(sb);
	fix_end(&f);
}

/*
 * A mounted directory that a host agent moves, removes or replaces after
 * the container started: the next compile of the container's policy (a
 * reload, a new machine floor) denies the mount root everything, by its
 * identity, and does not fail (which would fail the floor's all-or-none
 * apply for every session).
 */
SBX_TEST(policy_semantics, a_graft_whose_source_moved_denies_its_root_and_compiles)
{
	struct fix f;
	char *why = NULL, *sub, *moved, *readme;
	struct sbx_graft g = {};
	const struct sbx_inode_entry *e;

	fix_start(&f);
	touch(&f, "data/sub/key");
	touch(&f, "readme");
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: \"${PROJECT}\", access: [read, write], verdict: allow, reason: ws}\n"));
	sub = pt_path("%s/data/sub", f.proj);
	moved = pt_path("%s/moved", f.proj);
	readme = pt_path("%s/readme", f.proj);
	g.path = sub;
	CU_ASSERT_FATAL(sbx_kident(sub, true, &g.dev, &g.ino) == 0);
	CU_ASSERT_FATAL(rename(sub, moved) == 0);
	CU_ASSERT_EQUAL(sbx_compiled_graft(&f.c, &g, &why), 0);
	CU_ASSERT_PTR_NULL(why);
	e = entry_of(&f.c, moved);	/* the mount root, wherever it is now */
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		CU_ASSERT_EQUAL(e->v.verdict[a], SBX_V_DENY);
		CU_ASSERT_EQUAL(e->v.rule_id[a], SBX_RULE_MOUNT_MOVED);
	}
	/* its path now names another directory: that one is not the root */
	CU_ASSERT_FATAL(mkdir(sub, 0755) == 0);
	CU_ASSERT_EQUAL(sbx_compiled_graft(&f.c, &g, &why), 0);
	CU_ASSERT_PTR_NULL(entry_of(&f.c, sub));
	CU_ASSERT_EQUAL(entry_of(&f.c, moved)->v.verdict[R], SBX_V_DENY);
	/* a file in its place: the same */
	CU_ASSERT_FATAL(rmdir(sub) == 0);
	CU_ASSERT_FATAL(rename(readme, sub) == 0);
	CU_ASSERT_EQUAL(sbx_compiled_graft(&f.c, &g, &why), 0);
	CU_ASSERT_PTR_NULL(entry_of(&f.c, sub));
	free(sub);
	free(moved);
	free(readme);
	fix_end(&f);
}

/* A character device's rule holds for any node of the device: the
 * container's /dev/null is its runtime's mknod, not the host's inode. */
SBX_TEST(policy_semantics, a_device_rule_holds_for_every_node_of_the_device)
{
	struct fix f;
	struct sbx_decision d;

	fix_start(&f);
	CU_ASSERT_FATAL(fix_compile(&f,
		"    - {path: /dev/null, access: write, verdict: allow, reason: null}\n"));
	CU_ASSERT_EQUAL(pt_verdict(&f.c, "/dev/null", W), SBX_V_ALLOW);
	CU_ASSERT_EQUAL(pt_verdict(&f.c, "/dev/zero", W), SBX_V_DENY);
	{
		char *node = pt_path("%s/null-copy", f.proj);

		if (mknod(node, S_IFCHR | 0666, makedev(1, 3)) == 0) {
			CU_ASSERT_EQUAL(sbx_decide_path(&f.c, node, W, &d), 0);
			CU_ASSERT_EQUAL(d.verdict, SBX_V_ALLOW);
			CU_ASSERT_EQUAL(d.level, 0);
			unlink(node);
		} else {
			/* no CAP_MKNOD here: the kernel suite makes the node */
			CU_ASSERT_EQUAL(errno, EPERM);
		}
		free(node);
	}
	fix_end(&f);
}
