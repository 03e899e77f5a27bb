// SPDX-License-Identifier: GPL-2.0
/*
 * decide.c - the kernel's decision algorithm, in user space, over the
 * compiled entries: for `policy explain`, the agent connectors and the
 * differential tests against bpf/. Any change here must be made in the
 * BPF programs too, and the other way round.
 *
 * Files: walk from the object (level 0) up to "/", collect candidates
 * (inode and chain entries: rank EXACT; exact basename: NAME; prefix and
 * suffix basename: GLOB); the best is the smallest (level, rank), then
 * the larger verdict, then the smaller rule id. No candidate: the
 * section default.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <arpa/inet.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"

#define BPF_FS_MAGIC_		0xcafe4a11
#define CGROUP2_SUPER_MAGIC_	0x63677270
#define SECURITYFS_MAGIC_	0x73636673
#define DEBUGFS_MAGIC_		0x64626720
#define TRACEFS_MAGIC_		0x74726163

struct node {
	const char *name;	/* NULL for "/" */
	size_t len;
	bool has_id;		/* existing: identity known */
	uint32_t dev;
	uint64_t ino;
};

struct walk {
	char *buf;		/* storage for names */
	struct node *nodes;	/* nodes[0] = the object, last = "/" */
	size_t n;
	char *existing;		/* deepest existing path (resolved) */
	bool id_error;
};

static void walk_free(struct walk *w)
{
	free(w->buf);
	free(w->nodes);
	free(w->existing);
}

/*
 * Resolve the existing prefix of path and split it into nodes. Missing
 * components are matched by name only; ".." in them is lexical.
 */
static int walk_build(const char *path, struct walk *w)
{
	char *abs = NULL, *cur = NULL, *real = NULL, *tail = NULL, *p;
	size_t ncomp = 0, k;
	int err = 0;

	memset(w, 0, sizeof(*w));
	if (!path || !*path)
		return -EINVAL;
	if (path[0] != '/') {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)))
			return -errno;
		if (asprintf(&abs, "%s/%s", cwd, path) < 0)
			return -ENOMEM;
	} else {
		abs = strdup(path);
		if (!abs)
			return -ENOMEM;
	}
	real = realpath(abs, NULL);
	if (!real) {
		/* does not exist (entirely): peel names off a normalised copy */
		cur = sbx_path_normalize(abs);
		if (!cur) {
			err = -ENOMEM;
			goto out;
		}
		for (;;) {
			char *sl;

			real = realpath(cur, NULL);
			if (real)
				break;
			if (errno != ENOENT && errno != ENOTDIR) {
				err = -errno;
				goto out;
			}
			sl = strrchr(cur, '/');
			if (!sl || !strcmp(cur, "/")) {
				err = -ENOENT;
				goto out;
			}
			/* prepend the name to tail */
			{
				char *t = NULL;

				if (asprintf(&t, "%s%s%s", sl + 1, tail ? "/" : "", tail ? tail : "") < 0) {
					err = -ENOMEM;
					goto out;
				}
				free(tail);
				tail = t;
			}
			if (sl == cur)
				sl[1] = 0;
			else
				*sl = 0;
		}
	}
	w->existing = strdup(real);
	if (asprintf(&w->buf, "%s%s%s", real, tail && strcmp(real, "/") ? "/" : "",
		     tail ? tail : "") < 0) {
		w->buf = NULL;
		err = -ENOMEM;
		goto out;
	}
	for (p = w->buf; *p; p++)
		if (*p == '/')
			ncomp++;
	w->nodes = calloc(ncomp + 2, sizeof(*w->nodes));
	if (!w->nodes || !w->existing) {
		err = -ENOMEM;
		goto out;
	}
	/* identities of the existing prefixes, top-down; then split names */
	{
		size_t elen = strlen(real);
		size_t nn = 0;
		struct node *tmp = w->nodes;
		char save;

		/* "/" */
		tmp[nn].name = NULL;
		tmp[nn].len = 0;
		tmp[nn].has_id = !sbx_kident("/", true, &tmp[nn].dev, &tmp[nn].ino);
		if (!tmp[nn].has_id)
			w->id_error = true;
		nn++;
		for (p = w->buf + 1; *p; ) {
			char *e = strchr(p, '/');
			size_t len = e ? (size_t)(e - p) : strlen(p);
			size_t end = (size_t)(p - w->buf) + len;

			tmp[nn].name = p;
			tmp[nn].len = len;
			tmp[nn].has_id = false;
			if (end <= elen && strcmp(real, "/")) {
				save = w->buf[end];
				w->buf[end] = 0;
				tmp[nn].has_id = !sbx_kident(w->buf, true, &tmp[nn].dev, &tmp[nn].ino);
				if (!tmp[nn].has_id)
					w->id_error = true;
				w->buf[end] = save;
			}
			nn++;
			if (!e)
				break;
			p = e + 1;
		}
		/* reverse: level 0 = the object */
		for (k = 0; k < nn / 2; k++) {
			struct node t = tmp[k];

			tmp[k] = tmp[nn - 1 - k];
			tmp[nn - 1 - k] = t;
		}
		w->n = nn;
	}
