// SPDX-License-Identifier: GPL-2.0
/*
 * state.c - the session list and the daemon's records of it: lookups,
 * the saved state a restarted daemon adopts, the audit log.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/alloc.h"
#include "lib/privs.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "user/daemon/notice.h"
#include "user/daemon/state.h"
#include "user/sandbox/tier.h"
#include "lib/json.h"

char *sbx_pid_cgroup(pid_t pid)
{
	char path[64], line[4096];
	char *r = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	while (!r && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::/", 4)) {
			line[strcspn(line, "\n")] = 0;
			r = sbx_strdup(line + 3);
		}
	fclose(f);
	return r;
}

bool sbx_pid_in_session(pid_t pid, char *name, size_t len)
{
	const char *prefix = "/" SBX_CGROUP_DIR_NAME "/";
	char *cg = sbx_pid_cgroup(pid);
	bool found;

	if (!cg)
		return true;	/* cannot tell: treat as confined (fail closed) */
	found = !strncmp(cg, prefix, strlen(prefix));
	if (found && name) {
		char *p = cg + strlen(prefix);

		p[strcspn(p, "/")] = 0;
		snprintf(name, len, "%s", p);
	}
	free(cg);
	return found;
}

struct sbx_session_rt *sbx_session_find(struct sbx_daemon *d, const char *name)
{
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

struct sbx_session_rt *sbx_session_by_cgid(struct sbx_daemon *d, uint64_t cgid)
{
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		if (s->cgid == cgid)
			return s;
	return NULL;
}

const struct sbx_rule_row *sbx_session_rule(const struct sbx_session_rt *s, uint32_t id)
{
	for (size_t i = 0; s->rules && i < s->rules->n; i++)
		if (s->rules->rows[i].id == id)
			return &s->rules->rows[i];
	return NULL;
}

void sbx_rule_rows_free(struct sbx_rule_row *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].pattern);
		free(r[i].reason);
		free(r[i].source);
	}
	free(r);
}

struct sbx_rule_table *sbx_rule_table_new(struct sbx_rule_row *rows, size_t n)
{
	struct sbx_rule_table *t = sbx_calloc(1, sizeof(*t));

	t->refs = 1;
	t->rows = rows;
	t->n = n;
	return t;
}

struct sbx_rule_table *sbx_rule_table_ref(struct sbx_rule_table *t)
{
	if (t)
		t->refs++;
	return t;
}

void sbx_rule_table_unref(struct sbx_rule_table *t)
{
	if (!t || --t->refs)
		return;
	sbx_rule_rows_free(t->rows, t->n);
	free(t);
}

void sbx_session_free(struct sbx_session_rt *s)
{
	if (!s)
		return;
	free(s->home);
	free(s->project);
	free(s->policy_path);
	free(s->cgroup_path);
	sbx_rule_table_unref(s->rules);
	free(s->protect);
	for (size_t i = 0; i < s->n_grants; i++)
		free(s->grants[i].request);
	free(s->grants);
	for (size_t i = 0; i < s->n_pending; i++) {
		free(s->pending[i].key);
		free(s->pending[i].id);
	}
	free(s->pending);
	json_decref(s->names_json);
	sbx_compiled_free(&s->names);
	json_decref(s->approval);
	json_decref(s->container);
	sbx_grafts_free(s->grafts);
	for (size_t i = 0; i < s->n_name_grants; i++) {
		free(s->name_grants[i].name);
		free(s->name_grants[i].request);
	}
	free(s->name_grants);
	for (size_t i = 0; i < s->n_learned; i++)
		free(s->learned[i].name);
	free(s->learned);
	for (size_t i = 0; i < s->n_my_requests; i++)
		free(s->my_requests[i]);
	free(s->my_requests);
	for (size_t i = 0; i < s->n_notes; i++) {
		free(s->notes[i].path);
		free(s->notes[i].text);
	}
	free(s->notes);
	if (s->audit)
		sbx_audit_close(s->audit);
	if (s->queue)
		sbx_queue_close(s->queue);
	sbx_notice_close(s);
	free(s);
}

void sbx_session_add_request(struct sbx_session_rt *s, const char *id)
{
	s->my_requests = sbx_realloc_array(s->my_requests, s->n_my_requests + 1,
					   sizeof(*s->my_requests));
	s->my_requests[s->n_my_requests++] = sbx_strdup(id);
	sbx_session_dirty(s);
}

