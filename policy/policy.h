/* SPDX-License-Identifier: GPL-2.0 */
/*
 * policy.h - the policy language: parse (libyaml), check, expand, compile
 * to kernel map entries, and decide in user space exactly as the kernel
 * does (for `policy explain`, the agent hooks and differential tests).
 *
 * Pipeline:  YAML file (+ extends) --load--> struct sbx_policy (checked,
 * variables expanded, rules numbered) --compile(policy_id)--> struct
 * sbx_compiled (sorted map entries) --daemon--> BPF maps.
 *
 * A policy that has any error is rejected whole: load returns NULL and
 * every error is in the diagnostics, each with file:line:column and the
 * field it concerns.
 */
#ifndef SBX_POLICY_H
#define SBX_POLICY_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include "bpf/bpfsbx.h"
#include "lib/names.h"

/* ---- diagnostics --------------------------------------------------------- */

enum sbx_diag_level { SBX_DIAG_ERROR, SBX_DIAG_WARNING };

struct sbx_diag {
	enum sbx_diag_level level;
	char *file;		/* as given to load, or the extends'd file */
	int line, col;		/* 1-based; 0 when not tied to a position */
	char *field;		/* e.g. "files.rules[3].path"; may be NULL */
	char *msg;
};

struct sbx_diags {
	struct sbx_diag *v;
	size_t n, cap;
	size_t errors;
};

void sbx_diags_free(struct sbx_diags *d);
/* "FILE:LINE:COL: error: FIELD: MESSAGE", one per line */
void sbx_diags_print(const struct sbx_diags *d, FILE *out);

/* ---- environment for expansion and resolution ------------------------------ */

struct sbx_addr {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];
};

typedef int (*sbx_resolve_fn)(const char *host, struct sbx_addr **out,
			      size_t *n, void *ctx);

struct sbx_policy_env {
	const char *home;	/* ~ and ${HOME}; required */
	const char *project;	/* ${PROJECT}; NULL: using it is an error */
	const char *shipped_dir;/* for `extends: NAME`; NULL: the default search
				 * ($BPFSBX_POLICY_DIR, <exe>/../policy/shipped,
				 * SBX_SHIPPED_POLICY_DIR) */
	sbx_resolve_fn resolve;	/* NULL: getaddrinfo */
	void *resolve_ctx;
	const char *resolv_conf;/* for the "resolvers" cidr; NULL: /etc/resolv.conf */
	/* At most this many directory entries are scanned for hard
	 * links below a denied directory; 0 means SBX_HARDLINK_SCAN_MAX. */
	size_t hardlink_scan_max;
	/* No hard-link scan at all: for a connector inside a session, where
	 * the kernel holds those inode entries and a scan would read the
	 * very directories the policy asks a person about. */
	bool no_hardlink_scan;
	/* No inode generations (sbx_kgen opens each object for reading): for
	 * a compile inside a session, whose opens the kernel decides (a
	 * denied ~/.ssh/ would be a denial, an asked one a request to the
	 * person, that the agent never made); and a compile used at once
	 * has no entry that a later file could reuse. */
	bool no_generations;
	/* The machine policy's directory (machine.yaml, machine.d/NAME.yaml);
	 * NULL: $BPFSBX_MACHINE_DIR, else /etc/bpfsbx. */
	const char *machine_dir;
	/* Load no machine policy: for a policy that is not a session's
	 * (a suggester's patch, the fuzzers). */
	bool no_machine;
	/* A running session's policy under a changed floor: where the project
	 * says something the floor does not let it say, the floor is applied
	 * over it with a warning instead of refusing the policy (a refusal
	 * would leave the session under the old floor). */
	bool floor_live;
};

#define SBX_MACHINE_DIR		"/etc/bpfsbx"

#define SBX_HARDLINK_SCAN_MAX	100000
#define SBX_HARDLINK_SCAN_DEPTH	64

/* ---- the loaded policy ------------------------------------------------------ */

enum sbx_section { SBX_SEC_FILES, SBX_SEC_NETWORK, SBX_SEC_COMMANDS };

