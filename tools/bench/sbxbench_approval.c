// SPDX-License-Identifier: GPL-2.0
/*
 * sbxbench_approval.c - approval latency: from the decision being written
 * to the agent's retry being allowed by the kernel.
 *
 *   agent --dir PROJECT --files DIR --count N   (inside a session)
 *   approver --dir PROJECT --count N            (outside, as the owner)
 *   join AGENT.json APPROVER.json               latencies per approval
 *
 * The agent opens DIR/key-NNN.pem (a name the policy asks about), is
 * refused, and sleeps in inotify on escalations/done/ and applied/, the
 * way the connectors wait for a decision (sbx_queue_wait_done). Woken by
 * the decision file it retries at once; if the grant is not in the kernel
 * yet, it waits for the daemon's applied/ marker (or 100 ms) and retries
 * again. No polling loop feeds the daemon extra ask events.
 *
 * The approver waits for the request in pending/ and answers it with
 * sbx_queue_resolve(), the library call behind `bpfsbx approve`. Its
 * timestamp t_decide is taken just before that call, so the latency
 * includes the claim, writing the decision (temporary file, fsync,
 * rename, fsync of the directory), the daemon's inotify wake-up, its
 * checks, the map update, the agent's wake-up and its successful open.
 * Both sides read CLOCK_MONOTONIC of the same kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>
#include "queue/queue.h"
#include "tools/bench/bench.h"

#define EV_BUF (64 * (sizeof(struct inotify_event) + NAME_MAX + 1))

struct approval_opts {
	const char *dir, *files;
	uint64_t count, timeout_ms;
};

static int parse_opts(int argc, char **argv, struct approval_opts *o)
{
	static const struct option lo[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "files", required_argument, NULL, 'f' },
		{ "count", required_argument, NULL, 'n' },
		{ "timeout-ms", required_argument, NULL, 't' },
		{}
	};
	int c;

	o->timeout_ms = 20000;
	while ((c = getopt_long(argc, argv, "d:f:n:t:", lo, NULL)) != -1) {
		if (c == 'd')
			o->dir = optarg;
		else if (c == 'f')
			o->files = optarg;
		else if (c == 'n' && bench_parse_u64(optarg, &o->count) && o->count)
			;
		else if (c == 't' && bench_parse_u64(optarg, &o->timeout_ms))
			;
		else
			return -1;
	}
	return o->dir && o->count && optind == argc ? 0 : -1;
}

/* a decision or marker name: "ID.json" in done/, "ID" in applied/ */
static bool id_of(const char *name, char *id, size_t len)
{
	size_t l = strlen(name);

	if (!l || name[0] == '.' || l >= len)
		return false;
	memcpy(id, name, l + 1);
	if (l > 5 && !strcmp(id + l - 5, ".json"))
		id[l - 5] = 0;
	return true;
}

