// SPDX-License-Identifier: GPL-2.0
/*
 * The listener check, through sbx_unix_stream_connect: a session's connect
 * to a unix listener outside it is decided on the listener. An abstract
 * name no rule names falls to the connect default; the daemon's control
 * listener is reachable and records who connected (sbx_ctl_peers) on the
 * daemon's end; an approver's listener is refused whatever the policy
 * says; the session's own listener is always reachable.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "prog_tests.h"

#define POLICY 11

static socklen_t abstract_addr(struct sockaddr_un *a, const char *name)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	strncpy(a->sun_path + 1, name, sizeof(a->sun_path) - 2);
	return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
}

static int listen_on(const char *name)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, name);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, len) || listen(fd, 8)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int connect_to(void *name)
{
	struct sockaddr_un a;
	socklen_t len = abstract_addr(&a, name);
	int fd = socket(AF_UNIX, SOCK_STREAM, 0), rc = 0;

	if (fd < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&a, len))
		rc = errno;
	close(fd);
	return rc;
}

/* a listener the session makes itself, then reaches */
static int connect_own(void *name)
{
	int l = listen_on(name), rc;

	if (l < 0)
		return 254;
	rc = connect_to(name);
	close(l);
	return rc;
}

static int set_listener(struct pt *t, int fd, __u32 flags)
{
	struct sbx_listener l = { .flags = flags };

	return bpf_map_update_elem(bpf_map__fd(t->skel->maps.sbx_listeners), &fd, &l, BPF_ANY);
}

static int listener(void)
{
	struct sbx_policy_hdr pol = { .policy_id = POLICY };
	struct sbx_ctl_peer peer = {};
	char ctl[32], hidden[32], own[32];
	int lc = -1, lh = -1, acc, rc, n;
	struct pt t;

	for (int a = 0; a < SBX_ACC_MAX; a++)
		pol.file_default[a] = SBX_V_ALLOW;
	pol.file_default[SBX_ACC_CONNECT] = SBX_V_DENY;
	pol.file_default_rule[SBX_ACC_CONNECT] = 61;
	snprintf(ctl, sizeof(ctl), "sbx-pt-ctl-%d", (int)getpid());
	snprintf(hidden, sizeof(hidden), "sbx-pt-hidden-%d", (int)getpid());
	snprintf(own, sizeof(own), "sbx-pt-own-%d", (int)getpid());
	if (pt_setup(&t, "sbx_unix_stream_connect", &pol))
		goto out;
	lc = listen_on(ctl);
	lh = listen_on(hidden);
	PT_CHECK(&t, lc >= 0 && lh >= 0, "cannot listen on the abstract names");
	if (t.failed)
		goto out;

	/* outside the session, named by no rule: the connect default */
	rc = pt_in_session(&t, connect_to, ctl);
	PT_CHECK(&t, rc == EPERM, "an outside listener no rule names: errno %d, want EPERM", rc);
	n = pt_events(&t);
	PT_CHECK(&t, n == 1 && t.ev[0].op == SBX_OP_UNIX_CONNECT && t.ev[0].rule_id == 61 &&
		     (t.ev[0].flags & SBX_EVF_ABSTRACT) && (t.ev[0].flags & SBX_EVF_PEER),
		 "%d events (op %u rule %u flags %#x), want the refusal with the listener", n,
		 n ? t.ev[0].op : 0, n ? t.ev[0].rule_id : 0, n ? t.ev[0].flags : 0);

	/* the daemon's control socket: reachable, and the kernel writes the
	 * session on the daemon's end of the connection */
	PT_CHECK(&t, set_listener(&t, lc, SBX_LISTENER_DAEMON | SBX_LISTENER_CONTROL) == 0,
		 "cannot mark the control listener");
	rc = pt_in_session(&t, connect_to, ctl);
	PT_CHECK(&t, rc == 0, "the control listener: errno %d, want 0", rc);
	acc = accept(lc, NULL, NULL);
	rc = bpf_map_lookup_elem(bpf_map__fd(t.skel->maps.sbx_ctl_peers), &acc, &peer);
	PT_CHECK(&t, rc == 0 && peer.cgid == t.cgid && peer.serial == t.sess.serial,
		 "control peer: lookup %d cgid %llu serial %llu, want %llu %llu", rc,
		 (unsigned long long)peer.cgid, (unsigned long long)peer.serial,
		 (unsigned long long)t.cgid, (unsigned long long)t.sess.serial);
	if (acc >= 0)
		close(acc);

	/* an approver's: refused even where the policy would allow it */
	t.sess.pol.file_default[SBX_ACC_CONNECT] = SBX_V_ALLOW;
	bpf_map_update_elem(bpf_map__fd(t.skel->maps.sbx_sessions), &t.cgid, &t.sess, BPF_ANY);
	PT_CHECK(&t, set_listener(&t, lh, SBX_LISTENER_NEVER) == 0,
		 "cannot mark the hidden listener");
	pt_events(&t);
	rc = pt_in_session(&t, connect_to, hidden);
	PT_CHECK(&t, rc == EPERM, "an approver's listener: errno %d, want EPERM", rc);
	n = pt_events(&t);
	PT_CHECK(&t, n == 1 && t.ev[0].rule_id == SBX_RULE_LISTENER_HIDDEN,
		 "%d events (rule %u), want the hidden listener's refusal", n,
		 n ? t.ev[0].rule_id : 0);

	/* the session's own listener, with the default back at deny */
	t.sess.pol.file_default[SBX_ACC_CONNECT] = SBX_V_DENY;
	bpf_map_update_elem(bpf_map__fd(t.skel->maps.sbx_sessions), &t.cgid, &t.sess, BPF_ANY);
	rc = pt_in_session(&t, connect_own, own);
	PT_CHECK(&t, rc == 0, "the session's own listener: errno %d, want 0", rc);
out:
	if (lc >= 0)
		close(lc);
	if (lh >= 0)
		close(lh);
	pt_teardown(&t);
	return t.failed || !t.link;
}
PT_TEST(listener);
