// SPDX-License-Identifier: GPL-2.0
/*
 * queue.c - requests, claims, decisions and their recovery in
 * <project>/.sandbox/escalations/ (layout in queue.h, format for people
 * writing their own approvers in docs/QUEUE.md).
 *
 * Every state change is one rename, so that each file a reader can see
 * under its final name is complete, and a crash at any point leaves a
 * state that the next reader finishes (sbx_queue_recover) or ignores:
 *
 *   submit  issued/ID.json, then pending/ID.json        (NOREPLACE)
 *   claim   pending/ID.json -> claimed/ID.json          (NOREPLACE: one wins)
 *   decide  done/ID.json (NOREPLACE: one decision), then unlink the claim
 *   apply   applied/ID (the daemon)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include "lib/sha256.h"
#include "lib/text.h"
#include "queue/queue.h"
#include "lib/json.h"
#include "lib/alloc.h"

/* the one place the sub-folders are named */
static const char *const sub_names[SBX_QDIR_N] = {
	[SBX_QDIR_PENDING] = "pending", [SBX_QDIR_CLAIMED] = "claimed", [SBX_QDIR_DONE] = "done",
	[SBX_QDIR_APPLIED] = "applied", [SBX_QDIR_OUT] = "out",
	[SBX_QDIR_QUARANTINE] = "quarantine", [SBX_QDIR_ISSUED] = "issued",
};

struct sbx_queue {
	char *project;
	int projfd, sbxfd, escfd;
	int fd[SBX_QDIR_N];
	uid_t uid;
	gid_t gid;
};


/* append "; text" to a report of several problems */
static void add_err(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_err(char **err, const char *fmt, ...)
{
	char *msg = NULL, *joined = NULL;
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	msg = sbx_vformat(fmt, ap);
	va_end(ap);
	if (!msg)
		return;
	if (!*err) {
		*err = msg;
		return;
	}
	if (asprintf(&joined, "%s; %s", *err, msg) >= 0) {
		free(*err);
		*err = joined;
	}
	free(msg);
}

/* a caller's sub-folder, checked: -1 if it is none */
static int sub_index(enum sbx_qdir sub)
{
	return (unsigned)sub < SBX_QDIR_N ? (int)sub : -1;
}

const char *sbx_qdir_name(enum sbx_qdir sub)
{
	return (unsigned)sub < SBX_QDIR_N ? sub_names[sub] : NULL;
}

int sbx_qdir_parse(const char *name)
{
	for (int i = 0; i < SBX_QDIR_N; i++)
		if (name && !strcmp(name, sub_names[i]))
			return i;
	return -1;
}

static const char *what_is_wrong(int e)
{
	return e == -ELOOP ? "it is a symlink (refusing to follow it)" : strerror(-e);
}

struct sbx_queue *sbx_queue_open(const char *project_dir, unsigned flags,
				 uid_t owner_uid, gid_t owner_gid, char **err)
{
	bool create = flags & SBX_Q_CREATE;
	struct sbx_queue *q;
	struct stat st;
	int fd;

	if (err)
		*err = NULL;
	q = calloc(1, sizeof(*q));
	if (!q) {
		sbx_queue_set_err(err, "out of memory");
		return NULL;
	}
	q->projfd = q->sbxfd = q->escfd = -1;
	for (int i = 0; i < SBX_QDIR_N; i++)
		q->fd[i] = -1;
	q->uid = owner_uid;
	q->gid = owner_gid;
	q->project = strdup(project_dir ? project_dir : ".");
	if (!q->project)
		goto oom;

	q->projfd = open(q->project, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (q->projfd < 0) {
		sbx_queue_set_err(err, "%s: %s", q->project, strerror(errno));
		goto fail;
	}
	fd = sbx_opendir_beneath(q->projfd, ".sandbox", create, owner_uid, owner_gid);
	if (fd < 0) {
		sbx_queue_set_err(err, "%s/.sandbox: %s%s", q->project, what_is_wrong(fd),
			fd == -ENOENT ? " (no queue here; run bpfsbx init)" : "");
		goto fail;
	}
	q->sbxfd = fd;
	/* root without an owner (sudo bpfsbx approve): what it writes still
	 * belongs to the project's owner, who must be able to read it */
	if (owner_uid == (uid_t)-1 && geteuid() == 0 && fstat(fd, &st) == 0) {
		q->uid = st.st_uid;
		q->gid = st.st_gid;
	}
	/* the daemon (root) must not write into someone else's tree on
	 * behalf of a session: .sandbox belongs to the session's user */
	if (owner_uid != (uid_t)-1 && fstat(fd, &st) == 0 &&
	    st.st_uid != owner_uid && st.st_uid != 0) {
		sbx_queue_set_err(err, "%s/.sandbox is owned by uid %u, not by uid %u",
			q->project, (unsigned)st.st_uid, (unsigned)owner_uid);
		goto fail;
	}
	fd = sbx_opendir_beneath(q->sbxfd, "escalations", create, q->uid, q->gid);
	if (fd < 0) {
		sbx_queue_set_err(err, "%s/.sandbox/escalations: %s", q->project, what_is_wrong(fd));
		goto fail;
	}
	q->escfd = fd;
	for (int i = 0; i < SBX_QDIR_N; i++) {
		/* sub directories are created whenever the queue exists, so
		 * that a queue made by an older bpfsbx gains new ones */
		fd = sbx_opendir_beneath(q->escfd, sub_names[i], true, q->uid, q->gid);
		if (fd < 0) {
			sbx_queue_set_err(err, "%s/.sandbox/escalations/%s: %s", q->project,
				sub_names[i], what_is_wrong(fd));
			goto fail;
		}
		q->fd[i] = fd;
	}
	return q;
oom:
	sbx_queue_set_err(err, "out of memory");
fail:
	sbx_queue_close(q);
	return NULL;
}

void sbx_queue_close(struct sbx_queue *q)
{
	if (!q)
		return;
	for (int i = 0; i < SBX_QDIR_N; i++)
		if (q->fd[i] >= 0)
			close(q->fd[i]);
	if (q->escfd >= 0)
		close(q->escfd);
	if (q->sbxfd >= 0)
		close(q->sbxfd);
	if (q->projfd >= 0)
		close(q->projfd);
	free(q->project);
	free(q);
}

const char *sbx_queue_project(const struct sbx_queue *q)
{
	return q->project;
}

int sbx_queue_dirfd(struct sbx_queue *q, enum sbx_qdir sub)
{
	int i = sub_index(sub);

	return i < 0 ? -EINVAL : q->fd[i];
}

int sbx_queue_count(struct sbx_queue *q, enum sbx_qdir sub)
{
	int s = sub_index(sub), fd;
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (s < 0)
		return -EINVAL;
	fd = dup(q->fd[s]);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		n = -errno;
		if (fd >= 0)
			close(fd);
		return n;
	}
	rewinddir(d);	/* the dup shares its offset with q's fd */
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (de->d_name[0] != '.' && l > 5 && !strcmp(de->d_name + l - 5, ".json"))
			n++;
	}
	closedir(d);
	return n;
}

