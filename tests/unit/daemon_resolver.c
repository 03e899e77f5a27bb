// SPDX-License-Identifier: GPL-2.0
/*
 * The resolver's reading of a query (user/daemon/resolver.c): a name, a
 * type and a class from a well-formed query, and a clean refusal (with the
 * right rcode, or none) for everything else: responses, other opcodes,
 * several questions, compression loops, truncation, over-long names.
 */
#include <stdlib.h>
#include <string.h>
#include "user/daemon/ldns_sym.h"
#include "user/daemon/resolver.h"
#include "tests/unit/unit.h"

static size_t wire_of(const char *name, ldns_rr_type t, bool response, uint8_t *out, size_t max)
{
	ldns_rdf *dn;
	ldns_pkt *q;
	uint8_t *w = NULL;
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(sbx_ldns_load(NULL), 0);
	dn = sym_ldns_dname_new_frm_str(name);
	q = sym_ldns_pkt_query_new(dn, t, LDNS_RR_CLASS_IN, LDNS_RD);

	sym_ldns_pkt_set_qr(q, response);
	if (sym_ldns_pkt2wire(&w, q, &n) != LDNS_STATUS_OK || n > max)
		n = 0;
	else
		memcpy(out, w, n);
	free(w);
	sym_ldns_pkt_free(q);
	return n;
}

SBX_TEST(daemon_resolver, parses_a_query)
{
	uint8_t w[512];
	char name[256];
	uint16_t t, cl;
	int rc;
	size_t n = wire_of("WWW.Example.COM.", LDNS_RR_TYPE_AAAA, false, w, sizeof(w));

	CU_ASSERT_FATAL(n > 12);
	CU_ASSERT_EQUAL(sbx_dns_parse_query(w, n, name, sizeof(name), &t, &cl, &rc), 0);
	CU_ASSERT_STRING_EQUAL(name, "www.example.com");
	CU_ASSERT_EQUAL(t, LDNS_RR_TYPE_AAAA);
	CU_ASSERT_EQUAL(cl, LDNS_RR_CLASS_IN);
}

SBX_TEST(daemon_resolver, refuses_what_is_not_a_query)
{
	uint8_t w[512];
	char name[256];
	uint16_t t, cl;
	int rc;
	size_t n = wire_of("ok.test.", LDNS_RR_TYPE_A, true, w, sizeof(w));
	/* a header with one question whose name points at itself */
	static const uint8_t loop[] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
					0xc0, 0x0c, 0, 1, 0, 1 };
	uint8_t longname[12 + 5 * 64 + 5];

	/* a response sent to the resolver: never answered */
	CU_ASSERT_EQUAL(sbx_dns_parse_query(w, n, name, sizeof(name), &t, &cl, &rc), -1);
	CU_ASSERT_EQUAL(rc, -1);
	/* too short, truncated, a loop */
	CU_ASSERT_EQUAL(sbx_dns_parse_query(w, 5, name, sizeof(name), &t, &cl, &rc), -1);
	n = wire_of("ok.test.", LDNS_RR_TYPE_A, false, w, sizeof(w));
	CU_ASSERT_EQUAL(sbx_dns_parse_query(w, n - 3, name, sizeof(name), &t, &cl, &rc), -1);
	CU_ASSERT_EQUAL(sbx_dns_parse_query(loop, sizeof(loop), name, sizeof(name), &t, &cl, &rc), -1);
	/* five labels of 63 bytes: over the 255 bytes of a name */
	memcpy(longname, loop, 12);
	for (int i = 0; i < 5; i++) {
		longname[12 + 64 * i] = 63;
		memset(longname + 13 + 64 * i, 'a', 63);
	}
	memcpy(longname + 12 + 5 * 64, "\0\0\1\0\1", 5);
	CU_ASSERT_EQUAL(sbx_dns_parse_query(longname, sizeof(longname), name, sizeof(name), &t, &cl,
					    &rc), -1);
	/* another opcode: NOTIMP */
	n = wire_of("ok.test.", LDNS_RR_TYPE_A, false, w, sizeof(w));
	w[2] = (w[2] & 0x87) | (4 << 3);	/* NOTIFY */
	CU_ASSERT_EQUAL(sbx_dns_parse_query(w, n, name, sizeof(name), &t, &cl, &rc), -1);
	CU_ASSERT_EQUAL(rc, LDNS_RCODE_NOTIMPL);
}

SBX_TEST(daemon_resolver, tunnel_like_names)
{
	CU_ASSERT(!sbx_dns_tunnel_like("registry.npmjs.org"));
	CU_ASSERT(!sbx_dns_tunnel_like("objects.githubusercontent.com"));
	CU_ASSERT(!sbx_dns_tunnel_like("ec2-3-4-5-6.compute.example"));
	CU_ASSERT(sbx_dns_tunnel_like("6b2f1e0c9a8d7b6e5f4a3b2c1d0e9f8a7b6c5d4e.exfil.test"));
	CU_ASSERT(sbx_dns_tunnel_like("0123456789abcdef.exfil.test"));
	CU_ASSERT(sbx_dns_tunnel_like("a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f."
				       "g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.exfil.test"));
}