bool sbx_session_issued(const struct sbx_session_rt *s, const char *id)
{
	for (size_t i = 0; i < s->n_my_requests; i++)
		if (!strcmp(s->my_requests[i], id))
			return true;
	return false;
}

int sbx_daemon_audit(struct sbx_session_rt *s, json_t *body)
{
	char *err = NULL;
	int rc;

	if (!s || !s->audit)
		return -ENOENT;
	rc = sbx_audit_append(s->audit, body, &err);
	if (rc)
		sbx_warn("session %s: audit: %s", s->name, err ? err : strerror(-rc));
	free(err);
	return rc;
}

/* ---- saved state ---------------------------------------------------------- */

static json_t *hex_blob(const void *p, size_t n)
{
	static const char hx[] = "0123456789abcdef";
	char *s = sbx_calloc(1, n * 2 + 1);
	json_t *j;

	for (size_t i = 0; i < n; i++) {
		s[2 * i] = hx[((const unsigned char *)p)[i] >> 4];
		s[2 * i + 1] = hx[((const unsigned char *)p)[i] & 15];
	}
	j = json_string(s);
	free(s);
	return j;
}

static bool unhex_blob(const json_t *j, void *out, size_t n)
{
	const char *s = json_string_value(j);

	if (!s || strlen(s) != n * 2)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (!isxdigit((unsigned char)s[2 * i]) || !isxdigit((unsigned char)s[2 * i + 1]) ||
		    sscanf(s + 2 * i, "%2x", &v) != 1)
			return false;
		((unsigned char *)out)[i] = v;
	}
	return true;
}

static char *policy_file(uint32_t id)
{
	return sbx_asprintf(SBX_STATE_DIR "/policy-%u.json", id);
}

json_t *sbx_rule_row_json(const struct sbx_rule_row *r)
{
	json_t *j = json_pack("{s:i,s:i,s:s,s:s,s:s}", "id", (int)r->id, "verdict",
			      (int)r->verdict, "pattern", r->pattern ? r->pattern : "",
			      "reason", r->reason ? r->reason : "", "source",
			      r->source ? r->source : "");

	if (j && r->would)
		json_object_set_new(j, "would", json_integer(r->would));
	return j;
}

void sbx_rule_row_from_json(struct sbx_rule_row *r, const json_t *v)
{
	r->id = json_integer_value(json_object_get(v, "id"));
	r->verdict = json_integer_value(json_object_get(v, "verdict"));
	r->would = json_integer_value(json_object_get(v, "would"));
	r->pattern = sbx_strdup(sbx_json_str(v, "pattern"));
	r->reason = sbx_strdup(sbx_json_str(v, "reason"));
	r->source = sbx_strdup(sbx_json_str(v, "source"));
}

/* The policy's part of a session's state: its rule rows, protected files
 * and host rules, set on j. */
static void policy_part(json_t *j, const struct sbx_session_rt *s)
{
	json_t *a = json_array();

	for (size_t i = 0; s->rules && i < s->rules->n; i++)
		json_array_append_new(a, sbx_rule_row_json(&s->rules->rows[i]));
	json_object_set_new(j, "rules", a);
	json_object_set_new(j, "protect", hex_blob(s->protect, s->n_protect * sizeof(*s->protect)));
	if (s->names_json)
		json_object_set_new(j, "names", json_incref(s->names_json));
}

/*
 * What a session's policy holds that sessions of the same compiled policy
 * share (its rule rows, protected files and host rules): one file per
 * policy id, written once, instead of in every session's state at every
 * change (10,000 rules are a megabyte of JSON). Gone with the policy.
 */
static int policy_save(const struct sbx_session_rt *s)
{
	json_t *j;
	char *path = policy_file(s->policy_id), *text;
	int rc;

	if (access(path, F_OK) == 0) {
		free(path);
		return 0;
	}
	j = json_object();
	json_object_set_new(j, "policy_id", json_integer(s->policy_id));
	policy_part(j, s);
	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	sbx_mkdir_p(SBX_STATE_DIR, 0700);
	rc = text ? sbx_write_file_atomic(path, text, strlen(text), 0600) : -ENOMEM;
	free(path);
	free(text);
	return rc;
}