int sbx_queue_sandbox_fd(struct sbx_queue *q)
{
	return q->sbxfd;
}

void sbx_queue_owner(const struct sbx_queue *q, uid_t *uid, gid_t *gid)
{
	if (uid)
		*uid = q->uid;
	if (gid)
		*gid = q->gid;
}

/* ---- reading --------------------------------------------------------- */

static void id_file(char *buf, size_t n, const char *id)
{
	snprintf(buf, n, "%s.json", id);
}

/* "ID.json" with a valid id -> id in buf; else false */
static bool file_id(const char *name, char *buf, size_t n)
{
	size_t len = strlen(name);

	if (len < 6 || len - 5 >= n || strcmp(name + len - 5, ".json"))
		return false;
	memcpy(buf, name, len - 5);
	buf[len - 5] = 0;
	return sbx_id_valid(buf);
}

enum read_status { RD_OK, RD_GONE, RD_BAD, RD_ERR };

/*
 * Read and validate <sub>/<name>. RD_BAD fills *why (the file should be
 * quarantined); RD_GONE: it vanished (claimed or decided meanwhile).
 */
static enum read_status read_record(struct sbx_queue *q, int sub, const char *name,
				    const char *id, json_t **out, char **raw,
				    struct stat *st, char **why)
{
	json_error_t jerr;
	char *buf = NULL;
	size_t len;
	json_t *j;
	bool ok;
	int rc;

	*why = NULL;
	rc = sbx_read_file_at(q->fd[sub], name, SBX_QUEUE_FILE_MAX, &buf, &len, st);
	if (rc == -ENOENT)
		return RD_GONE;
	if (rc == -ENOTSUP || rc == -ELOOP) {
		*why = strdup("not a regular file");
		return RD_BAD;
	}
	if (rc == -EFBIG) {
		if (asprintf(why, "larger than %u bytes", SBX_QUEUE_FILE_MAX) < 0)
			*why = NULL;
		return RD_BAD;
	}
	if (rc) {
		if (asprintf(why, "cannot read: %s", strerror(-rc)) < 0)
			*why = NULL;
		return RD_ERR;
	}
	if (st->st_nlink > 1) {
		/* queue files are renamed into place and have one link; a
		 * second one could be a planted link to a file its planter
		 * cannot read, whose bytes must not end up in a .why note */
		if (asprintf(why, "has %lu hard links (a queue file has one)",
			     (unsigned long)st->st_nlink) < 0)
			*why = NULL;
		free(buf);
		return RD_BAD;
	}
	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j) {
		if (asprintf(why, "not valid JSON: line %d, column %d: %s",
			     jerr.line, jerr.column, jerr.text) < 0)
			*why = NULL;
		free(buf);
		return RD_BAD;
	}
	if (sub == SBX_QDIR_DONE)
		ok = sbx_queue_validate_done(j, id, why);
	else
		ok = sbx_queue_validate_request(j, id, why);
	if (!ok) {
		json_decref(j);
		free(buf);
		return RD_BAD;
	}
	*out = j;
	if (raw)
		*raw = buf;
	else
		free(buf);
	return RD_OK;
}

