// SPDX-License-Identifier: GPL-2.0
/*
 * parse_net.c - the network: section: host names, CIDRs (v4-mapped IPv6
 * stored as IPv4, as the kernel checks them), ports and protocols.
 *
 * Host names are only checked for form here, and never resolved: the
 * daemon, the sessions' resolver, decides each query by them. A host
 * written as an address is that address's CIDR.
 *
 * network.resolvers (where allowed queries go) and network.dns (how long
 * learned addresses last, how many there may be) are parsed here too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include "lib/alloc.h"
#include "policy/parse.h"

/* ---- network -------------------------------------------------------------------- */

void sbx_addr_mask(uint8_t *dst, const uint8_t *src, size_t bytes, unsigned bits)
{
	for (size_t i = 0; i < bytes; i++) {
		int keep = (int)bits - (int)i * 8;

		dst[i] = keep <= 0 ? 0 : keep < 8 ? src[i] & (uint8_t)(0xff << (8 - keep)) : src[i];
	}
}

static int parse_cidr(struct pctx *c, const struct ynode *y, const char *field,
		      struct sbx_net_item *out)
{
	char buf[128];
	const char *s = y->str, *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	int maxbits, bits;
	uint8_t addr[16] = { 0 }, masked[16];

	if (!strcmp(s, "resolvers")) {
		out->kind = SBX_NI_RESOLVERS;
		out->text = strdup(s);
		return out->text ? 0 : -1;
	}
	if (alen >= sizeof(buf))
		goto bad;
	memcpy(buf, s, alen);
	buf[alen] = 0;
	if (inet_pton(AF_INET, buf, addr) == 1) {
		out->family = AF_INET;
		maxbits = 32;
	} else if (inet_pton(AF_INET6, buf, addr) == 1) {
		out->family = AF_INET6;
		maxbits = 128;
	} else {
		goto bad;
	}
	bits = maxbits;
	if (slash) {
		const char *b = slash + 1;
		char *end;
		long v;

		if (!*b || *b < '0' || *b > '9')
			goto bad;
		errno = 0;
		v = strtol(b, &end, 10);
		if (*end || errno || v < 0 || v > maxbits) {
			perr(c, y->line, scol(y, (size_t)(b - s)), field,
			     "prefix length /%s is out of range: use 0-%d for %s", b, maxbits,
			     maxbits == 32 ? "IPv4" : "IPv6");
			return -1;
		}
		bits = (int)v;
	}
	sbx_addr_mask(masked, addr, maxbits / 8, bits);
	if (memcmp(masked, addr, (size_t)maxbits / 8)) {
		char net[INET6_ADDRSTRLEN];

		inet_ntop(out->family, masked, net, sizeof(net));
		perr(c, y->line, y->col, field,
		     "host bits set: %s has bits beyond /%d; write %s/%d for the network or %s/%d for the host",
		     s, bits, net, bits, buf, maxbits);
		return -1;
	}
	/* the kernel checks v4-mapped destinations as IPv4: store them so */
	if (out->family == AF_INET6 && bits >= 96) {
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

		if (!memcmp(addr, mapped, 12)) {
			out->family = AF_INET;
			memmove(addr, addr + 12, 4);
			memset(addr + 4, 0, 12);
			bits -= 96;
		}
	}
	out->kind = SBX_NI_CIDR;
	memcpy(out->addr, addr, 16);
	out->bits = (uint8_t)bits;
	out->text = strdup(s);
	return out->text ? 0 : -1;
bad:
	perr(c, y->line, y->col, field,
	     "bad CIDR '%s': write an IPv4 or IPv6 address with an optional /bits "
	     "(10.0.0.0/8, fd00::/8, 192.0.2.1), or the word resolvers", s);
	return -1;
}

static int parse_port_one(struct pctx *c, const struct ynode *y, const char *field,
			  struct sbx_port_range *out)
{
	const char *s = y->str, *dash = strchr(s, '-');
	unsigned long lo, hi;
	char *end;

