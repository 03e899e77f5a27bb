/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpfsbx.h - the ABI between the BPF programs in bpf/ and everything in
 * user space (the daemon, the policy compiler, the tests).
 *
 * Plain C types only: this file is included both by *.bpf.c (after
 * vmlinux.h) and by ordinary C, so it must not pull in kernel or libc
 * headers. Every struct has explicit padding and a size assertion, because
 * a silent layout mismatch between the two sides disables enforcement
 * without any error (github.com/canyonroad/agentsh issue #349: an
 * AllowKey size mismatch with its BPF map disabled enforcement).
 *
 * Object identity. Files are named by the kernel's own view of an inode:
 * (sb->s_dev, i_ino). sb->s_dev is the kernel-internal dev_t
 * (MAJOR << 20 | MINOR), not the st_dev that stat(2) reports; user space
 * obtains it from /proc/self/fdinfo (ino) and /proc/self/mountinfo (the
 * mount's major:minor), which also gives the right answer on overlayfs
 * and btrfs where stat(2) does not agree with the kernel.
 */
#ifndef BPFSBX_H
#define BPFSBX_H

#ifndef __BPF__
#include <linux/types.h>
#endif

#define SBX_ABI_VERSION 12

/* ---- verdicts -------------------------------------------------------- */

/*
 * Ordered by restrictiveness: between equally specific rules the larger
 * value wins, so "deny wins" is a max().
 */
enum sbx_verdict {
	SBX_V_NONE  = 0,	/* no rule here */
	SBX_V_ALLOW = 1,
	SBX_V_AUDIT = 2,	/* allow and record */
	SBX_V_ASK   = 3,	/* deny now, escalate to a person */
	SBX_V_DENY  = 4,
	SBX_V_MAX
};

/* ---- access classes of file rules ----------------------------------- */

enum sbx_access {
	SBX_ACC_READ    = 0,	/* open for read, directory listing */
	SBX_ACC_WRITE   = 1,	/* open for write/append/trunc, create, unlink,
				 * rename, link, symlink, mkdir, rmdir, truncate,
				 * chmod, chown, utimes, xattrs and ACLs, chattr */
	SBX_ACC_EXEC    = 2,	/* execve of the file, PROT_EXEC mappings */
	SBX_ACC_CONNECT = 3,	/* connect or send to a unix socket whose listener
				 * is outside the session (inside: always allowed) */
	SBX_ACC_MAX
};

#define SBX_ACCBIT(a)	(1u << (a))

/* ---- operations, as reported in events ------------------------------ */

enum sbx_op {
	SBX_OP_NONE = 0,
	SBX_OP_OPEN_READ,
	SBX_OP_OPEN_WRITE,
	SBX_OP_CREATE,
	SBX_OP_MKDIR,
	SBX_OP_UNLINK,
	SBX_OP_RMDIR,
	SBX_OP_RENAME_FROM,
	SBX_OP_RENAME_TO,
	SBX_OP_LINK_FROM,
	SBX_OP_LINK_TO,
	SBX_OP_SYMLINK,
	SBX_OP_TRUNCATE,
	SBX_OP_CHMOD,
	SBX_OP_CHOWN,
	SBX_OP_EXEC,
	SBX_OP_MMAP_EXEC,
	SBX_OP_CONNECT,
	SBX_OP_SENDMSG,
	SBX_OP_UNIX_CONNECT,
	SBX_OP_SOCKET_CREATE,
	SBX_OP_BPF,
	SBX_OP_PTRACE,
	SBX_OP_SIGNAL,
	SBX_OP_MOUNT,
	SBX_OP_USERNS,
	SBX_OP_CGROUP_ESCAPE,
	SBX_OP_PROC_ACCESS,
	SBX_OP_SETXATTR,
	SBX_OP_IOCTL,		/* TIOCSTI and friends; aux = the request */
	SBX_OP_KERNEL,		/* perf events, modules, kexec, firmware */
	SBX_OP_FILE_RECEIVE,	/* an fd passed in over a unix socket */
	SBX_OP_SETATTR,		/* utimes and other attribute changes */
	SBX_OP_SIGNAL_OWNER,	/* F_SETOWN, FIOSETOWN: a signal target for SIGIO */
	SBX_OP_DNS,		/* a query the daemon's resolver decided (no BPF event) */
	SBX_OP_IPC,		/* a SysV message queue, semaphore set or shared memory
				 * segment; aux = its id, name_hash = its key */
	SBX_OP_KEY,		/* a kernel key or keyring; aux = its serial,
				 * port = the permission asked (enum key_need_perm) */
	SBX_OP_BIND,		/* a session's bind() to a port its policy reserves */
	SBX_OP_INBOUND,		/* a process outside every session connected or sent
				 * to a session's listener (SBX_EVF_INBOUND) */
	SBX_OP_MAX
};

/* ---- name hashing (identical on both sides) ------------------------- */

/*
 * Names are never compared as strings in the kernel; they are hashed with
 * FNV-1a 64 and looked up. The kernel computes these over dentry names;
 * policy/ computes them over the names in patterns. See policy/hash.c for
 * the user-space twin and tests/unit for the vectors that pin both.
 *
 *   component hash  = fnv1a64(name bytes, in order)
 *   prefix-L hash   = fnv1a64(first L bytes)           (pattern "lit*")
 *   suffix-L hash   = fnv1a64(last L bytes, REVERSED)   (pattern "*lit")
 *   chain hash      = h = SBX_CHAIN_SEED;
 *                     for each component top-down: h = sbx_mix64(h ^ comp)
 */
#define SBX_FNV_OFFSET	0xcbf29ce484222325ULL
#define SBX_FNV_PRIME	0x100000001b3ULL
#define SBX_CHAIN_SEED	0x9e3779b97f4a7c15ULL

static inline __u64 sbx_mix64(__u64 x)
{
	/* splitmix64 finaliser: chains of equal components must not cancel */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

#define SBX_NAME_MAX		255	/* NAME_MAX */
#define SBX_GLOB_LIT_MAX	63	/* literal part of "lit*" / "*lit" */
#define SBX_CHAIN_MAX		8	/* missing components below an anchor */

/* ---- file rule maps -------------------------------------------------- */

/*
 * A rule at a node applies to the node and to everything below it.
 * Specificity: a match found closer to the object wins ("level" 0 is the
 * object itself); at the same level an exact path (inode or chain rule)
 * beats an exact basename, which beats a wildcard basename; then the
 * larger verdict wins. Rule order in the policy never matters.
 */
enum sbx_rank {
	SBX_RANK_EXACT = 0,	/* inode rule or chain rule */
	SBX_RANK_NAME  = 1,	/* exact basename anywhere ("NAME") */
	SBX_RANK_GLOB  = 2,	/* wildcard basename ("*.pem", "credentials*") */
	SBX_RANK_NONE  = 3
};

/*
 * sbx_file_rule.gen of an inode rule:
 *  - SBX_GEN_INODE: the object's i_generation when the policy was compiled,
 *    where the file system keeps one (ext2/3/4, xfs, btrfs, f2fs);
 *  - SBX_GEN_REMOVALS: where it keeps none (overlayfs above all, whose
 *    upper layer is one of those), the object's count in sbx_removals when
 *    the policy was applied: every unlink, rmdir and rename over the
 *    object counts, in the kernel, before its number can be free;
 *  - SBX_GEN_NONE: a file system that never gives a number twice (tmpfs),
 *    or a compile inside a session (sbx_policy_env.no_generations).
 */
enum sbx_gen_kind {
	SBX_GEN_NONE = 0,
	SBX_GEN_INODE = 1,
	SBX_GEN_REMOVALS = 2,
};

struct sbx_file_rule {
	__u8  verdict[SBX_ACC_MAX];	/* enum sbx_verdict per access class */
	__u8  chain_mask;	/* inode rules only: bit (m-1) set when chain
				 * rules of m components hang below this inode */
	__u8  pinned;		/* inode rules only: a directory on the way down
				 * to a protected path: it may not be renamed,
				 * exchanged or removed (SBX_RULE_PINNED) */
	__u8  gen_set;		/* inode rules only: enum sbx_gen_kind, what gen
				 * holds */
	__u8  chain_allow;	/* inode rules only: SBX_ACCBIT of each access
				 * class that a chain rule hanging below this
				 * inode allows (or audits) */
	__u32 rule_id[SBX_ACC_MAX];	/* index into the policy's rule table */
	/* inode rules only: which incarnation of the object's number the entry
	 * was made for. ext4, xfs, btrfs and f2fs give a freed inode number to
	 * the next file they make, and so does an overlay over them; another
	 * incarnation is another file, for which the entry keeps only its
	 * refusals (ask and deny). */
	__u32 gen;
};

/* Whether an inode entry, or a chain rule hanging below it, lets an access
 * of the classes in acc (SBX_ACCBIT) through: only then does it matter
 * which object its number names now (walk.bpf.c's sbx_entry_floor,
 * policy/decide.c, the daemon's counts of removals). */
static inline int sbx_rule_may_allow(const struct sbx_file_rule *r, __u8 acc)
{
	if (r->chain_allow & acc)
		return 1;
	for (int a = 0; a < SBX_ACC_MAX; a++)
		if ((acc & SBX_ACCBIT(a)) && r->verdict[a] != SBX_V_NONE &&
		    r->verdict[a] < SBX_V_ASK)
			return 1;
	return 0;
}

/*
 * sbx_inode_key.dev of a character device's rule by its number: ino is
 * the device's (the kernel's MKDEV, major << 20 | minor). A device node
 * made anywhere else is the same device: a container's own /dev/null, a
 * copy of /dev/mem. Looked up for the object itself only.
 */
#define SBX_DEV_CHR		0xffffffffu
#define SBX_MKDEV(ma, mi)	(((__u64)(ma) << 20) | (mi))

/* Existing object (or anchor directory), named by inode identity. */
struct sbx_inode_key {
	__u32 policy_id;
	__u32 dev;		/* kernel sb->s_dev */
	__u64 ino;
};

/*
 * Path that did not exist when the policy was compiled: the nearest
 * existing ancestor (the anchor) plus the m missing names below it.
 * "~/.aws/" before ~/.aws exists is anchor=$HOME, m=1, chain(".aws").
 */
struct sbx_chain_key {
	__u32 policy_id;
	__u32 dev;		/* anchor */
	__u64 ino;		/* anchor */
	__u64 hash;		/* chain hash of the m names */
	__u32 m;		/* 1..SBX_CHAIN_MAX */
	__u32 _pad;
};

enum sbx_name_kind {
	SBX_NAME_EXACT  = 0,	/* "NAME": whole component */
	SBX_NAME_PREFIX = 1,	/* "lit*" */
	SBX_NAME_SUFFIX = 2,	/* "*lit" */
	SBX_NAME_ABSTRACT = 3,	/* "@name": an abstract unix socket's whole name */
	SBX_NAME_ABSTRACT_PREFIX = 4,	/* "@lit*" */
	SBX_NAME_PORT = 5,	/* not a name: a TCP/UDP port of the session's own
				 * sockets (network.reserved_ports, inbound_ports),
				 * hash = the port, len = 0; verdict[SBX_PORT_BIND]
				 * decides a bind to it, verdict[SBX_PORT_INBOUND]
				 * an outside client's connect into it. Port 0
				 * holds network.inbound, the default for every
				 * port and for unix sockets. */
};

#define SBX_PORT_BIND		0	/* index into sbx_file_rule.verdict/rule_id */
#define SBX_PORT_INBOUND	1

/* Basename rules: match any path component, wherever it is. */
struct sbx_name_key {
	__u32 policy_id;
	__u8  kind;		/* enum sbx_name_kind */
	__u8  len;		/* length of the literal part (0 for EXACT
				 * names longer than SBX_GLOB_LIT_MAX) */
	__u16 _pad;
	__u64 hash;
};

/* ---- network rule maps ---------------------------------------------- */

#define SBX_NET_PORT_RULES	16

struct sbx_net_port_rule {
	__u16 port_lo;		/* host byte order; 0..65535 = any port */
	__u16 port_hi;
	__u8  verdict;
	__u8  proto;		/* 0 any, 6 TCP, 17 UDP */
	__u16 _pad;
	__u32 rule_id;
};

/*
 * Value of an LPM entry. The compiler pushes the rules of every covering
 * (shorter) prefix down into the more specific entries, sorted most
 * specific first, so the kernel needs one trie lookup and a first-match
 * scan of at most SBX_NET_PORT_RULES entries.
 */
struct sbx_net_rule {
	__u32 count;
	__u32 _pad;
	struct sbx_net_port_rule r[SBX_NET_PORT_RULES];
};

/* prefixlen = 32 (policy_id) + CIDR bits */
struct sbx_net4_key {
	__u32 prefixlen;
	__u32 policy_id;	/* big-endian in the key: it is part of the prefix */
	__u8  addr[4];
};

struct sbx_net6_key {
	__u32 prefixlen;
	__u32 policy_id;	/* big-endian in the key */
	__u8  addr[16];
};

/* ---- sessions -------------------------------------------------------- */

enum sbx_policy_flags {
	SBX_PF_AUDIT_ALLOWED	= 1u << 0,	/* reserved: audit-only mode */
	SBX_PF_HAS_GRANTS	= 1u << 1,	/* look up sbx_grants on ask */
	SBX_PF_PROC_OTHERS	= 1u << 2,	/* protect /proc/<pid>/{mem,environ,...}
						 * of processes outside the session */
	SBX_PF_ALLOW_MEMFD_EXEC	= 1u << 3,
	SBX_PF_ALLOW_SETUID	= 1u << 4,
	SBX_PF_ALLOW_USERNS	= 1u << 5,
	SBX_PF_ALLOW_RAW	= 1u << 6,	/* SOCK_RAW and SOCK_PACKET sockets */
	SBX_PF_ALLOW_SCTP	= 1u << 7,	/* IPPROTO_SCTP (its addresses are checked) */
	SBX_PF_ALLOW_MPTCP	= 1u << 8,	/* IPPROTO_MPTCP */
	SBX_PF_PROC_CMDLINE	= 1u << 9,	/* read /proc/PID/cmdline of processes outside */
	SBX_PF_DECIDE_OPENS	= 1u << 10,	/* the landlock tier decides read and exec
						 * opens in BPF (files.bpf.c): asks, audits,
						 * name-rule denies, hard-linked denied files,
						 * a reload (policy/compile.c, sessions.c) */
	SBX_PF_ALLOW_PING	= 1u << 11,	/* ICMP echo sockets (destinations unchecked) */
	SBX_PF_ARMING		= 1u << 12,	/* a container's runtime still sets it up:
						 * no hook decides until the first exec
						 * (exec.bpf.c), which is the agent's */
};

/* AF_NETLINK protocols a session may open unless its policy adds more:
 * routes and addresses (ip, ss), and sock_diag (ss) */
#define SBX_NETLINK_DEFAULT	((1u << 0) | (1u << 4))

/*
 * Everything a hook needs about the session's policy, kept in the session
 * value itself: one lookup finds the subject and its policy, and a policy
 * swap is one atomic map update.
 */
struct sbx_policy_hdr {
	__u32 policy_id;
	__u32 flags;			/* enum sbx_policy_flags */
	__u8  file_default[SBX_ACC_MAX];/* verdict when no rule matches */
	__u8  net_default;
	__u8  loopback_outside;		/* a loopback listener outside the session */
	__u8  proc_verdict;		/* for SBX_PF_PROC_OTHERS */
	__u8  max_chain;		/* longest chain rule, 0..SBX_CHAIN_MAX */
	__u32 file_default_rule[SBX_ACC_MAX];
	__u32 net_default_rule;
	__u32 loopback_rule;
	__u32 netlink_allow;		/* bit P: AF_NETLINK protocol P may be opened */
	__u32 keep_env;			/* user space only: bit i keeps the variable
					 * sbx_scrubbed_env(i) (lib/names.c) */
	__u64 family_allow;		/* bit F: socket family F beyond unix, inet,
					 * inet6 and netlink may be created */
	/*
	 * Length filters for basename rules: bit L set when a rule has a
	 * literal of L bytes (1..63). Bit 0 of exact_len_mask means "some
	 * exact name is 64 bytes or longer". A component whose length has no
	 * bit set is never read or hashed.
	 */
	__u64 exact_len_mask;
	__u64 prefix_len_mask;
	__u64 suffix_len_mask;
	__u64 abstract_len_mask;	/* bit L: an "@lit*" rule of L bytes */
};

struct sbx_session {
	struct sbx_policy_hdr pol;
	__u32 uid;			/* owner of the session */
	__u32 _pad;
	__u64 serial;			/* daemon's session number */
};

/* ---- grants: a person's answer to an ask ---------------------------- */

/*
 * Grants only ever turn an ASK into ALLOW for the session they belong
 * to; they never override a DENY. They are consulted only after the
 * policy said ask, so they cost nothing on the fast path.
 */
enum sbx_grant_kind {
	SBX_GK_INODE = 1,	/* existing file: dev, ino */
	SBX_GK_NAME  = 2,	/* not yet existing file: parent dev/ino + name hash */
	SBX_GK_NET4  = 3,
	SBX_GK_NET6  = 4,
	SBX_GK_ABSTRACT = 5,	/* abstract unix socket: hash of its name */
};

struct sbx_grant_key {
	__u64 cgid;		/* session cgroup */
	__u8  kind;		/* enum sbx_grant_kind */
	__u8  access;		/* enum sbx_access, or 0 for network */
	__u16 port;		/* network: host order; 0 = any port */
	__u32 dev;
	__u64 ino;		/* INODE: ino; NAME: parent ino */
	__u64 hash;		/* NAME: component hash of the name */
	__u8  addr[16];		/* NET4: first 4 bytes; NET6: all */
};

struct sbx_grant {
	__u64 expires_ns;	/* CLOCK_BOOTTIME; 0 = until the session ends */
	__u64 request_seq;	/* which request it answers (for events) */
};

/* ---- protected objects (not removable by any policy) ---------------- */

/* Global, not per policy: no session may write these or below them. */
struct sbx_protect_key {
	__u32 dev;
	__u32 _pad;
	__u64 ino;
};

/*
 * sbx_removals: (dev, ino) of an object that an inode rule of some policy
 * was made for (keyed as sbx_protected) -> how many times a name of it has
 * been removed (unlink, rmdir, rename over it; removals.bpf.c). Made by
 * the daemon when it applies the policy, counted by the kernel, never
 * taken out while the daemon runs. SBX_REMOVALS_ANY counts every count
 * that moved: a compiled policy kept for the next session whose count
 * moved since it was applied is compiled again.
 */
#define SBX_REMOVALS_ANY	((struct sbx_protect_key){ .dev = 0, .ino = 0 })

/* ---- listeners the daemon vouches for, or hides ---------------------- */

/*
 * Socket local storage (map sbx_listeners) on a listening socket, written
 * by the daemon through a descriptor of that socket. A session's connect
 * to such a listener outside the session is decided by these flags before
 * any rule: the daemon's own sockets are always reachable, an approver's
 * (the dashboard's) never, whatever a policy or a grant says.
 */
enum sbx_listener_flags {
	SBX_LISTENER_DAEMON = 1u << 0,	/* the daemon's: sessions may connect */
	SBX_LISTENER_NEVER  = 1u << 1,	/* an approver's: sessions may not */
	SBX_LISTENER_CONTROL = 1u << 2,	/* the control socket: the kernel records
					 * each connecting session (sbx_ctl_peers) */
};

/*
 * Socket local storage (map sbx_ctl_peers) on the daemon's side of each
 * control connection, filled when a process inside a session connects:
 * the daemon tells a session's request apart by the socket it came in on,
 * never by a pid that could be recycled. No entry: not from a session.
 */
struct sbx_ctl_peer {
	__u64 cgid;		/* the connecting task's session */
	__u64 serial;
};

struct sbx_listener {
	__u32 flags;			/* enum sbx_listener_flags */
	__u32 owner_uid;		/* who registered it */
};

/* ---- names: the daemon is the sessions' resolver (dns.bpf.c) ------------ */

/*
 * A session's resolver: sockets the daemon binds for that session alone.
 * The cgroup sock_addr programs rewrite every port-53 destination of the
 * session to these, and restore the address the program used on the way
 * back. IPv4 (and v4-mapped) destinations go to addr4 (127.53.x.y); other
 * IPv6 destinations to [::1], where every session has its own ports (an
 * unconnected IPv6 UDP send cannot be rewritten to a v4-mapped address).
 * Ports are in network byte order.
 */
struct sbx_dns_resolver {
	__u32 addr4;		/* network order */
	__u16 port4_udp, port4_tcp;
	__u16 port6_udp, port6_tcp;
	__u32 _pad;
};

/* What the program asked for, kept in socket local storage (sbx_dns_sk)
 * so that recvmsg and getpeername show it instead of the resolver. */
struct sbx_dns_orig {
	__u8  addr[16];		/* IPv4 as ::ffff:a.b.c.d */
	__u16 port;		/* network order */
	__u16 _pad0;
	__u32 _pad1;
};

#define SBX_DNS_ADDR4_NET	0x7f350000u	/* 127.53.0.0/16, host order */
#define SBX_LEARNED_PORT_RULES	8

/*
 * An address a session's allowed lookup returned (map sbx_learned), per
 * session, never per policy: another session of the same policy has not
 * looked it up. IPv4 is stored as ::ffff:a.b.c.d.
 */
struct sbx_learned_key {
	__u64 cgid;
	__u8  addr[16];
};

/*
 * The port rules of the name(s) behind the address, ordered like the
 * compiler's (narrower ports first, stricter verdict first). The kernel
 * combines them with the CIDR rules: the stricter of the two wins, so a
 * CIDR deny (cloud metadata, a private network asked) still decides for
 * a name that resolves into it (DNS rebinding); the policy's default
 * decides only when neither has a rule for the port.
 */
struct sbx_learned {
	__u64 expires_ns;	/* CLOCK_BOOTTIME: answer TTL (at least min_ttl) + grace */
	__u32 count;
	__u32 name_hash;	/* for the daemon: which name(s), folded */
	struct sbx_net_port_rule r[SBX_LEARNED_PORT_RULES];
};

/* ---- configuration ---------------------------------------------------- */

struct sbx_config {
	__u32 daemon_tgid;	/* self-protection target; 0 = none */
	__u32 abi_version;	/* SBX_ABI_VERSION of the loader that pinned */
	__u64 sessions_root;	/* cgroup id of <cgroup2>/bpfsbx, the parent of
				 * every session's cgroup; 0 = not known yet */
	__u64 cgroup_progs_root;	/* cgroup id the cgroup programs (dns.bpf.c)
				 * are attached to; DNS is redirected only
				 * while it equals sessions_root */
};

/*
 * sbx_epoch (an array of counters, each written by one side only so that
 * neither clobbers the other): cached file verdicts are stale once
 * RENAME or DAEMON moves; the daemon's cached compilations of policies
 * (their hard-link scan) once LINK moves.
 */
enum sbx_epoch_idx {
	SBX_EPOCH_RENAME = 0,	/* BPF: every rename, link and mount change */
	SBX_EPOCH_DAEMON = 1,	/* daemon: the protected set changed */
	SBX_EPOCH_LINK = 2,	/* BPF: links, mount changes, renames by anyone
				 * but the daemon (its own atomic writes) */
	SBX_EPOCH_NET = 3,	/* daemon: something a network decision reads
				 * changed (a policy's CIDR rules or defaults,
				 * learned addresses); cached datagram verdicts
				 * are stale */
	SBX_EPOCH_PORTS = 4,	/* BPF (ports.bpf.c): a datagram socket anywhere
				 * took, left or re-addressed a port, or changed
				 * session; remembered loopback listeners are
				 * stale */
	SBX_EPOCH_DEV_PORTS = 5,	/* BPF (ports.bpf.c): ports that a socket
				 * bound to a device has held (sbx_dev_ports);
				 * 0: no loopback decision needs to look */
	SBX_EPOCH_SESSION_PORTS = 6,	/* BPF sets bit 0 (TCP and the rest) or
				 * bit 1 (UDP) once a socket of any session got
				 * such a port (sbx_mark_owner);
				 * the daemon clears it when its last session
				 * ends. 0: an outside client's loopback connect
				 * need not look its listener up (inbound.bpf.c) */
	SBX_EPOCH_MAX
};

/*
 * sbx_dev_ports: a port that a TCP or UDP socket bound to a device
 * (SO_BINDTODEVICE, unprivileged since Linux 5.7) has held. The loopback
 * listener lookup of a cgroup program cannot see such a socket (it looks
 * up as if from no device), yet the kernel delivers to it. The value is
 * the session every such socket belonged to, 0 once one was outside the
 * session or in another: then the port is decided as an outside
 * listener's. Entries are never removed (a port once held stays asked
 * about when nothing visible listens on it).
 */
struct sbx_dev_port_key {
	__u16 port;		/* host order */
	__u8  proto;		/* IPPROTO_TCP or IPPROTO_UDP */
	__u8  _pad;
};

/*
 * The ports a socket of some session has held since the last session
 * ended (sbx_held_ports, one entry): an outside client's loopback connect
 * or datagram looks its listener up only on one of them
 * (bpf/inbound.bpf.c). Bit p of w[p / 64] for TCP (and every protocol but
 * UDP, as SBX_EPOCH_SESSION_PORTS counts them), of w[1024 + p / 64] for
 * UDP. BPF sets bits; the daemon clears them all with the session ports
 * word, when its last session ends.
 */
#define SBX_HELD_PORT_WORDS	(2 * 65536 / 64)
struct sbx_held_ports {
	__u64 w[SBX_HELD_PORT_WORDS];
};

/* ---- statistics (per-CPU array, index = enum sbx_stat) --------------- */

enum sbx_stat {
	SBX_STAT_EVENTS = 0,	/* events submitted */
	SBX_STAT_EVENT_DROPS,	/* ring buffer full: event lost, counted */
	SBX_STAT_DENY,
	SBX_STAT_ASK,
	SBX_STAT_AUDIT,
	SBX_STAT_GRANT_USED,
	SBX_STAT_WALK_TRUNC,	/* parent walk hit its limit */
	SBX_STAT_ERRORS,	/* internal error, denied (fail closed) */
	SBX_STAT_CHECKS,	/* confined checks performed */
	SBX_STAT_CACHE_HIT,	/* file decisions answered by the verdict cache */
	SBX_STAT_DNS_REDIRECT,	/* port-53 destinations sent to the session's resolver */
	SBX_STAT_LEARNED_USED,	/* connects decided by a learned address */
	SBX_STAT_NET_CACHE_HIT,	/* datagrams allowed by their socket's last verdict
				 * (the whole answer to the session's own loopback
				 * listener is counted below instead) */
	SBX_STAT_LO_CACHE_HIT,	/* datagrams to the session's own loopback listener,
				 * found without a lookup */
	SBX_STAT_MAX
};

/* ---- events ----------------------------------------------------------- */

/* Rule ids at or above this are built in, not from the policy. */
#define SBX_RULE_BUILTIN	0xffff0000u
enum sbx_builtin_rule {
	SBX_RULE_DEFAULT	= 0,			/* section default */
	SBX_RULE_SANDBOX_DIR	= SBX_RULE_BUILTIN + 1,	/* any .sandbox dir */
	SBX_RULE_PROTECTED	= SBX_RULE_BUILTIN + 2,	/* policy files etc. */
	SBX_RULE_PSEUDOFS	= SBX_RULE_BUILTIN + 3,	/* bpffs, cgroupfs, securityfs */
	SBX_RULE_WALK_LIMIT	= SBX_RULE_BUILTIN + 4,
	SBX_RULE_ERROR		= SBX_RULE_BUILTIN + 5,
	SBX_RULE_LAUNDER	= SBX_RULE_BUILTIN + 6,	/* rename/link of a protected object */
	SBX_RULE_SELF_PROTECT	= SBX_RULE_BUILTIN + 7,	/* bpf(), daemon, mounts, ... */
	SBX_RULE_GRANT		= SBX_RULE_BUILTIN + 8,	/* allowed by a person's grant */
	SBX_RULE_PROC		= SBX_RULE_BUILTIN + 9,	/* /proc of other processes */
	SBX_RULE_EXEC_KIND	= SBX_RULE_BUILTIN + 10,/* memfd, deleted, setuid */
	SBX_RULE_SOCKET_FAMILY	= SBX_RULE_BUILTIN + 11,
	SBX_RULE_PINNED		= SBX_RULE_BUILTIN + 12,/* a directory above a protected path */
	SBX_RULE_LISTENER_OUTSIDE = SBX_RULE_BUILTIN + 13,/* connect default: no rule named it */
	SBX_RULE_LISTENER_HIDDEN = SBX_RULE_BUILTIN + 14,/* an approver's listener */
	SBX_RULE_DEST_UNPARSED	= SBX_RULE_BUILTIN + 15,/* a destination no hook can read */
	SBX_RULE_LOOPBACK_OUTSIDE = SBX_RULE_BUILTIN + 16,/* loopback default: no rule named it */
	SBX_RULE_DNS_PATH	= SBX_RULE_BUILTIN + 17,/* DNS not through the daemon */
	SBX_RULE_TERMINAL	= SBX_RULE_BUILTIN + 18,/* a terminal not the session's own */
	SBX_RULE_IPC_OUTSIDE	= SBX_RULE_BUILTIN + 19,/* a FIFO or SysV IPC object that the
							 * session did not make */
	SBX_RULE_KEY_OUTSIDE	= SBX_RULE_BUILTIN + 20,/* a key the session did not make */
	SBX_RULE_EXEC_PRIV	= SBX_RULE_BUILTIN + 21,/* an exec that gains privileges */
	SBX_RULE_RESERVED_PORT	= SBX_RULE_BUILTIN + 22,/* network.reserved_ports */
	SBX_RULE_INBOUND	= SBX_RULE_BUILTIN + 23,/* inbound default: no network.inbound */
	SBX_RULE_INBOUND_PORT	= SBX_RULE_BUILTIN + 24,/* network.inbound_ports */
	SBX_RULE_LANDLOCK	= SBX_RULE_BUILTIN + 25,/* the landlock tier's plan, stricter
							 * than the policy here */
	SBX_RULE_SOCKET_OUTSIDE	= SBX_RULE_BUILTIN + 26,/* an IP socket made outside the
							 * session, passed in */
	SBX_RULE_DEVICE_NODE	= SBX_RULE_BUILTIN + 27,/* a block or character device
							 * node made by a session */
	SBX_RULE_MOUNT_MOVED	= SBX_RULE_BUILTIN + 28,/* a container's mount whose host
							 * directory moved since it started */
	SBX_RULE_BUILTIN_END,	/* one past the last: new built-in rules go above */
};

enum sbx_event_flags {
	SBX_EVF_PATH_TRUNC	= 1u << 0,	/* path lost its leading part */
	SBX_EVF_WALK_TRUNC	= 1u << 1,
	SBX_EVF_NET6		= 1u << 2,	/* addr holds IPv6 */
	SBX_EVF_NET4		= 1u << 3,
	SBX_EVF_FILE		= 1u << 4,	/* dev/ino/path are valid */
	SBX_EVF_NEW_NAME	= 1u << 5,	/* object does not exist yet: dev/ino
						 * are the parent's, hash the name's */
	SBX_EVF_PEER		= 1u << 6,	/* a listener: aux is its pid (0: not
						 * known), peer_ino its socket's inode */
	SBX_EVF_ABSTRACT	= 1u << 7,	/* an abstract unix socket: path holds
						 * "@name" */
	SBX_EVF_LOOPBACK	= 1u << 8,	/* addr:port is a loopback listener
						 * outside the session (dns.bpf.c) */
	SBX_EVF_INBOUND		= 1u << 9,	/* pid, comm, uid: a client outside every
						 * session; cgid: the session whose
						 * listener it tried (inbound.bpf.c) */
};

#define SBX_EVENT_PATH_MAX 512
#define SBX_EVENT_CTX_MAX 256	/* exe, cwd and args of the process */

/*
 * One denial, ask or audit. Fixed size, sent over the sbx_events ring
 * buffer; never sent for an allowed operation. The path is for people to
 * read: it is rebuilt from dentries after the decision and never used
 * for one. It is written right-aligned into path[] so that a long path
 * keeps its informative tail: the string starts at path[path_off].
 */
struct sbx_event {
	__u64 ts_ns;		/* bpf_ktime_get_boot_ns() */
	__u64 cgid;		/* session cgroup id */
	__u64 serial;		/* session serial (sbx_session.serial) */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 uid;
	__u32 policy_id;
	__u32 rule_id;
	__u16 op;		/* enum sbx_op */
	__u8  verdict;		/* enum sbx_verdict: DENY, ASK or AUDIT */
	__u8  access;		/* enum sbx_access, for file ops */
	__u16 flags;		/* enum sbx_event_flags */
	__u16 family;		/* AF_* for network ops */
	__s32 ret;		/* what the hook returned (0 or -errno) */
	__u32 dev;
	__u32 aux;		/* op-specific: signal, socket family, target pid */
	__u64 ino;
	__u64 name_hash;	/* SBX_EVF_NEW_NAME; abstract unix sockets: the name's hash */
	__u64 peer_ino;		/* SBX_EVF_PEER: the listener's socket inode */
	__u16 port;		/* host order */
	__u8  proto;
	__u8  _pad0;
	__u8  addr[16];
	char  comm[16];
	__u32 path_off;
	char  path[SBX_EVENT_PATH_MAX];
	/*
	 * Who asked, read in the kernel at the moment of the decision: by the
	 * time the daemon could read /proc, a short-lived process is gone.
	 * exe and cwd are right-aligned like path; args holds the first bytes
	 * of the command line, NUL-separated, args_len of them.
	 */
	__u32 exe_off;
	__u32 cwd_off;
	__u32 args_len;
	__u32 _pad1;
	char  exe[SBX_EVENT_CTX_MAX];
	char  cwd[SBX_EVENT_CTX_MAX];
	char  args[SBX_EVENT_CTX_MAX];
};

#ifndef __BPF__
_Static_assert(sizeof(struct sbx_file_rule) == 28, "sbx_file_rule layout");
_Static_assert(sizeof(struct sbx_inode_key) == 16, "sbx_inode_key layout");
_Static_assert(sizeof(struct sbx_chain_key) == 32, "sbx_chain_key layout");
_Static_assert(sizeof(struct sbx_name_key) == 16, "sbx_name_key layout");
_Static_assert(sizeof(struct sbx_net_port_rule) == 12, "sbx_net_port_rule layout");
_Static_assert(sizeof(struct sbx_net_rule) == 8 + 12 * SBX_NET_PORT_RULES, "sbx_net_rule layout");
_Static_assert(sizeof(struct sbx_net4_key) == 12, "sbx_net4_key layout");
_Static_assert(sizeof(struct sbx_net6_key) == 24, "sbx_net6_key layout");
_Static_assert(sizeof(struct sbx_policy_hdr) == 88, "sbx_policy_hdr layout");
_Static_assert(sizeof(struct sbx_session) == 104, "sbx_session layout");
_Static_assert(sizeof(struct sbx_grant_key) == 48, "sbx_grant_key layout");
_Static_assert(sizeof(struct sbx_dns_resolver) == 16, "sbx_dns_resolver layout");
_Static_assert(sizeof(struct sbx_dns_orig) == 24, "sbx_dns_orig layout");
_Static_assert(sizeof(struct sbx_learned_key) == 24, "sbx_learned_key layout");
_Static_assert(sizeof(struct sbx_learned) == 16 + 12 * SBX_LEARNED_PORT_RULES, "sbx_learned layout");
_Static_assert(sizeof(struct sbx_event) == 128 + SBX_EVENT_PATH_MAX + 16 + 3 * SBX_EVENT_CTX_MAX,
	       "sbx_event layout");
#endif

/* ---- where things live ------------------------------------------------ */

#define SBX_PIN_DIR		"/sys/fs/bpf/bpfsbx"
#define SBX_CGROUP_DIR_NAME	"bpfsbx"	/* under the cgroup2 mount */
#define SBX_RUN_DIR		"/run/bpfsbx"
#define SBX_CONTROL_SOCK	SBX_RUN_DIR "/control.sock"

#endif /* BPFSBX_H */