int sbx_queue_read(struct sbx_queue *q, enum sbx_qdir sub, const char *id,
		   json_t **obj, char **err)
{
	char name[SBX_ID_MAX + 8], *why = NULL;
	int s = sub_index(sub);
	enum read_status r;
	struct stat st;

	if (err)
		*err = NULL;
	if (s != SBX_QDIR_PENDING && s != SBX_QDIR_CLAIMED && s != SBX_QDIR_DONE && s != SBX_QDIR_ISSUED) {
		sbx_queue_set_err(err, "folder %d: not a directory of records", (int)sub);
		return -EINVAL;
	}
	if (!sbx_id_valid(id)) {
		sbx_queue_set_err(err, "%s: not a request id", id ? id : "(null)");
		return -EINVAL;
	}
	id_file(name, sizeof(name), id);
	r = read_record(q, s, name, id, obj, NULL, &st, &why);
	switch (r) {
	case RD_OK:
		return 0;
	case RD_GONE:
		sbx_queue_set_err(err, "%s/%s: no such request", sub_names[s], name);
		return -ENOENT;
	case RD_BAD:
		sbx_queue_set_err(err, "%s/%s: %s (moved to quarantine/)", sub_names[s], name, why ? why : "malformed");
		sbx_queue_quarantine(q, sub, name, why ? why : "malformed");
		free(why);
		return -EBADMSG;
	default:
		sbx_queue_set_err(err, "%s/%s: %s", sub_names[s], name, why ? why : "cannot read");
		free(why);
		return -EIO;
	}
}

/* ---- quarantine -------------------------------------------------------- */

