// SPDX-License-Identifier: GPL-2.0
/*
 * command.c - running an approved command outside the agent, and who it
 * runs as; resolve.c calls it once the request is claimed.
 *
 * Commands run here, in the approver, never with the agent's rights and
 * never inside its session: /bin/sh -c TEXT with stdin /dev/null and the
 * output captured into escalations/out/ID.txt. Who runs it:
 * - from a terminal (`bpfsbx watch`, or `approve` on a TTY): the person at
 *   it, with the terminal as stdin, so that `sudo` asks for their own
 *   password there; the output is shown and captured;
 * - without one (`approve` from a script, `watch --auto`): the owner of
 *   the project, never root: an approval never grants more than the
 *   project's own user has. The user is in the result and the audit.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "lib/fileio.h"
#include "lib/sha256.h"
#include "lib/privs.h"
#include "queue/queue.h"
#include "lib/json.h"

int sbx_queue_command_user(struct sbx_queue *q, bool interactive, long long agent_uid,
			   uid_t *uid, gid_t *gid, char **name, char **err)
{
	struct stat st;
	struct passwd *pw;
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");

	*name = NULL;
	if (interactive) {
		/* the person at the terminal; under sudo, the one who typed it */
		*uid = getuid();
		*gid = getgid();
		if (geteuid() == 0 && su && sg && atoi(su) > 0) {
			*uid = (uid_t)atoi(su);
			*gid = (gid_t)atoi(sg);
		}
	} else {
		/* the project's owner: an approval never grants more than the
		 * project's own user has */
		if (fstat(sbx_queue_sandbox_fd(q), &st) < 0) {
			sbx_queue_set_err(err, "%s/.sandbox: %s", sbx_queue_project(q), strerror(errno));
			return -errno;
		}
		*uid = geteuid() == 0 ? st.st_uid : getuid();
		*gid = geteuid() == 0 ? st.st_gid : getgid();
		/* root only for root's own agent: a project directory that
		 * merely happens to be root's (made with sudo mkdir) must not
		 * turn a user's agent's command into a root command */
		if (*uid == 0 && agent_uid > 0) {
			sbx_queue_set_err(err, "the command would run as root: %s belongs to root but "
					  "the agent runs as uid %lld; run it from `bpfsbx watch` in "
					  "a terminal, where the person's own user runs it",
					  sbx_queue_project(q), agent_uid);
			return -EPERM;
		}
	}
	pw = getpwuid(*uid);
	if (pw)
		*name = strdup(pw->pw_name);
	else if (asprintf(name, "uid %u", (unsigned)*uid) < 0)
		*name = NULL;
	return *name ? 0 : -ENOMEM;
}

static void child(const char *text, const char *cwd, const char *project, int outw,
		  uid_t uid, gid_t gid, bool interactive)
{
	sigset_t none;
	int devnull;

	/* on a terminal the command stays in the approver's session and
	 * process group, so that sudo can ask for the person's password on
	 * /dev/tty; otherwise it gets a session of its own */
	if (!interactive)
		setsid();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0 || (!interactive && dup2(devnull, 0) < 0) || dup2(outw, 1) < 0 ||
	    dup2(outw, 2) < 0)
		_exit(127);
	if ((geteuid() != uid || getuid() != uid) &&
	    sbx_drop_privileges(uid, gid, SBX_DROP_SET_ENV)) {
		dprintf(2, "bpfsbx: cannot become uid %u: %s\n", (unsigned)uid, strerror(errno));
		_exit(126);
	}
	if (!cwd || chdir(cwd) < 0) {
		if (chdir(project) < 0) {
			dprintf(2, "bpfsbx: cannot enter %s: %s\n", project, strerror(errno));
			_exit(126);
		}
	}
	execl("/bin/sh", "sh", "-c", text, (char *)NULL);
	dprintf(2, "bpfsbx: /bin/sh: %s\n", strerror(errno));
	_exit(127);
}