void sbx_state_policy_gone(uint32_t id)
{
	char *path = policy_file(id);

	unlink(path);
	free(path);
}

int sbx_state_save(struct sbx_session_rt *s)
{
	json_t *j = json_object(), *a;
	char *path, *text;
	bool shared = policy_save(s) == 0;
	int rc;

	json_object_set_new(j, "name", json_string(s->name));
	json_object_set_new(j, "cgid", json_integer(s->cgid));
	json_object_set_new(j, "serial", json_integer(s->serial));
	json_object_set_new(j, "uid", json_integer(s->uid));
	json_object_set_new(j, "gid", json_integer(s->gid));
	json_object_set_new(j, "home", json_string(s->home));
	json_object_set_new(j, "project", json_string(s->project));
	json_object_set_new(j, "policy_path", json_string(s->policy_path));
	json_object_set_new(j, "cgroup", json_string(s->cgroup_path));
	json_object_set_new(j, "policy_id", json_integer(s->policy_id));
	if (s->approval)
		json_object_set(j, "approval", s->approval);
	json_object_set_new(j, "tier", json_string(s->tier ? s->tier : "?"));
	json_object_set_new(j, "landlock_abi", json_integer(s->landlock_abi));
	if (s->learn)
		json_object_set_new(j, "learn", json_true());
	if (s->container)
		json_object_set(j, "container", s->container);
	if (s->grafts) {
		json_t *g = json_array();

		for (size_t i = 0; s->grafts[i].path; i++)
			json_array_append_new(g, json_pack("{s:s,s:I,s:I}", "path", s->grafts[i].path,
							   "dev", (json_int_t)s->grafts[i].dev,
							   "ino", (json_int_t)s->grafts[i].ino));
		json_object_set_new(j, "grafts", g);
	}
	json_object_set_new(j, "hdr", hex_blob(&s->hdr, sizeof(s->hdr)));
	if (!shared)
		policy_part(j, s);	/* the policy's file could not be written */
	a = json_array();
	for (size_t i = 0; i < s->n_grants; i++)
		json_array_append_new(a, json_pack("{s:o,s:I,s:s}", "key",
						   hex_blob(&s->grants[i].key,
							    sizeof(s->grants[i].key)),
						   "expires_ns", (json_int_t)s->grants[i].expires_ns,
						   "request", s->grants[i].request));
	json_object_set_new(j, "grants", a);
	a = json_array();
	for (size_t i = 0; i < s->n_my_requests; i++)
		json_array_append_new(a, json_string(s->my_requests[i]));
	json_object_set_new(j, "requests", a);
	a = json_array();
	for (size_t i = 0; i < s->n_name_grants; i++)
		json_array_append_new(a, json_pack("{s:s,s:i,s:I,s:s}", "name",
						   s->name_grants[i].name, "port",
						   (int)s->name_grants[i].port, "expires_ns",
						   (json_int_t)s->name_grants[i].expires_ns, "request",
						   s->name_grants[i].request ? s->name_grants[i].request : ""));
	json_object_set_new(j, "name_grants", a);
	json_object_set_new(j, "dns", json_pack("{s:I,s:i,s:i,s:i,s:i}", "addr4",
						(json_int_t)s->dns_addr4, "port4_udp",
						(int)s->dns_port4_udp, "port4_tcp", (int)s->dns_port4_tcp,
						"port6_udp", (int)s->dns_port6_udp, "port6_tcp",
						(int)s->dns_port6_tcp));

	text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	sbx_mkdir_p(SBX_STATE_DIR, 0700);
	path = sbx_asprintf(SBX_STATE_DIR "/%s.json", s->name);
	rc = sbx_write_file_atomic(path, text, strlen(text), 0600);
	if (rc)
		sbx_warn("saving session state %s: %s", path, strerror(-rc));
	else
		s->dirty = false;
	free(path);
	free(text);
	return rc;
}

void sbx_state_flush(struct sbx_daemon *d)
{
	for (struct sbx_session_rt *s = d->sessions; s; s = s->next)
		if (s->dirty)
			sbx_state_save(s);
}

void sbx_state_remove(const struct sbx_session_rt *s)
{
	char *path = sbx_asprintf(SBX_STATE_DIR "/%s.json", s->name);

	unlink(path);
	free(path);
}

