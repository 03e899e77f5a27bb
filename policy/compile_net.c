// SPDX-License-Identifier: GPL-2.0
/*
 * compile_net.c - network rules to the kernel's LPM entries.
 *
 * CIDRs become LPM entries whose values carry their own port rules
 * followed by those of every covering prefix, so that the kernel's one
 * longest-prefix lookup finds every rule that may apply. Host rules are
 * not resolved: they become the name table the daemon's resolver decides
 * queries by (struct sbx_host_entry).
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include "policy/compile.h"
#include "lib/shipped.h"
#include "lib/alloc.h"

/* ---- network ------------------------------------------------------------------------ */

struct nent {
	int family;
	uint8_t bits;
	uint8_t addr[16];
	uint32_t first_id;		/* for the error position: smallest rule id */
	const struct sbx_srcpos *pos;
	char *what;
	struct sbx_net_port_rule pr;
};

struct nvec {
	struct nent *v;
	size_t n, cap;
};

static int nvec_add(struct nvec *nv, int family, const uint8_t *addr, uint8_t bits,
		    const struct sbx_nrule *nr, const struct sbx_port_range *pr,
		    const struct sbx_srcpos *pos, const char *what)
{
	struct nent *e;

	if (!SBX_GROW(nv->v, nv->cap, nv->n + 1, 64))
		return -1;
	e = &nv->v[nv->n];
	memset(e, 0, sizeof(*e));
	e->family = family;
	e->bits = bits;
	memcpy(e->addr, addr, family == AF_INET ? 4 : 16);
	e->first_id = nr->id;
	e->pos = pos;
	e->what = strdup(what);
	if (!e->what)
		return -1;
	e->pr.port_lo = pr ? pr->lo : 0;
	e->pr.port_hi = pr ? pr->hi : 65535;
	e->pr.verdict = nr->verdict;
	e->pr.proto = nr->proto;
	e->pr.rule_id = nr->id;
	nv->n++;
	return 0;
}

static int add_net_addr(struct nvec *nv, int family, const uint8_t *addr, uint8_t bits,
			const struct sbx_nrule *nr, const struct sbx_srcpos *pos, const char *what)
{
	uint8_t a[16] = { 0 };
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	memcpy(a, addr, family == AF_INET ? 4 : 16);
	if (family == AF_INET6 && bits >= 96 && !memcmp(a, mapped, 12)) {
		memmove(a, a + 12, 4);
		memset(a + 4, 0, 12);
		family = AF_INET;
		bits -= 96;
	}
	if (!nr->n_ports)
		return nvec_add(nv, family, a, bits, nr, NULL, pos, what);
	for (size_t i = 0; i < nr->n_ports; i++)
		if (nvec_add(nv, family, a, bits, nr, &nr->ports[i], pos, what))
			return -1;
	return 0;
}