/* One rule as written, for reasons in events, requests and `explain`. */
struct sbx_rule_info {
	uint32_t id;		/* 1..n; 0 is "the section default" */
	enum sbx_section section;
	uint8_t verdict;	/* enum sbx_verdict */
	uint8_t access;		/* files: SBX_ACCBIT mask */
	char *pattern;		/* as written, e.g. "~/.ssh/" or "registry.npmjs.org:443" */
	char *expanded;		/* after ~ / ${...} expansion (files) */
	char *reason;
	char *file;
	int line, col;
	/* True for the entry a section default made (files.default,
	 * network.default, commands.default); pattern is then the field. */
	bool is_default;
	/* A rule of the machine policy (/etc/bpfsbx): a floor that the
	 * project's rules cannot lower (docs/POLICY.md "Machine policy"). */
	bool machine;
	/* Learning (sbx_policy_learn): the verdict, deny or ask, that this
	 * rule has when enforced; verdict is then audit. 0 otherwise. */
	uint8_t would;
};

struct sbx_policy;

struct sbx_policy *sbx_policy_load_file(const char *path,
					const struct sbx_policy_env *env,
					struct sbx_diags *diags);
struct sbx_policy *sbx_policy_load_buffer(const char *name, const char *buf,
					  size_t len,
					  const struct sbx_policy_env *env,
					  struct sbx_diags *diags);
void sbx_policy_free(struct sbx_policy *p);

size_t sbx_policy_rule_count(const struct sbx_policy *p);
/* id 1..count; NULL otherwise */
const struct sbx_rule_info *sbx_policy_rule(const struct sbx_policy *p, uint32_t id);
/* What decided, for a person: "by rule #5 "~/.ssh/" at FILE:LINE: REASON",
 * "by default (...)", a built-in rule's text (malloc'd) */
char *sbx_policy_rule_words(const struct sbx_policy *p, uint32_t id);
/* Files the policy was read from (the file and everything it extends):
 * sessions may never write them. */
size_t sbx_policy_source_count(const struct sbx_policy *p);
const char *sbx_policy_source(const struct sbx_policy *p, size_t i);
/* `sandbox: {require: bpf-lsm}`: the fallback tier must not run it */
bool sbx_policy_requires_bpf_lsm(const struct sbx_policy *p);
/* `run --learn`: every deny and ask of the policy becomes audit (its rule
 * keeps what it would have been, sbx_rule_info.would), except the
 * protected set: agent-default's own refusing rules, any rule closer than
 * them to what they refuse, the machine policy, network.loopback and
 * network.inbound (policy/learn.c). Before compiling; the policy must
 * extend agent-default (else -EINVAL with a diagnostic). shipped_dir: as
 * sbx_policy_env's. */
int sbx_policy_learn(struct sbx_policy *p, const char *shipped_dir, struct sbx_diags *d);

/* The machine policy's directory as env names it (see sbx_policy_env). */
const char *sbx_machine_dir(const struct sbx_policy_env *env);
/* Its keys (keys/NAME.pub), read and checked as the daemon does: 0 with
 * *kr (NULL: there is no keys/, unsigned files are taken), or -1 with the
 * problem in d. Free with sbx_keyring_free, then free. */
struct sbx_keyring;
int sbx_machine_keys(const struct sbx_policy_env *env, struct sbx_keyring **kr,
		     struct sbx_diags *d);
/* The machine policy's projects: settings that outlive loading: the
 * longest "always" grant (0: no limit) and who may approve (NULL-ended
 * names: "user" or "@group"; NULL: anyone who may today). */
uint32_t sbx_policy_max_always_ttl(const struct sbx_policy *p);
const char *const *sbx_policy_approvers(const struct sbx_policy *p);

/* ---- compiled form ------------------------------------------------------- */

struct sbx_inode_entry { struct sbx_inode_key k; struct sbx_file_rule v; char *what; };
struct sbx_chain_entry { struct sbx_chain_key k; struct sbx_file_rule v; char *what; };
struct sbx_name_entry  { struct sbx_name_key  k; struct sbx_file_rule v; char *what; };
struct sbx_net4_entry  { struct sbx_net4_key  k; struct sbx_net_rule  v; char *what; };
struct sbx_net6_entry  { struct sbx_net6_key  k; struct sbx_net_rule  v; char *what; };

