// SPDX-License-Identifier: GPL-2.0
/*
 * grants.c - a person's answers in the kernel: the key of a granted
 * object, the grant's life (added, expired, removed with the session),
 * and the remembered "always" answers a new session starts with.
 *
 * One function builds every key, whether the object comes from a request
 * being approved or from remembered.yaml, so that both are decided by the
 * same rules.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <bpf/bpf.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/names.h"
#include "policy/policy.h"
#include "user/daemon/containers.h"
#include "user/daemon/grants.h"
#include "lib/json.h"

/* A file grant from what a request or remembered.yaml recorded: the
 * identity, never the path resolved again. A new name is keyed on its
 * directory's identity and the hash of its last component. */
static void file_obj(struct sbx_grant_obj *o, int access, const char *path, bool has_ident,
		     uint32_t dev, uint64_t ino, bool new_name, const char *ftype,
		     const char *btime)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	o->type = SBX_GO_FILE;
	o->access = access;
	o->path = path;
	o->has_ident = has_ident;
	o->dev = dev;
	o->ino = ino;
	o->new_name = new_name;
	o->ftype = ftype;
	o->btime = btime;
	if (new_name && slash)
		o->name_hash = sbx_hash_name(slash + 1, strlen(slash + 1));
}

bool sbx_grant_obj_of_request(const struct sbx_request *r, struct sbx_grant_obj *o)
{
	memset(o, 0, sizeof(*o));
	switch (r->kind) {
	case SBX_REQ_FILE:
	case SBX_REQ_EXEC:
	case SBX_REQ_ACCESS_PATH:
		file_obj(o, r->access, r->path, r->has_ident, r->dev, r->ino, r->new_name, r->ftype,
			 r->btime);
		o->abstract = r->abstract;
		if ((r->new_name || r->abstract) && r->name_hash)
			o->name_hash = r->name_hash;	/* the kernel's, when it gave one */
		return true;
	case SBX_REQ_NET:
		o->type = SBX_GO_NET;
		o->addr = r->addr;
		o->port = r->port;
		return true;
	case SBX_REQ_ACCESS_HOST:
	case SBX_REQ_HOST:
		o->type = SBX_GO_HOST;
		o->host = r->host;
		o->port = r->port;
		return true;
	case SBX_REQ_COMMAND:
		break;
	}
	return false;
}

bool sbx_grant_obj_of_remembered(const struct sbx_remembered *r, struct sbx_grant_obj *o)
{
	memset(o, 0, sizeof(*o));
	if (!r->kind)
		return false;
	if (!strcmp(r->kind, "file") || !strcmp(r->kind, "exec")) {
		int acc = !strcmp(r->kind, "exec") ? SBX_ACC_EXEC : sbx_access_parse(r->access);

		if (!r->path || acc < 0)
			return false;
		file_obj(o, acc, r->path, r->has_ident, r->dev, r->ino, r->new_name, r->type,
			 r->btime);
		return true;
	}
	if (!strcmp(r->kind, "net") && r->addr) {
		o->type = SBX_GO_NET;
		o->addr = r->addr;
		o->port = r->port;
		return true;
	}
	if (!strcmp(r->kind, "host") && r->host) {
		o->type = SBX_GO_HOST;
		o->host = r->host;
		o->port = r->port;
		return true;
	}
	return false;
}

/*
 * "@name" as events and requests write an abstract socket's name, with
 * \xNN for bytes that are not printable: the name's hash, as
 * bpf/network.bpf.c computes it over the raw bytes.
 */
static int abstract_key(const char *shown, struct sbx_grant_key *k, char **why)
{
	size_t n = strlen(shown), len = 0;
	char *raw = sbx_calloc(1, n + 1);

	for (size_t i = 1; i < n; i++) {
		if (shown[i] == '\\' && shown[i + 1] == 'x' && isxdigit((unsigned char)shown[i + 2]) &&
		    isxdigit((unsigned char)shown[i + 3])) {
			char hex[3] = { shown[i + 2], shown[i + 3], 0 };

			raw[len++] = (char)strtoul(hex, NULL, 16);
			i += 3;
		} else {
			raw[len++] = shown[i];
		}
	}
	if (len == 0 || len > 107) {
		free(raw);
		*why = sbx_asprintf("'%s' is not an abstract socket name", shown);
		return -EINVAL;
	}
	k->kind = SBX_GK_ABSTRACT;
	k->hash = sbx_hash_name(raw, len);
	free(raw);
	return 0;
}

