// SPDX-License-Identifier: GPL-2.0
/*
 * Events for fleets: the journal entry built from an event line, and the
 * Prometheus textfile, checked by promtool's strict parser of the text
 * format where it is installed (Debian's prometheus package, in DEB_TEST).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "user/daemon/containers.h"
#include "user/daemon/journal.h"
#include "user/daemon/metrics.h"
#include "tests/unit/unit.h"

static const char *field(struct iovec *iov, size_t n, const char *name)
{
	size_t l = strlen(name);

	for (size_t i = 0; i < n; i++)
		if (!strncmp(iov[i].iov_base, name, l) && ((char *)iov[i].iov_base)[l] == '=')
			return (char *)iov[i].iov_base + l + 1;
	return NULL;
}

SBX_TEST(daemon_ops, journal_fields_from_the_event_line)
{
	json_t *line = json_pack("{s:s,s:s,s:i,s:i,s:s,s:n,s:s,s:s,s:s,s:{s:i,s:s,s:s,s:s,s:s},"
				 "s:s,s:i,s:b}",
				 "time", "2026-12-01T10:00:00.000Z", "session", "s-1", "pid", 42,
				 "uid", 1500, "comm", "cat", "exe", "operation", "open_read",
				 "access", "read", "object", "/home/u/.ssh/id_rsa", "rule", "id", 7,
				 "pattern", "~/.ssh/**", "verdict", "deny", "reason",
				 "SSH keys\nare secret", "source", "agent-default.yaml:12",
				 "verdict", "deny", "errno", 1, "walk_truncated", 1);
	struct iovec iov[48];
	size_t n = sbx_journal_fields(line, iov, 48);

	CU_ASSERT_STRING_EQUAL(field(iov, n, "SBX_SESSION"), "s-1");
	CU_ASSERT_STRING_EQUAL(field(iov, n, "SBX_OPERATION"), "open_read");
	CU_ASSERT_STRING_EQUAL(field(iov, n, "SBX_OBJECT"), "/home/u/.ssh/id_rsa");
	CU_ASSERT_STRING_EQUAL(field(iov, n, "SBX_VERDICT"), "deny");
	CU_ASSERT_STRING_EQUAL(field(iov, n, "SBX_RULE"), "~/.ssh/**");
	CU_ASSERT_STRING_EQUAL(field(iov, n, "SBX_RULE_ID"), "7");
	CU_ASSERT_STRING_EQUAL(field(iov, n, "SBX_RULE_REASON"), "SSH keys\nare secret");
	CU_ASSERT_STRING_EQUAL(field(iov, n, "SBX_PID"), "42");
	CU_ASSERT_STRING_EQUAL(field(iov, n, "SBX_WALK_TRUNCATED"), "1");
	CU_ASSERT_STRING_EQUAL(field(iov, n, "PRIORITY"), "4");
	CU_ASSERT_STRING_EQUAL(field(iov, n, "SYSLOG_IDENTIFIER"), "bpfsbx");
	CU_ASSERT_PTR_NOT_NULL(field(iov, n, "MESSAGE_ID"));
	CU_ASSERT_PTR_NULL(field(iov, n, "SBX_EXE"));	/* null: no field */
	CU_ASSERT_PTR_NOT_NULL(strstr(field(iov, n, "MESSAGE"), "deny open_read /home/u/.ssh/id_rsa"));
	for (size_t i = 0; i < n; i++)
		free(iov[i].iov_base);
	json_decref(line);
}

SBX_TEST(daemon_ops, latency_histogram_is_cumulative)
{
	struct sbx_latency l = {};

	sbx_latency_observe(&l, 0.5);
	sbx_latency_observe(&l, 4);
	sbx_latency_observe(&l, 4000);
	CU_ASSERT_EQUAL(l.bucket[0], 1);	/* le 1 */
	CU_ASSERT_EQUAL(l.bucket[2], 2);	/* le 5 */
	CU_ASSERT_EQUAL(l.bucket[SBX_LATENCY_BUCKETS - 1], 2);	/* le 900 */
	CU_ASSERT_EQUAL(l.count, 3);
}