struct sbx_session_rt *sbx_state_load(const char *path)
{
	struct sbx_session_rt *s;
	json_error_t jerr;
	json_t *j, *a, *v, *pol;
	struct sbx_rule_row *rows;
	size_t i;
	const char *str;
	bool bad_graft = false;

	j = json_load_file(path, 0, &jerr);
	if (!j)
		return NULL;
	s = sbx_calloc(1, sizeof(*s));
	s->events_wd = s->done_wd = -1;
	str = sbx_json_str(j, "name");
	snprintf(s->name, sizeof(s->name), "%s", str ? str : "");
	s->cgid = json_integer_value(json_object_get(j, "cgid"));
	s->serial = json_integer_value(json_object_get(j, "serial"));
	s->uid = json_integer_value(json_object_get(j, "uid"));
	s->gid = json_integer_value(json_object_get(j, "gid"));
	s->home = sbx_strdup(sbx_json_str(j, "home"));
	s->project = sbx_strdup(sbx_json_str(j, "project"));
	s->policy_path = sbx_strdup(sbx_json_str(j, "policy_path"));
	s->cgroup_path = sbx_strdup(sbx_json_str(j, "cgroup"));
	s->policy_id = json_integer_value(json_object_get(j, "policy_id"));
	sbx_session_set_approval(s, json_object_get(j, "approval"));
	str = sbx_json_str(j, "tier");
	s->tier = sbx_tier_name(str && !strcmp(str, "landlock") ? SBX_TIER_LANDLOCK
								  : SBX_TIER_BPF_LSM);
	s->landlock_abi = json_integer_value(json_object_get(j, "landlock_abi"));
	s->learn = json_is_true(json_object_get(j, "learn"));
	if (json_is_object(json_object_get(j, "container")))
		s->container = json_incref(json_object_get(j, "container"));
	if (json_is_array(json_object_get(j, "grafts"))) {
		json_t *g = json_object_get(j, "grafts");

		s->grafts = sbx_calloc(json_array_size(g) + 1, sizeof(*s->grafts));
		for (size_t gi = 0, n = 0; gi < json_array_size(g); gi++) {
			const json_t *e = json_array_get(g, gi);

			/* a path alone (written before grafts kept their
			 * identity): what is there now */
			if (json_is_string(e)) {
				s->grafts[n].path = sbx_strdup(json_string_value(e));
				if (sbx_kident(s->grafts[n].path, true, &s->grafts[n].dev,
					       &s->grafts[n].ino))
					s->grafts[n].dev = 0, s->grafts[n].ino = 0;
				n++;
				continue;
			}
			/* a graft not read whole is a mount the policy would
			 * not follow: the entry is refused with the rest */
			if (!sbx_json_str(e, "path") || !json_is_integer(json_object_get(e, "dev")) ||
			    !json_is_integer(json_object_get(e, "ino"))) {
				bad_graft = true;
				break;
			}
			s->grafts[n].dev = (uint32_t)json_integer_value(json_object_get(e, "dev"));
			s->grafts[n].ino = (uint64_t)json_integer_value(json_object_get(e, "ino"));
			s->grafts[n++].path = sbx_strdup(sbx_json_str(e, "path"));
		}
	}
	if (bad_graft || !s->name[0] || !s->cgid ||
	    !unhex_blob(json_object_get(j, "hdr"), &s->hdr, sizeof(s->hdr))) {
		json_decref(j);
		sbx_session_free(s);
		return NULL;
	}
	/* the policy's part: in its own file (policy_save), or here */
	pol = json_incref(j);
	if (!json_object_get(j, "rules")) {
		char *pp = policy_file(s->policy_id);

		json_decref(pol);
		pol = json_load_file(pp, 0, &jerr);
		free(pp);
		if (!pol || json_integer_value(json_object_get(pol, "policy_id")) != s->policy_id) {
			json_decref(pol);
			json_decref(j);
			sbx_session_free(s);
			return NULL;
		}
	}
	a = json_object_get(pol, "rules");
	rows = sbx_calloc(json_array_size(a) ? json_array_size(a) : 1, sizeof(*rows));
	json_array_foreach(a, i, v)
		sbx_rule_row_from_json(&rows[i], v);
	s->rules = sbx_rule_table_new(rows, json_array_size(a));
	str = sbx_json_str(pol, "protect");
	if (str && strlen(str) % (2 * sizeof(struct sbx_protect_key)) == 0) {
		s->n_protect = strlen(str) / (2 * sizeof(struct sbx_protect_key));
		s->protect = sbx_calloc(s->n_protect, sizeof(*s->protect));
		if (!unhex_blob(json_object_get(pol, "protect"), s->protect,
				s->n_protect * sizeof(*s->protect)))
			s->n_protect = 0;
	}
	sbx_session_set_names(s, json_object_get(pol, "names"));
	json_decref(pol);
	json_array_foreach(json_object_get(j, "grants"), i, v) {
		struct sbx_grant_rt g = {};

		if (!unhex_blob(json_object_get(v, "key"), &g.key, sizeof(g.key)))
			continue;
		g.expires_ns = json_integer_value(json_object_get(v, "expires_ns"));
		g.request = sbx_strdup(sbx_json_str(v, "request"));
		s->grants = realloc(s->grants, (s->n_grants + 1) * sizeof(*s->grants));
		if (!s->grants)
			abort();
		s->grants[s->n_grants++] = g;
	}
	json_array_foreach(json_object_get(j, "name_grants"), i, v) {
		struct sbx_name_grant g = {};

		if (!sbx_json_str(v, "name"))
			continue;
		g.name = sbx_strdup(sbx_json_str(v, "name"));
		g.port = json_integer_value(json_object_get(v, "port"));
		g.expires_ns = json_integer_value(json_object_get(v, "expires_ns"));
		g.request = sbx_strdup(sbx_json_str(v, "request"));
		s->name_grants = sbx_realloc_array(s->name_grants, s->n_name_grants + 1,
						   sizeof(*s->name_grants));
		s->name_grants[s->n_name_grants++] = g;
	}
	v = json_object_get(j, "dns");
	s->dns_addr4 = json_integer_value(json_object_get(v, "addr4"));
	s->dns_port4_udp = json_integer_value(json_object_get(v, "port4_udp"));
	s->dns_port4_tcp = json_integer_value(json_object_get(v, "port4_tcp"));
	s->dns_port6_udp = json_integer_value(json_object_get(v, "port6_udp"));
	s->dns_port6_tcp = json_integer_value(json_object_get(v, "port6_tcp"));
	a = json_object_get(j, "requests");
	json_array_foreach(a, i, v) {
		s->my_requests = realloc(s->my_requests,
					 (s->n_my_requests + 1) * sizeof(*s->my_requests));
		if (!s->my_requests)
			abort();
		s->my_requests[s->n_my_requests++] = sbx_strdup(json_string_value(v));
	}
	json_decref(j);
	return s;
}

