// SPDX-License-Identifier: GPL-2.0
/*
 * remembered.c - .sandbox/remembered.yaml, the "approve always" answers
 * that every later session of the project starts with.
 *
 * Read with libyaml's parser, written with its emitter. A malformed file
 * is reported with line:column and nothing of it is used: a half-read
 * list could silently drop a deny-by-omission, or worse, keep an entry
 * the person meant to remove. Writers take flock() on .sandbox so that
 * two approvals at once do not lose one another.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <yaml.h>
#include "queue/queue.h"
#include "lib/alloc.h"

#define REMEMBERED	"remembered.yaml"
#define REMEMBERED_MAX	(4u << 20)


void sbx_remembered_free(struct sbx_remembered *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		free(v[i].kind);
		free(v[i].path);
		free(v[i].access);
		free(v[i].addr);
		free(v[i].host);
		free(v[i].request);
		free(v[i].by);
		free(v[i].at);
		free(v[i].type);
		free(v[i].btime);
	}
	free(v);
}

struct parse {
	yaml_parser_t p;
	yaml_event_t ev;
	bool have_ev;
	char **err;
};

static int next(struct parse *ps)
{
	if (ps->have_ev)
		yaml_event_delete(&ps->ev);
	ps->have_ev = false;
	if (!yaml_parser_parse(&ps->p, &ps->ev)) {
		sbx_queue_set_err(ps->err, REMEMBERED ":%zu:%zu: %s%s%s",
			ps->p.problem_mark.line + 1, ps->p.problem_mark.column + 1,
			ps->p.problem ? ps->p.problem : "syntax error",
			ps->p.context ? " " : "", ps->p.context ? ps->p.context : "");
		return -EINVAL;
	}
	ps->have_ev = true;
	return 0;
}

static int bad(struct parse *ps, const char *what)
{
	sbx_queue_set_err(ps->err, REMEMBERED ":%zu:%zu: %s", ps->ev.start_mark.line + 1,
		ps->ev.start_mark.column + 1, what);
	return -EINVAL;
}

static const char *scalar(struct parse *ps)
{
	return (const char *)ps->ev.data.scalar.value;
}

static int parse_port(const char *s, int *port)
{
	long v = 0;

	if (!*s || strlen(s) > 5)
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}

static bool one_of(const char *s, const char *const *set)
{
	for (int i = 0; set[i]; i++)
		if (s && !strcmp(s, set[i]))
			return true;
	return false;
}

/* one "- kind: ..." mapping; the current event is its MAPPING_START */
static int parse_entry(struct parse *ps, struct sbx_remembered *r)
{
	static const char *const kinds[] = { "file", "exec", "net", "host", NULL };
	static const char *const accesses[] = { "read", "write", "exec", NULL };
	yaml_mark_t start = ps->ev.start_mark;
	int rc;

	for (;;) {
		char **slot = NULL, keybuf[72];
		const char *key;

		if ((rc = next(ps)))
			return rc;
		if (ps->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (ps->ev.type != YAML_SCALAR_EVENT)
			return bad(ps, "expected a key");
		/* the key's text dies with its event: keep a copy */
		snprintf(keybuf, sizeof(keybuf), "%s", scalar(ps));
		key = keybuf;
		if (!strcmp(key, "kind"))
			slot = &r->kind;
		else if (!strcmp(key, "path"))
			slot = &r->path;
		else if (!strcmp(key, "access"))
			slot = &r->access;
		else if (!strcmp(key, "addr"))
			slot = &r->addr;
		else if (!strcmp(key, "host"))
			slot = &r->host;
		else if (!strcmp(key, "request"))
			slot = &r->request;
		else if (!strcmp(key, "by"))
			slot = &r->by;
		else if (!strcmp(key, "at"))
			slot = &r->at;
		else if (!strcmp(key, "type"))
			slot = &r->type;
		else if (!strcmp(key, "btime"))
			slot = &r->btime;
		else if (strcmp(key, "port") && strcmp(key, "dev") && strcmp(key, "ino") &&
			 strcmp(key, "new_name")) {
			char msg[200];

			snprintf(msg, sizeof(msg), "unknown key \"%.60s\" (known: kind, path, "
				 "access, addr, host, port, dev, ino, type, btime, new_name, request, "
				 "by, at)", key);
			return bad(ps, msg);
		}
		if ((rc = next(ps)))
			return rc;
		if (ps->ev.type != YAML_SCALAR_EVENT)
			return bad(ps, "expected a plain value (text or number)");
		if (!slot && strcmp(key, "port")) {
			const char *val = scalar(ps);
			char *end = NULL;
			unsigned long long x;

			if (!strcmp(key, "new_name")) {
				if (strcmp(val, "true") && strcmp(val, "false"))
					return bad(ps, "new_name must be true or false");
				r->new_name = !strcmp(val, "true");
				continue;
			}
			errno = 0;
			x = strtoull(val, &end, 10);
			if (!*val || *val == '-' || *end || errno ||
			    (!strcmp(key, "dev") && x > 0xffffffffull))
				return bad(ps, !strcmp(key, "dev") ?
					   "dev must be a number from 0 to 4294967295" :
					   "ino must be a non-negative number");
			if (!strcmp(key, "dev")) {
				if (r->seen_dev)
					return bad(ps, "key given twice");
				r->seen_dev = true;
				r->dev = (uint32_t)x;
			} else {
				if (r->seen_ino)
					return bad(ps, "key given twice");
				r->seen_ino = true;
				r->ino = x;
			}
			continue;
		}
		if (slot) {
			if (*slot)
				return bad(ps, "key given twice");
			*slot = strdup(scalar(ps));
			if (!*slot)
				return -ENOMEM;
		} else {
			if (r->port != -1)
				return bad(ps, "key given twice");
			if (parse_port(scalar(ps), &r->port))
				return bad(ps, "port must be a number from 0 to 65535");
		}
	}
	ps->ev.start_mark = start;	/* errors below point at the entry */
	if (!r->kind)
		return bad(ps, "entry has no \"kind\"");
	if (!one_of(r->kind, kinds))
		return bad(ps, "kind must be file, exec, net or host");
	if (!strcmp(r->kind, "net") || !strcmp(r->kind, "host")) {
		bool net = !strcmp(r->kind, "net");

		if (net ? !r->addr : !r->host)
			return bad(ps, net ? "a net entry needs \"addr\"" :
					     "a host entry needs \"host\"");
		if (r->path || r->access || (net ? r->host != NULL : r->addr != NULL))
			return bad(ps, net ? "a net entry has no \"path\", \"access\" or \"host\"" :
					     "a host entry has no \"path\", \"access\" or \"addr\"");
	} else {
		if (!r->path || !r->path[0])
			return bad(ps, "a file or exec entry needs \"path\"");
		if (r->addr || r->host || r->port != -1)
			return bad(ps, "a file or exec entry has no \"addr\", \"host\" or \"port\"");
		if (!strcmp(r->kind, "file") && !one_of(r->access, accesses))
			return bad(ps, "a file entry needs \"access\": read, write or exec");
		if (!strcmp(r->kind, "exec") && r->access && strcmp(r->access, "exec"))
			return bad(ps, "an exec entry's access can only be exec");
		if (r->seen_dev != r->seen_ino)
			return bad(ps, "a file or exec entry needs both \"dev\" and \"ino\", or "
				   "neither");
		r->has_ident = r->seen_dev;
	}
	if ((r->seen_dev || r->seen_ino || r->type || r->btime || r->new_name) &&
	    (!strcmp(r->kind, "net") || !strcmp(r->kind, "host")))
		return bad(ps, "only file and exec entries have \"dev\", \"ino\", \"type\" or "
			   "\"new_name\"");
	if (r->port == -1)
		r->port = 0;
	return 0;
}

static int parse_doc(struct parse *ps, struct sbx_remembered **vp, size_t *np)
{
	struct sbx_remembered *v = NULL;
	size_t n = 0, cap = 0;
	bool seen = false;
	int rc;

	*vp = NULL;
	*np = 0;
	if ((rc = next(ps)) || ps->ev.type != YAML_STREAM_START_EVENT)
		return rc ? rc : bad(ps, "not a YAML stream");
	if ((rc = next(ps)))
		return rc;
	if (ps->ev.type == YAML_STREAM_END_EVENT)
		return 0;	/* empty file: nothing remembered */
	if (ps->ev.type != YAML_DOCUMENT_START_EVENT)
		return bad(ps, "expected a document");
	if ((rc = next(ps)))
		return rc;
	if (ps->ev.type == YAML_SCALAR_EVENT && !ps->ev.data.scalar.length)
		goto doc_end;	/* "---" alone */
	if (ps->ev.type != YAML_MAPPING_START_EVENT)
		return bad(ps, "expected a mapping with the key \"remembered\"");
	for (;;) {
		if ((rc = next(ps)))
			goto fail;
		if (ps->ev.type == YAML_MAPPING_END_EVENT)
			break;
		if (ps->ev.type != YAML_SCALAR_EVENT || strcmp(scalar(ps), "remembered")) {
			rc = bad(ps, "expected the key \"remembered\" (the only top-level key)");
			goto fail;
		}
		if (seen) {
			rc = bad(ps, "\"remembered\" given twice");
			goto fail;
		}
		seen = true;
		if ((rc = next(ps)))
			goto fail;
		if (ps->ev.type == YAML_SCALAR_EVENT && !ps->ev.data.scalar.length &&
		    ps->ev.data.scalar.plain_implicit)
			continue;	/* "remembered:" with nothing */
		if (ps->ev.type != YAML_SEQUENCE_START_EVENT) {
			rc = bad(ps, "\"remembered\" must be a list");
			goto fail;
		}
		for (;;) {
			if ((rc = next(ps)))
				goto fail;
			if (ps->ev.type == YAML_SEQUENCE_END_EVENT)
				break;
			if (ps->ev.type != YAML_MAPPING_START_EVENT) {
				rc = bad(ps, "each entry must be a mapping (kind, path, ...)");
				goto fail;
			}
			if (!SBX_GROW(v, cap, n + 1, 8)) {
				rc = -ENOMEM;
				goto fail;
			}
			memset(&v[n], 0, sizeof(v[n]));
			v[n].port = -1;
			n++;
			if ((rc = parse_entry(ps, &v[n - 1])))
				goto fail;
		}
	}
doc_end:
	if ((rc = next(ps)))
		goto fail;
	if (ps->ev.type != YAML_DOCUMENT_END_EVENT) {
		rc = bad(ps, "unexpected content");
		goto fail;
	}
	if ((rc = next(ps)))
		goto fail;
	if (ps->ev.type != YAML_STREAM_END_EVENT) {
		rc = bad(ps, "only one YAML document is allowed");
		goto fail;
	}
	*vp = v;
	*np = n;
	return 0;
fail:
	sbx_remembered_free(v, n);
	return rc;
}

int sbx_remembered_parse(const char *buf, size_t len, struct sbx_remembered **v,
			 size_t *n, char **err)
{
	struct parse ps = { .err = err };
	int rc;

	if (err)
		*err = NULL;
	if (!yaml_parser_initialize(&ps.p)) {
		sbx_queue_set_err(err, "out of memory");
		return -ENOMEM;
	}
	yaml_parser_set_input_string(&ps.p, (const unsigned char *)buf, len);
	rc = parse_doc(&ps, v, n);
	if (ps.have_ev)
		yaml_event_delete(&ps.ev);
	yaml_parser_delete(&ps.p);
	if (rc == -ENOMEM && err && !*err)
		sbx_queue_set_err(err, "out of memory");
	return rc;
}

int sbx_remembered_load(struct sbx_queue *q, struct sbx_remembered **v, size_t *n,
			char **err)
{
	char *buf = NULL, *inner = NULL;
	size_t len;
	int rc;

	if (err)
		*err = NULL;
	*v = NULL;
	*n = 0;
	rc = sbx_read_file_at(sbx_queue_sandbox_fd(q), REMEMBERED, REMEMBERED_MAX, &buf,
			      &len, NULL);
	if (rc == -ENOENT)
		return 0;
	if (rc) {
		sbx_queue_set_err(err, "%s/.sandbox/" REMEMBERED ": %s", sbx_queue_project(q),
			rc == -ELOOP || rc == -ENOTSUP ? "not a regular file" : strerror(-rc));
		return rc;
	}
	rc = sbx_remembered_parse(buf, len, v, n, &inner);
	free(buf);
	if (rc) {
		/* errors name the file as it is on disk */
		sbx_queue_set_err(err, "%s/.sandbox/%s", sbx_queue_project(q), inner ? inner : "?");
		free(inner);
	}
	return rc;
}

/* ---- writing ------------------------------------------------------------- */

struct outbuf {
	unsigned char *p;
	size_t len, cap;
};

static int out_write(void *data, unsigned char *buf, size_t size)
{
	struct outbuf *o = data;

	if (!SBX_GROW(o->p, o->cap, o->len + size, 256))
		return 0;
	memcpy(o->p + o->len, buf, size);
	o->len += size;
	return 1;
}

static int emit_scalar(yaml_emitter_t *e, const char *s, bool plain_number)
{
	yaml_event_t ev;

	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s),
					  1, 1, plain_number ? YAML_PLAIN_SCALAR_STYLE
							     : YAML_ANY_SCALAR_STYLE))
		return -ENOMEM;
	return yaml_emitter_emit(e, &ev) ? 0 : -EIO;
}