/*
 * A host rule: an exact name, or "*.name" (strictly below name), with one
 * port rule. Names are lower case without a trailing dot. Nothing is
 * resolved when a policy is compiled: the daemon, the sessions' resolver,
 * decides each query by these and learns the answer's addresses.
 */
struct sbx_host_entry {
	char *name;
	bool wildcard;
	struct sbx_net_port_rule pr;
};

/* network.resolvers and network.dns */
#define SBX_DNS_MAX_RESOLVERS	8
struct sbx_dns_upstream {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint16_t port;		/* host order; 53 by default */
};

struct sbx_dns_conf {
	uint32_t grace_s;		/* added to the answer's TTL (default 300) */
	uint32_t min_ttl_s;		/* TTLs are raised to this (default 60) */
	uint32_t max_per_name;		/* addresses learned per name (default 32) */
	uint32_t max_per_session;	/* addresses learned per session (default 4096) */
	size_t n_resolvers;		/* 0: the nameservers of /etc/resolv.conf */
	struct sbx_dns_upstream resolvers[SBX_DNS_MAX_RESOLVERS];
};

#define SBX_DNS_GRACE_S		300
#define SBX_DNS_MIN_TTL_S	60
#define SBX_DNS_MAX_PER_NAME	32
#define SBX_DNS_MAX_PER_SESSION	4096

/*
 * Entries are sorted by key bytes and unique: the compiled form of a
 * policy is a pure function of the policy and the file system, never of
 * rule order. `what` is a human label (the path or CIDR) for --dump.
 */
struct sbx_compiled {
	struct sbx_policy_hdr hdr;
	struct sbx_inode_entry *inode;	size_t n_inode;
	struct sbx_chain_entry *chain;	size_t n_chain;
	struct sbx_name_entry  *name;	size_t n_name;
	struct sbx_net4_entry  *net4;	size_t n_net4;
	struct sbx_net6_entry  *net6;	size_t n_net6;
	struct sbx_host_entry  *hosts;	size_t n_hosts;	/* by name, then port rule order */
	struct sbx_dns_conf dns;
	struct sbx_protect_key *protect; size_t n_protect; /* policy files */
	char **protect_what;	/* added: path label of each protect entry */
	char **scan_dirs;	/* directories scanned for hard links, sorted */
	size_t n_scan_dirs;
	/* The object each inode entry was made for, by path: a compile kept
	 * for later sessions is valid only while every path still leads to
	 * the same object (a directory deleted and made again has a new
	 * inode, and the rules below it would be anchored on the old one).
	 * Sorted by path, each path once. */
#define SBX_IDENT_COUNTED	(-2)
	struct sbx_ident_stamp {
		char *path;
		uint32_t dev;
		uint64_t ino;
		/* sbx_kgen's; SBX_IDENT_COUNTED: the kernel counts the
		 * object's removals (SBX_GEN_REMOVALS); -1: none */
		int64_t gen;
	} *idents;
	size_t n_idents;
};

/*
 * What the hard-link scan of those directories would find now: a digest
 * of (inode, link count) of every regular file with more than one link,
 * walked as compile walks them. A compiled policy whose digest changed
 * misses a hard link made since, and must be compiled again.
 */
uint64_t sbx_hardlink_digest(char *const *dirs, size_t n);

int sbx_policy_compile(const struct sbx_policy *p, uint32_t policy_id,
		       struct sbx_compiled *out, struct sbx_diags *diags);
void sbx_compiled_free(struct sbx_compiled *c);
/* Deterministic text form (`bpfsbx policy compile --dump`). */
void sbx_compiled_dump(const struct sbx_compiled *c, const struct sbx_policy *p,
		       FILE *out);

/* ---- decisions in user space (mirror of bpf/) -------------------------- */

struct sbx_decision {
	uint8_t verdict;	/* enum sbx_verdict, never NONE */
	uint32_t rule_id;	/* policy rule id, 0 = default, or SBX_RULE_* */
	int level;		/* where it matched: 0 = the object; -1 default */
	int rank;		/* enum sbx_rank */
};

/* Path need not exist: missing components are matched by name only. */
int sbx_decide_path(const struct sbx_compiled *c, const char *path,
		    enum sbx_access acc, struct sbx_decision *out);