int cmd_agent(int argc, char **argv)
{
	struct approval_opts o = {};
	char p[PATH_MAX], path[PATH_MAX], buf[EV_BUF] __attribute__((aligned(8)));
	int ifd, wd_done, wd_applied;
	json_t *samples;

	if (parse_opts(argc, argv, &o) || !o.files)
		return bench_fail("usage: agent --dir PROJECT --files DIR --count N");
	ifd = inotify_init1(IN_CLOEXEC);
	snprintf(p, sizeof(p), "%s/.sandbox/escalations/%s", o.dir, sbx_qdir_name(SBX_QDIR_DONE));
	wd_done = ifd < 0 ? -1 : inotify_add_watch(ifd, p, IN_MOVED_TO | IN_CREATE);
	snprintf(p, sizeof(p), "%s/.sandbox/escalations/%s", o.dir, sbx_qdir_name(SBX_QDIR_APPLIED));
	wd_applied = wd_done < 0 ? -1 : inotify_add_watch(ifd, p, IN_MOVED_TO | IN_CREATE);
	if (wd_applied < 0)
		return bench_fail("agent: watching %s: %s", p, strerror(errno));
	samples = json_array();
	for (uint64_t i = 0; i < o.count; i++) {
		uint64_t t_start, t_denied, t_woken = 0, t_ok = 0, deadline;
		char id[NAME_MAX + 1] = "";
		const char *woken_by = "?";
		int fd, retries = 0, polls = 0;

		snprintf(path, sizeof(path), "%s/key-%03llu.pem", o.files, (unsigned long long)i);
		t_start = bench_now_ns();
		fd = open(path, O_RDONLY | O_CLOEXEC);
		t_denied = bench_now_ns();
		if (fd >= 0 || errno != EPERM) {
			int e = errno;

			if (fd >= 0)
				close(fd);
			json_decref(samples);
			return bench_fail("agent: %s: expected EPERM (ask), got %s", path,
					  fd >= 0 ? "success" : strerror(e));
		}
		deadline = t_denied + o.timeout_ms * 1000000ull;
		while (!t_ok) {
			struct pollfd pfd = { .fd = ifd, .events = POLLIN };
			bool retry = false;
			int pr = poll(&pfd, 1, id[0] ? 100 : 1000);

			if (bench_now_ns() > deadline) {
				json_decref(samples);
				return bench_fail("agent: %s: not allowed within %llu ms (%d retries)",
						  path, (unsigned long long)o.timeout_ms, retries);
			}
			if (pr == 0 && id[0]) {
				retry = true;	/* no marker within 100 ms: try anyway */
				polls++;
				woken_by = "timeout";
			}
			if (pr > 0) {
				ssize_t n = read(ifd, buf, sizeof(buf));

				for (char *q = buf; n > 0 && q < buf + n;) {
					struct inotify_event *ev = (struct inotify_event *)q;
					char evid[NAME_MAX + 1];

					q += sizeof(*ev) + ev->len;
					if (!ev->len || !id_of(ev->name, evid, sizeof(evid)))
						continue;
					if (ev->wd == wd_done && !id[0]) {
						snprintf(id, sizeof(id), "%s", evid);
						t_woken = bench_now_ns();
						woken_by = "done";
						retry = true;
					} else if (ev->wd == wd_applied && id[0] && !strcmp(evid, id)) {
						woken_by = "applied";
						retry = true;
					}
				}
			}
			if (!retry)
				continue;
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				t_ok = bench_now_ns();
				close(fd);
			} else if (errno != EPERM) {
				int e = errno;

				json_decref(samples);
				return bench_fail("agent: retry of %s: %s", path, strerror(e));
			} else {
				retries++;
			}
		}
		json_array_append_new(samples,
			json_pack("{s:I,s:s,s:s,s:I,s:I,s:I,s:I,s:i,s:i,s:s}", "i", (json_int_t)i,
				  "path", path, "id", id, "t_start", (json_int_t)t_start,
				  "t_denied", (json_int_t)t_denied, "t_woken", (json_int_t)t_woken,
				  "t_ok", (json_int_t)t_ok, "failed_retries", retries,
				  "timeouts", polls, "allowed_after", woken_by));
	}
	close(ifd);
	bench_emit(json_pack("{s:s,s:I,s:o}", "role", "agent", "n", (json_int_t)o.count,
			     "samples", samples));
	return 0;
}