static int net_key(const char *addr, int port, struct sbx_grant_key *k)
{
	unsigned char a[16] = {};

	if (inet_pton(AF_INET, addr, a) == 1)
		k->kind = SBX_GK_NET4;
	else if (inet_pton(AF_INET6, addr, a) == 1)
		k->kind = SBX_GK_NET6;
	else
		return -EINVAL;
	memcpy(k->addr, a, 16);
	k->port = port;
	return 0;
}

int sbx_grant_keys(const struct sbx_session_rt *s, const struct sbx_grant_obj *o,
		   struct sbx_grant_key **keys, size_t *n, char **why)
{
	struct sbx_grant_key k = { .cgid = s->cgid };
	int rc = 0;

	*keys = NULL;
	*n = 0;
	switch (o->type) {
	case SBX_GO_FILE:
		k.access = o->access;
		if (o->abstract) {
			/* the name the kernel hashed, never parsed again */
			k.kind = SBX_GK_ABSTRACT;
			k.access = SBX_ACC_CONNECT;
			k.hash = o->name_hash;
			break;
		}
		if (o->path && o->path[0] == '@') {
			/* an abstract socket named in remembered.yaml: a name in
			 * the kernel's table, not a file a symlink could redirect */
			rc = abstract_key(o->path, &k, why);
			break;
		}
		if (!o->has_ident) {
			/* a path alone would be resolved now, to whatever it leads
			 * to now: never what the person saw */
			*why = sbx_asprintf("%s: no identity was recorded with it, so a grant "
					    "could reach another object; asked again",
					    o->path ? o->path : "?");
			return -ESTALE;
		}
		/* the object the person saw, never resolved again: granted only
		 * while the path leads there without a final symlink */
		if (s->container) {
			/* the same object, seen as the container sees it; the
			 * key itself is the identity the kernel recorded */
			pid_t pid = sbx_container_pid(s, why);

			if (!pid)
				return -ESTALE;
			rc = sbx_objid_check_in(pid, o->path, o->new_name, o->dev, o->ino,
						o->ftype, o->btime, why);
		} else {
			rc = sbx_objid_check(o->path, o->new_name, o->dev, o->ino, o->ftype,
					     o->btime, why);
		}
		if (rc)
			return rc;
		k.kind = o->new_name ? SBX_GK_NAME : SBX_GK_INODE;
		k.dev = o->dev;
		k.ino = o->ino;
		k.hash = o->new_name ? o->name_hash : 0;
		break;
	case SBX_GO_NET:
		rc = o->addr ? net_key(o->addr, o->port, &k) : -EINVAL;
		if (rc)
			*why = sbx_asprintf("'%s' is not an address", o->addr ? o->addr : "");
		break;
	case SBX_GO_HOST:
		/* granted by name (sbx_name_grant_add): its lookups resolve,
		 * and their addresses are learned */
		*why = sbx_asprintf("host %s is granted by name, not by key", o->host ? o->host : "");
		return -EINVAL;
	}
	if (rc)
		return rc;
	*keys = sbx_calloc(1, sizeof(**keys));
	(*keys)[0] = k;
	*n = 1;
	return 0;
}

int sbx_session_push_hdr(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	struct sbx_session v = { .pol = s->hdr, .uid = s->uid, .serial = s->serial };

	if (s->n_grants)
		v.pol.flags |= SBX_PF_HAS_GRANTS;
	else
		v.pol.flags &= ~SBX_PF_HAS_GRANTS;
	/* only while the daemon adopts a container, before its reply lets the
	 * runtime go on: once the exec has armed it, no later update of
	 * ours may disarm it (bpf/exec.bpf.c) */
	if (s->arming)
		v.pol.flags |= SBX_PF_ARMING;
	else
		v.pol.flags &= ~SBX_PF_ARMING;
	if (bpf_map_update_elem(d->k.sessions, &s->cgid, &v, BPF_ANY))
		return -errno;
	sbx_net_changed(&d->k);	/* its network default may be another */
	return 0;
}

