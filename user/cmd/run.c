// SPDX-License-Identifier: GPL-2.0
/*
 * run.c - `bpfsbx run [--policy FILE] [--project DIR] -- CMD...`
 *
 * With a daemon up, `run` asks it (over the control socket) to create a
 * session and move this very process into it; from then on `run` and
 * everything it starts are confined. It then executes CMD in place: the
 * process the caller started is CMD, with its pid, its signals and its
 * exit status (a shell reports 128+N when it died of signal N).
 *
 * With no daemon, root may run a one-off session: `run` becomes an
 * embedded daemon for it, outside the session, and the command runs as
 * the user who invoked sudo (SUDO_UID), not as root, unless --as-root.
 *
 * --learn: the policy's denies and asks are recorded instead of enforced,
 * except the protected set (policy/learn.c), for `policy suggest`.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/keyctl.h>
#include <unistd.h>
#include "user/cmd/cmd.h"
#include "user/control/control_client.h"
#include "user/daemon/kernel.h"
#include "user/daemon/loop.h"
#include "user/daemon/sessions.h"
#include "user/sandbox/confine.h"
#include "user/sandbox/tier.h"
#include "lib/project.h"
#include "lib/names.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/privs.h"
#include "lib/shipped.h"
#include "lib/text.h"
#include "lib/json.h"


static void usage(FILE *f)
{
	sbx_cmd_help(f, sbx_cmd_find("run"));
}

static int exit_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return SBX_EXIT_FAIL;
}

static void __attribute__((noreturn)) exec_cmd(char **argv)
{
	execvp(argv[0], argv);
	fprintf(stderr, "bpfsbx: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/*
 * The session keyring that `run` inherits is the login's (pam_keyinit
 * links the user keyring into it), and the kernel refuses a session every
 * key it did not make (bpf/ipc.bpf.c). So CMD starts with an empty session
 * keyring of its own, made from inside the session, for the programs that
 * keep keys there (keyctl, Kerberos' KEYRING cache). Without one they
 * would only fail: nothing is opened by going on.
 */
static void join_own_keyring(void)
{
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
		sbx_warn("cannot make the session's own keyring: %s", strerror(errno));
}

/*
 * On the fallback tier (tier is not "bpf-lsm": whatever else a daemon
 * says, the kernel does not confine files here), confine this process
 * before it becomes CMD; on any error CMD is not run. On a terminal the
 * first line names the tier, so nobody mistakes it for the full one.
 */
static int confine_for_tier(const char *tier, int abi, bool kdec, const char *policy,
			    const char *project)
{
	char *err = NULL;

	if (tier && !strcmp(tier, sbx_tier_name(SBX_TIER_BPF_LSM)))
		return 0;
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "bpfsbx: tier landlock (Landlock ABI %d, no BPF-LSM): files and exec "
			"by Landlock, network by the cgroup programs, the never-list by seccomp "
			"(bpfsbx doctor lists what is not enforced)\n", abi);
	if (sbx_fallback_confine(policy, getenv("HOME") ? getenv("HOME") : "/", project, kdec,
				 &err)) {
		sbx_err("run: %s", err ? err : "the fallback tier could not be applied");
		free(err);
		return -1;
	}
	return 0;
}

/* Errors all; warnings (often "host did not resolve" on a machine without
 * DNS) only the first few, so that the command's own output stays visible. */
static void print_diag_list(json_t *diags)
{
	size_t i, warned = 0, more = 0;
	json_t *v;

	json_array_foreach(diags, i, v) {
		const char *d = json_string_value(v);

		if (!d)
			continue;
		if (strstr(d, ": warning: ") && ++warned > 3) {
			more++;
			continue;
		}
		fprintf(stderr, "%s\n", d);
	}
	if (more)
		fprintf(stderr, "bpfsbx: ... and %zu more warning(s); 'bpfsbx policy check' "
			"shows them all\n", more);
}

static void print_diags(json_t *r)
{
	print_diag_list(json_object_get(r, "diagnostics"));
}

/* Returns only on failure; *no_daemon when nothing listens on the socket
 * (nothing was sent, so the caller may start a one-off session). */
