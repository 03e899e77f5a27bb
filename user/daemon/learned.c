// SPDX-License-Identifier: GPL-2.0
/*
 * learned.c - the addresses a session's allowed lookups returned, in the
 * daemon (rows of (name, address)) and in the kernel (one sbx_learned
 * entry per (session, address), the union of its rows).
 *
 * An open connection is never cut when its address expires: the kernel
 * decides at connect() and at a send with an address, so what expires is
 * the right to open new connections to it. That is what keeps a program
 * that holds a connection past the TTL working (the toFQDNs pitfall of a
 * per-packet policy), while a program that reconnects to a stale address
 * after TTL + grace has to look the name up again.
 *
 * The table is saved beside the pins (SBX_LEARNED_DIR, a tmpfs like bpffs:
 * both end with the boot), so a restarted daemon names the same
 * addresses; kernel entries the file does not know (a daemon killed
 * between the map update and the save) are adopted under the name "?"
 * and expire as the kernel says.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "user/daemon/learned.h"
#include "lib/json.h"

void sbx_addr16(int family, const void *addr, uint8_t out[16])
{
	memset(out, 0, 16);
	if (family == AF_INET) {
		out[10] = 0xff;
		out[11] = 0xff;
		memcpy(out + 12, addr, 4);
	} else {
		memcpy(out, addr, 16);
	}
}

static bool row_live(const struct sbx_learned_rt *r, uint64_t now)
{
	return r->expires_ns > now;
}

/* the kernel's first-match order: narrower ports, a protocol, stricter verdict */
static int cmp_port_rule(const void *a, const void *b)
{
	const struct sbx_net_port_rule *x = a, *y = b;
	unsigned wx = (unsigned)x->port_hi - x->port_lo, wy = (unsigned)y->port_hi - y->port_lo;

	if (wx != wy)
		return wx < wy ? -1 : 1;
	if ((x->proto != 0) != (y->proto != 0))
		return x->proto ? -1 : 1;
	if (x->verdict != y->verdict)
		return x->verdict > y->verdict ? -1 : 1;
	if (x->rule_id != y->rule_id)
		return x->rule_id < y->rule_id ? -1 : 1;
	return (int)x->port_lo - (int)y->port_lo;
}

/* Write (or delete) the kernel entry of one address: the union of its rows. */
static int sync_addr(struct sbx_daemon *d, struct sbx_session_rt *s, const uint8_t addr[16])
{
	struct sbx_learned_key k = { .cgid = s->cgid };
	struct sbx_learned v = {};
	struct sbx_net_port_rule all[64];
	size_t n = 0;
	uint64_t now = sbx_boot_ns();

	memcpy(k.addr, addr, 16);
	for (size_t i = 0; i < s->n_learned; i++) {
		const struct sbx_learned_rt *r = &s->learned[i];

		if (memcmp(r->addr, addr, 16) || !row_live(r, now))
			continue;
		if (r->expires_ns > v.expires_ns)
			v.expires_ns = r->expires_ns;
		if (!v.name_hash)
			v.name_hash = (uint32_t)sbx_mix64(strlen(r->name));
		for (uint32_t j = 0; j < r->count && n < 64; j++)
			all[n++] = r->r[j];
	}
	if (!v.expires_ns) {
		if (bpf_map_delete_elem(d->k.learned, &k) && errno != ENOENT)
			return -errno;
		sbx_net_changed(&d->k);
		return 0;
	}
	qsort(all, n, sizeof(all[0]), cmp_port_rule);
	for (size_t i = 0; i < n; i++) {
		bool shadowed = false;

		for (uint32_t j = 0; j < v.count && !shadowed; j++)
			shadowed = v.r[j].port_lo <= all[i].port_lo &&
				   all[i].port_hi <= v.r[j].port_hi &&
				   (v.r[j].proto == 0 || v.r[j].proto == all[i].proto);
		if (shadowed)
			continue;
		if (v.count == SBX_LEARNED_PORT_RULES) {
			s->dns.cap_dropped++;	/* two names' rules on one address */
			break;
		}
		v.r[v.count++] = all[i];
	}
	if (bpf_map_update_elem(d->k.learned, &k, &v, BPF_ANY))
		return -errno;
	sbx_net_changed(&d->k);
	return 0;
}

