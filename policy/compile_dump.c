// SPDX-License-Identifier: GPL-2.0
/*
 * compile_dump.c - the text form of a compiled policy (`bpfsbx policy
 * compile --dump`): one line per map entry in the compiled order, then
 * the rules, so that two compiles can be compared with diff.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"
#include "lib/text.h"

/* ---- the dump ------------------------------------------------------------------------------ */

/*
 * The entry lines are most of a dump (10,000 rules make ~100,000 fields):
 * they are put together in a string buffer with a digit loop, which costs
 * a tenth of fprintf's parsing of the same format and of stdio's own work
 * per small write. The few other lines are formatted by printf
 * into the same buffer.
 */
struct dout {
	FILE *f;
	struct sbx_strbuf b;
};

static void dflush(struct dout *d)
{
	if (d->b.len)
		fwrite(d->b.p, 1, d->b.len, d->f);
	d->b.len = 0;
}

static void dputs(struct dout *d, const char *s)
{
	sbx_sb_puts(&d->b, s);
}

static void dputc(struct dout *d, char c)
{
	sbx_sb_putc(&d->b, c);
}

static void put_u64(struct dout *d, unsigned long long v)
{
	sbx_sb_putu(&d->b, v);
}

static void put_hex(struct dout *d, unsigned long long v, int width)
{
	char b[20], *p = b + sizeof(b);

	*--p = 0;
	do {
		*--p = "0123456789abcdef"[v & 0xf];
		v >>= 4;
		width--;
	} while (v || width > 0);
	dputs(d, "0x");
	dputs(d, p);
}

static void put_dev_ino(struct dout *d, uint32_t dev, uint64_t ino)
{
	dputs(d, " dev=");
	put_u64(d, dev >> 20);
	dputc(d, ':');
	put_u64(d, dev & 0xfffff);
	dputs(d, " ino=");
	put_u64(d, ino);
}

/* "#7", or "#built-in:sandbox-dir" for an id no policy has */
static void put_rule(struct dout *d, uint32_t id)
{
	char buf[48];

	dputc(d, '#');
	dputs(d, sbx_rule_id_label(id, buf, sizeof(buf)));
}

static void dump_rule(struct dout *d, const struct sbx_file_rule *r)
{
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		dputc(d, ' ');
		dputs(d, sbx_access_name(a));
		dputc(d, '=');
		dputs(d, sbx_verdict_name(r->verdict[a]));
		if (r->verdict[a] != SBX_V_NONE) {
			put_rule(d, r->rule_id[a]);
		}
	}
}

/* a line's end; the buffer goes out when it holds 16 KiB */
static void end_line(struct dout *d)
{
	dputc(d, '\n');
	if (d->b.len >= 16384)
		dflush(d);
}

static void put_what(struct dout *d, const char *what)
{
	dputs(d, " # ");
	dputs(d, what ? what : "");
	end_line(d);
}

/* the end of a chain or name line: the key's hash, the rule, the label */
static void put_hash_rule(struct dout *d, uint64_t hash, const struct sbx_file_rule *r,
			  const char *what)
{
	dputs(d, " hash=");
	put_hex(d, hash, 16);
	dump_rule(d, r);
	put_what(d, what);
}

static void dump_net(struct dout *d, const char *tag, int family, uint32_t prefixlen,
		     const uint8_t *addr, const struct sbx_net_rule *v, const char *what)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family, addr, ip, sizeof(ip));
	dputs(d, tag);
	dputc(d, ' ');
	dputs(d, ip);
	dputc(d, '/');
	put_u64(d, prefixlen - 32);
	dputs(d, " rules=");
	put_u64(d, v->count);
	put_what(d, what);
	for (uint32_t i = 0; i < v->count && i < SBX_NET_PORT_RULES; i++) {
		dputs(d, "  port=");
		put_u64(d, v->r[i].port_lo);
		dputc(d, '-');
		put_u64(d, v->r[i].port_hi);
		dputs(d, " proto=");
		dputs(d, sbx_proto_name(v->r[i].proto));
		dputc(d, ' ');
		dputs(d, sbx_verdict_name(v->r[i].verdict));
		put_rule(d, v->r[i].rule_id);
		end_line(d);
	}
}

#define DEVFMT "%u:%u"
#define DEVARG(d) (unsigned)((d) >> 20), (unsigned)((d) & 0xfffff)

