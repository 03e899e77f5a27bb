// SPDX-License-Identifier: GPL-2.0
/*
 * The exec check, through sbx_bprm_check: the decision is on the file the
 * kernel is about to run, never on the name that was asked for. An
 * exec-deny rule on a file's inode refuses it under its own name, through
 * a symlink and through a hard link in an allowed directory, while a copy
 * of the same bytes runs and its verdict lands in the inode's verdict
 * cache (a file with two names gets none).
 * A file with no name left (memfd) is refused unless the policy allows it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bpf/sbx_values.h"
#include "prog_tests.h"

#define DIR_ "/tmp/sbx-prog-exec"
#define TOOL DIR_ "/deny/tool"
#define POLICY 13
#define RULE_TOOL 37

static int exec_errno(void *path)
{
	char *argv[] = { path, NULL }, *envp[] = { NULL };

	execve(path, argv, envp);
	return errno;
}

/* the same from a process in no session */
static int exec_outside(const char *path)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(exec_errno((void *)path) & 0xff);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* /bin/true's bytes in a memfd, run through its descriptor */
static int exec_memfd(void *unused)
{
	char buf[65536], *argv[] = { "true", NULL }, *envp[] = { NULL };
	int in = open("/bin/true", O_RDONLY), fd = memfd_create("sbx-prog", 0);
	ssize_t n;

	(void)unused;
	if (in < 0 || fd < 0)
		return 254;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			return 254;
	close(in);
	fexecve(fd, argv, envp);
	return errno;
}

static int exec_check(void)
{
	struct sbx_policy_hdr pol = { .policy_id = POLICY };
	struct sbx_vcache vc = {};
	struct stat st;
	struct pt t;
	int fd, rc, n;

	for (int a = 0; a < SBX_ACC_MAX; a++)
		pol.file_default[a] = SBX_V_ALLOW;
	if (system("rm -rf " DIR_ " && mkdir -p " DIR_ "/deny " DIR_ "/ok && "
		   "cp /bin/true " TOOL " && cp /bin/true " DIR_ "/ok/copy && "
		   "ln " TOOL " " DIR_ "/ok/hardlink && ln -s ../deny/tool " DIR_ "/ok/symlink")) {
		printf("FAIL: sbx_bprm_check: cannot make " DIR_ "\n");
		return 1;
	}
	if (pt_setup(&t, "sbx_bprm_check", &pol))
		goto out;
	/* the daemon's compiled "exec: deny" on the file itself */
	stat(TOOL, &st);
	pt_inode_rule(&t, TOOL, SBX_ACC_EXEC, SBX_V_DENY, RULE_TOOL, false);

	rc = pt_in_session(&t, exec_errno, TOOL);
	PT_CHECK(&t, rc == EPERM, "exec of the denied file: %d, want EPERM", rc);
	rc = pt_in_session(&t, exec_errno, DIR_ "/ok/symlink");
	PT_CHECK(&t, rc == EPERM, "exec through a symlink to it: %d, want EPERM", rc);
	rc = pt_in_session(&t, exec_errno, DIR_ "/ok/hardlink");
	PT_CHECK(&t, rc == EPERM, "exec through a hard link to it: %d, want EPERM", rc);
	rc = pt_in_session(&t, exec_errno, DIR_ "/ok/copy");
	PT_CHECK(&t, rc == 0, "exec of a copy (another inode): %d, want 0 (the default)", rc);
	rc = pt_in_session(&t, exec_errno, "/bin/true");
	PT_CHECK(&t, rc == 0, "exec of /bin/true: %d, want 0", rc);
	rc = exec_outside(TOOL);
	PT_CHECK(&t, rc == 0, "outside the session: %d, want 0", rc);
	n = pt_events(&t);
	PT_CHECK(&t, n == 3, "%d events, want 3 (one per refused exec)", n);
	for (int i = 0; i < n && i < 3; i++)
		PT_CHECK(&t, t.ev[i].op == SBX_OP_EXEC && t.ev[i].verdict == SBX_V_DENY &&
			     t.ev[i].rule_id == RULE_TOOL && t.ev[i].cgid == t.cgid &&
			     t.ev[i].ino == st.st_ino,
			 "event %d: op %u verdict %u rule %u ino %llu", i, t.ev[i].op,
			 t.ev[i].verdict, t.ev[i].rule_id, (unsigned long long)t.ev[i].ino);
	PT_CHECK(&t, pt_stat(&t, SBX_STAT_DENY) == 3, "deny count %llu, want 3",
		 (unsigned long long)pt_stat(&t, SBX_STAT_DENY));

	/* the map effect: a verdict is cached on an inode with one name (the
	 * copy); the denied file has two, and a cached verdict could stand
	 * for one of them only, so it is walked every time */
	fd = open(DIR_ "/ok/copy", O_RDONLY);
	rc = bpf_map_lookup_elem(bpf_map__fd(t.skel->maps.sbx_vcache), &fd, &vc);
	PT_CHECK(&t, rc == 0, "no verdict cached on the copy that ran");
	PT_CHECK(&t, rc || (vc.policy_id == POLICY && (vc.valid & SBX_ACCBIT(SBX_ACC_EXEC)) &&
			    vc.v[SBX_ACC_EXEC] == SBX_V_ALLOW),
		 "cached verdict policy %u valid %#x exec %u", vc.policy_id, vc.valid,
		 vc.v[SBX_ACC_EXEC]);
	close(fd);
	fd = open(TOOL, O_RDONLY);
	rc = bpf_map_lookup_elem(bpf_map__fd(t.skel->maps.sbx_vcache), &fd, &vc);
	PT_CHECK(&t, rc != 0, "a verdict was cached on a file with two names");
	close(fd);

	/* a file with no name: refused by the built-in rule, then allowed by
	 * the policy's flag */
	rc = pt_in_session(&t, exec_memfd, NULL);
	PT_CHECK(&t, rc == EPERM, "exec of a memfd: %d, want EPERM", rc);
	n = pt_events(&t);
	PT_CHECK(&t, n == 1 && t.ev[0].op == SBX_OP_EXEC && t.ev[0].rule_id == SBX_RULE_EXEC_KIND,
		 "%d events, the first with op %u rule %u; want 1 with rule exec-kind", n,
		 n ? t.ev[0].op : 0, n ? t.ev[0].rule_id : 0);
	t.sess.pol.flags |= SBX_PF_ALLOW_MEMFD_EXEC;
	bpf_map_update_elem(bpf_map__fd(t.skel->maps.sbx_sessions), &t.cgid, &t.sess, BPF_ANY);
	rc = pt_in_session(&t, exec_memfd, NULL);
	PT_CHECK(&t, rc == 0, "exec of a memfd the policy allows: %d, want 0", rc);
out:
	pt_teardown(&t);
	system("rm -rf " DIR_);
	return t.failed || !t.link;
}
PT_TEST(exec_check);