void sbx_session_set_approval(struct sbx_session_rt *s, json_t *approval)
{
	json_incref(approval);
	json_decref(s->approval);
	s->approval = approval;
	s->max_always_ttl_s = json_integer_value(json_object_get(approval, "max_always_ttl_s"));
}

bool sbx_session_approver_ok(const struct sbx_session_rt *s, uid_t uid)
{
	const json_t *who = json_object_get(s->approval, "approvers"), *v;
	size_t i;

	if (!who || uid == 0)
		return true;
	json_array_foreach(who, i, v)
		if (json_string_value(v) && sbx_uid_is(uid, json_string_value(v)))
			return true;
	return false;
}

void sbx_session_set_names(struct sbx_session_rt *s, json_t *names)
{
	json_decref(s->names_json);
	sbx_compiled_free(&s->names);
	s->names_json = NULL;
	if (!names || !sbx_names_from_json(names, &s->names)) {
		/* no host rules: every name takes network.default, which must
		 * then be known; deny when it is not (fail closed) */
		sbx_compiled_free(&s->names);
		s->names.hdr.net_default = s->hdr.net_default ? s->hdr.net_default : SBX_V_DENY;
		s->names.hdr.net_default_rule = s->hdr.net_default_rule;
		s->names.dns.grace_s = SBX_DNS_GRACE_S;
		s->names.dns.min_ttl_s = SBX_DNS_MIN_TTL_S;
		s->names.dns.max_per_name = SBX_DNS_MAX_PER_NAME;
		s->names.dns.max_per_session = SBX_DNS_MAX_PER_SESSION;
		return;
	}
	s->names_json = json_incref(names);
}