	if (!*s || *s < '0' || *s > '9')
		goto bad;
	errno = 0;
	lo = strtoul(s, &end, 10);
	if (errno || (dash ? end != dash : *end != 0))
		goto bad;
	if (dash) {
		if (dash[1] < '0' || dash[1] > '9')
			goto bad;
		hi = strtoul(dash + 1, &end, 10);
		if (errno || *end)
			goto bad;
		if (lo > 65535 || hi > 65535) {
			perr(c, y->line, y->col, field, "port range '%s' is out of range: ports are 0-65535", s);
			return -1;
		}
		if (lo > hi) {
			perr(c, y->line, y->col, field,
			     "bad port range '%s': write LOW-HIGH with LOW <= HIGH", s);
			return -1;
		}
	} else {
		hi = lo;
		if (lo < 1 || lo > 65535) {
			perr(c, y->line, y->col, field, "port %s is out of range: use 1-65535", s);
			return -1;
		}
	}
	out->lo = (uint16_t)lo;
	out->hi = (uint16_t)hi;
	return 0;
bad:
	perr(c, y->line, y->col, field,
	     "bad port '%s': write a number (443), a range (\"8000-8999\") or a list of them", s);
	return -1;
}

/* A network rule's own fields. */
struct net_fields {
	struct sitem *hs, *cs, *ps;	/* host:, cidr:, port: */
	size_t nh, nc, np;
	int proto;
};

static bool net_fields(struct pctx *c, const struct ynode *y, const char *field, void *out)
{
	struct net_fields *nf = out;
	const struct ynode *yh, *yc, *yp, *ypr;
	char f[FIELD_MAX];
	bool ok = true;

	yh = map_get(y, "host");
	yc = map_get(y, "cidr");
	yp = map_get(y, "port");
	ypr = map_get(y, "protocol");
	if (!yh && !yc) {
		field_name(f, sizeof(f), field, ".host");
		perr(c, y->line, y->col, f,
		     "missing: a network rule needs host: or cidr: (for any address write "
		     "cidr: [0.0.0.0/0, \"::/0\"])");
		ok = false;
	}
	field_name(f, sizeof(f), field, ".host");
	if (yh && !(nf->hs = string_or_list(c, yh, f, "a host name", &nf->nh)))
		ok = false;
	field_name(f, sizeof(f), field, ".cidr");
	if (yc && !(nf->cs = string_or_list(c, yc, f, "a CIDR", &nf->nc)))
		ok = false;
	field_name(f, sizeof(f), field, ".port");
	if (yp && !(nf->ps = string_or_list(c, yp, f, "a port", &nf->np)))
		ok = false;
	field_name(f, sizeof(f), field, ".protocol");
	if (ypr && want_scalar(c, ypr, f, "tcp, udp or any")) {
		if (!strcmp(ypr->str, "tcp"))
			nf->proto = IPPROTO_TCP;
		else if (!strcmp(ypr->str, "udp"))
			nf->proto = IPPROTO_UDP;
		else if (!strcmp(ypr->str, "any"))
			nf->proto = 0;
		else {
			perr(c, ypr->line, ypr->col, f, "unknown protocol '%s': use tcp, udp or any", ypr->str);
			ok = false;
		}
	} else if (ypr) {
		ok = false;
	}
	return ok;
}

static const char *const net_rule_keys[] = {
	"host", "cidr", "port", "protocol", "verdict", "reason", NULL
};

static const struct rule_kind net_rule_kind = {
	.sec = SBX_SEC_NETWORK,
	.what = "a rule (a mapping with host or cidr, verdict and reason)",
	.keys = net_rule_keys,
	.fields = net_fields,
};

/*
 * host: github.com:443 or host: https://github.com/ - a port or a URL
 * where a name goes. The error says what to write instead; true when
 * this was such a host (and the error is out).
 */
