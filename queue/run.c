// SPDX-License-Identifier: GPL-2.0
/*
 * run.c - what an approver does with one request: claim it, run an
 * approved command outside the agent, write the decision.
 *
 * Commands run here, in the approver, never with the agent's rights and
 * never inside its session: /bin/sh -c TEXT with stdin /dev/null and the
 * output captured into escalations/out/ID.txt. Run as root (sudo bpfsbx
 * approve), the command drops to the owner of .sandbox: an approval never
 * grants more than the project's own user has.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "queue/queue.h"


static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* in the child: become the owner of the project's .sandbox if we are root */
static int drop_to_owner(int sbxfd)
{
	struct passwd *pw;
	struct stat st;

	if (geteuid() != 0)
		return 0;
	if (fstat(sbxfd, &st) < 0)
		return -1;
	if (st.st_uid == 0)
		return 0;
	pw = getpwuid(st.st_uid);
	if (pw) {
		if (initgroups(pw->pw_name, st.st_gid) < 0)
			return -1;
		setenv("HOME", pw->pw_dir, 1);
		setenv("USER", pw->pw_name, 1);
		setenv("LOGNAME", pw->pw_name, 1);
	} else if (setgroups(0, NULL) < 0) {
		return -1;
	}
	if (setgid(st.st_gid) < 0 || setuid(st.st_uid) < 0)
		return -1;
	/* make sure there is no way back */
	if (setuid(0) == 0)
		return -1;
	return 0;
}

static void child(const char *text, const char *cwd, const char *project, int outw, int sbxfd)
{
	sigset_t none;
	int devnull;

	setsid();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(outw, 1) < 0 || dup2(outw, 2) < 0)
		_exit(127);
	if (drop_to_owner(sbxfd) < 0) {
		dprintf(2, "bpfsbx: cannot drop to the project owner's rights: %s\n",
			strerror(errno));
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
			  json_t **result, char **err)
{
	const json_t *obj = json_object_get(req, "object");
	const char *id = json_string_value(json_object_get(req, "id"));
	const char *text = json_string_value(json_object_get(obj, "command"));
	const char *cwd = json_string_value(json_object_get(obj, "cwd"));
	int outdir = sbx_queue_dirfd(q, "out"), claimdir = sbx_queue_dirfd(q, "claimed");
	char tmp[SBX_ID_MAX + 64], final[SBX_ID_MAX + 8], claimname[SBX_ID_MAX + 8];
	char *started, *finished, buf[65536];
	uint64_t total = 0, kept = 0;
	int64_t deadline, term_at = 0, exited_at = 0, touched;
	bool timed_out = false, eof = false, reaped = false;
	int pfd[2], outfd, status = 0, rc;
	unsigned rnd = 0;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	struct stat st;

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
	sbx_queue_owner(q, &uid, &gid);
	if (getrandom(&rnd, sizeof(rnd), 0) < 0)
		rnd = (unsigned)now_ms();
	snprintf(final, sizeof(final), "%s.txt", id);
	snprintf(claimname, sizeof(claimname), "%s.json", id);
	snprintf(tmp, sizeof(tmp), ".tmp-%s-%d-%08x", final, (int)getpid(), rnd);
	/* output goes to a temporary name and appears whole when done */
	outfd = openat(outdir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (outfd < 0) {
		rc = -errno;
		sbx_queue_set_err(err, "out/%s: %s", final, strerror(errno));
		return rc;
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
		child(text, cwd, sbx_queue_project(q), pfd[1], sbx_queue_sandbox_fd(q));
	close(pfd[1]);
	fcntl(pfd[0], F_SETFL, O_NONBLOCK);
	deadline = now_ms() + (int64_t)timeout_s * 1000;
	touched = now_ms();

	while (!eof || !reaped) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int64_t now = now_ms();

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
				if (kept < SBX_CMD_OUTPUT_MAX) {
					size_t room = SBX_CMD_OUTPUT_MAX - kept;
					size_t k = (size_t)n < room ? (size_t)n : room;

					/* a full disk loses output, not the decision */
					if (write_all(outfd, buf, k) == 0)
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
				exited_at = now_ms();
			}
		}
	}
	close(pfd[0]);
	if (!reaped)
		waitpid(pid, &status, 0);
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
		free(started);
		free(finished);
		if (!r)
			return -ENOMEM;
		*result = r;
	}
	return 0;
fail_out:
	close(outfd);
	unlinkat(outdir, tmp, 0);
	return rc;
}