int sbx_queue_quarantine(struct sbx_queue *q, enum sbx_qdir sub, const char *name,
			 const char *why)
{
	int s = sub_index(sub), qfd = q->fd[SBX_QDIR_QUARANTINE], rc = -EEXIST;
	char target[512], whyname[520], *note = NULL, *at;

	if (s < 0 || s == SBX_QDIR_QUARANTINE || !name || !name[0] || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, "..") || strlen(name) > 400)
		return -EINVAL;
	/* the name is kept (a leading dot becomes "_." so that nothing in
	 * quarantine/ is hidden); a clash gets a counter, so nothing is
	 * ever replaced */
	for (unsigned n = 0; n < 10000 && rc == -EEXIST; n++) {
		const char *pre = name[0] == '.' ? "_" : "";

		if (n)
			snprintf(target, sizeof(target), "%s%s.%u", pre, name, n);
		else
			snprintf(target, sizeof(target), "%s%s", pre, name);
		snprintf(whyname, sizeof(whyname), "%s.why", target);
		if (faccessat(qfd, whyname, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		rc = sbx_rename_noreplace(q->fd[s], name, qfd, target);
	}
	if (rc)
		return rc;
	fsync(q->fd[s]);
	at = sbx_time_rfc3339(time(NULL));
	if (asprintf(&note, "file: %s/%s\nquarantined: %s\nby: %s (pid %d)\nwhy: %s\n",
		     sub_names[s], name, at ? at : "?", sbx_queue_user(), (int)getpid(),
		     why ? why : "unknown") < 0)
		note = NULL;
	free(at);
	if (note) {
		rc = sbx_write_atomic(qfd, whyname, note, strlen(note), SBX_W_NOREPLACE,
				      q->uid, q->gid);
		free(note);
	} else {
		rc = -ENOMEM;
	}
	return rc;
}

/* ---- listing and recovery ------------------------------------------------ */

static int cmp_id(const void *a, const void *b)
{
	return strcmp(sbx_json_str(*(json_t *const *)a, "id"),
		      sbx_json_str(*(json_t *const *)b, "id"));
}

static bool exists_at(int dirfd, const char *name)
{
	return faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/*
 * Scan one record directory: quarantine what does not belong, finish
 * half-done decisions, collect the valid records (when out != NULL).
 */
static int scan(struct sbx_queue *q, int s, json_t *out, char **err)
{
	struct dirent *de;
	json_t **recs = NULL;
	size_t n = 0, cap = 0;
	DIR *d;
	int fd;

	fd = dup(q->fd[s]);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		const char *name = de->d_name;
		char id[SBX_ID_MAX + 1], *why = NULL;
		enum read_status r;
		struct stat st;
		json_t *j = NULL;

		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (name[0] == '.') {
			/* a writer's temporary file: leave it alone while the
			 * writer may still be at work */
			if (fstatat(q->fd[s], name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    time(NULL) - st.st_mtime > SBX_TMP_GRACE_S) {
				if (sbx_queue_quarantine(q, s, name,
					"abandoned temporary file (its writer died before renaming it)") == 0)
					add_err(err, "%s/%s: abandoned temporary file, moved to quarantine/",
						sub_names[s], name);
			}
			continue;
		}
		if (!file_id(name, id, sizeof(id))) {
			if (sbx_queue_quarantine(q, s, name,
				"foreign file: queue files are named ID.json with a bpfsbx request id") == 0)
				add_err(err, "%s/%s: foreign file, moved to quarantine/",
					sub_names[s], name);
			continue;
		}
		if ((s == SBX_QDIR_PENDING || s == SBX_QDIR_CLAIMED) && exists_at(q->fd[SBX_QDIR_DONE], name)) {
			/* decided, but the writer died before removing the
			 * request or claim: finish its work. The decision in
			 * done/ is final; this copy is the request it answered. */
			if (unlinkat(q->fd[s], name, 0) == 0)
				fsync(q->fd[s]);
			continue;
		}
		r = read_record(q, s, name, id, &j, NULL, &st, &why);
		if (r == RD_BAD) {
			int qr = sbx_queue_quarantine(q, s, name, why);

			/* -ENOENT: another reader moved it first */
			if (qr == 0)
				add_err(err, "%s/%s: %s; moved to quarantine/",
					sub_names[s], name, why ? why : "malformed");
			else if (qr != -ENOENT)
				add_err(err, "%s/%s: %s; could not move it to quarantine/: %s",
					sub_names[s], name, why ? why : "malformed",
					strerror(-qr));
		} else if (r == RD_ERR) {
			add_err(err, "%s/%s: %s", sub_names[s], name, why ? why : "cannot read");
		} else if (r == RD_OK && out) {
			if (!SBX_GROW(recs, cap, n + 1, 16)) {
				json_decref(j);
				free(why);
				break;
			}
			recs[n++] = j;
			j = NULL;
		}
		json_decref(j);
		free(why);
	}
	closedir(d);
	if (out && n) {
		qsort(recs, n, sizeof(*recs), cmp_id);
		for (size_t i = 0; i < n; i++)
			json_array_append_new(out, recs[i]);
	}
	free(recs);
	return 0;
}

int sbx_queue_list(struct sbx_queue *q, enum sbx_qdir sub, json_t **array, char **err)
{
	int s = sub_index(sub), rc;
	json_t *a;

	if (err)
		*err = NULL;
	*array = NULL;
	if (s != SBX_QDIR_PENDING && s != SBX_QDIR_CLAIMED && s != SBX_QDIR_DONE) {
		sbx_queue_set_err(err, "folder %d: only pending, claimed and done can be listed",
			(int)sub);
		return -EINVAL;
	}
	a = json_array();
	if (!a)
		return -ENOMEM;
	rc = scan(q, s, a, err);
	if (rc) {
		json_decref(a);
		return rc;
	}
	*array = a;
	return 0;
}

/* the characters of an id (sbx_id_new) */
static bool id_prefix_ok(const char *p)
{
	size_t n = strlen(p);

	if (n == 0 || n > SBX_ID_MAX)
		return false;
	return strspn(p, "0123456789abcdefTZ.-") == n;
}

#define FIND_ID_NAMES 5	/* candidates named when a prefix is ambiguous */

int sbx_queue_find_id(struct sbx_queue *const *qs, size_t nq, const char *prefix,
		      char **id, size_t *which, char **err)
{
	static const int subs[] = { SBX_QDIR_PENDING, SBX_QDIR_CLAIMED, SBX_QDIR_DONE };
	char found[SBX_ID_MAX + 8] = "", cand[SBX_ID_MAX + 8];
	struct sbx_strbuf names = { 0 };
	size_t n = 0, plen;

	if (err)
		*err = NULL;
	*id = NULL;
	*which = 0;
	if (!prefix || !id_prefix_ok(prefix)) {
		sbx_queue_set_err(err, "'%s' is not a request id or the start of one "
			"(they look like 20261130T101503.123456Z-4242-1a2b3c4d)", prefix ? prefix : "");
		return -EINVAL;
	}
	plen = strlen(prefix);
	for (size_t k = 0; k < nq; k++) {
		for (size_t s = 0; s < sizeof(subs) / sizeof(subs[0]); s++) {
			int fd = qs[k]->fd[subs[s]] >= 0 ? dup(qs[k]->fd[subs[s]]) : -1;
			DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
			struct dirent *de;

			if (!d) {
				if (fd >= 0)
					close(fd);
				continue;
			}
			rewinddir(d);
			while ((de = readdir(d))) {
				if (strncmp(de->d_name, prefix, plen) ||
				    !file_id(de->d_name, cand, sizeof(cand)))
					continue;
				/* the same id in two folders (a claim half moved) is one */
				if (!strcmp(cand, found))
					continue;
				if (!strcmp(cand, prefix)) {	/* a whole id: no doubt */
					closedir(d);
					free(names.p);
					*id = strdup(cand);
					*which = k;
					return *id ? 0 : -ENOMEM;
				}
				if (n++ == 0) {
					snprintf(found, sizeof(found), "%s", cand);
					*which = k;
				}
				if (n <= FIND_ID_NAMES)
					sbx_sb_join(&names, ", ", cand);
			}
			closedir(d);
		}
	}
	if (n == 1) {
		free(names.p);
		*id = strdup(found);
		return *id ? 0 : -ENOMEM;
	}
	if (n == 0) {
		free(names.p);
		if (sbx_id_valid(prefix)) {	/* whole but unknown: the callers say so */
			*id = strdup(prefix);
			return *id ? 0 : -ENOMEM;
		}
		sbx_queue_set_err(err, "no request id starts with '%s'", prefix);
		return -ENOENT;
	}
	if (n > FIND_ID_NAMES)
		sbx_queue_set_err(err, "'%s' is ambiguous: %zu requests start so: %s and %zu more; "
			"type more of the id", prefix, n, names.p ? names.p : "", n - FIND_ID_NAMES);
	else
		sbx_queue_set_err(err, "'%s' is ambiguous: %zu requests start so: %s; type more "
			"of the id", prefix, n, names.p ? names.p : "");
	free(names.p);
	return -EEXIST;
}

/* out/ and applied/ hold no records; only abandoned temporary files */
static void sweep_tmp(struct sbx_queue *q, int s, char **err)
{
	struct dirent *de;
	int fd = dup(q->fd[s]);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] != '.' || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(q->fd[s], de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    time(NULL) - st.st_mtime > SBX_TMP_GRACE_S &&
		    sbx_queue_quarantine(q, s, de->d_name,
			"abandoned temporary file (its writer died before renaming it)") == 0)
			add_err(err, "%s/%s: abandoned temporary file, moved to quarantine/",
				sub_names[s], de->d_name);
	}
	closedir(d);
}

