// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the resolver's reading of a query (resolver.c,
 * sbx_dns_parse_query, which ldns does the parsing for) and for the name
 * rules it is decided by (policy/decide.c, sbx_decide_host): any bytes a
 * session sends must give a name, a type and a class, or a clean refusal;
 * never a crash, and never a name that the policy's normalisation would
 * not accept again.
 *
 *   make fuzz && build/fuzz/fuzz_dns tools/fuzz/corpus/fuzz_dns
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "policy/policy.h"
#include "user/daemon/resolver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sbx_host_entry hosts[] = {
		{ .name = (char *)"example.com", .wildcard = false,
		  .pr = { .port_lo = 443, .port_hi = 443, .verdict = SBX_V_ALLOW, .rule_id = 1 } },
		{ .name = (char *)"example.com", .wildcard = true,
		  .pr = { .port_lo = 0, .port_hi = 65535, .verdict = SBX_V_ASK, .rule_id = 2 } },
	};
	struct sbx_compiled c = { .hosts = hosts, .n_hosts = 2 };
	struct sbx_host_decision h;
	char name[256], again[256];
	uint16_t qtype, qclass;
	int rcode;

	c.hdr.net_default = SBX_V_ASK;
	if (sbx_dns_parse_query(data, size, name, sizeof(name), &qtype, &qclass, &rcode) == 0 &&
	    name[0]) {
		if (!sbx_host_normalize(name, again, sizeof(again)) || strcmp(name, again))
			abort();	/* a name must be stable under normalisation */
		if (sbx_decide_host(&c, name, &h))
			abort();
		if (h.matched && h.first + h.n > c.n_hosts)
			abort();
		(void)sbx_dns_tunnel_like(name);
	}
	return 0;
}