static int emit_kv(yaml_emitter_t *e, const char *k, const char *v)
{
	int rc;

	if (!v)
		return 0;
	if ((rc = emit_scalar(e, k, false)))
		return rc;
	return emit_scalar(e, v, false);
}

static int emit_all(yaml_emitter_t *e, const struct sbx_remembered *v, size_t n)
{
	yaml_event_t ev;
	int rc;

#define EMIT(init) do { if (!(init) || !yaml_emitter_emit(e, &ev)) return -EIO; } while (0)
	EMIT(yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
	EMIT(yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
	EMIT(yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE));
	if ((rc = emit_scalar(e, "remembered", false)))
		return rc;
	EMIT(yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
						  n ? YAML_BLOCK_SEQUENCE_STYLE
						    : YAML_FLOW_SEQUENCE_STYLE));
	for (size_t i = 0; i < n; i++) {
		const struct sbx_remembered *r = &v[i];
		char port[16];

		EMIT(yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							 YAML_BLOCK_MAPPING_STYLE));
		if ((rc = emit_kv(e, "kind", r->kind)) || (rc = emit_kv(e, "path", r->path)) ||
		    (rc = emit_kv(e, "access", r->access)) || (rc = emit_kv(e, "addr", r->addr)) ||
		    (rc = emit_kv(e, "host", r->host)))
			return rc;
		if (r->kind && (!strcmp(r->kind, "net") || !strcmp(r->kind, "host"))) {
			snprintf(port, sizeof(port), "%d", r->port);
			if ((rc = emit_scalar(e, "port", false)) || (rc = emit_scalar(e, port, true)))
				return rc;
		}
		if (r->has_ident) {
			char num[32];

			snprintf(num, sizeof(num), "%u", r->dev);
			if ((rc = emit_scalar(e, "dev", false)) || (rc = emit_scalar(e, num, true)))
				return rc;
			snprintf(num, sizeof(num), "%llu", (unsigned long long)r->ino);
			if ((rc = emit_scalar(e, "ino", false)) || (rc = emit_scalar(e, num, true)))
				return rc;
			if ((rc = emit_kv(e, "type", r->type)) || (rc = emit_kv(e, "btime", r->btime)))
				return rc;
			if (r->new_name && ((rc = emit_scalar(e, "new_name", false)) ||
					    (rc = emit_scalar(e, "true", true))))
				return rc;
		}
		if ((rc = emit_kv(e, "request", r->request)) || (rc = emit_kv(e, "by", r->by)) ||
		    (rc = emit_kv(e, "at", r->at)))
			return rc;
		EMIT(yaml_mapping_end_event_initialize(&ev));
	}
	EMIT(yaml_sequence_end_event_initialize(&ev));
	EMIT(yaml_mapping_end_event_initialize(&ev));
	EMIT(yaml_document_end_event_initialize(&ev, 1));
	EMIT(yaml_stream_end_event_initialize(&ev));