static size_t live_rows(const struct sbx_session_rt *s, const char *name, uint64_t now)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_learned; i++)
		if (row_live(&s->learned[i], now) && (!name || !strcmp(s->learned[i].name, name)))
			n++;
	return n;
}

static void remove_row(struct sbx_session_rt *s, size_t i)
{
	free(s->learned[i].name);
	s->learned[i] = s->learned[--s->n_learned];
}

size_t sbx_learned_count(const struct sbx_session_rt *s)
{
	return live_rows(s, NULL, sbx_boot_ns());
}

size_t sbx_learned_add(struct sbx_daemon *d, struct sbx_session_rt *s, const char *name,
		       const uint8_t (*addrs)[16], size_t n, uint64_t ttl_s,
		       const struct sbx_net_port_rule *r, uint32_t nr)
{
	uint64_t now = sbx_boot_ns(), exp = now + ttl_s * 1000000000ull;
	uint32_t per_name = s->names.dns.max_per_name, per_session = s->names.dns.max_per_session;

	if (nr > SBX_LEARNED_PORT_RULES)
		nr = SBX_LEARNED_PORT_RULES;
	for (size_t a = 0; a < n; a++) {
		struct sbx_learned_rt *row = NULL;

		for (size_t i = 0; i < s->n_learned; i++)
			if (!strcmp(s->learned[i].name, name) && !memcmp(s->learned[i].addr, addrs[a], 16))
				row = &s->learned[i];
		if (!row) {
			/* per name: the one closest to expiry makes room */
			while (live_rows(s, name, now) >= per_name) {
				size_t victim = SIZE_MAX;
				uint8_t vaddr[16];

				for (size_t i = 0; i < s->n_learned; i++)
					if (!strcmp(s->learned[i].name, name) &&
					    row_live(&s->learned[i], now) &&
					    (victim == SIZE_MAX ||
					     s->learned[i].expires_ns < s->learned[victim].expires_ns))
						victim = i;
				if (victim == SIZE_MAX)
					break;
				memcpy(vaddr, s->learned[victim].addr, 16);
				remove_row(s, victim);
				sync_addr(d, s, vaddr);
				s->dns.cap_dropped++;
			}
			/* per session: new ones are dropped */
			if (live_rows(s, NULL, now) >= per_session) {
				s->dns.cap_dropped++;
				continue;
			}
			s->learned = sbx_realloc_array(s->learned, s->n_learned + 1,
						       sizeof(*s->learned));
			row = &s->learned[s->n_learned++];
			memset(row, 0, sizeof(*row));
			row->name = sbx_strdup(name);
			memcpy(row->addr, addrs[a], 16);
			s->dns.learned_total++;
		}
		if (exp > row->expires_ns)
			row->expires_ns = exp;
		row->count = nr;
		memcpy(row->r, r, nr * sizeof(*r));
		if (sync_addr(d, s, addrs[a])) {
			/* the kernel map is full: this address stays closed */
			s->dns.cap_dropped++;
			for (size_t i = 0; i < s->n_learned; i++)
				if (&s->learned[i] == row) {
					remove_row(s, i);
					break;
				}
		}
	}
	s->learned_dirty = true;
	return live_rows(s, name, now);
}

void sbx_learned_expire(struct sbx_daemon *d)
{
	uint64_t now = sbx_boot_ns();

	for (struct sbx_session_rt *s = d->sessions; s; s = s->next) {
		for (size_t i = 0; i < s->n_learned;) {
			uint8_t addr[16];

			if (row_live(&s->learned[i], now)) {
				i++;
				continue;
			}
			memcpy(addr, s->learned[i].addr, 16);
			remove_row(s, i);
			sync_addr(d, s, addr);
			s->learned_dirty = true;
		}
	}
}