int sbx_queue_run_command(struct sbx_queue *q, const json_t *req, int timeout_s,
			  bool interactive, json_t **result, char **err)
{
	const json_t *obj = json_object_get(req, "object");
	const char *id = sbx_json_str(req, "id");
	const char *text = sbx_json_str(obj, "command");
	const char *cwd = sbx_json_str(obj, "cwd");
	int outdir = sbx_queue_dirfd(q, SBX_QDIR_OUT), claimdir = sbx_queue_dirfd(q, SBX_QDIR_CLAIMED);
	char tmp[SBX_ID_MAX + 64], final[SBX_ID_MAX + 8], claimname[SBX_ID_MAX + 8];
	char *started, *finished, buf[65536];
	uint64_t total = 0, kept = 0;
	int64_t deadline, term_at = 0, exited_at = 0, touched;
	bool timed_out = false, eof = false, reaped = false;
	int pfd[2], outfd, status = 0, rc;
	unsigned rnd = 0;
	uid_t uid, run_uid;
	gid_t gid, run_gid;
	pid_t pid;
	struct stat st;
	char *run_user = NULL, digest[SBX_SHA256_HEX];
	unsigned char md[SBX_SHA256_LEN];
	struct sbx_sha256 sha = { 0 };
	bool sha_ok = true;
	void (*old_int)(int) = SIG_DFL, (*old_quit)(int) = SIG_DFL;

	if (err)
		*err = NULL;
	*result = NULL;
	if (!sbx_id_valid(id) || !text || !text[0]) {
		sbx_queue_set_err(err, "not a command request");
		return -EINVAL;
	}
	if (timeout_s <= 0)
		timeout_s = SBX_CMD_TIMEOUT_S;
	if (cwd && (stat(cwd, &st) < 0 || !S_ISDIR(st.st_mode)))
		cwd = NULL;	/* gone: the project directory instead */
	{
		const json_t *juid = json_object_get(json_object_get(req, "process"), "uid");

		rc = sbx_queue_command_user(q, interactive,
					    json_is_integer(juid) ? json_integer_value(juid) : -1,
					    &run_uid, &run_gid, &run_user, err);
	}
	if (rc)
		return rc;
	sbx_queue_owner(q, &uid, &gid);
	if (getrandom(&rnd, sizeof(rnd), 0) < 0)
		rnd = (unsigned)sbx_now_ms();
	snprintf(final, sizeof(final), "%s.txt", id);
	snprintf(claimname, sizeof(claimname), "%s.json", id);
	snprintf(tmp, sizeof(tmp), ".tmp-%s-%d-%08x", final, (int)getpid(), rnd);
	/* output goes to a temporary name and appears whole when done */
	outfd = openat(outdir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (outfd < 0) {
		rc = -errno;
		sbx_queue_set_err(err, "out/%s: %s", final, strerror(errno));
		free(run_user);
		return rc;
	}
	/* the digest of every byte, also of what the 1 MiB cut drops: the
	 * audit record says exactly what output the agent was shown */
	if (sbx_sha256_init(&sha)) {
		rc = -ENOMEM;
		sbx_queue_set_err(err, "sha256: cannot start (%s)",
				  sbx_crypto_error() ?: "libcrypto failed");
		goto fail_out;
	}
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(outfd, uid, gid) < 0) {
		/* not fatal: the file is still ours and private */
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		rc = -errno;
		sbx_queue_set_err(err, "pipe: %s", strerror(errno));
		goto fail_out;
	}
	started = sbx_time_rfc3339(time(NULL));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		sbx_queue_set_err(err, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		free(started);
		goto fail_out;
	}
	if (pid == 0)
		child(text, cwd, sbx_queue_project(q), pfd[1], run_uid, run_gid, interactive);
	if (interactive) {
		/* ^C at the terminal is for the command, not for the approver */
		old_int = signal(SIGINT, SIG_IGN);
		old_quit = signal(SIGQUIT, SIG_IGN);
	}
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	deadline = sbx_now_ms() + (int64_t)timeout_s * 1000;
	touched = sbx_now_ms();

	while (!eof || !reaped) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int64_t now = sbx_now_ms();

		if (!reaped && !timed_out && now >= deadline) {
			timed_out = true;
			kill(-pid, SIGTERM);
			kill(pid, SIGTERM);
			term_at = now;
		}
		if (timed_out && !reaped && now - term_at >= 5000) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
		}
		if (reaped && !eof && now - exited_at >= 2000) {
			/* the shell is gone but something it started still
			 * holds the output open: that is not waited for */
			kill(-pid, SIGKILL);
			break;
		}
		if (now - touched >= 60000) {
			/* renew the claim's lease while the command runs */
			utimensat(claimdir, claimname, NULL, AT_SYMLINK_NOFOLLOW);
			touched = now;
		}
		if (!eof) {
			poll(&p, 1, 200);
			for (;;) {
				ssize_t n = read(pfd[0], buf, sizeof(buf));

				if (n < 0) {
					if (errno == EINTR)
						continue;
					break;	/* EAGAIN: nothing more now */
				}
				if (n == 0) {
					eof = true;
					break;
				}
				total += (uint64_t)n;
				if (sbx_sha256_update(&sha, buf, (size_t)n))
					sha_ok = false;
				if (interactive && sbx_write_all(STDOUT_FILENO, buf, (size_t)n)) {
					/* the terminal went away; the file still gets it */
				}
				if (kept < SBX_CMD_OUTPUT_MAX) {
					size_t room = SBX_CMD_OUTPUT_MAX - kept;
					size_t k = (size_t)n < room ? (size_t)n : room;

					/* a full disk loses output, not the decision */
					if (sbx_write_all(outfd, buf, k) == 0)
						kept += k;
				}
			}
		} else {
			usleep(20000);
		}
		if (!reaped) {
			pid_t w = waitpid(pid, &status, WNOHANG);

			if (w == pid || (w < 0 && errno == ECHILD)) {
				reaped = true;
				exited_at = sbx_now_ms();
			}
		}
	}
	close(pfd[0]);
	if (!reaped)
		waitpid(pid, &status, 0);
	if (interactive) {
		signal(SIGINT, old_int);
		signal(SIGQUIT, old_quit);
	}
	/* a digest that could not be made says so; it never names other bytes */
	if (sbx_sha256_final(&sha, md) || !sha_ok)
		snprintf(digest, sizeof(digest), "unknown");
	else
		sbx_hex(md, sizeof(md), digest);
	finished = sbx_time_rfc3339(time(NULL));
	fsync(outfd);
	close(outfd);
	outfd = -1;
	if (renameat(outdir, tmp, outdir, final) < 0) {
		rc = -errno;
		sbx_queue_set_err(err, "out/%s: %s", final, strerror(errno));
		unlinkat(outdir, tmp, 0);
		free(started);
		free(finished);
		free(run_user);
		return rc;
	}
	fsync(outdir);

	{
		char outpath[SBX_ID_MAX + 16];
		json_t *r;

		snprintf(outpath, sizeof(outpath), "out/%s", final);
		r = json_pack("{s:i, s:s, s:b, s:b, s:I, s:s, s:s}",
			      "exit_code", WIFEXITED(status) ? WEXITSTATUS(status)
							     : 128 + WTERMSIG(status),
			      "output", outpath,
			      "truncated", total > kept,
			      "timed_out", timed_out,
			      "bytes", (json_int_t)total,
			      "started", started ? started : "",
			      "finished", finished ? finished : "");
		if (r && WIFSIGNALED(status))
			json_object_set_new(r, "signal", json_integer(WTERMSIG(status)));
		if (r) {
			json_object_set_new(r, "output_sha256", json_string(digest));
			json_object_set_new(r, "user", json_string(run_user));
			json_object_set_new(r, "uid", json_integer(run_uid));
			json_object_set_new(r, "interactive", json_boolean(interactive));
		}
		free(run_user);
		free(started);
		free(finished);
		if (!r)
			return -ENOMEM;
		*result = r;
	}
	return 0;
fail_out:
	sbx_sha256_free(&sha);
	free(run_user);
	close(outfd);
	unlinkat(outdir, tmp, 0);
	return rc;
}

int sbx_queue_read_output(struct sbx_queue *q, const json_t *done, char **buf, size_t *len)
{
	const char *out = sbx_json_str(json_object_get(done, "result"), "output");
	const char *id = sbx_json_str(done, "id");
	const char *sub = sbx_qdir_name(SBX_QDIR_OUT);
	char expect[SBX_ID_MAX + 64];

	*buf = NULL;
	*len = 0;
	if (!out || !id || !sbx_id_valid(id))
		return -ENOENT;
	snprintf(expect, sizeof(expect), "%s/%s.txt", sub, id);
	if (strcmp(out, expect))
		return -ENOENT;
	return sbx_read_file_at(sbx_queue_dirfd(q, SBX_QDIR_OUT), expect + strlen(sub) + 1,
				SBX_CMD_OUTPUT_MAX, buf, len, NULL);
}