out:
	free(abs);
	free(cur);
	free(real);
	free(tail);
	if (err) {
		walk_free(w);
		memset(w, 0, sizeof(*w));
	}
	return err;
}

static int cmp_inode_key(const void *k, const void *e)
{
	return memcmp(k, &((const struct sbx_inode_entry *)e)->k, sizeof(struct sbx_inode_key));
}

static int cmp_chain_key(const void *k, const void *e)
{
	return memcmp(k, &((const struct sbx_chain_entry *)e)->k, sizeof(struct sbx_chain_key));
}

static int cmp_name_key(const void *k, const void *e)
{
	return memcmp(k, &((const struct sbx_name_entry *)e)->k, sizeof(struct sbx_name_key));
}

struct best {
	bool found;
	int level, rank;
	uint8_t verdict;
	uint32_t rule_id;
};

static void consider(struct best *b, int level, int rank, uint8_t verdict, uint32_t rule_id)
{
	if (verdict == SBX_V_NONE)
		return;
	if (b->found) {
		if (level != b->level) {
			if (level > b->level)
				return;
		} else if (rank != b->rank) {
			if (rank > b->rank)
				return;
		} else if (verdict != b->verdict) {
			if (verdict < b->verdict)
				return;
		} else if (rule_id >= b->rule_id) {
			return;
		}
	}
	b->found = true;
	b->level = level;
	b->rank = rank;
	b->verdict = verdict;
	b->rule_id = rule_id;
}

static bool is_pseudofs(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf))
		return false;
	switch ((unsigned long)sf.f_type) {
	case BPF_FS_MAGIC_:
	case CGROUP2_SUPER_MAGIC_:
	case SECURITYFS_MAGIC_:
	case DEBUGFS_MAGIC_:
	case TRACEFS_MAGIC_:
		return true;
	default:
		return false;
	}
}

static void set_out(struct sbx_decision *out, uint8_t v, uint32_t rule, int level, int rank)
{
	out->verdict = v;
	out->rule_id = rule;
	out->level = level;
	out->rank = rank;
}

static int decide_path(const struct sbx_compiled *c, const char *path, enum sbx_access acc,
		       struct sbx_decision *out, bool builtins)
{
	const struct sbx_policy_hdr *h = &c->hdr;
	struct best b = { 0 };
	struct walk w;
	int err;