int sbx_queue_recover(struct sbx_queue *q, char **err)
{
	/* done first: a request or claim is only removed for a valid decision */
	static const int order[] = { SBX_QDIR_DONE, SBX_QDIR_CLAIMED, SBX_QDIR_PENDING, SBX_QDIR_ISSUED };
	int rc = 0;

	if (err)
		*err = NULL;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		int r = scan(q, order[i], NULL, err);

		if (r && !rc)
			rc = r;
	}
	sweep_tmp(q, SBX_QDIR_OUT, err);
	sweep_tmp(q, SBX_QDIR_APPLIED, err);
	return rc;
}

/* ---- submit, bump, claim ---------------------------------------------- */

static int write_record(struct sbx_queue *q, int s, const char *id, const json_t *j,
			enum sbx_write_mode mode)
{
	char name[SBX_ID_MAX + 8], *text, *nl;
	size_t len;
	int rc;

	id_file(name, sizeof(name), id);
	text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	/* a final newline, for people who cat these files */
	nl = realloc(text, len + 2);
	if (!nl) {
		free(text);
		return -ENOMEM;
	}
	text = nl;
	memcpy(text + len, "\n", 2);
	if (s == SBX_QDIR_DONE && geteuid() == 0)
		/* a decision stays its writer's: the daemon takes the owner for
		 * the approver (projects.approvers, the audit chain), and root's
		 * (sudo bpfsbx approve) must not pass for the project owner's;
		 * the owner's group may read it */
		rc = sbx_write_atomic_perm(q->fd[s], name, text, len + 1, mode, (uid_t)-1, q->gid,
					   0640);
	else
		rc = sbx_write_atomic(q->fd[s], name, text, len + 1, mode, q->uid, q->gid);
	free(text);
	return rc;
}

int sbx_queue_submit(struct sbx_queue *q, json_t *req, char **id_out, char **err)
{
	time_t now = time(NULL);
	char *id, *ts, *why = NULL;
	json_t *dl;
	int rc;

	if (err)
		*err = NULL;
	if (id_out)
		*id_out = NULL;
	if (!json_is_object(req)) {
		sbx_queue_set_err(err, "a request must be a JSON object");
		return -EINVAL;
	}
	id = sbx_id_new();
	ts = sbx_time_rfc3339(now);
	if (!id || !ts) {
		free(id);
		free(ts);
		return -ENOMEM;
	}
	json_object_set_new(req, "version", json_integer(SBX_QUEUE_VERSION));
	json_object_set_new(req, "id", json_string(id));
	json_object_set_new(req, "created", json_string(ts));
	free(ts);
	dl = json_object_get(req, "deadline");
	if (!dl || json_is_null(dl)) {
		ts = sbx_time_rfc3339(now + SBX_DEFAULT_DEADLINE_S);
		json_object_set_new(req, "deadline", json_string(ts));
		free(ts);
	}
	if (!json_object_get(req, "count"))
		json_object_set_new(req, "count", json_integer(1));
	if (!sbx_queue_validate_request(req, id, &why)) {
		sbx_queue_set_err(err, "invalid request: %s", why ? why : "?");
		free(why);
		free(id);
		return -EINVAL;
	}
	/* issued/ first: a decision is only ever accepted for a request
	 * that was issued, so a crash between the two writes leaves an
	 * unused issued copy, never an unknown pending one */
	rc = write_record(q, SBX_QDIR_ISSUED, id, req, SBX_W_NOREPLACE);
	if (!rc)
		rc = write_record(q, SBX_QDIR_PENDING, id, req, SBX_W_NOREPLACE);
	if (rc) {
		sbx_queue_set_err(err, "%s: writing request %s: %s", q->project, id, strerror(-rc));
		free(id);
		return rc;
	}
	if (id_out)
		*id_out = id;
	else
		free(id);
	return 0;
}

int sbx_queue_bump(struct sbx_queue *q, const char *id, unsigned by)
{
	char name[SBX_ID_MAX + 8], *why = NULL;
	json_t *j = NULL, *c;
	enum read_status r;
	struct stat st;
	json_int_t n;
	int rc;

	if (!sbx_id_valid(id))
		return -EINVAL;
	id_file(name, sizeof(name), id);
	r = read_record(q, SBX_QDIR_PENDING, name, id, &j, NULL, &st, &why);
	free(why);
	if (r == RD_GONE)
		return -ENOENT;
	if (r != RD_OK)
		return -EBADMSG;
	c = json_object_get(j, "count");
	n = json_integer_value(c);
	n = n > INT64_MAX - (json_int_t)by ? INT64_MAX : n + (json_int_t)by;
	json_object_set_new(j, "count", json_integer(n));
	/* replace only if still pending: a claimed request stays claimed */
	rc = write_record(q, SBX_QDIR_PENDING, id, j, SBX_W_EXISTING);
	json_decref(j);
	return rc;
}

