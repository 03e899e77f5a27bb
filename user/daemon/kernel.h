/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kernel.h - the daemon's view of the BPF side: load or adopt the pinned
 * programs and maps, and the few map operations everything above needs.
 */
#ifndef SBX_KERNEL_H
#define SBX_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf/bpfsbx.h"
#include "user/sandbox/tier.h"

struct sbx_kernel {
	int sessions, inode_rules, chain_rules, name_rules, net4, net6;
	int grants, protected_, config, stats, events, epoch, listeners, ctl_peers;
	int dns_resolvers, dns_ports, dns_sk, learned, dev_ports, held_ports, removals;
	bool loaded_here;	/* this process loaded and pinned the programs */
	/* SBX_TIER_BPF_LSM, or SBX_TIER_LANDLOCK where BPF-LSM is not in the
	 * kernel (or not in its LSM list): the cgroup programs and the
	 * sbx_ll_* programs on security_* functions are loaded, and `run`
	 * confines files and exec itself (Landlock) */
	enum sbx_tier tier;
	int landlock_abi;	/* the running kernel's; 0: none */
};

bool sbx_kernel_pinned(void);
/* whether the pinned programs decide unix sockets by listener and ports
 * by owner (either tier's): 1 yes, 0 no, -1 nothing pinned (or bpffs not
 * readable) */
int sbx_kernel_sec_hooks(void);
/* The landlock tier with its programs on security_file_open and the
 * security_path_* functions (files.bpf.c) pinned: they decide every write
 * and the asks, so run's plan lets Landlock grant those. */
bool sbx_kernel_decides(const struct sbx_kernel *k);
/* Adopt the pinned state or, if there is none and load is true, load
 * and pin the programs and maps atomically (no links: sbx_kernel_attach).
 * On failure nothing is left behind. Without BPF-LSM (not built, or not in
 * the LSM list) and with Landlock, the fallback tier: the cgroup programs
 * only. A kernel that lists BPF-LSM but refuses its programs (lockdown, a
 * container) is refused, as is one with neither. */
int sbx_kernel_up(struct sbx_kernel *k, bool load, char **err);
void sbx_kernel_close(struct sbx_kernel *k);
/*
 * Make the link of every pinned program that has none, and pin it; then
 * forget what the hooks could not see while links were missing (epochs,
 * ports bound to a device). Sessions start only once this has returned 0:
 * a session with a hook missing is never reported started.
 */
int sbx_kernel_attach(struct sbx_kernel *k, const char *cg_root, char **err);
/* Does every pinned program have its link? */
bool sbx_kernel_attached(void);
/* Unpin every link (the programs and maps stay): with no session, nothing
 * of bpfsbx runs. Unlinking a trampoline waits for RCU tasks: call it off
 * the daemon's loop. *n: the links removed. */
int sbx_kernel_detach(size_t *n, char **err);
/* Remove every pin: enforcement stops. */
int sbx_kernel_unload(char **err);
int sbx_kernel_stats(const struct sbx_kernel *k, uint64_t out[SBX_STAT_MAX]);
/* Something a network decision reads changed (CIDR rules, a session's
 * policy header, learned addresses): datagram verdicts that sockets
 * remember are stale. Call it after the change, never before: a decision
 * reads the epoch first, so one made in between is not kept. */
void sbx_net_changed(const struct sbx_kernel *k);
/* No session is left: outside clients' loopback connects and datagrams
 * stop looking their listener up (bpf/inbound.bpf.c) until a session's
 * socket takes a port again. Only while no session can start. */
void sbx_session_ports_forget(const struct sbx_kernel *k);
/* Is BPF-LSM active? (reads /sys/kernel/security/lsm) */
bool sbx_bpf_lsm_active(char **lsm_list);
/* Delete every key of map fd whose first 4 bytes (policy_id) match. For
 * LPM keys the policy id sits after the prefix length, big-endian. */
int sbx_map_delete_if(int fd, size_t key_size, size_t id_off, bool be,
		      bool (*doomed)(uint32_t id, void *ctx), void *ctx);
/* Delete the n keys (key_size bytes each) at keys; absent ones are fine. */
int sbx_map_delete_keys(int fd, const void *keys, size_t key_size, size_t n);
/* The keys of map fd for which match(key) is true (all for a NULL match),
 * malloc'd, and their number in *count: a walk of every bucket, for the
 * daemon's start, not a session's. NULL with errno set (and *count 0)
 * when the walk failed; errno 0 otherwise. */
void *sbx_map_keys(int fd, size_t key_size, bool (*match)(const void *key, void *ctx),
		   void *ctx, size_t *count);
/* Delete every key of map fd for which doomed(key) is true (the same walk). */
int sbx_map_delete_keys_if(int fd, size_t key_size,
			   bool (*doomed)(const void *key, void *ctx), void *ctx);

/* The cgroup2 mount (e.g. /sys/fs/cgroup), malloc'd. */
int sbx_cgroup_root(char **path, char **err);
/* The mount options of the cgroup2 mount at root (/proc/self/mounts),
 * malloc'd, or NULL. */
char *sbx_cgroup2_options(const char *root);
/*
 * Create <cgroup2>/bpfsbx if needed and make sure the kernel's
 * sbx_config.sessions_root names it: a session must never start below a
 * directory whose id the kernel does not have.
 */
int sbx_sessions_root_sync(struct sbx_kernel *k, const char *cg_root, char **err);
/* Is a BPF program of this type attached to a cgroup (SEC("cgroup/...")), so
 * that its link goes on the sessions' root? */
bool sbx_prog_type_is_cgroup(int type);

#endif