int cmd_approver(int argc, char **argv)
{
	struct approval_opts o = {};
	struct sbx_resolve_opts ro = { .approve = true, .scope = SBX_SCOPE_ONCE,
				       .note = "sbxbench" };
	char p[PATH_MAX], buf[EV_BUF] __attribute__((aligned(8)));
	struct sbx_queue *q;
	json_t *samples;
	char *err = NULL;
	uint64_t done = 0, t_wake, deadline;
	int ifd;

	if (parse_opts(argc, argv, &o))
		return bench_fail("usage: approver --dir PROJECT --count N [--timeout-ms MS]");
	q = sbx_queue_open(o.dir, 0, (uid_t)-1, (gid_t)-1, &err);
	if (!q) {
		bench_fail("approver: %s", err ? err : "cannot open the queue");
		free(err);
		return 1;
	}
	ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	snprintf(p, sizeof(p), "%s/.sandbox/escalations/%s", o.dir, sbx_qdir_name(SBX_QDIR_PENDING));
	if (ifd < 0 || inotify_add_watch(ifd, p, IN_MOVED_TO | IN_CREATE | IN_CLOSE_WRITE) < 0) {
		sbx_queue_close(q);
		return bench_fail("approver: watching %s: %s", p, strerror(errno));
	}
	samples = json_array();
	t_wake = bench_now_ns();
	deadline = t_wake + o.timeout_ms * 1000000ull;
	while (done < o.count) {
		struct pollfd pfd = { .fd = ifd, .events = POLLIN };
		json_t *list = NULL, *req;
		size_t i;

		if (sbx_queue_list(q, SBX_QDIR_PENDING, &list, &err)) {
			bench_fail("approver: listing pending/: %s", err ? err : "?");
			free(err);
			goto fail;
		}
		json_array_foreach(list, i, req) {
			const char *id = json_string_value(json_object_get(req, "id"));
			const char *path = json_string_value(json_object_get(json_object_get(req,
								"object"), "path"));
			json_t *dec = NULL;
			uint64_t t_decide, t_decided;
			int rc;

			if (!id || done >= o.count)
				continue;
			t_decide = bench_now_ns();
			rc = sbx_queue_resolve(q, id, &ro, &dec, &err);
			t_decided = bench_now_ns();
			json_decref(dec);
			if (rc) {
				bench_fail("approver: approving %s: %s", id, err ? err : strerror(-rc));
				free(err);
				json_decref(list);
				goto fail;
			}
			json_array_append_new(samples,
				json_pack("{s:s,s:s?,s:I,s:I,s:I}", "id", id, "path", path,
					  "t_seen", (json_int_t)t_wake, "t_decide", (json_int_t)t_decide,
					  "t_decided", (json_int_t)t_decided));
			done++;
			deadline = bench_now_ns() + o.timeout_ms * 1000000ull;
		}
		json_decref(list);
		if (done >= o.count)
			break;
		if (bench_now_ns() > deadline) {
			bench_fail("approver: no request within %llu ms (%llu of %llu approved)",
				   (unsigned long long)o.timeout_ms, (unsigned long long)done,
				   (unsigned long long)o.count);
			goto fail;
		}
		if (poll(&pfd, 1, 1000) > 0)
			while (read(ifd, buf, sizeof(buf)) > 0)
				;
		t_wake = bench_now_ns();
	}
	close(ifd);
	sbx_queue_close(q);
	bench_emit(json_pack("{s:s,s:I,s:o}", "role", "approver", "n", (json_int_t)done,
			     "samples", samples));
	return 0;
fail:
	close(ifd);
	sbx_queue_close(q);
	json_decref(samples);
	return 1;
}

static json_int_t ival(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* join: pair each agent sample with the approval of the same path */
int cmd_join(int argc, char **argv)
{
	json_t *ag, *ap, *out, *s, *a;
	char *err = NULL;
	size_t i, j;

	if (argc != 3)
		return bench_fail("usage: join AGENT.json APPROVER.json");
	ag = bench_load(argv[1], &err);
	ap = ag ? bench_load(argv[2], &err) : NULL;
	if (!ag || !ap) {
		bench_fail("join: %s", err ? err : "?");
		free(err);
		json_decref(ag);
		return 1;
	}
	if (json_object_get(ag, "error") || json_object_get(ap, "error")) {
		bench_fail("join: agent: %s; approver: %s",
			   json_string_value(json_object_get(ag, "error")) ?: "ok",
			   json_string_value(json_object_get(ap, "error")) ?: "ok");
		json_decref(ag);
		json_decref(ap);
		return 1;
	}
	out = json_array();
	json_array_foreach(json_object_get(ag, "samples"), i, s) {
		const char *path = json_string_value(json_object_get(s, "path"));
		json_t *m = NULL;

		json_array_foreach(json_object_get(ap, "samples"), j, a) {
			const char *ap_path = json_string_value(json_object_get(a, "path"));

			if (ap_path && path && !strcmp(ap_path, path)) {
				m = a;
				break;
			}
		}
		if (!m) {
			json_decref(out);
			json_decref(ag);
			json_decref(ap);
			return bench_fail("join: no approval for %s", path ? path : "?");
		}
		json_array_append_new(out, json_pack(
			"{s:I,s:I,s:I,s:I,s:I,s:I,s:O,s:O}",
			"i", ival(s, "i"),
			"latency_ns", ival(s, "t_ok") - ival(m, "t_decide"),
			"escalation_ns", ival(m, "t_seen") - ival(s, "t_denied"),
			"decision_write_ns", ival(m, "t_decided") - ival(m, "t_decide"),
			"agent_wake_ns", ival(s, "t_woken") - ival(m, "t_decide"),
			"failed_retries", ival(s, "failed_retries"),
			"allowed_after", json_object_get(s, "allowed_after"),
			"id", json_object_get(s, "id")));
	}
	bench_emit(json_pack("{s:I,s:o}", "n", (json_int_t)json_array_size(out), "samples", out));
	json_decref(ag);
	json_decref(ap);
	return 0;
}