/* Every access class at once, out[acc]: one walk of path for all of them. */
int sbx_decide_path_each(const struct sbx_compiled *c, const char *path,
			 struct sbx_decision out[SBX_ACC_MAX]);
/*
 * The same for the entries of one directory (the Landlock plan lists
 * directories): the directory's own walk is made once, so an entry costs
 * only its own lookups. A name that is a symlink, or a directory that is
 * not canonical, is decided from the full path, as sbx_decide_path_each.
 */
struct sbx_decide_dir;
struct sbx_decide_dir *sbx_decide_dir_open(const char *dir);
void sbx_decide_dir_close(struct sbx_decide_dir *d);
/* lst: the name's lstat(2), when the caller has just made it; NULL: made here */
int sbx_decide_dir_each(const struct sbx_compiled *c, const struct sbx_decide_dir *d,
			const char *name, const struct stat *lst,
			struct sbx_decision out[SBX_ACC_MAX]);
/* The same with the name's kernel identity known (a batch of statx of the
 * directory's entries: sbx_kident_statx): err 0 with (dev, ino), or
 * the -errno sbx_kident gave */
struct sbx_kid {
	uint32_t dev;
	uint64_t ino;
	int err;
};
int sbx_decide_dir_each_kid(const struct sbx_compiled *c, const struct sbx_decide_dir *d,
			    const char *name, const struct stat *lst, const struct sbx_kid *kid,
			    struct sbx_decision out[SBX_ACC_MAX]);
/* A container's mount root: the host path it was mounted from, and what
 * was there when the container was adopted (sbx_kident). */
struct sbx_graft {
	char *path;
	uint32_t dev;
	uint64_t ino;
};
/* The policy's decision at g->path, put on the mount root's inode
 * (graft.c). When g->path is gone, names another object or cannot be
 * decided, the root is denied every access (built-in mount-moved) and 0
 * is returned: a host agent that moves a mounted directory does not fail
 * the next compile (nor the machine floor's all-or-none apply with it).
 * -EPERM with *why (malloc'd) for a root the policy cannot carry there
 * (inside a .sandbox or a protected directory); -ENOMEM. */
int sbx_compiled_graft(struct sbx_compiled *c, const struct sbx_graft *g, char **why);
/* Arrays of grafts end at one whose path is NULL. */
struct sbx_graft *sbx_grafts_dup(const struct sbx_graft *v);
void sbx_grafts_free(struct sbx_graft *v);
/* addr: 4 or 16 bytes in network order; port host order; proto 6/17/0 */
int sbx_decide_net(const struct sbx_compiled *c, int family, const uint8_t *addr,
		   uint16_t port, uint8_t proto, struct sbx_decision *out);
/*
 * How a name is decided (the daemon's resolver, `policy explain HOST`).
 * The most specific host rule wins: an exact name, then the wildcard with
 * the longest suffix. Its port rules (first, n) all come along into the
 * learned addresses; the query itself is decided by the most permissive
 * of them (a name allowed on any port resolves), so that deny and ask are
 * answered only for names that are denied or asked on every port. No host
 * rule: network.default decides the query and no rule comes along.
 */
struct sbx_host_decision {
	uint8_t verdict;		/* of the query */
	uint32_t rule_id;		/* 0 = network.default */
	bool matched;			/* a host rule matched */
	size_t first, n;		/* its entries in c->hosts */
};
/* name: as asked (any case, optional trailing dot); -EINVAL if not a name */
int sbx_decide_host(const struct sbx_compiled *c, const char *name,
		    struct sbx_host_decision *out);
/* A host name as policies and the resolver compare them: lower case, no
 * trailing dot; false if it is not a DNS name (1-253 bytes, labels of
 * 1-63 bytes of letters, digits, '-' and '_'). */
bool sbx_host_normalize(const char *in, char *out, size_t outlen);

/* A loopback address (127.0.0.0/8, 0.0.0.0, ::1, ::, v4-mapped): its
 * listeners are decided by who serves them (bpf/dns.bpf.c). */
bool sbx_addr_is_loopback(int family, const uint8_t *addr);
/* dst = src (bytes long) with the bits past its first bits zeroed: a
 * prefix's network. dst may be src. */