const char *sbx_learned_name(const struct sbx_session_rt *s, const uint8_t addr[16])
{
	const struct sbx_learned_rt *best = NULL;
	uint64_t now = sbx_boot_ns();

	for (size_t i = 0; s && i < s->n_learned; i++) {
		const struct sbx_learned_rt *r = &s->learned[i];

		if (!memcmp(r->addr, addr, 16) && row_live(r, now) &&
		    (!best || r->expires_ns > best->expires_ns))
			best = r;
	}
	return best ? best->name : NULL;
}

static char *learned_path(const struct sbx_session_rt *s)
{
	return sbx_asprintf(SBX_LEARNED_DIR "/%s.json", s->name);
}

static bool of_session(const void *key, void *cgid)
{
	return ((const struct sbx_learned_key *)key)->cgid == *(uint64_t *)cgid;
}

/* Every kernel entry of session cgid. */
static size_t kernel_keys(struct sbx_daemon *d, uint64_t cgid, struct sbx_learned_key **out)
{
	size_t n;

	*out = sbx_map_keys(d->k.learned, sizeof(**out), of_session, &cgid, &n);
	return n;
}

/*
 * The kernel holds one entry per address of the table (sync_addr writes
 * them, and nothing else does), so the table names every key to delete:
 * no walk of the map's buckets on a session's way out.
 */
void sbx_learned_forget(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	struct sbx_learned_key k = { .cgid = s->cgid };
	char *p = learned_path(s);

	for (size_t i = 0; i < s->n_learned; i++) {
		memcpy(k.addr, s->learned[i].addr, 16);
		bpf_map_delete_elem(d->k.learned, &k);
	}
	unlink(p);
	free(p);
}

static bool of_no_session(const void *key, void *d)
{
	return !sbx_session_by_cgid(d, ((const struct sbx_learned_key *)key)->cgid);
}

void sbx_learned_sweep(struct sbx_daemon *d)
{
	sbx_map_delete_keys_if(d->k.learned, sizeof(struct sbx_learned_key), of_no_session, d);
}

static json_t *rules_json(const struct sbx_learned_rt *r)
{
	json_t *a = json_array();

	for (uint32_t i = 0; i < r->count; i++)
		json_array_append_new(a, json_pack("[i,i,i,i,I]", (int)r->r[i].port_lo,
						   (int)r->r[i].port_hi, (int)r->r[i].proto,
						   (int)r->r[i].verdict, (json_int_t)r->r[i].rule_id));
	return a;
}

static int learned_save(struct sbx_session_rt *s)
{
	json_t *rows = json_array(), *j;
	char *path = learned_path(s), *text;
	int rc;

	for (size_t i = 0; i < s->n_learned; i++) {
		const struct sbx_learned_rt *r = &s->learned[i];
		char a[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, r->addr, a, sizeof(a));
		json_array_append_new(rows, json_pack("{s:s,s:s,s:I,s:o}", "name", r->name, "addr", a,
						      "expires_ns", (json_int_t)r->expires_ns,
						      "rules", rules_json(r)));
	}
	j = json_pack("{s:s,s:I,s:o}", "session", s->name, "cgid", (json_int_t)s->cgid, "rows",
		      rows);
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	sbx_mkdir_p(SBX_LEARNED_DIR, 0700);
	rc = text ? sbx_write_file_atomic(path, text, strlen(text), 0600) : -ENOMEM;
	if (rc)
		sbx_warn("saving %s: %s", path, strerror(-rc));
	else
		s->learned_dirty = false;
	free(text);
	free(path);
	return rc;
}

void sbx_learned_flush(struct sbx_daemon *d)
{
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		if (s->learned_dirty)
			learned_save(s);
}