int sbx_grant_add(struct sbx_daemon *d, struct sbx_session_rt *s,
		  const struct sbx_grant_key *key, uint64_t expires_ns, const char *request)
{
	struct sbx_grant g = { .expires_ns = expires_ns };
	struct sbx_grant_rt *r;

	if (bpf_map_update_elem(d->k.grants, key, &g, BPF_ANY))
		return -errno;
	s->grants = sbx_realloc_array(s->grants, s->n_grants + 1, sizeof(*s->grants));
	r = &s->grants[s->n_grants++];
	r->key = *key;
	r->expires_ns = expires_ns;
	r->request = sbx_strdup(request);
	sbx_session_dirty(s);
	return sbx_session_push_hdr(d, s);
}

int sbx_name_grant_add(struct sbx_session_rt *s, const char *host, int port,
		       uint64_t expires_ns, const char *request, char **why)
{
	struct sbx_name_grant *g;
	char norm[256];

	if (!host || !sbx_host_normalize(host, norm, sizeof(norm))) {
		*why = sbx_asprintf("'%s' is not a host name", host ? host : "");
		return -EINVAL;
	}
	for (size_t i = 0; i < s->n_name_grants; i++) {
		g = &s->name_grants[i];
		if (!strcmp(g->name, norm) && g->port == port) {
			/* the longer of the two */
			if (!expires_ns || (g->expires_ns && expires_ns > g->expires_ns))
				g->expires_ns = expires_ns;
			sbx_session_dirty(s);
			return 0;
		}
	}
	s->name_grants = sbx_realloc_array(s->name_grants, s->n_name_grants + 1,
					   sizeof(*s->name_grants));
	g = &s->name_grants[s->n_name_grants++];
	g->name = sbx_strdup(norm);
	g->port = (uint16_t)port;
	g->expires_ns = expires_ns;
	g->request = sbx_strdup(request ? request : "");
	sbx_session_dirty(s);
	return 0;
}

int sbx_grant_obj_add(struct sbx_daemon *d, struct sbx_session_rt *s,
		      const struct sbx_grant_obj *o, uint64_t expires_ns, const char *request,
		      char **why)
{
	struct sbx_grant_key *keys;
	size_t n;
	int rc;

	if (o->type == SBX_GO_HOST)
		return sbx_name_grant_add(s, o->host, o->port, expires_ns, request, why);
	rc = sbx_grant_keys(s, o, &keys, &n, why);

	for (size_t i = 0; i < n && !rc; i++)
		rc = sbx_grant_add(d, s, &keys[i], expires_ns, request);
	free(keys);
	return rc;
}

void sbx_grants_expire(struct sbx_daemon *d)
{
	uint64_t now = sbx_boot_ns();

	for (struct sbx_session_rt *s = d->sessions; s; s = s->next) {
		size_t w = 0;
		bool changed = false;

		for (size_t i = 0; i < s->n_grants; i++) {
			struct sbx_grant_rt *g = &s->grants[i];

			if (g->expires_ns && g->expires_ns < now) {
				bpf_map_delete_elem(d->k.grants, &g->key);
				free(g->request);
				changed = true;
				continue;
			}
			s->grants[w++] = *g;
		}
		s->n_grants = w;
		w = 0;
		for (size_t i = 0; i < s->n_name_grants; i++) {
			struct sbx_name_grant *g = &s->name_grants[i];

			if (g->expires_ns && g->expires_ns < now) {
				free(g->name);
				free(g->request);
				sbx_session_dirty(s);
				continue;
			}
			s->name_grants[w++] = *g;
		}
		s->n_name_grants = w;
		if (changed) {
			sbx_session_push_hdr(d, s);
			sbx_session_dirty(s);
		}
	}
}

