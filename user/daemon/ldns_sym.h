/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ldns_sym.h - the ldns functions the resolver calls, looked up when the
 * first session's resolver opens (lib/dynload.c) instead of linked: ldns
 * and the libssl it brings cost every start of bpfsbx 1.5 M instructions
 * of relocation, and only the daemon parses DNS. As systemd does with its
 * optional libraries, each function is a pointer named sym_ + its ldns
 * name, with ldns's own prototype.
 */
#ifndef SBX_LDNS_SYM_H
#define SBX_LDNS_SYM_H

#include <ldns/ldns.h>

#define SBX_LDNS_SYMS(X) \
	X(ldns_dname_compare) \
	X(ldns_dname_new_frm_str) \
	X(ldns_pkt2wire) \
	X(ldns_pkt_ancount) \
	X(ldns_pkt_answer) \
	X(ldns_pkt_edns) \
	X(ldns_pkt_edns_udp_size) \
	X(ldns_pkt_free) \
	X(ldns_pkt_get_opcode) \
	X(ldns_pkt_get_rcode) \
	X(ldns_pkt_id) \
	X(ldns_pkt_new) \
	X(ldns_pkt_nscount) \
	X(ldns_pkt_push_rr) \
	X(ldns_pkt_qdcount) \
	X(ldns_pkt_qr) \
	X(ldns_pkt_query_new) \
	X(ldns_pkt_question) \
	X(ldns_pkt_rd) \
	X(ldns_pkt_set_edns_udp_size) \
	X(ldns_pkt_set_id) \
	X(ldns_pkt_set_opcode) \
	X(ldns_pkt_set_qr) \
	X(ldns_pkt_set_ra) \
	X(ldns_pkt_set_rcode) \
	X(ldns_pkt_set_rd) \
	X(ldns_pkt_set_tc) \
	X(ldns_pkt_tc) \
	X(ldns_rdf2str) \
	X(ldns_rdf_clone) \
	X(ldns_rdf_data) \
	X(ldns_rdf_deep_free) \
	X(ldns_rdf_size) \
	X(ldns_rr_clone) \
	X(ldns_rr_free) \
	X(ldns_rr_get_class) \
	X(ldns_rr_get_type) \
	X(ldns_rr_list_rr) \
	X(ldns_rr_list_rr_count) \
	X(ldns_rr_owner) \
	X(ldns_rr_rdf) \
	X(ldns_rr_ttl) \
	X(ldns_rr_type2str) \
	X(ldns_wire2pkt) \

#define SBX_LDNS_DECLARE(f) extern __typeof__(f) *sym_##f;
SBX_LDNS_SYMS(SBX_LDNS_DECLARE)
#undef SBX_LDNS_DECLARE

/* 0 once every sym_ pointer is set (the first call opens the library);
 * -1 with *why (static text) when the library or a symbol is missing */
int sbx_ldns_load(const char **why);

#endif