	if (!c || !out || acc >= SBX_ACC_MAX)
		return -EINVAL;
	err = walk_build(path, &w);
	if (err == -EINVAL || err == -ENOMEM)
		return err;
	if (err || w.id_error) {
		/* fail closed: a walk that cannot be finished denies */
		set_out(out, SBX_V_DENY, SBX_RULE_ERROR, 0, SBX_RANK_EXACT);
		walk_free(&w);
		return 0;
	}
	if (builtins && acc == SBX_ACC_WRITE) {
		for (size_t k = 0; k < w.n; k++) {
			const struct node *nd = &w.nodes[k];

			if (nd->name && nd->len == 8 && !memcmp(nd->name, ".sandbox", 8)) {
				set_out(out, SBX_V_DENY, SBX_RULE_SANDBOX_DIR, (int)k, SBX_RANK_EXACT);
				goto done;
			}
		}
		for (size_t k = 0; k < w.n; k++) {
			const struct node *nd = &w.nodes[k];

			if (!nd->has_id)
				continue;
			for (size_t i = 0; i < c->n_protect; i++)
				if (c->protect[i].dev == nd->dev && c->protect[i].ino == nd->ino) {
					set_out(out, SBX_V_DENY, SBX_RULE_PROTECTED, (int)k, SBX_RANK_EXACT);
					goto done;
				}
		}
		if (is_pseudofs(w.existing)) {
			set_out(out, SBX_V_DENY, SBX_RULE_PSEUDOFS, 0, SBX_RANK_EXACT);
			goto done;
		}
	}
	for (size_t k = 0; k < w.n; k++) {
		const struct node *nd = &w.nodes[k];

		if (nd->has_id) {
			struct sbx_inode_key ik = { .policy_id = h->policy_id, .dev = nd->dev, .ino = nd->ino };
			const struct sbx_inode_entry *ie =
				bsearch(&ik, c->inode, c->n_inode, sizeof(*c->inode), cmp_inode_key);

			if (ie) {
				consider(&b, (int)k, SBX_RANK_EXACT, ie->v.verdict[acc], ie->v.rule_id[acc]);
				for (uint32_t m = 1; m <= SBX_CHAIN_MAX && m <= k; m++) {
					struct sbx_chain_key ck = {
						.policy_id = h->policy_id, .dev = nd->dev, .ino = nd->ino, .m = m,
					};
					const struct sbx_chain_entry *ce;
					uint64_t hh = SBX_CHAIN_SEED;

					if (!(ie->v.chain_mask & (1u << (m - 1))))
						continue;
					/* names of nodes k-1 .. k-m, top-down */
					for (size_t j = 1; j <= m; j++)
						hh = sbx_mix64(hh ^ sbx_hash_name(w.nodes[k - j].name,
										  w.nodes[k - j].len));
					ck.hash = hh;
					ce = bsearch(&ck, c->chain, c->n_chain, sizeof(*c->chain), cmp_chain_key);
					if (ce)
						consider(&b, (int)(k - m), SBX_RANK_EXACT, ce->v.verdict[acc],
							 ce->v.rule_id[acc]);
				}
			}
		}
		if (!nd->name)
			continue;
		{
			size_t len = nd->len;
			unsigned bit = len <= SBX_GLOB_LIT_MAX ? (unsigned)len : 0;

			if (h->exact_len_mask & (1ULL << bit)) {
				struct sbx_name_key nk = {
					.policy_id = h->policy_id, .kind = SBX_NAME_EXACT, .len = (uint8_t)bit,
					.hash = sbx_hash_name(nd->name, len),
				};
				const struct sbx_name_entry *ne =
					bsearch(&nk, c->name, c->n_name, sizeof(*c->name), cmp_name_key);

				if (ne)
					consider(&b, (int)k, SBX_RANK_NAME, ne->v.verdict[acc], ne->v.rule_id[acc]);
			}
			for (unsigned L = 1; L <= SBX_GLOB_LIT_MAX && L <= len; L++) {
				struct sbx_name_key nk = { .policy_id = h->policy_id, .len = (uint8_t)L };
				const struct sbx_name_entry *ne;

				if (h->prefix_len_mask & (1ULL << L)) {
					nk.kind = SBX_NAME_PREFIX;
					nk.hash = sbx_hash_name(nd->name, L);
					ne = bsearch(&nk, c->name, c->n_name, sizeof(*c->name), cmp_name_key);
					if (ne)
						consider(&b, (int)k, SBX_RANK_GLOB, ne->v.verdict[acc],
							 ne->v.rule_id[acc]);
				}
				if (h->suffix_len_mask & (1ULL << L)) {
					nk.kind = SBX_NAME_SUFFIX;
					nk.hash = sbx_hash_suffix(nd->name + len - L, L);
					ne = bsearch(&nk, c->name, c->n_name, sizeof(*c->name), cmp_name_key);
					if (ne)
						consider(&b, (int)k, SBX_RANK_GLOB, ne->v.verdict[acc],
							 ne->v.rule_id[acc]);
				}
			}
		}
	}
	if (b.found) {
		set_out(out, b.verdict, b.rule_id, b.level, b.rank);
	} else if (h->file_default[acc] == SBX_V_NONE) {
		/* a header without defaults is broken: fail closed */
		set_out(out, SBX_V_DENY, SBX_RULE_ERROR, -1, SBX_RANK_NONE);
	} else {
		set_out(out, h->file_default[acc], h->file_default_rule[acc], -1, SBX_RANK_NONE);
	}
done:
	walk_free(&w);
	return 0;
}

int sbx_decide_path(const struct sbx_compiled *c, const char *path, enum sbx_access acc,
		    struct sbx_decision *out)
{
	return decide_path(c, path, acc, out, true);
}

int sbx_decide_path_policy(const struct sbx_compiled *c, const char *path, enum sbx_access acc,
			   struct sbx_decision *out)
{
	return decide_path(c, path, acc, out, false);
}

/* ---- network ----------------------------------------------------------------------------- */

static bool prefix_match(const uint8_t *net, const uint8_t *addr, unsigned bits)
{
	unsigned full = bits / 8, rem = bits % 8;

	if (memcmp(net, addr, full))
		return false;
	return !rem || !((net[full] ^ addr[full]) & (0xff << (8 - rem)));
}