/* The session's grants leave the kernel: the ones it recorded, which are
 * all the daemon made (sbx_grant_add records each). */
void sbx_grants_forget(struct sbx_daemon *d, const struct sbx_session_rt *s)
{
	for (size_t i = 0; i < s->n_grants; i++)
		bpf_map_delete_elem(d->k.grants, &s->grants[i].key);
}

static bool grant_unrecorded(const void *key, void *ctx)
{
	const struct sbx_grant_key *k = key;
	struct sbx_session_rt *s = sbx_session_by_cgid(ctx, k->cgid);

	for (size_t i = 0; s && i < s->n_grants; i++)
		if (!memcmp(&s->grants[i].key, k, sizeof(*k)))
			return false;
	return true;
}

/*
 * At the daemon's start, after adoption: a grant no live session records
 * goes. Those are a session's that ended while no daemon ran, or one a
 * daemon killed between the map update and the state save made; that
 * one is asked for again rather than kept unaccounted for.
 */
void sbx_grants_sweep(struct sbx_daemon *d)
{
	sbx_map_delete_keys_if(d->k.grants, sizeof(struct sbx_grant_key), grant_unrecorded, d);
}

/*
 * Under the machine policy's projects.max_always_ttl an "always" answer
 * lasts that long from when it was given: an older one is not applied
 * (the agent asks again, and the audit chain says why), a younger one
 * expires when its time is up. One without a readable time is older.
 */
static bool always_left(struct sbx_session_rt *s, const struct sbx_remembered *r, uint64_t *exp)
{
	time_t at = 0, now = time(NULL);
	json_t *rec;

	if (r->at && !sbx_time_parse(r->at, &at) && at <= now &&
	    (uint64_t)(now - at) < s->max_always_ttl_s) {
		*exp = sbx_boot_ns() +
		       (s->max_always_ttl_s - (uint64_t)(now - at)) * 1000000000ull;
		return true;
	}
	rec = json_pack("{s:s,s:s,s:s,s:i}", "event", "remembered_expired", "request",
			r->request ? r->request : "", "at", r->at ? r->at : "",
			"max_always_ttl_s", (int)s->max_always_ttl_s);
	sbx_info("session %s: an \"always\" answer (%s, given %s) is older than the machine "
		 "policy's max_always_ttl (%us): not applied", s->name,
		 r->request ? r->request : "remembered.yaml", r->at ? r->at : "at an unknown time",
		 s->max_always_ttl_s);
	sbx_daemon_audit(s, rec);
	json_decref(rec);
	return false;
}

void sbx_grants_apply_remembered(struct sbx_daemon *d, struct sbx_session_rt *s)
{
	struct sbx_remembered *v = NULL;
	char *err = NULL;
	size_t n = 0;

	if (sbx_remembered_load(s->queue, &v, &n, &err)) {
		if (err)
			sbx_warn("session %s: %s (remembered decisions not applied)", s->name, err);
		free(err);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct sbx_grant_obj o;
		uint64_t exp = 0;
		char *why = NULL;
		int rc;

		if (!sbx_grant_obj_of_remembered(&v[i], &o))
			continue;
		if (s->max_always_ttl_s && !always_left(s, &v[i], &exp))
			continue;
		rc = sbx_grant_obj_add(d, s, &o, exp, v[i].request ? v[i].request : "remembered",
				       &why);
		if (rc && o.type == SBX_GO_FILE) {
			/* asking again is the safe side; the person hears why */
			char *text = sbx_asprintf("an \"always\" approval (%s) was not applied: %s",
						  v[i].request ? v[i].request : "remembered.yaml",
						  why ? why : strerror(-rc));
			json_t *rec = json_pack("{s:s,s:s,s:s,s:s}", "event", "remembered_refused",
						"path", o.path, "request",
						v[i].request ? v[i].request : "", "reason", text);

			sbx_info("session %s: %s", s->name, text);
			sbx_daemon_audit(s, rec);
			json_decref(rec);
			s->notes = sbx_realloc_array(s->notes, s->n_notes + 1, sizeof(*s->notes));
			s->notes[s->n_notes].path = sbx_strdup(o.path);
			s->notes[s->n_notes++].text = text;
		} else if (rc) {
			sbx_warn("session %s: a remembered decision was not applied: %s", s->name,
				 why ? why : strerror(-rc));
		}
		free(why);
	}
	sbx_remembered_free(v, n);
}

