/* SPDX-License-Identifier: GPL-2.0 */
/*
 * learned.h - the addresses a session's allowed lookups returned.
 *
 * They belong to the session that looked them up (map sbx_learned is
 * keyed by the session's cgroup id), never to its policy or to other
 * sessions. Each (name, address) lasts for the answer's TTL, raised to
 * network.dns.min_ttl, plus network.dns.grace; the kernel checks the
 * expiry itself, so a slow daemon never extends one. Caps: per name (the
 * entry closest to expiry makes room) and per session (new ones are
 * dropped); what they drop is counted (bpfsbx status).
 */
#ifndef SBX_LEARNED_H
#define SBX_LEARNED_H

#include <stddef.h>
#include <stdint.h>
#include "user/daemon/state.h"

#define SBX_LEARNED_DIR	SBX_RUN_DIR "/learned"

/* An address as the learned table keys it: IPv4 as ::ffff:a.b.c.d. */
void sbx_addr16(int family, const void *addr, uint8_t out[16]);

/*
 * Learn n addresses of name for session s, with the name's port rules
 * (r, nr: at most SBX_LEARNED_PORT_RULES) until now + ttl_s (already
 * raised and with grace). The kernel entries are written before this
 * returns. Returns how many addresses are in force for name afterwards.
 */
size_t sbx_learned_add(struct sbx_daemon *d, struct sbx_session_rt *s, const char *name,
		       const uint8_t (*addrs)[16], size_t n, uint64_t ttl_s,
		       const struct sbx_net_port_rule *r, uint32_t nr);
/* Drop what has expired, in the table and the kernel (the loop's tick). */
void sbx_learned_expire(struct sbx_daemon *d);
/* The name behind an address of s (the most recent that is in force), or NULL. */
const char *sbx_learned_name(const struct sbx_session_rt *s, const uint8_t addr[16]);
/* The session ended: its kernel entries and saved table go. */
void sbx_learned_forget(struct sbx_daemon *d, struct sbx_session_rt *s);
/* At the daemon's start, after adoption: kernel entries of no live session go. */
void sbx_learned_sweep(struct sbx_daemon *d);
/* Save the tables that changed (the loop, once per tick). */
void sbx_learned_flush(struct sbx_daemon *d);
/* A restarted daemon: the saved table, and every kernel entry of s that
 * it does not name (kept under the name "?" until it expires). */
void sbx_learned_adopt(struct sbx_daemon *d, struct sbx_session_rt *s);
/* The policy changed (reload): each name is decided again; rows of names
 * no longer allowed go, the others take the new port rules. */
void sbx_learned_redecide(struct sbx_daemon *d, struct sbx_session_rt *s);
/* Entries in force in s. */
size_t sbx_learned_count(const struct sbx_session_rt *s);

#endif