/* why a request we could not claim is not ours */
static int not_pending(struct sbx_queue *q, const char *id, char **err)
{
	char name[SBX_ID_MAX + 8];
	json_t *done = NULL;

	snprintf(name, sizeof(name), "%s.json", id);
	if (sbx_queue_read(q, "done", id, &done, NULL) == 0) {
		const json_t *d = json_object_get(done, "decision");

		sbx_queue_set_err(err, "%s: already decided (%s %s by %s at %s%s)", id,
			json_string_value(json_object_get(d, "verdict")),
			json_string_value(json_object_get(d, "scope")),
			json_string_value(json_object_get(d, "by")),
			json_string_value(json_object_get(d, "at")),
			json_is_true(json_object_get(d, "expired")) ? ", expired" : "");
		json_decref(done);
		return -EEXIST;
	}
	if (faccessat(sbx_queue_dirfd(q, "claimed"), name, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		sbx_queue_set_err(err, "%s: taken by another approver", id);
		return -EBUSY;
	}
	sbx_queue_set_err(err, "%s: no such request in %s", id, sbx_queue_project(q));
	return -ENOENT;
}

/*
 * "Approve always": the approver, who runs as the project's owner outside
 * every session, records the decision in remembered.yaml, so that it
 * holds for later sessions even if the asking session has ended by the
 * time a person answers. (Host names asked ahead through request_access
 * are resolved and remembered by the daemon, which applies them.)
 */
static void remember(struct sbx_queue *q, const char *id, json_t *req)
{
	const char *kind = json_string_value(json_object_get(req, "kind"));
	json_t *obj = json_object_get(req, "object");
	struct sbx_remembered r = { .request = (char *)id };
	char *err = NULL;

	if (!kind || !json_is_object(obj))
		return;
	if (!strcmp(kind, "file") || !strcmp(kind, "exec") ||
	    (!strcmp(kind, "access") && json_object_get(obj, "path"))) {
		r.kind = (char *)(!strcmp(kind, "exec") ? "exec" : "file");
		r.path = (char *)json_string_value(json_object_get(obj, "path"));
		r.access = (char *)json_string_value(json_object_get(obj, "access"));
		if (!strcmp(kind, "exec"))
			r.access = "exec";
	} else if (!strcmp(kind, "net")) {
		r.kind = "net";
		r.addr = (char *)json_string_value(json_object_get(obj, "addr"));
		r.port = json_integer_value(json_object_get(obj, "port"));
	} else {
		return;
	}
	if ((r.path || r.addr) && sbx_remembered_add(q, &r, &err))
		fprintf(stderr, "bpfsbx: remembering %s: %s\n", id, err ? err : "failed");
	free(err);
}

int sbx_queue_resolve(struct sbx_queue *q, const char *id,
		      const struct sbx_resolve_opts *o, json_t **done, char **err)
{
	struct sbx_decision_rec d = {
		.approve = o->approve, .scope = o->scope, .by = o->by, .note = o->note,
	};
	json_t *req = NULL, *result = NULL;
	char *inner = NULL;
	bool command;
	int rc;

	if (err)
		*err = NULL;
	if (done)
		*done = NULL;
	if (!sbx_id_valid(id)) {
		sbx_queue_set_err(err, "%s: not a request id", id ? id : "(null)");
		return -EINVAL;
	}
	rc = sbx_queue_read(q, "pending", id, &req, &inner);
	if (rc == -ENOENT) {
		free(inner);
		return not_pending(q, id, err);
	}
	if (rc) {
		sbx_queue_set_err(err, "%s", inner ? inner : "cannot read the request");
		free(inner);
		return rc;
	}
	command = !strcmp(json_string_value(json_object_get(req, "kind")), "command");
	json_decref(req);
	req = NULL;
	if (o->approve && command && o->scope != SBX_SCOPE_ONCE) {
		sbx_queue_set_err(err, "%s: a command can only be approved once: it runs now, here, "
			"and its output goes back to the agent; approve it with scope once", id);
		return -EINVAL;
	}
	rc = sbx_queue_claim(q, id, &req, &inner);
	if (rc == -ENOENT) {
		free(inner);
		return not_pending(q, id, err);
	}
	if (rc) {
		sbx_queue_set_err(err, "%s", inner ? inner : "claim failed");
		free(inner);
		return rc;
	}
	if (o->approve && command) {
		if (o->on_run)
			o->on_run(o->arg, req);
		rc = sbx_queue_run_command(q, req, o->cmd_timeout_s, &result, &inner);
		if (rc) {
			/* fail closed: the agent is told no, with the reason */
			char *note = NULL;

			if (asprintf(&note, "approved, but running the command failed: %s",
				     inner ? inner : strerror(-rc)) < 0)
				note = NULL;
			d.approve = false;
			d.note = note;
			sbx_queue_decide(q, id, &d, NULL);
			sbx_queue_set_err(err, "%s: %s", id, note ? note : "running the command failed");
			free(note);
			free(inner);
			json_decref(req);
			return rc;
		}
		d.result = result;
	}
	rc = sbx_queue_decide(q, id, &d, &inner);
	json_decref(result);
	if (rc == 0 && o->approve && o->scope == SBX_SCOPE_ALWAYS)
		remember(q, id, req);
	json_decref(req);
	if (rc == -EEXIST) {
		free(inner);
		return not_pending(q, id, err);
	}
	if (rc) {
		sbx_queue_set_err(err, "%s", inner ? inner : "decision failed");
		free(inner);
		return rc;
	}
	if (done)
		sbx_queue_read(q, "done", id, done, NULL);
	return 0;
}