const char *sbx_grant_annotate(const struct sbx_session_rt *s, struct sbx_request *r,
			       struct sbx_objid *id)
{
	if (!r->path)
		return NULL;
	if (!r->new_name && r->has_ident && !r->abstract && sbx_objid_nofollow(r->path, id) == 0 &&
	    id->dev == r->dev && id->ino == r->ino) {
		r->ftype = id->type;
		r->nlink = (long long)id->nlink;
		r->btime = id->btime[0] ? id->btime : NULL;
	}
	for (size_t i = s->n_notes; i-- > 0;)
		if (!strcmp(s->notes[i].path, r->path))
			return s->notes[i].text;
	return NULL;
}

int sbx_grant_ident_of_access(struct sbx_request *r, struct sbx_objid *id, char **full,
			      char **why)
{
	const char *path = r->path;
	char *norm, *dir = NULL, *real = NULL, target[512];
	const char *name;
	int rc = 0;

	*full = NULL;
	/* whatever the agent said about identity is not ours to trust */
	r->has_ident = r->new_name = r->abstract = false;
	r->dev = 0;
	r->ino = 0;
	r->name_hash = 0;
	r->ftype = NULL;
	r->nlink = -1;
	r->btime = NULL;
	if (!path || path[0] != '/') {
		*why = sbx_asprintf("'%s' is not an absolute path", path ? path : "");
		return -EINVAL;
	}
	norm = sbx_strdup(path);
	while (strlen(norm) > 1 && norm[strlen(norm) - 1] == '/')
		norm[strlen(norm) - 1] = 0;
	name = strrchr(norm, '/') + 1;
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
		*why = sbx_asprintf("%s names no file", path);
		free(norm);
		return -EINVAL;
	}
	dir = strndup(norm, (size_t)(name - norm > 1 ? name - norm - 1 : 1));
	real = dir ? realpath(dir, NULL) : NULL;
	if (!real) {
		*why = sbx_asprintf("the directory of %s cannot be resolved: %s", path,
				    strerror(errno));
		rc = -ENOENT;
		goto out;
	}
	*full = sbx_asprintf("%s/%s", strcmp(real, "/") ? real : "", name);
	rc = sbx_objid_nofollow(*full, id);
	if (rc == 0 && !strcmp(id->type, "symlink")) {
		ssize_t n = readlink(*full, target, sizeof(target) - 1);

		target[n > 0 ? n : 0] = 0;
		*why = sbx_asprintf("%s is a symbolic link to %s; a person approves the object "
				    "itself, so ask for the path it leads to", *full,
				    n > 0 ? target : "?");
		rc = -ELOOP;
		goto out;
	}
	if (rc == 0) {
		r->has_ident = true;
		r->dev = id->dev;
		r->ino = id->ino;
		r->ftype = id->type;
		r->nlink = (long long)id->nlink;
		r->btime = id->btime[0] ? id->btime : NULL;
	} else if (rc == -ENOENT) {
		/* not there yet: its directory and its name, like the kernel's
		 * request for a file to be created */
		rc = sbx_objid_nofollow(real, id);
		if (rc) {
			*why = sbx_asprintf("%s: %s", real, strerror(-rc));
			goto out;
		}
		r->has_ident = true;
		r->dev = id->dev;
		r->ino = id->ino;
		r->new_name = true;
		r->name_hash = sbx_hash_name(name, strlen(name));
	} else {
		*why = sbx_asprintf("%s: %s", *full, strerror(-rc));
		goto out;
	}
	r->path = *full;
out:
	if (rc) {
		free(*full);
		*full = NULL;
	}
	free(norm);
	free(dir);
	free(real);
	return rc;
}