int sbx_resolve_system(const char *host, struct sbx_addr **out, size_t *n, const char **why)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	size_t cnt = 0;
	int rc;

	*out = NULL;
	*n = 0;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc) {
		if (why)
			*why = gai_strerror(rc);
		return -1;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
		cnt++;
	*out = calloc(cnt ? cnt : 1, sizeof(**out));
	if (!*out) {
		freeaddrinfo(res);
		if (why)
			*why = strerror(ENOMEM);
		return -1;
	}
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		struct sbx_addr *a = &(*out)[*n];

		if (ai->ai_family == AF_INET) {
			a->family = AF_INET;
			memcpy(a->addr, &((struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
		} else if (ai->ai_family == AF_INET6) {
			a->family = AF_INET6;
			memcpy(a->addr, &((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr, 16);
		} else {
			continue;
		}
		(*n)++;
	}
	freeaddrinfo(res);
	return 0;
}

/* host rules in the making: one per (name, port rule) */
struct hvec {
	struct sbx_host_entry *v;
	const struct sbx_srcpos **pos;
	size_t n, cap;
};

static void hvec_add(struct cstate *s, struct hvec *hv, const char *text,
		     const struct sbx_nrule *nr, const struct sbx_port_range *pr,
		     const struct sbx_srcpos *pos)
{
	bool wild = !strncmp(text, "*.", 2);
	struct sbx_host_entry *e;

	if (hv->n == hv->cap) {
		/* two arrays of one length: a failed second keeps the old cap */
		size_t cap_v = hv->cap, cap_pos = hv->cap;

		if (!SBX_GROW(hv->v, cap_v, hv->n + 1, 32) ||
		    !SBX_GROW(hv->pos, cap_pos, hv->n + 1, 32)) {
			s->oom = true;
			return;
		}
		hv->cap = cap_v;
	}
	e = &hv->v[hv->n];
	memset(e, 0, sizeof(*e));
	e->name = strdup(wild ? text + 2 : text);
	if (!e->name) {
		s->oom = true;
		return;
	}
	e->wildcard = wild;
	e->pr.port_lo = pr ? pr->lo : 0;
	e->pr.port_hi = pr ? pr->hi : 65535;
	e->pr.verdict = nr->verdict;
	e->pr.proto = nr->proto;
	e->pr.rule_id = nr->id;
	hv->pos[hv->n] = pos;
	hv->n++;
}

static void compile_host(struct cstate *s, struct hvec *hv, const struct sbx_nrule *nr,
			 const struct sbx_net_item *it)
{
	if (!nr->n_ports) {
		hvec_add(s, hv, it->text, nr, NULL, &it->pos);
		return;
	}
	for (size_t i = 0; i < nr->n_ports; i++)
		hvec_add(s, hv, it->text, nr, &nr->ports[i], &it->pos);
}

static void compile_resolvers(struct cstate *s, struct nvec *nv, const struct sbx_nrule *nr,
			      const struct sbx_net_item *it)
{
	FILE *f = fopen(s->p->resolv_conf, "re");
	char *line = NULL;
	size_t cap = 0, found = 0;

	if (!f) {
		cwarn(s, &it->pos, "cannot read %s (%s): 'resolvers' matches nothing",
		      s->p->resolv_conf, strerror(errno));
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		char ns[128], *pct, *label = NULL;
		uint8_t a[16] = { 0 };
		int fam;

		if (sscanf(line, " nameserver %127s", ns) != 1)
			continue;
		if ((pct = strchr(ns, '%')))
			*pct = 0;	/* fe80::1%eth0: the scope is not part of the address */
		if (inet_pton(AF_INET, ns, a) == 1)
			fam = AF_INET;
		else if (inet_pton(AF_INET6, ns, a) == 1)
			fam = AF_INET6;
		else
			continue;
		if (asprintf(&label, "%s/%d (resolvers)", ns, fam == AF_INET ? 32 : 128) < 0) {
			s->oom = true;
			break;
		}
		if (add_net_addr(nv, fam, a, fam == AF_INET ? 32 : 128, nr, &it->pos, label))
			s->oom = true;
		free(label);
		found++;
	}
	free(line);
	fclose(f);
	if (!found)
		cwarn(s, &it->pos, "no nameserver in %s: 'resolvers' matches nothing",
		      s->p->resolv_conf);
}

static int cmp_nent(const void *a, const void *b)
{
	const struct nent *x = a, *y = b;
	int r;

	if (x->family != y->family)
		return x->family - y->family;
	r = memcmp(x->addr, y->addr, 16);
	if (r)
		return r;
	if (x->bits != y->bits)
		return (int)x->bits - (int)y->bits;
	if (x->first_id != y->first_id)
		return x->first_id < y->first_id ? -1 : 1;
	return strcmp(x->what, y->what);
}

/* A port rule with the prefix length it came from, for sorting. */
struct prule {
	uint8_t bits;
	struct sbx_net_port_rule r;
};

static int cmp_prule(const void *a, const void *b)
{
	const struct prule *x = a, *y = b;
	unsigned wx = (unsigned)x->r.port_hi - x->r.port_lo, wy = (unsigned)y->r.port_hi - y->r.port_lo;

	if (x->bits != y->bits)
		return x->bits > y->bits ? -1 : 1;		/* longer prefix first */
	if (wx != wy)
		return wx < wy ? -1 : 1;			/* narrower ports first */
	if ((x->r.proto != 0) != (y->r.proto != 0))
		return x->r.proto ? -1 : 1;			/* tcp/udp before any */
	if (x->r.verdict != y->r.verdict)
		return x->r.verdict > y->r.verdict ? -1 : 1;	/* deny wins ties */
	if (x->r.rule_id != y->r.rule_id)
		return x->r.rule_id < y->r.rule_id ? -1 : 1;
	if (x->r.port_lo != y->r.port_lo)
		return x->r.port_lo < y->r.port_lo ? -1 : 1;
	return (int)x->r.proto - (int)y->r.proto;
}

static int cmp_host(const void *a, const void *b)
{
	const struct sbx_host_entry *x = a, *y = b;
	struct prule px = { .r = x->pr }, py = { .r = y->pr };
	int r = strcmp(x->name, y->name);

	if (r)
		return r;
	if (x->wildcard != y->wildcard)
		return x->wildcard ? 1 : -1;
	return cmp_prule(&px, &py);
}

/*
 * Host rules: sorted by name, each name's port rules in the kernel's
 * first-match order with shadowed ones dropped, at most
 * SBX_LEARNED_PORT_RULES per name (they travel with each learned address).
 */
static void compile_hosts(struct cstate *s, struct hvec *hv)
{
	size_t w = 0;

	if (!hv->n)
		return;
	/* sort entries and their positions together */
	for (size_t i = 0; i < hv->n; i++)
		hv->v[i].pr._pad = (uint16_t)i;	/* carry the index through the sort */
	{
		const struct sbx_srcpos **pos = calloc(hv->n, sizeof(*pos));

		if (!pos) {
			s->oom = true;
			return;
		}
		qsort(hv->v, hv->n, sizeof(hv->v[0]), cmp_host);
		for (size_t i = 0; i < hv->n; i++) {
			pos[i] = hv->pos[hv->v[i].pr._pad];
			hv->v[i].pr._pad = 0;
		}
		free(hv->pos);
		hv->pos = pos;
	}
	for (size_t i = 0; i < hv->n;) {
		size_t j = i, kept = 0, start = w;

		while (j < hv->n && !strcmp(hv->v[j].name, hv->v[i].name) &&
		       hv->v[j].wildcard == hv->v[i].wildcard)
			j++;
		for (size_t k = i; k < j; k++) {
			bool shadowed = false;

			for (size_t q = start; q < w && !shadowed; q++) {
				const struct sbx_net_port_rule *a = &hv->v[q].pr, *b = &hv->v[k].pr;

				shadowed = a->port_lo <= b->port_lo && b->port_hi <= a->port_hi &&
					   (a->proto == 0 || a->proto == b->proto);
			}
			if (shadowed) {
				free(hv->v[k].name);
				continue;
			}
			hv->pos[w] = hv->pos[k];
			hv->v[w++] = hv->v[k];
			kept++;
		}
		if (kept > SBX_LEARNED_PORT_RULES)
			cerr(s, hv->pos[start], "too many port rules for host %s%s: %zu, at most %d; "
			     "merge port ranges", hv->v[start].wildcard ? "*." : "",
			     hv->v[start].name, kept, SBX_LEARNED_PORT_RULES);
		i = j;
	}
	s->out->hosts = hv->v;
	s->out->n_hosts = w;
	hv->v = NULL;
}

/*
 * DNS over HTTPS to the well-known public resolvers, by address: a program
 * that carries its own resolver (browsers, curl --doh-url, Go's and
 * Node's optional DoH) would otherwise go around the daemon. Denied in
 * every policy, whatever it says (a /32 deny wins every tie).
 */
static const char *const doh_resolvers[] = {
	"1.1.1.1", "1.0.0.1", "1.1.1.2", "1.0.0.2", "1.1.1.3", "1.0.0.3",
	"8.8.8.8", "8.8.4.4", "9.9.9.9", "149.112.112.112", "9.9.9.10", "149.112.112.10",
	"9.9.9.11", "149.112.112.11", "208.67.222.222", "208.67.220.220",
	"94.140.14.14", "94.140.15.15", "185.228.168.9", "185.228.169.9",
	"76.76.2.0", "76.76.10.0", "45.90.28.0", "45.90.30.0", "194.242.2.2",
	"2606:4700:4700::1111", "2606:4700:4700::1001", "2001:4860:4860::8888",
	"2001:4860:4860::8844", "2620:fe::fe", "2620:fe::9", "2620:119:35::35",
	"2620:119:53::53", "2a10:50c0::ad1:ff", "2a10:50c0::ad2:ff",
};

static void compile_doh(struct cstate *s, struct nvec *nv)
{
	static const struct sbx_nrule nr = { .id = SBX_RULE_DNS_PATH, .verdict = SBX_V_DENY };
	static const struct sbx_srcpos pos = { .file = (char *)"built-in", .field = (char *)"dns" };

	for (size_t i = 0; i < sizeof(doh_resolvers) / sizeof(doh_resolvers[0]); i++) {
		uint8_t a[16] = { 0 };
		int fam = strchr(doh_resolvers[i], ':') ? AF_INET6 : AF_INET;
		char *label = NULL;

		if (inet_pton(fam, doh_resolvers[i], a) != 1)
			continue;
		if (asprintf(&label, "%s/%d (built-in: public DNS resolver)", doh_resolvers[i],
			     fam == AF_INET ? 32 : 128) < 0) {
			s->oom = true;
			return;
		}
		if (add_net_addr(nv, fam, a, fam == AF_INET ? 32 : 128, &nr, &pos, label))
			s->oom = true;
		free(label);
	}
}

/*
 * The prefix groups by (family, length, address masked to that length):
 * the groups covering an entry are then found by one binary search per
 * prefix length in use, not by trying every group (10,000 CIDR rules made
 * that quadratic).
 */
struct pkey {
	int family;
	unsigned bits;
	uint8_t addr[16];
	size_t group;
};

static int cmp_pkey(const void *a, const void *b)
{
	const struct pkey *x = a, *y = b;
	int r;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->bits != y->bits)
		return x->bits < y->bits ? -1 : 1;
	r = memcmp(x->addr, y->addr, 16);
	if (r)
		return r;
	return x->group < y->group ? -1 : x->group > y->group;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* The groups whose prefix contains e's (same family, no longer, the same
 * leading bits), ascending, into out; their count. */
static size_t covering_groups(const struct pkey *pk, size_t n, const struct pkey *lens,
			      size_t nlens, const struct nent *e, size_t *out)
{
	size_t m = 0;

	for (size_t l = 0; l < nlens; l++) {
		struct pkey want = { .family = e->family, .bits = lens[l].bits };
		size_t lo = 0, hi = n;

		if (lens[l].family != e->family || lens[l].bits > e->bits)
			continue;
		sbx_addr_mask(want.addr, e->addr, 16, want.bits);
		while (lo < hi) {	/* the first key >= want (group 0) */
			size_t mid = lo + (hi - lo) / 2;

			if (cmp_pkey(&pk[mid], &want) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && pk[lo].family == want.family && pk[lo].bits == want.bits &&
		       !memcmp(pk[lo].addr, want.addr, 16); lo++)
			out[m++] = pk[lo].group;
	}
	qsort(out, m, sizeof(*out), cmp_size);
	return m;
}

static void fmt_cidr(const struct nent *e, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(e->family, e->addr, ip, sizeof(ip));
	snprintf(buf, len, "%s/%u", ip, e->bits);
}

static int cmp_net4(const void *a, const void *b)
{
	return memcmp(&((const struct sbx_net4_entry *)a)->k, &((const struct sbx_net4_entry *)b)->k,
		      sizeof(struct sbx_net4_key));
}

static int cmp_net6(const void *a, const void *b)
{
	return memcmp(&((const struct sbx_net6_entry *)a)->k, &((const struct sbx_net6_entry *)b)->k,
		      sizeof(struct sbx_net6_key));
}

void compile_network(struct cstate *s)
{
	const struct sbx_policy *p = s->p;
	struct nvec nv = { 0 };
	struct hvec hv = { 0 };
	struct prule *tmp = NULL;
	struct pkey *pk = NULL, *lens = NULL;
	size_t *starts = NULL, *cover = NULL, nprefix = 0, nlens = 0;

	s->out->dns = p->dns;
	compile_doh(s, &nv);
	for (size_t i = 0; i < p->n_nrules; i++) {
		const struct sbx_nrule *nr = &p->nrules[i];

		for (size_t j = 0; j < nr->n_items; j++) {
			const struct sbx_net_item *it = &nr->items[j];

			if (it->kind == SBX_NI_HOST)
				compile_host(s, &hv, nr, it);
			else if (it->kind == SBX_NI_RESOLVERS)
				compile_resolvers(s, &nv, nr, it);
			else if (add_net_addr(&nv, it->family, it->addr, it->bits, nr, &it->pos,
					      it->text))
				s->oom = true;
			/* labels of CIDRs are the CIDR as written: fine */
		}
	}
	compile_hosts(s, &hv);
	if (!nv.n || s->oom)
		goto out;
	qsort(nv.v, nv.n, sizeof(nv.v[0]), cmp_nent);
	/* prefix groups: [starts[k], starts[k+1]) share family, addr, bits */
	starts = calloc(nv.n + 1, sizeof(*starts));
	tmp = calloc(nv.n, sizeof(*tmp));
	if (!starts || !tmp) {
		s->oom = true;
		goto out;
	}
	for (size_t i = 0; i < nv.n; i++)
		if (i == 0 || nv.v[i].family != nv.v[i - 1].family || nv.v[i].bits != nv.v[i - 1].bits ||
		    memcmp(nv.v[i].addr, nv.v[i - 1].addr, 16))
			starts[nprefix++] = i;
	starts[nprefix] = nv.n;
	pk = calloc(nprefix, sizeof(*pk));
	lens = calloc(nprefix, sizeof(*lens));
	cover = calloc(nprefix, sizeof(*cover));
	if (!pk || !lens || !cover) {
		s->oom = true;
		goto out;
	}
	for (size_t q = 0; q < nprefix; q++) {
		const struct nent *o = &nv.v[starts[q]];

		pk[q].family = o->family;
		pk[q].bits = o->bits;
		pk[q].group = q;
		sbx_addr_mask(pk[q].addr, o->addr, 16, o->bits);
	}
	qsort(pk, nprefix, sizeof(*pk), cmp_pkey);
	for (size_t q = 0; q < nprefix; q++)
		if (!nlens || pk[q].family != lens[nlens - 1].family ||
		    pk[q].bits != lens[nlens - 1].bits)
			lens[nlens++] = pk[q];
	for (size_t k = 0; k < nprefix; k++) {
		const struct nent *e = &nv.v[starts[k]];
		size_t nt = 0, kept = 0, ncover;
		struct sbx_net_rule val = { 0 };

		/* its own rules and those of every covering prefix */
		ncover = covering_groups(pk, nprefix, lens, nlens, e, cover);
		for (size_t c = 0; c < ncover; c++) {
			size_t q = cover[c];
			const struct nent *o = &nv.v[starts[q]];

			for (size_t i = starts[q]; i < starts[q + 1]; i++) {
				tmp[nt].bits = o->bits;
				tmp[nt].r = nv.v[i].pr;
				nt++;
			}
		}
		qsort(tmp, nt, sizeof(tmp[0]), cmp_prule);
		/* drop rules that an earlier one shadows: first match wins,
		 * so they could never decide anything */
		for (size_t i = 0; i < nt; i++) {
			bool shadowed = false;

			for (size_t j = 0; j < kept && !shadowed; j++) {
				const struct sbx_net_port_rule *a = &tmp[j].r, *b = &tmp[i].r;

				shadowed = a->port_lo <= b->port_lo && b->port_hi <= a->port_hi &&
					   (a->proto == 0 || a->proto == b->proto);
			}
			if (!shadowed)
				tmp[kept++] = tmp[i];
		}
		if (kept > SBX_NET_PORT_RULES) {
			char cidr[64];

			fmt_cidr(e, cidr, sizeof(cidr));
			cerr(s, e->pos, "too many port rules apply to %s: %zu (its own and those of "
			     "covering networks), at most %d; merge port ranges or use fewer rules "
			     "on overlapping networks", cidr, kept, SBX_NET_PORT_RULES);
			continue;
		}
		val.count = (uint32_t)kept;
		for (size_t i = 0; i < kept; i++)
			val.r[i] = tmp[i].r;
		if (e->family == AF_INET) {
			struct sbx_net4_entry *v = realloc(s->out->net4, (s->out->n_net4 + 1) * sizeof(*v));

			if (!v) {
				s->oom = true;
				break;
			}
			s->out->net4 = v;
			v += s->out->n_net4;
			memset(v, 0, sizeof(*v));
			v->k.prefixlen = 32 + e->bits;
			v->k.policy_id = htonl(s->policy_id);
			memcpy(v->k.addr, e->addr, 4);
			v->v = val;
			v->what = strdup(e->what);
			s->out->n_net4++;
			if (!v->what)
				s->oom = true;
		} else {
			struct sbx_net6_entry *v = realloc(s->out->net6, (s->out->n_net6 + 1) * sizeof(*v));

			if (!v) {
				s->oom = true;
				break;
			}
			s->out->net6 = v;
			v += s->out->n_net6;
			memset(v, 0, sizeof(*v));
			v->k.prefixlen = 32 + e->bits;
			v->k.policy_id = htonl(s->policy_id);
			memcpy(v->k.addr, e->addr, 16);
			v->v = val;
			v->what = strdup(e->what);
			s->out->n_net6++;
			if (!v->what)
				s->oom = true;
		}
	}
out:
	if (hv.v)
		for (size_t i = 0; i < hv.n; i++)
			free(hv.v[i].name);
	free(hv.v);
	free(hv.pos);
	for (size_t i = 0; i < nv.n; i++)
		free(nv.v[i].what);
	free(nv.v);
	free(tmp);
	free(starts);
	free(pk);
	free(lens);
	free(cover);
	if (s->out->n_net4)
		qsort(s->out->net4, s->out->n_net4, sizeof(s->out->net4[0]), cmp_net4);
	if (s->out->n_net6)
		qsort(s->out->net6, s->out->n_net6, sizeof(s->out->net6[0]), cmp_net6);
}