int sbx_queue_claim(struct sbx_queue *q, const char *id, json_t **req, char **err)
{
	char name[SBX_ID_MAX + 8], *why = NULL;
	enum read_status r;
	struct stat st;
	json_t *j = NULL;
	int rc;

	if (err)
		*err = NULL;
	if (req)
		*req = NULL;
	if (!sbx_id_valid(id)) {
		sbx_queue_set_err(err, "%s: not a request id", id ? id : "(null)");
		return -EINVAL;
	}
	id_file(name, sizeof(name), id);
	rc = sbx_rename_noreplace(q->fd[SBX_QDIR_PENDING], name, q->fd[SBX_QDIR_CLAIMED], name);
	if (rc == -ENOENT) {
		sbx_queue_set_err(err, "%s: not pending (claimed by another approver, decided, or unknown)", id);
		return -ENOENT;
	}
	if (rc == -EEXIST) {
		sbx_queue_set_err(err, "%s: already claimed", id);
		return -ENOENT;
	}
	if (rc) {
		sbx_queue_set_err(err, "%s: claim failed: %s", id, strerror(-rc));
		return rc;
	}
	fsync(q->fd[SBX_QDIR_CLAIMED]);
	/* the claim's time starts its lease (see SBX_CLAIM_LEASE_S) */
	utimensat(q->fd[SBX_QDIR_CLAIMED], name, NULL, AT_SYMLINK_NOFOLLOW);
	r = read_record(q, SBX_QDIR_CLAIMED, name, id, &j, NULL, &st, &why);
	if (r != RD_OK) {
		if (r == RD_BAD)
			sbx_queue_quarantine(q, SBX_QDIR_CLAIMED, name, why);
		sbx_queue_set_err(err, "%s: %s", id, why ? why : "vanished after the claim");
		free(why);
		return r == RD_GONE ? -ENOENT : -EBADMSG;
	}
	if (req)
		*req = j;
	else
		json_decref(j);
	return 0;
}

/* ---- decisions -------------------------------------------------------- */

int sbx_queue_decide(struct sbx_queue *q, const char *id,
		     const struct sbx_decision_rec *d, char **err)
{
	char name[SBX_ID_MAX + 8], *why = NULL, *at;
	enum read_status r;
	struct stat st;
	json_t *j = NULL, *dec;
	int src, rc;

	if (err)
		*err = NULL;
	if (!sbx_id_valid(id)) {
		sbx_queue_set_err(err, "%s: not a request id", id ? id : "(null)");
		return -EINVAL;
	}
	id_file(name, sizeof(name), id);
	src = SBX_QDIR_CLAIMED;
	r = read_record(q, src, name, id, &j, NULL, &st, &why);
	if (r == RD_GONE) {
		/* deciding an unclaimed request (expiry, or a tool that does
		 * not claim): done/ still admits only one decision */
		src = SBX_QDIR_PENDING;
		free(why);
		why = NULL;
		r = read_record(q, src, name, id, &j, NULL, &st, &why);
	}
	if (r == RD_GONE) {
		free(why);
		if (exists_at(q->fd[SBX_QDIR_DONE], name)) {
			sbx_queue_set_err(err, "%s: already decided", id);
			return -EEXIST;
		}
		sbx_queue_set_err(err, "%s: no such request", id);
		return -ENOENT;
	}
	if (r != RD_OK) {
		if (r == RD_BAD)
			sbx_queue_quarantine(q, src, name, why);
		sbx_queue_set_err(err, "%s: %s", id, why ? why : "cannot read the request");
		free(why);
		return -EBADMSG;
	}

	/* An approval after the deadline is refused, daemon or not: with no
	 * daemon to expire requests, the deadline is checked here, and the
	 * request is denied as expired instead. */
	struct sbx_decision_rec late;
	bool overdue = false;
	{
		time_t dl;

		if (d->approve && !d->expired &&
		    sbx_time_parse(sbx_json_str(j, "deadline"), &dl) == 0 &&
		    time(NULL) > dl) {
			late = (struct sbx_decision_rec){ .approve = false, .scope = SBX_SCOPE_ONCE,
				.by = "bpfsbx", .note = "no decision before the deadline",
				.expired = true };
			d = &late;
			overdue = true;
		}
	}
	at = sbx_time_rfc3339(time(NULL));
	dec = json_pack("{s:s, s:s, s:s, s:s}",
			"verdict", d->approve ? "approve" : "deny",
			"scope", sbx_scope_name(d->scope),
			"by", d->by ? d->by : sbx_queue_user(),
			"at", at ? at : "");
	free(at);
	if (!dec) {
		json_decref(j);
		return -ENOMEM;
	}
	if (d->note)
		json_object_set_new(dec, "note", json_string(d->note));
	if (d->expired)
		json_object_set_new(dec, "expired", json_true());
	json_object_set_new(j, "decision", dec);
	if (d->result)
		json_object_set(j, "result", d->result);
	if (!sbx_queue_validate_done(j, id, &why)) {
		sbx_queue_set_err(err, "%s: invalid decision: %s", id, why ? why : "?");
		free(why);
		json_decref(j);
		return -EINVAL;
	}
	rc = write_record(q, SBX_QDIR_DONE, id, j, SBX_W_NOREPLACE);
	json_decref(j);
	if (rc == -EEXIST) {
		sbx_queue_set_err(err, "%s: already decided", id);
		return rc;
	}
	if (rc) {
		sbx_queue_set_err(err, "%s: writing the decision: %s", id, strerror(-rc));
		return rc;
	}
	if (unlinkat(q->fd[src], name, 0) == 0) {
		sbx_crash_point();	/* 6: request removed */
		fsync(q->fd[src]);
		sbx_crash_point();	/* 7: removal on disk */
	}
	/* if someone claimed it while we decided it unclaimed, the claim
	 * is now stale; recovery would remove it too */
	if (src == SBX_QDIR_PENDING)
		unlinkat(q->fd[SBX_QDIR_CLAIMED], name, 0);
	if (overdue) {
		sbx_queue_set_err(err, "%s: its deadline has passed: it is denied (expired), not "
				  "approved; the agent has to ask again", id);
		return -ETIMEDOUT;
	}
	return 0;
}