static bool host_with_port(struct pctx *c, const struct sitem *it)
{
	const char *h = it->y->str, *sep = strstr(h, "://"), *colon;
	char name[256], norm[256];
	size_t hl;

	if (sep) {
		const char *b = sep + 3;

		hl = strcspn(b, ":/?#");
		if (!hl || hl >= sizeof(name))
			return false;
		memcpy(name, b, hl);
		name[hl] = 0;
		if (!sbx_host_normalize(name, norm, sizeof(norm)))
			return false;
		perr(c, it->y->line, it->y->col, it->field,
		     "'%s' is a URL, not a host name: did you mean host: %s%s?", h, name,
		     !strncmp(h, "https://", 8) ? " with port: 443" :
		     !strncmp(h, "http://", 7) ? " with port: 80" : "");
		return true;
	}
	colon = strrchr(h, ':');
	if (!colon || colon == h || strchr(h, ':') != colon || !colon[1] ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return false;
	hl = (size_t)(colon - h);
	if (hl >= sizeof(name))
		return false;
	memcpy(name, h, hl);
	name[hl] = 0;
	if (!sbx_host_normalize(!strncmp(name, "*.", 2) ? name + 2 : name, norm, sizeof(norm)))
		return false;
	perr(c, it->y->line, it->y->col, it->field,
	     "'%s' is not a host name: did you mean host: %s with port: %s?", h, name, colon + 1);
	return true;
}

static void parse_net_rule(struct pctx *c, const struct ynode *y, const char *field)
{
	struct net_fields nf = { 0 };
	struct trule *t = parse_rule_head(c, y, field, &net_rule_kind, &nf);
	struct sitem *hs = nf.hs, *cs = nf.cs, *ps = nf.ps;
	size_t nh = nf.nh, nc = nf.nc, np = nf.np;
	int proto = nf.proto, verdict;

	if (!t)
		goto out;
	verdict = t->info.verdict;
	t->nr.verdict = (uint8_t)verdict;
	t->nr.proto = (uint8_t)proto;
	t->nr.items = calloc(nh + nc, sizeof(*t->nr.items));
	t->nr.ports = np ? calloc(np, sizeof(*t->nr.ports)) : NULL;
	if (!t->nr.items || (np && !t->nr.ports))
		goto out;
	for (size_t i = 0; i < nh; i++) {
		struct sbx_net_item *ni = &t->nr.items[t->nr.n_items];
		const char *h = hs[i].y->str;
		uint8_t tmp[16];

		char norm[256];
		bool wild = !strncmp(h, "*.", 2);

		if (inet_pton(AF_INET, h, tmp) == 1 || inet_pton(AF_INET6, h, tmp) == 1) {
			/* an address: its own CIDR */
			if (parse_cidr(c, hs[i].y, hs[i].field, ni))
				continue;
			ni->pos = mkpos(c, hs[i].y, 0, hs[i].field);
			t->nr.n_items++;
			sbx_str_append(&t->info.pattern, ", ", h);
			continue;
		}
		if (strchr(wild ? h + 2 : h, '*')) {
			perr(c, hs[i].y->line, hs[i].y->col, hs[i].field,
			     "unsupported wildcard in '%s': write an exact name (github.com) or "
			     "\"*.\" and a name for every name below it (*.githubusercontent.com)", h);
			continue;
		}
		if (host_with_port(c, &hs[i]))
			continue;
		if (!sbx_host_normalize(wild ? h + 2 : h, norm, sizeof(norm)) ||
		    (wild && !strchr(norm, '.'))) {
			perr(c, hs[i].y->line, hs[i].y->col, hs[i].field,
			     "'%s' is not a host name: write a DNS name (example.com), \"*.\" and a "
			     "name with at least two labels (*.example.com), or an address; for "
			     "networks use cidr:", h);
			continue;
		}
		ni->kind = SBX_NI_HOST;
		ni->text = wild ? sbx_asprintf("*.%s", norm) : strdup(norm);
		ni->pos = mkpos(c, hs[i].y, 0, hs[i].field);
		t->nr.n_items++;
		sbx_str_append(&t->info.pattern, ", ", h);
	}
	for (size_t i = 0; i < nc; i++) {
		struct sbx_net_item *ni = &t->nr.items[t->nr.n_items];

		if (parse_cidr(c, cs[i].y, cs[i].field, ni))
			continue;
		ni->pos = mkpos(c, cs[i].y, 0, cs[i].field);
		t->nr.n_items++;
		sbx_str_append(&t->info.pattern, ", ", cs[i].y->str);
	}
	for (size_t i = 0; i < np; i++) {
		if (parse_port_one(c, ps[i].y, ps[i].field, &t->nr.ports[t->nr.n_ports]))
			continue;
		t->nr.n_ports++;
	}
	{
		char tail[64], *ports = NULL;
		const char **raw = calloc(nh + nc + 1, sizeof(*raw));
		size_t k = 0;

		for (size_t i = 0; i < np; i++)
			sbx_str_append(&ports, ",", ps[i].y->str);
		if (ports) {
			sbx_str_append(&t->info.pattern, " port ", ports);
		}
		if (proto)
			sbx_str_append(&t->info.pattern, " ", sbx_proto_name(proto));
		snprintf(tail, sizeof(tail), "%d\x1f%d\x1f", proto, verdict);
		if (raw) {
			for (size_t i = 0; i < nh; i++)
				raw[k++] = hs[i].y->str;
			for (size_t i = 0; i < nc; i++)
				raw[k++] = cs[i].y->str;
			t->key = make_key(raw, k, tail);
			if (t->key && ports)
				sbx_str_append(&t->key, "", ports);
			if (t->key)
				sbx_str_append(&t->key, "\x1e", t->info.reason);
		}
		free(raw);
		free(ports);
	}
out:
	free(hs);
	free(cs);
	free(ps);
}

/* "ADDR", "ADDR:PORT" or "[V6]:PORT" */
static bool parse_upstream(const char *s, struct sbx_dns_upstream *u)
{
	char buf[128];
	const char *port = NULL;
	size_t alen;

	memset(u, 0, sizeof(*u));
	u->port = 53;
	if (s[0] == '[') {
		const char *end = strchr(s, ']');

		if (!end || (end[1] && end[1] != ':'))
			return false;
		alen = (size_t)(end - s - 1);
		s++;
		port = end[1] == ':' ? end + 2 : NULL;
	} else if (strchr(s, ':') && strchr(s, ':') == strrchr(s, ':')) {
		alen = (size_t)(strchr(s, ':') - s);	/* one colon: IPv4 and a port */
		port = strchr(s, ':') + 1;
	} else {
		alen = strlen(s);
	}
	if (alen >= sizeof(buf))
		return false;
	memcpy(buf, s, alen);
	buf[alen] = 0;
	if (inet_pton(AF_INET, buf, u->addr) == 1)
		u->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, u->addr) == 1)
		u->family = AF_INET6;
	else
		return false;
	if (port) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(port, &end, 10);
		if (!*port || *end || errno || v < 1 || v > 65535)
			return false;
		u->port = (uint16_t)v;
	}
	return true;
}