void sbx_addr_mask(uint8_t *dst, const uint8_t *src, size_t bytes, unsigned bits);
/* A loopback listener outside the session: a rule that names the port and
 * allows it, else network.loopback. -EINVAL when addr is not loopback. */
int sbx_decide_loopback(const struct sbx_compiled *c, int family, const uint8_t *addr,
			uint16_t port, uint8_t proto, struct sbx_decision *out);
/* An abstract unix socket's name (without its leading NUL), as
 * bpf/network.bpf.c decides a listener outside the session. */
int sbx_decide_abstract(const struct sbx_compiled *c, const char *name, size_t len,
			struct sbx_decision *out);
/* The commands section (connectors' static classification). */
int sbx_decide_command(const struct sbx_policy *p, int argc, char *const argv[],
		       struct sbx_decision *out);

/* ---- helpers shared with the daemon and the tests ------------------------- */

/* Kernel identity of a path: (sb->s_dev, i_ino) as the BPF programs see
 * them, from one statx where that is the kernel's pair, else from
 * /proc/self/fdinfo and /proc/self/mountinfo (policy/identity.c). */
int sbx_kident(const char *path, bool follow, uint32_t *dev, uint64_t *ino);
/*
 * The generation of the object whose identity is (dev, ino) at path: 0
 * with *gen; SBX_KGEN_UNIQUE on a file system that never gives a number
 * twice (tmpfs, ramfs, the kernel's own); SBX_KGEN_NONE where there is
 * none to have (a file system that keeps none, overlayfs above all; not a
 * regular file or directory, not openable by the caller, or another
 * object there by now).
 */
enum { SBX_KGEN_NONE = 1, SBX_KGEN_UNIQUE = 2 };
int sbx_kgen(const char *path, bool follow, uint32_t dev, uint64_t ino, uint32_t *gen);
int sbx_kident_fd(int fd, uint32_t *dev, uint64_t *ino);
/* The same for a descriptor of process pid's mount namespace (a
 * container's): its mount ids are that namespace's. */
int sbx_kident_fd_in(int fd, pid_t pid, uint32_t *dev, uint64_t *ino);
/* path as process pid sees it, from dirfd (a directory in its mount
 * namespace; -1: pid's root), its absolute symbolic links kept inside
 * that root as the container's own lookups are (openat2 RESOLVE_IN_ROOT).
 * An O_PATH descriptor, or -errno. */
enum {
	SBX_IN_NOFOLLOW		= 1 << 0,	/* not a symbolic link at the end */
	SBX_IN_NO_SYMLINKS	= 1 << 1,	/* nor anywhere on the way */
};
int sbx_open_in(pid_t pid, int dirfd, const char *path, unsigned flags);
/*
 * A batch of identities from statx calls the caller made (STATX_INO and
 * STATX_MNT_ID) on objects it does not hold: sbx_kident_statx gives one
 * from the mount table as it stands (0; 1: take sbx_kident; 2, below), and the
 * answers hold only when sbx_kident_mounts_unchanged(&gen), called before
 * the first statx and again after the last with the same gen, says true
 * the second time: no mount came or went meanwhile (and no thread read
 * the table again), so no mount id was given to another;
 * 2: a mount whose stat is not the kernel's, take sbx_kident_slow.
 * False: the table was read again, and the batch is asked again.
 */
struct statx;
int sbx_kident_statx(const struct statx *sx, uint32_t *dev, uint64_t *ino);
bool sbx_kident_mounts_unchanged(unsigned long *gen);
/* The two ways sbx_kident() takes (for the test that compares them):
 * one statx where the file system reports the kernel's pair (0; 1 when it
 * does not, or the mount is not known yet), and O_PATH + fdinfo. */
int sbx_kident_fast(const char *path, bool follow, uint32_t *dev, uint64_t *ino);
int sbx_kident_slow(const char *path, bool follow, uint32_t *dev, uint64_t *ino);

/*
 * What a path names without following a symlink at its last component
 * (directories before it are followed): the kernel identity, the file
 * type ("file", "dir", "symlink", "char", "block", "fifo", "socket") and
 * the number of hard links. 0 or -errno.
 */