/* the session's first line on a terminal, so that nobody takes a
 * learning session for an enforcing one */
static void say_learning(const char *sess)
{
	fprintf(stderr, "bpfsbx: session %s is learning: the policy's denies and asks are "
		"recorded, not enforced, except credentials, persistence paths and the "
		"protected set; then 'bpfsbx policy suggest --session %s'\n", sess, sess);
}

static int run_with_daemon(const char *policy, const char *project, char **cmd, bool learn,
			   bool *no_daemon)
{
	json_t *req, *reply = NULL;
	char *err = NULL, *tier;
	const char *sess;
	int rc, abi;
	bool kdec;

	req = json_pack("{s:s,s:s,s:s,s:s}", "op", "run", "policy_path", policy, "project",
			project, "home", getenv("HOME") ? getenv("HOME") : "");
	if (learn)
		json_object_set_new(req, "learn", json_true());
	/* the daemon says on this terminal when the session asks a person
	 * (this process becomes CMD and cannot say it later) */
	rc = sbx_ctl_call_fd(req, isatty(STDERR_FILENO) ? STDERR_FILENO : -1, &reply, &err);
	json_decref(req);
	if (rc == -ENOENT || rc == -ECONNREFUSED) {
		*no_daemon = true;
		free(err);
		return SBX_EXIT_FAIL;
	}
	if (rc) {
		sbx_err("%s", err);
		free(err);
		return SBX_EXIT_FAIL;
	}
	if (!json_is_true(json_object_get(reply, "ok"))) {
		print_diags(reply);
		sbx_err("%s", sbx_json_str(reply, "error"));
		json_decref(reply);
		return SBX_EXIT_FAIL;
	}
	print_diags(reply);	/* warnings */
	sess = sbx_json_str(reply, "session");
	if (learn && !json_is_true(json_object_get(reply, "learning"))) {
		/* a daemon that does not know the option: enforcing is not
		 * what was asked for, so say so rather than run */
		sbx_err("run --learn: the daemon did not start a learning session (an older "
			"daemon?); nothing was run");
		json_decref(reply);
		return SBX_EXIT_FAIL;
	}
	if (learn)
		say_learning(sess ? sess : "?");
	tier = sbx_strdup(sbx_json_str(reply, "tier") ? sbx_json_str(reply, "tier") : "");
	abi = (int)json_integer_value(json_object_get(reply, "landlock_abi"));
	kdec = json_is_true(json_object_get(reply, "kernel_decides"));
	/* a daemon that does not say keeps nothing */
	sbx_scrub_env((uint32_t)json_integer_value(json_object_get(reply, "keep_env")));
	setenv("BPFSBX_SESSION", sess ? sess : "", 1);
	setenv("BPFSBX_PROJECT", project, 1);
	json_decref(reply);
	join_own_keyring();
	rc = confine_for_tier(tier, abi, kdec, policy, project);
	free(tier);
	if (rc)
		return SBX_EXIT_FAIL;
	/* this process is in the session now and has nothing left to do:
	 * it becomes CMD (as env and nice do), so signals reach CMD as they
	 * were sent, and its exit status or signal is CMD's own */
	exec_cmd(cmd);
}

/*
 * An IPv4 or IPv6 socket this process inherited was made outside the
 * session: the cgroup programs that decide its datagrams' destinations
 * (bpf/dns.bpf.c) run for the cgroup a socket was made in, so in the
 * session it would send anywhere. run refuses it rather than carry it in
 * (passing one in later is refused in the kernel: file_receive). The
 * first such descriptor, or -1.
 */
static int inherited_ip_socket(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int found = -1;

	if (!d)
		return -1;	/* no /proc: nothing to read, and CMD inherits the same */
	while (found < 0 && (de = readdir(d))) {
		int fd = atoi(de->d_name), dom = 0;
		socklen_t len = sizeof(dom);
		struct stat st;

		if (de->d_name[0] == '.' || fd == dirfd(d) || fstat(fd, &st) || !S_ISSOCK(st.st_mode))
			continue;
		if (!getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) &&
		    (dom == AF_INET || dom == AF_INET6))
			found = fd;
	}
	closedir(d);
	return found;
}