static void parse_resolvers(struct pctx *c, const struct ynode *y)
{
	size_t n = 0;
	struct sitem *it = string_or_list(c, y, "network.resolvers", "an address", &n);

	if (!it)
		return;
	if (n > SBX_DNS_MAX_RESOLVERS) {
		perr(c, y->line, y->col, "network.resolvers", "%zu resolvers: at most %d", n,
		     SBX_DNS_MAX_RESOLVERS);
		n = SBX_DNS_MAX_RESOLVERS;
	}
	c->doc->dns.n_resolvers = 0;
	for (size_t i = 0; i < n; i++) {
		if (!parse_upstream(it[i].y->str, &c->doc->dns.resolvers[c->doc->dns.n_resolvers])) {
			perr(c, it[i].y->line, it[i].y->col, it[i].field,
			     "bad resolver '%s': write an address with an optional port "
			     "(192.0.2.53, 192.0.2.53:5353, \"[2001:db8::53]:53\")", it[i].y->str);
			continue;
		}
		c->doc->dns.n_resolvers++;
	}
	c->doc->dns_resolvers_set = true;
	free(it);
}

/* seconds: a number, or a number with s, m or h */
static bool parse_duration(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno)
		return false;
	if (!strcmp(end, "h"))
		v *= 3600;
	else if (!strcmp(end, "m"))
		v *= 60;
	else if (*end && strcmp(end, "s"))
		return false;
	if (v > 7 * 86400)
		return false;
	*out = (uint32_t)v;
	return true;
}