struct sbx_objid {
	uint32_t dev;
	uint64_t ino;
	const char *type;	/* static string */
	unsigned long nlink;
	/* birth time "SEC.NSEC" (statx), "" where the file system has none: an
	 * inode number freed and given to a new file is a different object */
	char btime[40];
};
int sbx_objid_nofollow(const char *path, struct sbx_objid *id);

/*
 * A grant is for the object a person saw: does path still lead, without
 * following a final symlink, to (dev, ino) of type type (NULL: any)? For
 * a name that did not exist yet (new_name), (dev, ino) is its directory's
 * and the name must not have become a symlink. A regular file with more
 * than one hard link is refused too: a grant on its inode would also
 * grant names the person never saw. 0, or -ESTALE / -EMLINK / -EINVAL
 * with *why (malloc'd) in words for the person.
 */
int sbx_objid_check(const char *path, bool new_name, uint32_t dev, uint64_t ino,
		    const char *type, const char *btime, char **why);
/* The same for a path as process pid sees it: through its root and the
 * mounts of its mount namespace (a container's). */
int sbx_objid_check_in(pid_t pid, const char *path, bool new_name, uint32_t dev,
		       uint64_t ino, const char *type, const char *btime, char **why);

/* getaddrinfo() into sbx_addr (the default resolver). 0, or -1 with *why. */
int sbx_resolve_system(const char *host, struct sbx_addr **out, size_t *n, const char **why);

uint64_t sbx_hash_name(const char *s, size_t len);	/* component hash */
uint64_t sbx_hash_suffix(const char *lit, size_t len);	/* reversed bytes */
uint64_t sbx_hash_chain(const char *const *names, size_t m);	/* top-down */

/* sbx_verdict_name(), sbx_access_name() and the other ABI names: lib/names.h */

/* ---- the parsed policy: for the policy compiler and its tests only ------------ */

#ifdef SBX_POLICY_INTERNAL

enum sbx_path_shape {
	SBX_PAT_ANCHORED,	/* absolute path: itself and everything below */
	SBX_PAT_NAME_EXACT,	/* basename anywhere */
	SBX_PAT_NAME_PREFIX,	/* "lit*" anywhere */
	SBX_PAT_NAME_SUFFIX,	/* "*lit" anywhere */
	SBX_PAT_PROC,		/* /proc/<pid>/{environ,mem,fd} of other processes */
	SBX_PAT_ABSTRACT,	/* "@name": an abstract unix socket (connect only) */
	SBX_PAT_ABSTRACT_PREFIX,/* "@lit*" */
};

/* Where a value came from, for diagnostics that compile emits. */
struct sbx_srcpos {
	char *file;
	char *field;
	int line, col;
};

/* A name or glob rule (a basename anywhere), not a path: Landlock, which
 * grants by place, cannot say it (policy/landlock.c) */
static inline bool sbx_pat_is_name(enum sbx_path_shape shape)
{
	return shape == SBX_PAT_NAME_EXACT || shape == SBX_PAT_NAME_PREFIX ||
	       shape == SBX_PAT_NAME_SUFFIX;
}

struct sbx_path_pat {
	enum sbx_path_shape shape;
	char *text;		/* ANCHORED: expanded, normalised absolute path;
				 * NAME_*: the literal; PROC: "environ", "mem", "fd" */
	struct sbx_srcpos pos;
};

struct sbx_frule {
	uint32_t id;
	uint8_t access;		/* SBX_ACCBIT mask */
	uint8_t verdict;
	struct sbx_path_pat *pats;
	size_t n_pats;
};

enum sbx_net_item_kind { SBX_NI_HOST, SBX_NI_CIDR, SBX_NI_RESOLVERS };

struct sbx_net_item {
	enum sbx_net_item_kind kind;
	char *text;		/* as written; HOST: normalised, "*." kept */
	int family;		/* CIDR: AF_INET or AF_INET6 (v4-mapped made v4) */
	uint8_t addr[16];
	uint8_t bits;
	struct sbx_srcpos pos;
};

struct sbx_port_range { uint16_t lo, hi; };

struct sbx_nrule {
	uint32_t id;
	uint8_t verdict;
	uint8_t proto;		/* 0 any, IPPROTO_TCP, IPPROTO_UDP */
	struct sbx_net_item *items;
	size_t n_items;
	struct sbx_port_range *ports;	/* none: any port */
	size_t n_ports;
};