SBX_TEST(daemon_ops, textfile_parses_strictly)
{
	struct sbx_metrics m = { .events_received = 9, .sessions = 2, .pending_requests = 1 };
	char *text, *path, *cmd;
	FILE *f;
	int rc;

	m.stats[SBX_STAT_CHECKS] = 100;
	m.stats[SBX_STAT_EVENT_DROPS] = 3;
	sbx_latency_observe(&m.latency, 2.5);
	text = sbx_metrics_render(&m);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nbpfsbx_events_lost_total 3\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nbpfsbx_sessions 2\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "bpfsbx_approval_latency_seconds_bucket{le=\"+Inf\"} 1\n"));
	if (system("command -v promtool >/dev/null 2>&1")) {
		free(text);
		SBX_SKIP("promtool (Debian package prometheus) is not installed");
	}
	path = sbx_asprintf("%s/bpfsbx.prom", sbx_unit_tmpdir());
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	/* check metrics: the text format parser plus its lint (HELP, _total) */
	cmd = sbx_asprintf("promtool check metrics <%s >%s.out 2>&1", path, path);
	rc = system(cmd);
	if (rc) {
		char *out = NULL;
		size_t len;
		char *o = sbx_asprintf("%s.out", path);

		sbx_read_file(o, 1 << 16, &out, &len);
		fprintf(stderr, "promtool: %s\n", out ? out : "?");
		free(out);
		free(o);
	}
	CU_ASSERT_EQUAL(rc, 0);
	free(cmd);
	free(path);
	free(text);
}

/* A container session's identity, from the OCI state's annotations: each
 * runtime's keys, bpfsbx's own first, and the id when nothing names it. */
SBX_TEST(daemon_ops, container_identity_from_each_runtimes_annotations)
{
	json_t *cri = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}",
				"io.kubernetes.cri.container-type", "container",
				"io.kubernetes.cri.container-name", "agent",
				"io.kubernetes.cri.sandbox-name", "agent-pod-7",
				"io.kubernetes.cri.sandbox-namespace", "team-a",
				"io.kubernetes.cri.sandbox-uid", "u-1",
				"io.kubernetes.cri.image-name", "registry.local/agent:1");
	json_t *crio = json_pack("{s:s,s:s,s:s}", "io.kubernetes.cri-o.ContainerName", "agent",
				 "io.kubernetes.pod.name", "p", "io.kubernetes.pod.namespace", "n");
	json_t *own = json_pack("{s:s,s:s}", "io.bpfsbx.name", "mine",
				"io.kubernetes.container.name", "theirs");
	json_t *pause = json_pack("{s:s}", "io.kubernetes.cri-o.ContainerType", "sandbox");
	json_t *i;

	i = sbx_container_identity("0123456789abcdef0123", "/run/b", cri);
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "id"), "0123456789abcdef0123");
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "name"), "agent");
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "pod"), "agent-pod-7");
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "namespace"), "team-a");
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "pod_uid"), "u-1");
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "image"), "registry.local/agent:1");
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "bundle"), "/run/b");
	CU_ASSERT_FALSE(sbx_container_is_sandbox(cri));
	json_decref(i);

	i = sbx_container_identity("x", NULL, crio);
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "name"), "agent");
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "pod"), "p");
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "namespace"), "n");
	CU_ASSERT_PTR_NULL(json_object_get(i, "bundle"));
	json_decref(i);

	i = sbx_container_identity("x", NULL, own);
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "name"), "mine");
	json_decref(i);

	/* plain runc: the id's first twelve, as docker and podman show it */
	i = sbx_container_identity("0123456789abcdef0123", NULL, NULL);
	CU_ASSERT_STRING_EQUAL(sbx_json_str(i, "name"), "0123456789ab");
	CU_ASSERT_PTR_NULL(json_object_get(i, "pod"));
	json_decref(i);

	CU_ASSERT_TRUE(sbx_container_is_sandbox(pause));
	CU_ASSERT_FALSE(sbx_container_is_sandbox(NULL));
	/* a workload run without an exec would never arm its session */
	{
		json_t *wasm = json_pack("{s:s}", "module.wasm.image/variant", "compat");
		json_t *krun = json_pack("{s:s}", "run.oci.handler", "krun");

		CU_ASSERT_STRING_EQUAL(sbx_container_in_process(wasm), "module.wasm.image/variant");
		CU_ASSERT_STRING_EQUAL(sbx_container_in_process(krun), "run.oci.handler");
		CU_ASSERT_PTR_NULL(sbx_container_in_process(cri));
		json_decref(wasm);
		json_decref(krun);
	}
	json_decref(cri);
	json_decref(crio);
	json_decref(own);
	json_decref(pause);
}