static void parse_dns(struct pctx *c, const struct ynode *y)
{
	static const char *const keys[] = { "grace", "min_ttl", "max_per_name",
					    "max_per_session", NULL };
	const struct ynode *v;

	if (!want_map(c, y, "network.dns", "a mapping of grace, min_ttl, max_per_name, "
		      "max_per_session"))
		return;
	check_keys(c, y, "network.dns", keys);
	if ((v = map_get(y, "grace")) && want_scalar(c, v, "network.dns.grace", "a duration")) {
		if (parse_duration(v->str, &c->doc->dns.grace_s))
			c->doc->dns_grace_set = true;
		else
			perr(c, v->line, v->col, "network.dns.grace", "bad duration '%s': write "
			     "seconds (30, 30s), minutes (5m) or hours (1h), at most a week", v->str);
	}
	if ((v = map_get(y, "min_ttl")) && want_scalar(c, v, "network.dns.min_ttl", "a duration")) {
		if (parse_duration(v->str, &c->doc->dns.min_ttl_s))
			c->doc->dns_min_ttl_set = true;
		else
			perr(c, v->line, v->col, "network.dns.min_ttl", "bad duration '%s': write "
			     "seconds (30, 30s), minutes (5m) or hours (1h), at most a week", v->str);
	}
	for (int k = 0; k < 2; k++) {
		const char *key = k ? "max_per_session" : "max_per_name";
		char field[64], *end;
		unsigned long n;

		snprintf(field, sizeof(field), "network.dns.%s", key);
		if (!(v = map_get(y, key)) || !want_scalar(c, v, field, "a number"))
			continue;
		errno = 0;
		n = strtoul(v->str, &end, 10);
		if (!*v->str || *end || errno || n < 1 || n > (k ? 65536ul : 1024ul)) {
			perr(c, v->line, v->col, field, "'%s': write a number from 1 to %d", v->str,
			     k ? 65536 : 1024);
			continue;
		}
		if (k) {
			c->doc->dns.max_per_session = (uint32_t)n;
			c->doc->dns_per_session_set = true;
		} else {
			c->doc->dns.max_per_name = (uint32_t)n;
			c->doc->dns_per_name_set = true;
		}
	}
}

/* network.reserved_ports, network.inbound_ports: ports and ranges */
static void parse_port_list(struct pctx *c, const struct ynode *y, const char *field,
			    struct sbx_port_range **out, size_t *n_out)
{
	size_t n = 0;
	struct sitem *it = string_or_list(c, y, field, "a port", &n);
	struct sbx_port_range *v;

	if (!it)
		return;
	v = realloc(*out, (*n_out + n + 1) * sizeof(*v));
	if (!v) {
		free(it);
		return;
	}
	*out = v;
	for (size_t i = 0; i < n; i++) {
		if (parse_port_one(c, it[i].y, it[i].field, &v[*n_out]))
			continue;
		if (v[*n_out].lo == 0) {
			perr(c, it[i].y->line, it[i].y->col, it[i].field,
			     "port 0 is not a port a socket listens on: use 1-65535");
			continue;
		}
		(*n_out)++;
	}
	free(it);
}

void parse_network(struct pctx *c, const struct ynode *y)
{
	static const char *const extra[] = { "loopback", "resolvers", "dns", "inbound",
					     "reserved_ports", "inbound_ports", NULL };
	const struct ynode *v;

	parse_verdict_section(c, y, "network", "network.default", "network.rules", &c->doc->ndef,
			      &c->doc->nreason, parse_net_rule, extra);
	if (y->type != Y_MAP)
		return;
	/* a listener on 127.0.0.0/8 or ::1 that a process outside the
	 * session owns: an accomplice, like a unix socket's */
	if ((v = map_get(y, "loopback")))
		parse_section_default(c, v, "network.loopback", &c->doc->ldef);
	/* outside clients of the session's own listeners (inbound.bpf.c):
	 * the client is the person's tool, not the agent, so there is no
	 * one to ask who could retry; ask is refused below */
	if ((v = map_get(y, "inbound"))) {
		parse_section_default(c, v, "network.inbound", &c->doc->idef);
		if (c->doc->idef.set && c->doc->idef.verdict == SBX_V_ASK) {
			perr(c, v->line, v->col, "network.inbound",
			     "ask is not a verdict for inbound: the client is outside the session "
			     "and would not retry; write deny, audit or allow, and name the ports "
			     "outside clients may use in network.inbound_ports");
			c->doc->idef.set = false;
		}
	}
	if ((v = map_get(y, "reserved_ports")))
		parse_port_list(c, v, "network.reserved_ports", &c->doc->reserved,
				&c->doc->n_reserved);
	if ((v = map_get(y, "inbound_ports")))
		parse_port_list(c, v, "network.inbound_ports", &c->doc->inbound_ports,
				&c->doc->n_inbound_ports);
	if ((v = map_get(y, "resolvers")))
		parse_resolvers(c, v);
	if ((v = map_get(y, "dns")))
		parse_dns(c, v);
}