struct sbx_crule {
	uint32_t id;
	uint8_t verdict;
	char **cmds;		/* basenames or absolute paths */
	size_t n_cmds;
	char **args;		/* fnmatch globs, any may match; none: any args */
	size_t n_args;
};

struct sbx_policy {
	struct sbx_dns_conf dns;	/* network.resolvers, network.dns */
	struct sbx_rule_info *rules;	/* rules[id - 1] */
	size_t n_rules;
	struct sbx_frule *frules;	size_t n_frules;
	struct sbx_nrule *nrules;	size_t n_nrules;
	struct sbx_crule *crules;	size_t n_crules;
	uint8_t file_default[SBX_ACC_MAX];
	uint32_t file_default_rule[SBX_ACC_MAX];
	uint8_t net_default;
	uint32_t net_default_rule;
	uint8_t cmd_default;
	uint32_t cmd_default_rule;
	uint32_t sandbox_flags;		/* SBX_PF_ALLOW_* from sandbox: */
	uint64_t family_allow;		/* sandbox.socket_families */
	uint32_t netlink_allow;		/* sandbox.netlink */
	char **keep_env;		/* sandbox.keep_env: handles `run` keeps */
	bool require_bpf_lsm;		/* sandbox.require: bpf-lsm (a child cannot drop it) */
	size_t n_keep_env;
	uint8_t loopback_verdict;	/* network.loopback */
	uint32_t loopback_rule;
	uint8_t inbound_verdict;	/* network.inbound (0: not set: deny) */
	uint32_t inbound_rule;
	struct sbx_port_range *reserved;	/* network.reserved_ports */
	size_t n_reserved;
	struct sbx_port_range *inbound_ports;	/* network.inbound_ports */
	size_t n_inbound_ports;
	char **sources;			/* realpaths, root of the chain first */
	size_t n_sources;
	/* copy of the environment, for compile */
	char *home, *project, *resolv_conf;
	sbx_resolve_fn resolve;
	void *resolve_ctx;
	size_t hardlink_scan_max;
	bool no_hardlink_scan;
	bool no_generations;
	/* The machine policy's rules follow the project's in rules[] and in
	 * frules, nrules and crules: these count them (0: no machine policy). */
	size_t n_machine_rules, n_machine_frules, n_machine_nrules, n_machine_crules;
	bool floor_live;		/* env's: raise, do not refuse (floor.c) */
	bool floor_net_raised;		/* nrules already raised under the floor */
	uint32_t max_always_ttl_s;	/* projects.max_always_ttl; 0: none */
	char **approvers;		/* projects.approvers, NULL-ended; NULL: none */
};

/* A rule id of the machine policy (machine.c). */
static inline bool sbx_rule_is_machine(const struct sbx_policy *p, uint32_t id)
{
	return id > p->n_rules - p->n_machine_rules && id <= p->n_rules;
}

/* Diagnostics helpers (policy/diag.c); the v forms are for the parser's and
 * the compiler's own printf-like wrappers. */
void sbx_diag_vadd(struct sbx_diags *d, enum sbx_diag_level level,
		   const char *file, int line, int col, const char *field,
		   const char *fmt, va_list ap) __attribute__((format(printf, 7, 0)));
void sbx_diag_vat(struct sbx_diags *d, enum sbx_diag_level level,
		  const struct sbx_srcpos *pos, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
void sbx_diag_add(struct sbx_diags *d, enum sbx_diag_level level,
		  const char *file, int line, int col, const char *field,
		  const char *fmt, ...) __attribute__((format(printf, 7, 8)));
void sbx_diag_at(struct sbx_diags *d, enum sbx_diag_level level,
		 const struct sbx_srcpos *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Put the diagnostics from index `from` on in file:line:col order. */
void sbx_diags_sort_from(struct sbx_diags *d, size_t from);

/* Lexical normalisation of an absolute path ("//", ".", ".."); malloc'd. */
char *sbx_path_normalize(const char *path);

/* Decide without the built-in protections (used while compiling). */
int sbx_decide_path_policy(const struct sbx_compiled *c, const char *path,
			   enum sbx_access acc, struct sbx_decision *out);

#endif /* SBX_POLICY_INTERNAL */

#endif