void sbx_learned_adopt(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	char *path = learned_path(s);
	json_error_t jerr;
	json_t *j = json_load_file(path, 0, &jerr), *v, *pr;
	struct sbx_learned_key *keys;
	size_t i, n, k;

	json_array_foreach(json_object_get(j, "rows"), i, v) {
		struct sbx_learned_rt r = {};
		const char *name = sbx_json_str(v, "name");
		const char *addr = sbx_json_str(v, "addr");

		if (!name || !addr || inet_pton(AF_INET6, addr, r.addr) != 1)
			continue;
		r.name = sbx_strdup(name);
		r.expires_ns = json_integer_value(json_object_get(v, "expires_ns"));
		json_array_foreach(json_object_get(v, "rules"), k, pr) {
			if (r.count == SBX_LEARNED_PORT_RULES)
				break;
			r.r[r.count].port_lo = json_integer_value(json_array_get(pr, 0));
			r.r[r.count].port_hi = json_integer_value(json_array_get(pr, 1));
			r.r[r.count].proto = json_integer_value(json_array_get(pr, 2));
			r.r[r.count].verdict = json_integer_value(json_array_get(pr, 3));
			r.r[r.count].rule_id = json_integer_value(json_array_get(pr, 4));
			r.count++;
		}
		s->learned = sbx_realloc_array(s->learned, s->n_learned + 1, sizeof(*s->learned));
		s->learned[s->n_learned++] = r;
	}
	json_decref(j);
	free(path);
	/* what the kernel holds and the file does not name */
	n = kernel_keys(d, s->cgid, &keys);
	for (i = 0; i < n; i++) {
		struct sbx_learned v2;
		bool known = false;

		for (k = 0; k < s->n_learned && !known; k++)
			known = !memcmp(s->learned[k].addr, keys[i].addr, 16);
		if (known || bpf_map_lookup_elem(d->k.learned, &keys[i], &v2))
			continue;
		s->learned = sbx_realloc_array(s->learned, s->n_learned + 1, sizeof(*s->learned));
		memset(&s->learned[s->n_learned], 0, sizeof(s->learned[0]));
		s->learned[s->n_learned].name = sbx_strdup("?");
		memcpy(s->learned[s->n_learned].addr, keys[i].addr, 16);
		s->learned[s->n_learned].expires_ns = v2.expires_ns;
		s->learned[s->n_learned].count = v2.count > SBX_LEARNED_PORT_RULES ?
						 SBX_LEARNED_PORT_RULES : v2.count;
		memcpy(s->learned[s->n_learned].r, v2.r, sizeof(v2.r));
		s->n_learned++;
	}
	free(keys);
	/* the kernel follows the table (rows that expired meanwhile go) */
	for (i = 0; i < s->n_learned; i++)
		sync_addr(d, s, s->learned[i].addr);
	sbx_learned_expire(d);
	s->learned_dirty = true;
}

void sbx_learned_redecide(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	for (size_t i = 0; i < s->n_learned;) {
		struct sbx_learned_rt *r = &s->learned[i];
		struct sbx_host_decision h;
		bool granted = false;
		uint8_t addr[16];

		for (uint32_t j = 0; j < r->count; j++)
			granted |= r->r[j].rule_id == SBX_RULE_GRANT;
		memcpy(addr, r->addr, 16);
		if (!strcmp(r->name, "?") || granted) {
			i++;
			continue;
		}
		if (sbx_decide_host(&s->names, r->name, &h) || !h.matched ||
		    (h.verdict != SBX_V_ALLOW && h.verdict != SBX_V_AUDIT)) {
			remove_row(s, i);
		} else {
			r->count = 0;
			for (size_t k = h.first; k < h.first + h.n && r->count < SBX_LEARNED_PORT_RULES; k++)
				r->r[r->count++] = s->names.hosts[k].pr;
			i++;
		}
		sync_addr(d, s, addr);
		s->learned_dirty = true;
	}
}