#undef EMIT
	return 0;
}

int sbx_remembered_format(const struct sbx_remembered *v, size_t n, char **text, size_t *len)
{
	static const char header[] =
		"# \"approve always\" answers, applied to every later session of this project.\n"
		"# Written by bpfsbx; remove an entry to take the approval back.\n";
	struct outbuf o = { 0 };
	yaml_emitter_t e;
	int rc;

	if (!yaml_emitter_initialize(&e))
		return -ENOMEM;
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_width(&e, -1);
	yaml_emitter_set_output(&e, out_write, &o);
	if (!out_write(&o, (unsigned char *)header, sizeof(header) - 1)) {
		yaml_emitter_delete(&e);
		return -ENOMEM;
	}
	rc = emit_all(&e, v, n);
	if (!rc && !yaml_emitter_flush(&e))
		rc = -EIO;
	yaml_emitter_delete(&e);
	if (rc || !out_write(&o, (unsigned char *)"", 1)) {
		free(o.p);
		return rc ? rc : -ENOMEM;
	}
	*text = (char *)o.p;
	*len = o.len - 1;
	return 0;
}

static bool same_object(const struct sbx_remembered *a, const struct sbx_remembered *b)
{
#define EQ(f) ((!a->f && !b->f) || (a->f && b->f && !strcmp(a->f, b->f)))
	return EQ(kind) && EQ(path) && EQ(access) && EQ(addr) && EQ(host) && a->port == b->port;
#undef EQ
}