json_t *sbx_names_json(const struct sbx_compiled *c)
{
	json_t *hosts = json_array(), *res = json_array();

	for (size_t i = 0; i < c->n_hosts; i++) {
		const struct sbx_host_entry *e = &c->hosts[i];

		json_array_append_new(hosts, json_pack("[s,b,i,i,i,i,I]", e->name, e->wildcard,
						       (int)e->pr.port_lo, (int)e->pr.port_hi,
						       (int)e->pr.proto, (int)e->pr.verdict,
						       (json_int_t)e->pr.rule_id));
	}
	for (size_t i = 0; i < c->dns.n_resolvers; i++) {
		char hex[33];

		for (int b = 0; b < 16; b++)
			snprintf(hex + 2 * b, 3, "%02x", c->dns.resolvers[i].addr[b]);
		json_array_append_new(res, json_pack("[i,s,i]", c->dns.resolvers[i].family, hex,
						     (int)c->dns.resolvers[i].port));
	}
	return json_pack("{s:o,s:{s:i,s:i,s:i,s:i,s:o},s:i,s:I}", "hosts", hosts, "dns",
			 "grace", (int)c->dns.grace_s, "min_ttl", (int)c->dns.min_ttl_s,
			 "max_per_name", (int)c->dns.max_per_name, "max_per_session",
			 (int)c->dns.max_per_session, "resolvers", res, "net_default",
			 (int)c->hdr.net_default, "net_default_rule", (json_int_t)c->hdr.net_default_rule);
}

bool sbx_names_from_json(const json_t *j, struct sbx_compiled *c)
{
	const json_t *hosts = json_object_get(j, "hosts"), *dns = json_object_get(j, "dns"), *v;
	size_t i;

	if (!json_is_array(hosts) || !json_is_object(dns))
		return false;
	c->hosts = sbx_calloc(json_array_size(hosts) + 1, sizeof(*c->hosts));
	c->n_hosts = 0;
	json_array_foreach(hosts, i, v) {
		struct sbx_host_entry *e = &c->hosts[c->n_hosts];
		const char *name = json_string_value(json_array_get(v, 0));

		if (!name)
			continue;
		e->name = sbx_strdup(name);
		e->wildcard = json_is_true(json_array_get(v, 1));
		e->pr.port_lo = json_integer_value(json_array_get(v, 2));
		e->pr.port_hi = json_integer_value(json_array_get(v, 3));
		e->pr.proto = json_integer_value(json_array_get(v, 4));
		e->pr.verdict = json_integer_value(json_array_get(v, 5));
		e->pr.rule_id = json_integer_value(json_array_get(v, 6));
		c->n_hosts++;
	}
	c->dns.grace_s = json_integer_value(json_object_get(dns, "grace"));
	c->dns.min_ttl_s = json_integer_value(json_object_get(dns, "min_ttl"));
	c->dns.max_per_name = json_integer_value(json_object_get(dns, "max_per_name"));
	c->dns.max_per_session = json_integer_value(json_object_get(dns, "max_per_session"));
	if (!c->dns.max_per_name)
		c->dns.max_per_name = SBX_DNS_MAX_PER_NAME;
	if (!c->dns.max_per_session)
		c->dns.max_per_session = SBX_DNS_MAX_PER_SESSION;
	c->dns.n_resolvers = 0;
	json_array_foreach(json_object_get(dns, "resolvers"), i, v) {
		struct sbx_dns_upstream *u = &c->dns.resolvers[c->dns.n_resolvers];
		const char *hex = json_string_value(json_array_get(v, 1));

		if (c->dns.n_resolvers >= SBX_DNS_MAX_RESOLVERS || !hex || strlen(hex) != 32)
			continue;
		u->family = json_integer_value(json_array_get(v, 0));
		for (int b = 0; b < 16; b++) {
			unsigned x = 0;

			sscanf(hex + 2 * b, "%2x", &x);
			u->addr[b] = x;
		}
		u->port = json_integer_value(json_array_get(v, 2));
		c->dns.n_resolvers++;
	}
	c->hdr.net_default = json_integer_value(json_object_get(j, "net_default"));
	c->hdr.net_default_rule = json_integer_value(json_object_get(j, "net_default_rule"));
	return true;
}
