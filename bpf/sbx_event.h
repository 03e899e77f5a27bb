/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sbx_event.h - event emission: an event is filled in the task's scratch
 * (or a ring buffer reservation), described by event.bpf.c and sent whole
 * to the daemon's ring buffer.
 */
#ifndef SBX_EVENT_H
#define SBX_EVENT_H

#include "sbx_storage.h"
#include <bpf/bpf_core_read.h>

SBX_MAP struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);	/* ~11,000 events of 1.4 KiB */
} sbx_events SEC(".maps");

/* The fields every event has; e is the LSM hooks' scratch or a ring
 * buffer reservation (the cgroup programs have no task storage). */
static __always_inline void sbx_event_fill(struct sbx_event *e, const struct sbx_session *s,
					   __u64 cgid, __u16 op, __u8 verdict, __u32 rule_id,
					   int ret)
{
	__u64 pt = bpf_get_current_pid_tgid();

	__builtin_memset(e, 0, __builtin_offsetof(struct sbx_event, comm));
	e->ts_ns = bpf_ktime_get_boot_ns();
	e->cgid = cgid;
	e->serial = s->serial;
	e->pid = pt >> 32;
	e->tid = (__u32)pt;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->policy_id = s->pol.policy_id;
	e->rule_id = rule_id;
	e->op = op;
	e->verdict = verdict;
	e->ret = ret;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->path_off = SBX_EVENT_PATH_MAX - 1;
	e->path[SBX_EVENT_PATH_MAX - 1] = 0;
	e->exe_off = SBX_EVENT_CTX_MAX - 1;
	e->exe[SBX_EVENT_CTX_MAX - 1] = 0;
	e->cwd_off = SBX_EVENT_CTX_MAX - 1;
	e->cwd[SBX_EVENT_CTX_MAX - 1] = 0;
	e->args_len = 0;
	e->_pad1 = 0;
}

/*
 * Start an event in the task's scratch. It is sent whole by
 * sbx_event_send(); until then any part of the check may add to it (the
 * path and process context come from event.bpf.c). NULL: no memory for
 * the scratch; the event is counted as dropped.
 */
static __always_inline struct sbx_event *
sbx_event_begin(const struct sbx_session *s, __u64 cgid, __u16 op, __u8 verdict,
		__u32 rule_id, int ret)
{
	struct sbx_tscratch *sc = sbx_scratch();

	if (!sc) {
		sbx_stat_inc(SBX_STAT_EVENT_DROPS);
		return NULL;
	}
	sbx_event_fill(&sc->ev, s, cgid, op, verdict, rule_id, ret);
	return &sc->ev;
}

/* A unix socket's listener in the event: its pid (0: not known) in aux
 * and its socket's inode, from which the daemon finds its exe. */
static __always_inline void sbx_event_peer(struct sbx_event *e, struct sock *other)
{
	struct pid *pid = BPF_CORE_READ(other, sk_peer_pid);
	struct socket *so = BPF_CORE_READ(other, sk_socket);

	e->flags |= SBX_EVF_PEER;
	e->aux = pid ? BPF_CORE_READ(pid, numbers[0].nr) : 0;
	if (so)
		e->peer_ino = BPF_CORE_READ(so, file, f_inode, i_ino);
}

/* A full ring buffer is counted, never silent; the verdict itself never
 * depends on the event being sent. */
static __always_inline void sbx_event_send(struct sbx_event *e)
{
	if (bpf_ringbuf_output(&sbx_events, e, sizeof(*e), 0)) {
		sbx_stat_inc(SBX_STAT_EVENT_DROPS);
		return;
	}
	sbx_stat_inc(SBX_STAT_EVENTS);
}

/*
 * Global functions: the verifier checks each once, on its own, whatever
 * the state of its callers, so a hook that calls one twice (rename, link)
 * pays for it once, and a change in one hook cannot multiply the cost of
 * another.
 */

/* event.bpf.c: adds to the event in the task's scratch the path of
 * (vfsmount, dentry) (none for dentry 0) and the process context: exe,
 * cwd and the start of the command line. */
int sbx_event_describe(__u64 vfsmount, __u64 dentry);

#endif /* SBX_EVENT_H */