int sbx_remembered_add(struct sbx_queue *q, const struct sbx_remembered *r, char **err)
{
	int sfd = sbx_queue_sandbox_fd(q), rc;
	struct sbx_remembered *v = NULL, *nv;
	size_t n = 0, len;
	char *text = NULL, *check_err = NULL;
	uid_t uid;
	gid_t gid;

	if (err)
		*err = NULL;
	if (!r || !r->kind) {
		sbx_queue_set_err(err, "remembered entry without a kind");
		return -EINVAL;
	}
	sbx_queue_owner(q, &uid, &gid);
	/* one writer at a time: load, add, replace */
	if (flock(sfd, LOCK_EX) < 0) {
		rc = -errno;
		sbx_queue_set_err(err, "%s/.sandbox: lock: %s", sbx_queue_project(q), strerror(errno));
		return rc;
	}
	rc = sbx_remembered_load(q, &v, &n, err);
	if (rc) {
		/* never overwrite a file we could not read: it is the
		 * person's, and its entries would be lost */
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct sbx_remembered *o = &v[i];

		if (!same_object(o, r))
			continue;
		if (o->has_ident == r->has_ident && o->dev == r->dev && o->ino == r->ino &&
		    o->new_name == r->new_name)
			goto out;	/* already remembered */
		/* approved again for what the path leads to now: the entry
		 * names the new object, the old one is no longer granted */
		o->has_ident = r->has_ident;
		o->new_name = r->new_name;
		o->dev = r->dev;
		o->ino = r->ino;
		free(o->type);
		free(o->btime);
		o->btime = r->btime ? strdup(r->btime) : NULL;
		free(o->request);
		free(o->by);
		free(o->at);
		o->type = r->type ? strdup(r->type) : NULL;
		o->request = r->request ? strdup(r->request) : NULL;
		o->by = r->by ? strdup(r->by) : NULL;
		o->at = r->at ? strdup(r->at) : NULL;
		goto write;
	}
	nv = realloc(v, (n + 1) * sizeof(*v));
	if (!nv) {
		rc = -ENOMEM;
		goto out;
	}
	v = nv;
	memset(&v[n], 0, sizeof(v[n]));
	{
		struct sbx_remembered *e = &v[n++];
		bool oom = false;

#define DUP(f) do { if (r->f && !(e->f = strdup(r->f))) oom = true; } while (0)
		DUP(kind); DUP(path); DUP(access); DUP(addr); DUP(host); DUP(request); DUP(by);
		DUP(at); DUP(type); DUP(btime);
#undef DUP
		e->port = r->port;
		e->has_ident = r->has_ident;
		e->new_name = r->new_name;
		e->dev = r->dev;
		e->ino = r->ino;
		if (oom) {
			rc = -ENOMEM;
			goto out;
		}
	}
write:
	rc = sbx_remembered_format(v, n, &text, &len);
	if (rc) {
		sbx_queue_set_err(err, "remembered.yaml: cannot render: %s", strerror(-rc));
		goto out;
	}
	/* what we write must read back: validate before replacing */
	{
		struct sbx_remembered *chk = NULL;
		size_t cn = 0;

		rc = sbx_remembered_parse(text, len, &chk, &cn, &check_err);
		sbx_remembered_free(chk, cn);
		if (rc) {
			sbx_queue_set_err(err, "refusing to write an entry that would not read back: %s",
				check_err ? check_err : "?");
			goto out;
		}
	}
	rc = sbx_write_atomic(sfd, REMEMBERED, text, len, SBX_W_REPLACE, uid, gid);
	if (rc)
		sbx_queue_set_err(err, "%s/.sandbox/" REMEMBERED ": %s", sbx_queue_project(q), strerror(-rc));
out:
	flock(sfd, LOCK_UN);
	free(check_err);
	free(text);
	sbx_remembered_free(v, n);
	return rc;
}