void sbx_compiled_dump(const struct sbx_compiled *c, const struct sbx_policy *p, FILE *f)
{
	const struct sbx_policy_hdr *h = &c->hdr;
	struct dout out = { .f = f }, *d = &out;
	char l1[48], l2[48];

	sbx_sb_printf(&d->b, "# bpfsbx compiled policy (abi %d)\n", SBX_ABI_VERSION);
	sbx_sb_printf(&d->b, "hdr policy_id=%u flags=0x%x%s proc_verdict=%s max_chain=%u\n", h->policy_id,
		h->flags, h->flags & SBX_PF_PROC_OTHERS ? " (proc_others)" : "",
		sbx_verdict_name(h->proc_verdict), h->max_chain);
	sbx_sb_printf(&d->b, "hdr file_default");
	for (int a = 0; a < SBX_ACC_MAX; a++)
		sbx_sb_printf(&d->b, " %s=%s#%s", sbx_access_name(a), sbx_verdict_name(h->file_default[a]),
			sbx_rule_id_label(h->file_default_rule[a], l1, sizeof(l1)));
	sbx_sb_printf(&d->b, " net_default=%s#%s loopback_outside=%s#%s netlink=0x%x families=0x%llx\n",
		sbx_verdict_name(h->net_default), sbx_rule_id_label(h->net_default_rule, l1, sizeof(l1)),
		sbx_verdict_name(h->loopback_outside), sbx_rule_id_label(h->loopback_rule, l2, sizeof(l2)),
		h->netlink_allow, (unsigned long long)h->family_allow);
	sbx_sb_printf(&d->b, "hdr exact_len_mask=0x%016llx prefix_len_mask=0x%016llx suffix_len_mask=0x%016llx"
		" abstract_len_mask=0x%016llx\n",
		(unsigned long long)h->exact_len_mask, (unsigned long long)h->prefix_len_mask,
		(unsigned long long)h->suffix_len_mask, (unsigned long long)h->abstract_len_mask);
	for (size_t i = 0; i < c->n_inode; i++) {
		const struct sbx_inode_entry *e = &c->inode[i];

		dputs(d, "inode");
		put_dev_ino(d, e->k.dev, e->k.ino);
		dump_rule(d, &e->v);
		dputs(d, " chain_mask=");
		put_hex(d, e->v.chain_mask, 2);
		if (e->v.pinned)
			dputs(d, " pinned");
		if (e->v.gen_set == SBX_GEN_INODE) {
			dputs(d, " gen=");
			put_hex(d, e->v.gen, 8);
		} else if (e->v.gen_set == SBX_GEN_REMOVALS) {
			dputs(d, " gen=removals");
		}
		put_what(d, e->what);
	}
	for (size_t i = 0; i < c->n_chain; i++) {
		const struct sbx_chain_entry *e = &c->chain[i];

		dputs(d, "chain");
		put_dev_ino(d, e->k.dev, e->k.ino);
		dputs(d, " m=");
		put_u64(d, e->k.m);
		put_hash_rule(d, e->k.hash, &e->v, e->what);
	}
	for (size_t i = 0; i < c->n_name; i++) {
		const struct sbx_name_entry *e = &c->name[i];
		static const char *const kinds[] = { "exact", "prefix", "suffix", "abstract",
						     "abstract-prefix", "port" };

		dputs(d, "name ");
		dputs(d, e->k.kind < 6 ? kinds[e->k.kind] : "?");
		dputs(d, " len=");
		put_u64(d, e->k.len);
		put_hash_rule(d, e->k.hash, &e->v, e->what);
	}
	for (size_t i = 0; i < c->n_net4; i++)
		dump_net(d, "net4", AF_INET, c->net4[i].k.prefixlen, c->net4[i].k.addr,
			 &c->net4[i].v, c->net4[i].what);
	for (size_t i = 0; i < c->n_net6; i++)
		dump_net(d, "net6", AF_INET6, c->net6[i].k.prefixlen, c->net6[i].k.addr,
			 &c->net6[i].v, c->net6[i].what);
	for (size_t i = 0; i < c->n_hosts; i++) {
		const struct sbx_host_entry *e = &c->hosts[i];

		sbx_sb_printf(&d->b, "host %s%s port=%u-%u proto=%s %s#%s\n", e->wildcard ? "*." : "", e->name,
			e->pr.port_lo, e->pr.port_hi, e->pr.proto ? sbx_proto_name(e->pr.proto) : "any",
			sbx_verdict_name(e->pr.verdict), sbx_rule_id_label(e->pr.rule_id, l1, sizeof(l1)));
	}
	sbx_sb_printf(&d->b, "dns grace=%us min_ttl=%us max_per_name=%u max_per_session=%u resolvers=",
		c->dns.grace_s, c->dns.min_ttl_s, c->dns.max_per_name, c->dns.max_per_session);
	if (!c->dns.n_resolvers)
		sbx_sb_printf(&d->b, "/etc/resolv.conf");
	for (size_t i = 0; i < c->dns.n_resolvers; i++) {
		char a[INET6_ADDRSTRLEN] = "?";

		inet_ntop(c->dns.resolvers[i].family, c->dns.resolvers[i].addr, a, sizeof(a));
		sbx_sb_printf(&d->b, "%s%s%s%s:%u", i ? "," : "", c->dns.resolvers[i].family == AF_INET6 ? "[" : "",
			a, c->dns.resolvers[i].family == AF_INET6 ? "]" : "", c->dns.resolvers[i].port);
	}
	sbx_sb_printf(&d->b, "\n");
	for (size_t i = 0; i < c->n_protect; i++)
		sbx_sb_printf(&d->b, "protect dev=" DEVFMT " ino=%llu # %s\n", DEVARG(c->protect[i].dev),
			(unsigned long long)c->protect[i].ino,
			c->protect_what && c->protect_what[i] ? c->protect_what[i] : "");
	if (p) {
		sbx_sb_printf(&d->b, "# rules\n");
		for (size_t i = 0; i < p->n_rules; i++) {
			const struct sbx_rule_info *r = &p->rules[i];
			static const char *const secs[] = { "files", "network", "commands" };

			dputs(d, "rule #");
			put_u64(d, r->id);
			dputc(d, ' ');
			dputs(d, secs[r->section]);
			dputc(d, ' ');
			dputs(d, sbx_verdict_name(r->verdict));
			dputc(d, ' ');
			dputs(d, r->pattern ? r->pattern : "");
			if (r->section == SBX_SEC_FILES && !r->is_default) {
				dputs(d, " access=");
				for (int a = 0, first = 1; a < SBX_ACC_MAX; a++)
					if (r->access & SBX_ACCBIT(a)) {
						if (!first)
							dputc(d, ',');
						dputs(d, sbx_access_name(a));
						first = 0;
					}
			}
			end_line(d);
		}
	}
	dflush(d);
	if (d->b.oom)
		fputs("# out of memory: this dump is incomplete\n", f);
	free(d->b.p);
}