static bool claim_expired(struct sbx_queue *q, const char *name, time_t now)
{
	struct stat st;

	if (fstatat(q->fd[SBX_QDIR_CLAIMED], name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return now - st.st_mtime >= SBX_CLAIM_LEASE_S;
}

int sbx_queue_expire(struct sbx_queue *q, time_t now, unsigned *n_expired)
{
	static const int subs[] = { SBX_QDIR_PENDING, SBX_QDIR_CLAIMED };
	struct sbx_decision_rec d = {
		.approve = false, .scope = SBX_SCOPE_ONCE, .by = "bpfsbx",
		.note = "no decision before the deadline", .expired = true,
	};
	unsigned n = 0;

	for (size_t k = 0; k < sizeof(subs) / sizeof(subs[0]); k++) {
		json_t *a = NULL, *req;
		char *err = NULL;
		size_t i;

		if (scan(q, subs[k], (a = json_array()), &err)) {
			json_decref(a);
			free(err);
			continue;
		}
		free(err);
		json_array_foreach(a, i, req) {
			const char *id = sbx_json_str(req, "id");
			char name[SBX_ID_MAX + 8];
			time_t dl;

			if (sbx_time_parse(sbx_json_str(req, "deadline"), &dl) ||
			    dl > now)
				continue;
			id_file(name, sizeof(name), id);
			if (subs[k] == SBX_QDIR_PENDING) {
				/* claim it first, so that an approver who is
				 * just claiming it loses cleanly */
				if (sbx_rename_noreplace(q->fd[SBX_QDIR_PENDING], name,
							 q->fd[SBX_QDIR_CLAIMED], name))
					continue;
			} else if (!claim_expired(q, name, now)) {
				continue;
			}
			if (sbx_queue_decide(q, id, &d, NULL) == 0)
				n++;
		}
		json_decref(a);
	}
	if (n_expired)
		*n_expired = n;
	return 0;
}

/* ---- applied markers and the daemon's check ------------------------------- */

static void sha256_hex(const void *buf, size_t len, char out[65])
{
	/* fail closed: an unknown hash never matches a real one */
	if (sbx_sha256_hex(buf, len, out)) {
		memset(out, 'x', 64);
		out[64] = 0;
	}
}

int sbx_queue_mark_applied_ident(struct sbx_queue *q, const char *id,
				 const struct sbx_done_ident *ident)
{
	char *at, *text;
	json_t *j;
	int rc;

	if (!sbx_id_valid(id) || !ident)
		return -EINVAL;
	at = sbx_time_rfc3339(time(NULL));
	j = json_pack("{s:s, s:s, s:s, s:I, s:I}", "id", id, "at", at ? at : "",
		      "sha256", ident->sha256, "dev", (json_int_t)ident->dev,
		      "ino", (json_int_t)ident->ino);
	free(at);
	if (!j)
		return -ENOMEM;
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(j);
	if (!text)
		return -ENOMEM;
	rc = sbx_write_atomic(q->fd[SBX_QDIR_APPLIED], id, text, strlen(text), SBX_W_REPLACE,
			      q->uid, q->gid);
	free(text);
	return rc;
}

int sbx_queue_mark_applied(struct sbx_queue *q, const char *id)
{
	char name[SBX_ID_MAX + 8], *buf = NULL;
	struct sbx_done_ident ident;
	struct stat st;
	size_t len;
	int rc;

	if (!sbx_id_valid(id))
		return -EINVAL;
	id_file(name, sizeof(name), id);
	rc = sbx_read_file_at(q->fd[SBX_QDIR_DONE], name, SBX_QUEUE_FILE_MAX, &buf, &len, &st);
	if (rc)
		return rc;
	ident.dev = st.st_dev;
	ident.ino = st.st_ino;
	sha256_hex(buf, len, ident.sha256);
	free(buf);
	return sbx_queue_mark_applied_ident(q, id, &ident);
}

bool sbx_queue_is_applied(struct sbx_queue *q, const char *id)
{
	return sbx_id_valid(id) && exists_at(q->fd[SBX_QDIR_APPLIED], id);
}

/* the request part of a decision: everything but what deciding adds */
static bool same_request(const json_t *issued, const json_t *done)
{
	json_t *a = json_deep_copy(issued), *b = json_deep_copy(done);
	bool same;

	if (!a || !b) {
		json_decref(a);
		json_decref(b);
		return false;
	}
	/* count is bumped in pending/ after the request was issued */
	json_object_del(a, "count");
	json_object_del(b, "count");
	json_object_del(b, "decision");
	json_object_del(b, "result");
	same = json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return same;
}

int sbx_queue_check_done(struct sbx_queue *q, const char *name, unsigned flags,
			 json_t **done, struct sbx_done_ident *ident, char **why_out)
{
	char id[SBX_ID_MAX + 1], *why = NULL, *raw = NULL, *abuf = NULL;
	struct sbx_done_ident me;
	json_t *j = NULL, *issued = NULL, *applied = NULL;
	enum read_status r;
	struct stat st;
	int verdict;

	if (done)
		*done = NULL;
	if (why_out)
		*why_out = NULL;
	if (!name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	if (!file_id(name, id, sizeof(id))) {
		if (name[0] == '.')
			return -EAGAIN;	/* a writer's temporary file */
		why = strdup("foreign file: queue files are named ID.json with a bpfsbx request id");
		goto bad;
	}
	r = read_record(q, SBX_QDIR_DONE, name, id, &j, &raw, &st, &why);
	if (r == RD_GONE) {
		free(why);
		return -ENOENT;
	}
	if (r == RD_ERR) {
		if (why_out)
			*why_out = why;
		else
			free(why);
		return -EIO;
	}
	if (r == RD_BAD)
		goto bad;
	me.dev = st.st_dev;
	me.ino = st.st_ino;
	me.uid = st.st_uid;
	sha256_hex(raw, strlen(raw), me.sha256);

	if (sbx_queue_is_applied(q, id)) {
		json_error_t jerr;
		size_t alen;

		if (sbx_read_file_at(q->fd[SBX_QDIR_APPLIED], id, 4096, &abuf, &alen, NULL) == 0)
			applied = json_loadb(abuf, alen, 0, &jerr);
		if (applied &&
		    !strcmp(sbx_json_str(applied, "sha256") ?: "", me.sha256) &&
		    (uint64_t)json_integer_value(json_object_get(applied, "ino")) == me.ino &&
		    (uint64_t)json_integer_value(json_object_get(applied, "dev")) == me.dev) {
			verdict = SBX_DONE_APPLIED;
			goto out;
		}
		why = strdup("replay: a decision for this request was applied already, "
			     "and this is a different file");
		goto bad;
	}
	if (sbx_read_file_at(q->fd[SBX_QDIR_ISSUED], name, SBX_QUEUE_FILE_MAX, &abuf, NULL, NULL) == 0) {
		json_error_t jerr;

		issued = json_loads(abuf, JSON_REJECT_DUPLICATES, &jerr);
	}
	if (!issued) {
		why = strdup("unknown request: no request with this id was issued");
		goto bad;
	}
	if (!same_request(issued, j)) {
		why = strdup("the request in this decision differs from the request that "
			     "was issued (kind, object, process or rule changed)");
		goto bad;
	}
	verdict = SBX_DONE_OK;
	goto out;
bad:
	if (flags & SBX_CHECK_QUARANTINE)
		sbx_queue_quarantine(q, SBX_QDIR_DONE, name, why);
	json_decref(j);
	j = NULL;
	verdict = SBX_DONE_BAD;
	if (why_out) {
		*why_out = why;
		why = NULL;
	}
out:
	if (ident && verdict != SBX_DONE_BAD)
		*ident = me;
	if (done)
		*done = j;
	else
		json_decref(j);
	json_decref(issued);
	json_decref(applied);
	free(abuf);
	free(raw);
	free(why);
	return verdict;
}

/* ---- waiting for a decision ------------------------------------------ */

int sbx_queue_wait_done(struct sbx_queue *q, const char *id, int timeout_ms,
			json_t **done, char **err)
{
	char name[SBX_ID_MAX + 8], path[64], *why = NULL;
	int64_t end = sbx_now_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
	int ifd, rc = -ETIMEDOUT;
	enum read_status r;
	struct stat st;

	if (err)
		*err = NULL;
	*done = NULL;
	if (!sbx_id_valid(id)) {
		sbx_queue_set_err(err, "%s: not a request id", id ? id : "(null)");
		return -EINVAL;
	}
	id_file(name, sizeof(name), id);
	ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ifd < 0) {
		rc = -errno;
		sbx_queue_set_err(err, "inotify: %s", strerror(errno));
		return rc;
	}
	/* our own fd: the one magic link we follow on purpose */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", q->fd[SBX_QDIR_DONE]);
	if (inotify_add_watch(ifd, path, IN_MOVED_TO | IN_CLOSE_WRITE | IN_CREATE) < 0) {
		rc = -errno;
		sbx_queue_set_err(err, "inotify on done/: %s", strerror(errno));
		close(ifd);
		return rc;
	}
	for (;;) {
		struct pollfd pfd = { .fd = ifd, .events = POLLIN };
		char evbuf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
		int64_t left;

		/* look after the watch exists, so a decision written between
		 * the look and the poll still wakes us */
		r = read_record(q, SBX_QDIR_DONE, name, id, done, NULL, &st, &why);
		if (r == RD_OK) {
			rc = 0;
			break;
		}
		/* a malformed decision is the daemon's to quarantine; keep
		 * waiting for a valid one */
		free(why);
		why = NULL;
		left = end - sbx_now_ms();
		if (left <= 0) {
			sbx_queue_set_err(err, "%s: no decision within %d ms", id, timeout_ms);
			rc = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, left > 0x7fffffff ? 0x7fffffff : (int)left) < 0 &&
		    errno != EINTR) {
			rc = -errno;
			sbx_queue_set_err(err, "poll: %s", strerror(errno));
			break;
		}
		while (read(ifd, evbuf, sizeof(evbuf)) > 0)
			;	/* drain; the look above decides */
	}
	close(ifd);
	return rc;
}