int sbx_decide_net(const struct sbx_compiled *c, int family, const uint8_t *addr,
		   uint16_t port, uint8_t proto, struct sbx_decision *out)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const struct sbx_net_rule *best = NULL;
	uint8_t a[16];
	unsigned best_bits = 0;

	if (!c || !addr || !out || (family != AF_INET && family != AF_INET6))
		return -EINVAL;
	memcpy(a, addr, family == AF_INET ? 4 : 16);
	if (family == AF_INET6 && !memcmp(a, mapped, 12)) {
		memmove(a, a + 12, 4);
		family = AF_INET;
	}
	if (family == AF_INET) {
		for (size_t i = 0; i < c->n_net4; i++) {
			unsigned bits = c->net4[i].k.prefixlen - 32;

			if (ntohl(c->net4[i].k.policy_id) != c->hdr.policy_id)
				continue;
			if ((!best || bits > best_bits) && prefix_match(c->net4[i].k.addr, a, bits)) {
				best = &c->net4[i].v;
				best_bits = bits;
			}
		}
	} else {
		for (size_t i = 0; i < c->n_net6; i++) {
			unsigned bits = c->net6[i].k.prefixlen - 32;

			if (ntohl(c->net6[i].k.policy_id) != c->hdr.policy_id)
				continue;
			if ((!best || bits > best_bits) && prefix_match(c->net6[i].k.addr, a, bits)) {
				best = &c->net6[i].v;
				best_bits = bits;
			}
		}
	}
	if (best) {
		for (uint32_t i = 0; i < best->count && i < SBX_NET_PORT_RULES; i++) {
			const struct sbx_net_port_rule *r = &best->r[i];

			if (port >= r->port_lo && port <= r->port_hi && (r->proto == 0 || r->proto == proto)) {
				set_out(out, r->verdict, r->rule_id, 0, SBX_RANK_EXACT);
				return 0;
			}
		}
	}
	if (c->hdr.net_default == SBX_V_NONE)
		set_out(out, SBX_V_DENY, SBX_RULE_ERROR, -1, SBX_RANK_NONE);
	else
		set_out(out, c->hdr.net_default, c->hdr.net_default_rule, -1, SBX_RANK_NONE);
	return 0;
}

/* ---- commands ------------------------------------------------------------------------------ */

int sbx_decide_command(const struct sbx_policy *p, int argc, char *const argv[],
		       struct sbx_decision *out)
{
	const char *base;
	char *joined = NULL, *norm = NULL;
	size_t jl = 0;
	int best_score = -1;
	uint8_t best_v = 0;
	uint32_t best_id = 0;

	if (!p || !out || argc < 1 || !argv || !argv[0])
		return -EINVAL;
	base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	if (argv[0][0] == '/')
		norm = sbx_path_normalize(argv[0]);
	for (int i = 1; i < argc; i++)
		jl += strlen(argv[i]) + 1;
	joined = calloc(jl + 1, 1);
	if (!joined || (argv[0][0] == '/' && !norm)) {
		free(joined);
		free(norm);
		return -ENOMEM;
	}
	for (int i = 1; i < argc; i++) {
		if (i > 1)
			strcat(joined, " ");
		strcat(joined, argv[i]);
	}
	for (size_t i = 0; i < p->n_crules; i++) {
		const struct sbx_crule *r = &p->crules[i];
		int cmd_score = -1, score;

		for (size_t j = 0; j < r->n_cmds; j++) {
			const char *cmd = r->cmds[j];

			if (cmd[0] == '/') {
				if (norm && !strcmp(cmd, norm))
					cmd_score = 1;
			} else if (!strcmp(cmd, base) && cmd_score < 0) {
				cmd_score = 0;
			}
		}
		if (cmd_score < 0)
			continue;
		if (r->n_args) {
			bool any = false;

			for (size_t j = 0; j < r->n_args && !any; j++)
				any = fnmatch(r->args[j], joined, 0) == 0;
			if (!any)
				continue;
		}
		/* args beat no args; then an absolute path beats a basename */
		score = (r->n_args ? 2 : 0) + cmd_score;
		if (score > best_score || (score == best_score &&
		    (r->verdict > best_v || (r->verdict == best_v && r->id < best_id)))) {
			best_score = score;
			best_v = r->verdict;
			best_id = r->id;
		}
	}
	free(joined);
	free(norm);
	if (best_score >= 0)
		set_out(out, best_v, best_id, 0, (best_score & 1) ? SBX_RANK_EXACT : SBX_RANK_NAME);
	else
		set_out(out, p->cmd_default, p->cmd_default_rule, -1, SBX_RANK_NONE);
	return 0;
}