/* The invoking user behind sudo, to run CMD as. */
static void target_user(bool as_root, uid_t *uid, gid_t *gid)
{
	long v;

	*uid = getuid();
	*gid = getgid();
	if (as_root)
		return;
	if (sbx_parse_long(getenv("SUDO_UID"), 1, 0x7fffffff, &v))
		*uid = v;
	if (sbx_parse_long(getenv("SUDO_GID"), 0, 0x7fffffff, &v))
		*gid = v;
}

static int run_embedded(const char *policy, const char *project, char **cmd, bool as_root,
			bool learn)
{
	struct sbx_daemon_opts o = { .embedded = true };
	struct sbx_session_rt *s;
	struct sbx_daemon d;
	json_t *diags = NULL;
	const char *tier;
	char *err = NULL;
	int go[2], rc;
	uid_t uid;
	gid_t gid;
	pid_t pid;

	target_user(as_root, &uid, &gid);
	sbx_set_log_prefix("bpfsbx");
	rc = sbx_daemon_init(&d, &o, &err);
	if (rc) {
		sbx_err("%s", err ? err : strerror(-rc));
		free(err);
		sbx_daemon_fini(&d);
		return SBX_EXIT_FAIL;
	}
	if (pipe2(go, O_CLOEXEC)) {
		sbx_daemon_fini(&d);
		return SBX_EXIT_FAIL;
	}
	tier = sbx_tier_name(d.k.tier);
	pid = fork();
	if (pid < 0) {
		sbx_daemon_fini(&d);
		return SBX_EXIT_FAIL;
	}
	if (pid == 0) {
		struct { char go; uint32_t keep_env; } msg;
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(go[1]);
		/* wait until the daemon has put us in the session; it says
		 * which of the outside's handles the policy keeps */
		if (read(go[0], &msg, sizeof(msg)) != sizeof(msg) || msg.go != 'g')
			_exit(SBX_EXIT_FAIL);
		sbx_scrub_env(msg.keep_env);
		if (sbx_drop_privileges(uid, gid, SBX_DROP_SET_ENV)) {
			fprintf(stderr, "bpfsbx: cannot drop to uid %u: %s\n", uid, strerror(errno));
			_exit(SBX_EXIT_FAIL);
		}
		join_own_keyring();	/* as the user, who owns it */
		if (confine_for_tier(tier, d.k.landlock_abi, sbx_kernel_decides(&d.k), policy,
				     project))
			_exit(SBX_EXIT_FAIL);
		exec_cmd(cmd);
	}
	close(go[0]);
	d.embedded_child = pid;
	rc = sbx_session_create(&d, pid, uid, gid, policy, project,
				uid == getuid() ? getenv("HOME") : NULL, learn, &s, &err, &diags);
	print_diag_list(diags);
	json_decref(diags);
	if (rc) {
		sbx_err("%s", err ? err : strerror(-rc));
		free(err);
		close(go[1]);	/* the child exits without running anything */
		waitpid(pid, NULL, 0);
		sbx_daemon_fini(&d);
		return SBX_EXIT_FAIL;
	}
	setenv("BPFSBX_SESSION", s->name, 1);
	if (learn)
		say_learning(s->name);
	{
		struct { char go; uint32_t keep_env; } msg = { 'g', s->hdr.keep_env };

		if (write(go[1], &msg, sizeof(msg)) != sizeof(msg))
			kill(pid, SIGKILL);
	}
	close(go[1]);
	sbx_daemon_loop(&d);
	rc = sbx_embedded_status();
	if (rc < 0) {
		int st;

		if (waitpid(pid, &st, 0) == pid)
			rc = st;
	}
	/* We loaded the programs for this one session: take them away again
	 * when nothing else uses them (never while a session is live). */
	if (d.k.loaded_here && !d.sessions) {
		char *e2 = NULL;

		sbx_kernel_close(&d.k);
		if (sbx_kernel_unload(&e2))
			sbx_warn("%s", e2);
		free(e2);
	}
	sbx_daemon_fini(&d);
	return rc < 0 ? SBX_EXIT_FAIL : exit_code(rc);
}

