// SPDX-License-Identifier: GPL-2.0
/*
 * compile_dump.c - the text form of a compiled policy (`bpfsbx policy
 * compile --dump`): one line per map entry in the compiled order, then
 * the rules, so that two compiles can be compared with diff.
 */
#include <stdio.h>
#include <arpa/inet.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"

/* ---- the dump ------------------------------------------------------------------------------ */

static void dump_rule(FILE *f, const struct sbx_file_rule *r)
{
	for (int a = 0; a < SBX_ACC_MAX; a++) {
		fprintf(f, " %s=%s", sbx_access_name(a), sbx_verdict_name(r->verdict[a]));
		if (r->verdict[a] != SBX_V_NONE)
			fprintf(f, "#%u", r->rule_id[a]);
	}
}

static void dump_net(FILE *f, const char *tag, int family, uint32_t prefixlen, const uint8_t *addr,
		     const struct sbx_net_rule *v, const char *what)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family, addr, ip, sizeof(ip));
	fprintf(f, "%s %s/%u rules=%u # %s\n", tag, ip, prefixlen - 32, v->count, what ? what : "");
	for (uint32_t i = 0; i < v->count && i < SBX_NET_PORT_RULES; i++)
		fprintf(f, "  port=%u-%u proto=%s %s#%u\n", v->r[i].port_lo, v->r[i].port_hi,
			sbx_proto_name(v->r[i].proto), sbx_verdict_name(v->r[i].verdict), v->r[i].rule_id);
}

#define DEVFMT "%u:%u"
#define DEVARG(d) (unsigned)((d) >> 20), (unsigned)((d) & 0xfffff)

void sbx_compiled_dump(const struct sbx_compiled *c, const struct sbx_policy *p, FILE *f)
{
	const struct sbx_policy_hdr *h = &c->hdr;

	fprintf(f, "# bpfsbx compiled policy (abi %d)\n", SBX_ABI_VERSION);
	fprintf(f, "hdr policy_id=%u flags=0x%x%s proc_verdict=%s max_chain=%u\n", h->policy_id,
		h->flags, h->flags & SBX_PF_PROC_OTHERS ? " (proc_others)" : "",
		sbx_verdict_name(h->proc_verdict), h->max_chain);
	fprintf(f, "hdr file_default");
	for (int a = 0; a < SBX_ACC_MAX; a++)
		fprintf(f, " %s=%s#%u", sbx_access_name(a), sbx_verdict_name(h->file_default[a]),
			h->file_default_rule[a]);
	fprintf(f, " net_default=%s#%u loopback_outside=%s#%u netlink=0x%x families=0x%llx\n",
		sbx_verdict_name(h->net_default), h->net_default_rule,
		sbx_verdict_name(h->loopback_outside), h->loopback_rule, h->netlink_allow,
		(unsigned long long)h->family_allow);
	fprintf(f, "hdr exact_len_mask=0x%016llx prefix_len_mask=0x%016llx suffix_len_mask=0x%016llx"
		" abstract_len_mask=0x%016llx\n",
		(unsigned long long)h->exact_len_mask, (unsigned long long)h->prefix_len_mask,
		(unsigned long long)h->suffix_len_mask, (unsigned long long)h->abstract_len_mask);
	for (size_t i = 0; i < c->n_inode; i++) {
		const struct sbx_inode_entry *e = &c->inode[i];

		fprintf(f, "inode dev=" DEVFMT " ino=%llu", DEVARG(e->k.dev), (unsigned long long)e->k.ino);
		dump_rule(f, &e->v);
		fprintf(f, " chain_mask=0x%02x%s # %s\n", e->v.chain_mask,
			e->v.pinned ? " pinned" : "", e->what ? e->what : "");
	}
	for (size_t i = 0; i < c->n_chain; i++) {
		const struct sbx_chain_entry *e = &c->chain[i];

		fprintf(f, "chain dev=" DEVFMT " ino=%llu m=%u hash=0x%016llx", DEVARG(e->k.dev),
			(unsigned long long)e->k.ino, e->k.m, (unsigned long long)e->k.hash);
		dump_rule(f, &e->v);
		fprintf(f, " # %s\n", e->what ? e->what : "");
	}
	for (size_t i = 0; i < c->n_name; i++) {
		const struct sbx_name_entry *e = &c->name[i];
		static const char *const kinds[] = { "exact", "prefix", "suffix" };

		fprintf(f, "name %s len=%u hash=0x%016llx", e->k.kind < 3 ? kinds[e->k.kind] : "?",
			e->k.len, (unsigned long long)e->k.hash);
		dump_rule(f, &e->v);
		fprintf(f, " # %s\n", e->what ? e->what : "");
	}
	for (size_t i = 0; i < c->n_net4; i++)
		dump_net(f, "net4", AF_INET, c->net4[i].k.prefixlen, c->net4[i].k.addr,
			 &c->net4[i].v, c->net4[i].what);
	for (size_t i = 0; i < c->n_net6; i++)
		dump_net(f, "net6", AF_INET6, c->net6[i].k.prefixlen, c->net6[i].k.addr,
			 &c->net6[i].v, c->net6[i].what);
	for (size_t i = 0; i < c->n_hosts; i++) {
		const struct sbx_host_entry *e = &c->hosts[i];

		fprintf(f, "host %s%s port=%u-%u proto=%s %s#%u\n", e->wildcard ? "*." : "", e->name,
			e->pr.port_lo, e->pr.port_hi, e->pr.proto ? sbx_proto_name(e->pr.proto) : "any",
			sbx_verdict_name(e->pr.verdict), e->pr.rule_id);
	}
	fprintf(f, "dns grace=%us min_ttl=%us max_per_name=%u max_per_session=%u resolvers=",
		c->dns.grace_s, c->dns.min_ttl_s, c->dns.max_per_name, c->dns.max_per_session);
	if (!c->dns.n_resolvers)
		fprintf(f, "/etc/resolv.conf");
	for (size_t i = 0; i < c->dns.n_resolvers; i++) {
		char a[INET6_ADDRSTRLEN] = "?";

		inet_ntop(c->dns.resolvers[i].family, c->dns.resolvers[i].addr, a, sizeof(a));
		fprintf(f, "%s%s%s%s:%u", i ? "," : "", c->dns.resolvers[i].family == AF_INET6 ? "[" : "",
			a, c->dns.resolvers[i].family == AF_INET6 ? "]" : "", c->dns.resolvers[i].port);
	}
	fprintf(f, "\n");
	for (size_t i = 0; i < c->n_protect; i++)
		fprintf(f, "protect dev=" DEVFMT " ino=%llu # %s\n", DEVARG(c->protect[i].dev),
			(unsigned long long)c->protect[i].ino,
			c->protect_what && c->protect_what[i] ? c->protect_what[i] : "");
	if (p) {
		fprintf(f, "# rules\n");
		for (size_t i = 0; i < p->n_rules; i++) {
			const struct sbx_rule_info *r = &p->rules[i];
			static const char *const secs[] = { "files", "network", "commands" };

			fprintf(f, "rule #%u %s %s %s", r->id, secs[r->section],
				sbx_verdict_name(r->verdict), r->pattern ? r->pattern : "");
			if (r->section == SBX_SEC_FILES && !r->is_default) {
				fprintf(f, " access=");
				for (int a = 0, first = 1; a < SBX_ACC_MAX; a++)
					if (r->access & SBX_ACCBIT(a)) {
						fprintf(f, "%s%s", first ? "" : ",", sbx_access_name(a));
						first = 0;
					}
			}
			fprintf(f, "\n");
		}
	}
}