static const struct sbx_opt run_opts[] = {
	{ "policy", 'p', 0, 'y', "FILE", "DIR/.sandbox/policy.yaml, else the shipped agent-default",
	  "the session's policy: a file, or a shipped policy's name", NULL },
	{ "project", 'P', 0, 'd', "DIR", "the nearest project above the current directory, else it",
	  "the project: ${PROJECT} in policies, where escalations and audit records go", NULL },
	{ "as-root", 'r', 0, 0, NULL, NULL,
	  "with no daemon, under sudo: run CMD as root, not as the invoking user", NULL },
	{ "learn", 'l', 0, 0, NULL, NULL,
	  "record what the policy denies or asks instead of enforcing it (credentials, "
	  "persistence paths and the protected set stay enforced), for policy suggest; "
	  "the bpf-lsm tier only", NULL },
	{ 0 }
};

static int cmd_run(int argc, char **argv)
{
	const char *policy_arg = NULL, *project_arg = NULL;
	char project[PATH_MAX], here[PATH_MAX], *policy = NULL;
	bool as_root = false, no_daemon = false, learn = false;
	struct stat st;
	int c, rc;

	while ((c = sbx_getopt(argc, argv, run_opts, "+")) != -1) {
		switch (c) {
		case 'p':
			policy_arg = optarg;
			break;
		case 'P':
			project_arg = optarg;
			break;
		case 'r':
			as_root = true;
			break;
		case 'l':
			learn = true;
			break;
		case 'h':
			usage(stdout);
			return SBX_EXIT_OK;
		default:
			usage(stderr);
			return SBX_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		sbx_err("run: no command given (bpfsbx run [OPTIONS] -- CMD [ARGS...])");
		return SBX_EXIT_USAGE;
	}
	if (!project_arg) {
		char *found = NULL;

		/* in a subdirectory, the project that contains it; outside
		 * any, this directory with the shipped policy */
		if (sbx_project_resolve(NULL, &found, NULL) == 0 && strlen(found) < sizeof(here))
			strcpy(here, found);
		else if (!getcwd(here, sizeof(here)))
			strcpy(here, ".");
		free(found);
		project_arg = here;
	}
	if (!realpath(project_arg, project) || stat(project, &st) || !S_ISDIR(st.st_mode)) {
		sbx_err("run: project directory '%s' does not exist", project_arg);
		return SBX_EXIT_FAIL;
	}
	if (policy_arg) {
		policy = sbx_policy_arg(policy_arg);
		if (!policy) {
			sbx_err("run: policy file '%s' not found (nor a shipped policy of that name: "
				"agent-default, strict, audit-only)", policy_arg);
			return SBX_EXIT_FAIL;
		}
	} else {
		char *p = sbx_asprintf("%s/.sandbox/policy.yaml", project);

		if (stat(p, &st) == 0)
			policy = p;
		else {
			free(p);
			policy = sbx_shipped_policy("agent-default", NULL, NULL);
		}
		if (!policy) {
			sbx_err("run: no policy given, no %s/.sandbox/policy.yaml, and the shipped "
				"agent-default policy is not installed", project);
			return SBX_EXIT_FAIL;
		}
	}

	c = inherited_ip_socket();
	if (c >= 0) {
		sbx_err("run: descriptor %d is an IP socket made outside the session; in the "
			"session its datagrams would go unchecked, so run does not carry it in: "
			"close it first (%d>&-) or start run from elsewhere", c, c);
		free(policy);
		return SBX_EXIT_FAIL;
	}
	/* asked directly, not probed first: one connection to the daemon */
	rc = run_with_daemon(policy, project, argv + optind, learn, &no_daemon);
	if (no_daemon && geteuid() == 0)
		rc = run_embedded(policy, project, argv + optind, as_root, learn);
	else if (no_daemon) {
		sbx_err("no bpfsbx daemon is running: start it (sudo systemctl start bpfsbx, or "
			"sudo bpfsbx daemon), or run this command with sudo for a one-off session");
		rc = SBX_EXIT_FAIL;
	}
	free(policy);
	return rc;
}

SBX_COMMAND(run, "run", "[OPTIONS] -- CMD [ARGS...]", "run CMD in a confined session",
	    cmd_run, run_opts);
