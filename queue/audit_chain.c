// SPDX-License-Identifier: GPL-2.0
/*
 * audit_chain.c - hash-chained JSONL audit logs, .sandbox/audit/SESSION.jsonl.
 *
 *   hash = SHA-256(prev_hex || json_dumps(record without "hash",
 *                                         JSON_COMPACT | JSON_SORT_KEYS))
 *
 * Editing a record breaks its hash; removing or reordering records breaks
 * the seq/prev links; cutting the tail is caught by SESSION.head, which
 * holds the seq and hash of the last record and is replaced atomically
 * after every append. The chain is evidence against tampering after the
 * fact, not a signature: whoever can write the log can also rewrite the
 * whole chain, which is why the kernel forbids sessions to write .sandbox.
 *
 * Several processes append to one log (the daemon, hook processes), so
 * reading the last record, appending and updating the head happen under
 * flock(LOCK_EX) on the log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "lib/alloc.h"
#include "lib/sha256.h"
#include "queue/queue.h"

#define ZERO_HASH	"0000000000000000000000000000000000000000000000000000000000000000"
#define LINE_MAX_BYTES	(2u << 20)

struct sbx_audit {
	int dirfd, logfd;
	int headfd;	/* sync off: the head, rewritten in place */
	bool sync;
	bool dirty;	/* sync off: appended since the last sbx_audit_sync */
	char logname[160], headname[160];
	uid_t uid;
	gid_t gid;
};


static bool session_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 1 || n > 128 || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return false;
	return true;
}

static bool is_hex64(const char *s)
{
	if (!s || strlen(s) != 64)
		return false;
	for (int i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* hash of a record (its "hash" member, if any, is left out) */
static int record_hash(const json_t *rec, const char *prev, char out[65])
{
	unsigned char md[SBX_SHA256_LEN];
	json_t *copy = json_copy((json_t *)rec);
	struct sbx_sha256 ctx;
	char *canon;
	int ok;

	if (!copy)
		return -ENOMEM;
	json_object_del(copy, "hash");
	canon = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(copy);
	if (!canon)
		return -ENOMEM;
	ok = !sbx_sha256_init(&ctx) && !sbx_sha256_update(&ctx, prev, strlen(prev)) &&
	     !sbx_sha256_update(&ctx, canon, strlen(canon)) && !sbx_sha256_final(&ctx, md);
	sbx_sha256_free(&ctx);
	free(canon);
	if (!ok)
		return -EIO;
	sbx_hex(md, sizeof(md), out);
	return 0;
}

struct sbx_audit *sbx_audit_open(struct sbx_queue *q, const char *session, char **err)
{
	struct sbx_audit *a;
	struct stat st;
	bool made = false;
	int fd;

	if (err)
		*err = NULL;
	if (!session_name_ok(session)) {
		sbx_queue_set_err(err, "audit: \"%s\" is not a session name (letters, digits, . _ -)",
			session ? session : "");
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		sbx_queue_set_err(err, "out of memory");
		return NULL;
	}
	a->dirfd = a->logfd = a->headfd = -1;
	a->sync = true;
	sbx_queue_owner(q, &a->uid, &a->gid);
	snprintf(a->logname, sizeof(a->logname), "%s.jsonl", session);
	snprintf(a->headname, sizeof(a->headname), "%s.head", session);
	fd = sbx_opendir_beneath(sbx_queue_sandbox_fd(q), "audit", true, a->uid, a->gid);
	if (fd < 0) {
		sbx_queue_set_err(err, "%s/.sandbox/audit: %s", sbx_queue_project(q),
			fd == -ELOOP ? "it is a symlink (refusing to follow it)" : strerror(-fd));
		goto fail;
	}
	a->dirfd = fd;
	fd = sbx_openat_beneath(a->dirfd, a->logname, O_RDWR | O_APPEND | O_CREAT | O_EXCL, 0600);
	if (fd >= 0)
		made = true;
	else if (fd == -EEXIST)
		fd = sbx_openat_beneath(a->dirfd, a->logname, O_RDWR | O_APPEND | O_NONBLOCK, 0);
	if (fd < 0) {
		sbx_queue_set_err(err, "%s/.sandbox/audit/%s: %s", sbx_queue_project(q), a->logname,
			fd == -ELOOP ? "it is a symlink (refusing to follow it)" : strerror(-fd));
		goto fail;
	}
	a->logfd = fd;
	/* a planted hard link would make root append to another file */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		sbx_queue_set_err(err, "%s/.sandbox/audit/%s: not a regular file with one link",
			sbx_queue_project(q), a->logname);
		goto fail;
	}
	if (made && (a->uid != (uid_t)-1 || a->gid != (gid_t)-1) &&
	    fchown(fd, a->uid, a->gid) < 0) {
		sbx_queue_set_err(err, "%s/.sandbox/audit/%s: chown: %s", sbx_queue_project(q),
			a->logname, strerror(errno));
		goto fail;
	}
	return a;
fail:
	sbx_audit_close(a);
	return NULL;
}

void sbx_audit_set_sync(struct sbx_audit *a, bool sync)
{
	a->sync = sync;
}

int sbx_audit_sync(struct sbx_audit *a)
{
	int rc = 0;

	if (!a->dirty)
		return 0;	/* nothing appended since the last sync */
	a->dirty = false;

	/* the log before the head: a head must never name a lost record */
	if (flock(a->logfd, LOCK_EX) < 0)
		return -errno;
	if (fdatasync(a->logfd) < 0) {
		rc = -errno;
	} else {
		char *head = NULL;
		size_t len;

		/* rewrite the head durably (it was renamed without fsync) */
		rc = sbx_read_file_at(a->dirfd, a->headname, 4096, &head, &len, NULL);
		if (rc == 0)
			rc = sbx_write_atomic(a->dirfd, a->headname, head, len, SBX_W_REPLACE,
					      a->uid, a->gid);
		else if (rc == -ENOENT)
			rc = 0;	/* nothing appended yet */
		free(head);
	}
	flock(a->logfd, LOCK_UN);
	return rc;
}

void sbx_audit_close(struct sbx_audit *a)
{
	if (!a)
		return;
	sbx_audit_sync(a);	/* what a non-syncing writer appended */
	if (a->logfd >= 0)
		close(a->logfd);
	if (a->headfd >= 0)
		close(a->headfd);
	if (a->dirfd >= 0)
		close(a->dirfd);
	free(a);
}

/* seq and hash of a record line; false if it is not one */
static bool parse_link(const char *line, size_t len, uint64_t *seq, char hash[65])
{
	json_error_t jerr;
	json_t *j = json_loadb(line, len, 0, &jerr);
	json_t *s, *h;
	bool ok;

	if (!j)
		return false;
	s = json_object_get(j, "seq");
	h = json_object_get(j, "hash");
	ok = json_is_integer(s) && json_integer_value(s) > 0 && json_is_string(h) &&
	     is_hex64(json_string_value(h));
	if (ok) {
		*seq = (uint64_t)json_integer_value(s);
		memcpy(hash, json_string_value(h), 65);
	}
	json_decref(j);
	return ok;
}

/*
 * The last line of the log. *partial: the file does not end in a newline
 * (an append died half-way).
 */
static int read_last_line(int fd, char **line, size_t *len, bool *partial)
{
	struct stat st;
	size_t want = 4096;
	char *buf = NULL;

	*line = NULL;
	*len = 0;
	*partial = false;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size == 0)
		return 0;
	for (;;) {
		size_t n = (uint64_t)st.st_size < want ? (size_t)st.st_size : want;
		off_t off = st.st_size - (off_t)n;
		ssize_t r;
		char *nb = realloc(buf, n + 1), *end, *p;

		if (!nb) {
			free(buf);
			return -ENOMEM;
		}
		buf = nb;
		r = pread(fd, buf, n, off);
		if (r != (ssize_t)n) {
			free(buf);
			return r < 0 ? -errno : -EIO;
		}
		buf[n] = 0;
		end = buf + n;
		if (end[-1] != '\n')
			*partial = true;
		else
			end--;
		for (p = end; p > buf && p[-1] != '\n'; p--)
			;
		if (p > buf || off == 0) {
			*len = (size_t)(end - p);
			*line = malloc(*len + 1);
			if (!*line) {
				free(buf);
				return -ENOMEM;
			}
			memcpy(*line, p, *len);
			(*line)[*len] = 0;
			free(buf);
			return 0;
		}
		if (want >= LINE_MAX_BYTES) {
			free(buf);
			return -EFBIG;
		}
		want *= 4;
	}
}

static bool read_head(int dirfd, const char *name, uint64_t *seq, char hash[65])
{
	char *buf = NULL;
	size_t len;
	bool ok;

	if (sbx_read_file_at(dirfd, name, 4096, &buf, &len, NULL))
		return false;
	ok = parse_link(buf, len, seq, hash);
	free(buf);
	return ok;
}

/*
 * Sync off: rewrite the head in place, one pwrite of a fixed 128 bytes
 * at offset 0 (padded with spaces, which JSON allows), instead of a new
 * file and a rename per record. The fd is checked against the name on
 * every use: a durable writer may have replaced the file meanwhile.
 */
static int head_in_place(struct sbx_audit *a, const char *text)
{
	char buf[128];
	struct stat st, by_name;
	size_t n = strlen(text);

	if (n >= sizeof(buf))
		return -EINVAL;
	if (a->headfd >= 0 &&
	    (fstatat(a->dirfd, a->headname, &by_name, AT_SYMLINK_NOFOLLOW) < 0 ||
	     fstat(a->headfd, &st) < 0 || st.st_ino != by_name.st_ino ||
	     st.st_dev != by_name.st_dev)) {
		close(a->headfd);
		a->headfd = -1;
	}
	if (a->headfd < 0) {
		bool made = false;
		int fd = sbx_openat_beneath(a->dirfd, a->headname,
					    O_RDWR | O_CREAT | O_EXCL, 0600);

		if (fd >= 0)
			made = true;
		else if (fd == -EEXIST)
			fd = sbx_openat_beneath(a->dirfd, a->headname, O_RDWR | O_NONBLOCK, 0);
		if (fd < 0)
			return fd;
		/* root writes in place only into a plain file of its own name */
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
			close(fd);
			return -EPERM;
		}
		if (made && (a->uid != (uid_t)-1 || a->gid != (gid_t)-1) &&
		    fchown(fd, a->uid, a->gid) < 0) {
			int e = -errno;

			close(fd);
			return e;
		}
		a->headfd = fd;
	}
	memset(buf, ' ', sizeof(buf));
	memcpy(buf, text, n);
	buf[sizeof(buf) - 1] = '\n';
	if (pwrite(a->headfd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		return -EIO;
	if (fstat(a->headfd, &st) == 0 && st.st_size > (off_t)sizeof(buf) &&
	    ftruncate(a->headfd, sizeof(buf)) < 0)
		return -errno;
	return 0;
}

static char *now_precise(void)
{
	struct timespec ts;
	struct tm tm;
	char buf[96];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		 tm.tm_sec, (long)((ts.tv_nsec / 1000) % 1000000));
	return strdup(buf);
}

int sbx_audit_append(struct sbx_audit *a, json_t *body, char **err)
{
	static const char *const reserved[] = { "seq", "prev", "hash" };
	uint64_t last_seq = 0, head_seq = 0, seq;
	char last_hash[65] = ZERO_HASH, head_hash[65], hash[65], *line = NULL, *text = NULL;
	const char *prev;
	bool have_last = false, have_head, partial;
	json_t *rec = NULL;
	size_t len;
	int rc;

	if (err)
		*err = NULL;
	if (!json_is_object(body)) {
		sbx_queue_set_err(err, "audit: a record body must be a JSON object");
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		if (json_object_get(body, reserved[i])) {
			sbx_queue_set_err(err, "audit: \"%s\" is set by the log, not by the caller",
				reserved[i]);
			return -EINVAL;
		}
	}
	if (flock(a->logfd, LOCK_EX) < 0) {
		rc = -errno;
		sbx_queue_set_err(err, "audit: lock %s: %s", a->logname, strerror(errno));
		return rc;
	}
	rc = read_last_line(a->logfd, &line, &len, &partial);
	if (rc) {
		sbx_queue_set_err(err, "audit: reading %s: %s", a->logname, strerror(-rc));
		goto out;
	}
	if (line && !partial)
		have_last = parse_link(line, len, &last_seq, last_hash);
	have_head = read_head(a->dirfd, a->headname, &head_seq, head_hash);
	/*
	 * Chain onto the log's last record, unless the head knows of more
	 * records than the log has: then the log lost its tail, and chaining
	 * onto the head keeps that visible to verify instead of papering
	 * over it. A head one behind is an append that died before updating
	 * the head, which is harmless.
	 */
	if (have_head && (!have_last || head_seq > last_seq)) {
		seq = head_seq + 1;
		prev = head_hash;
	} else {
		seq = last_seq + 1;
		prev = have_last ? last_hash : ZERO_HASH;
	}
	if (partial && write(a->logfd, "\n", 1) != 1) {
		/* keep the torn line as evidence, on a line of its own */
		rc = -errno;
		sbx_queue_set_err(err, "audit: %s: %s", a->logname, strerror(errno));
		goto out;
	}
	rec = json_deep_copy(body);
	if (!rec) {
		rc = -ENOMEM;
		goto out;
	}
	{
		char *t = now_precise();

		json_object_set_new(rec, "seq", json_integer((json_int_t)seq));
		if (!json_is_string(json_object_get(rec, "time")))
			json_object_set_new(rec, "time", json_string(t ? t : ""));
		json_object_set_new(rec, "prev", json_string(prev));
		free(t);
	}
	rc = record_hash(rec, prev, hash);
	if (rc) {
		sbx_queue_set_err(err, "audit: hashing: %s", strerror(-rc));
		goto out;
	}
	json_object_set_new(rec, "hash", json_string(hash));
	text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text) {
		rc = -ENOMEM;
		goto out;
	}
	len = strlen(text);
	text[len++] = '\n';	/* replaces the NUL; written with its length */
	{
		/* one write(): with O_APPEND the line lands whole and after
		 * every other line (the lock orders the writers) */
		ssize_t w = write(a->logfd, text, len);

		if (w != (ssize_t)len) {
			rc = w < 0 ? -errno : -EIO;
			sbx_queue_set_err(err, "audit: appending to %s: %s", a->logname,
				w < 0 ? strerror(errno) : "short write");
			goto out;
		}
	}
	if (a->sync && fdatasync(a->logfd) < 0) {
		rc = -errno;
		sbx_queue_set_err(err, "audit: %s: fsync: %s", a->logname, strerror(errno));
		goto out;
	}
	{
		json_t *hj = json_pack("{s:s, s:I}", "hash", hash, "seq", (json_int_t)seq);
		char *ht = hj ? json_dumps(hj, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

		json_decref(hj);
		if (!ht)
			rc = -ENOMEM;
		else if (a->sync)
			rc = sbx_write_atomic(a->dirfd, a->headname, ht, strlen(ht), SBX_W_REPLACE,
					      a->uid, a->gid);
		else
			rc = head_in_place(a, ht);
		if (!a->sync)
			a->dirty = true;
		free(ht);
	}
	if (rc)
		sbx_queue_set_err(err, "audit: updating %s: %s", a->headname, strerror(-rc));
out:
	flock(a->logfd, LOCK_UN);
	json_decref(rec);
	free(text);
	free(line);
	return rc;
}

/* ---- verification ---------------------------------------------------- */

static int report(struct sbx_audit_report *r, uint64_t seq, uint64_t line,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int report(struct sbx_audit_report *r, uint64_t seq, uint64_t line,
		  const char *fmt, ...)
{
	va_list ap;

	r->first_bad = seq;
	r->line = line;
	free(r->problem);
	r->problem = NULL;
	va_start(ap, fmt);
	r->problem = sbx_vformat(fmt, ap);
	va_end(ap);
	return 1;
}

static char *head_path_of(const char *log_path)
{
	size_t n = strlen(log_path);
	char *p;

	if (n > 6 && !strcmp(log_path + n - 6, ".jsonl")) {
		p = malloc(n);
		if (p) {
			memcpy(p, log_path, n - 6);
			strcpy(p + n - 6, ".head");
		}
		return p;
	}
	if (asprintf(&p, "%s.head", log_path) < 0)
		return NULL;
	return p;
}

int sbx_audit_verify(const char *log_path, struct sbx_audit_report *r)
{
	char prev[65] = ZERO_HASH, head_hash[65] = "", at_head_seq[65] = "";
	uint64_t expect = 1, lineno = 0, head_seq = 0;
	char *buf = NULL, *head_path, *hbuf = NULL;
	bool have_head = false, head_bad = false;
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	f = fopen(log_path, "re");
	if (!f)
		return -errno;
	/* appenders hold LOCK_EX from reading the tail to updating the head:
	 * a shared lock sees the log and its head agree */
	flock(fileno(f), LOCK_SH);
	head_path = head_path_of(log_path);
	if (head_path) {
		FILE *hf = fopen(head_path, "re");

		if (hf) {
			size_t hcap = 0;
			ssize_t hn = getdelim(&hbuf, &hcap, 0, hf);

			fclose(hf);
			if (hn > 0 && (size_t)hn < 4096)
				have_head = parse_link(hbuf, (size_t)hn, &head_seq, head_hash);
			head_bad = !have_head;
		}
	}

	while ((n = getline(&buf, &cap, f)) >= 0) {
		json_error_t jerr;
		json_t *j, *s, *p, *h;
		char want[65];
		uint64_t seq;

		lineno++;
		if (n > 0 && buf[n - 1] == '\n')
			buf[--n] = 0;
		j = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, &jerr);
		if (!j || !json_is_object(j)) {
			rc = report(r, expect, lineno, "not a JSON record (%s)",
				    j ? "not an object" : jerr.text);
			json_decref(j);
			break;
		}
		s = json_object_get(j, "seq");
		p = json_object_get(j, "prev");
		h = json_object_get(j, "hash");
		if (!json_is_integer(s) || json_integer_value(s) < 1 ||
		    !json_is_string(p) || !is_hex64(json_string_value(p)) ||
		    !json_is_string(h) || !is_hex64(json_string_value(h))) {
			rc = report(r, json_is_integer(s) && json_integer_value(s) > 0 ?
				    (uint64_t)json_integer_value(s) : expect, lineno,
				    "missing or malformed \"seq\", \"prev\" or \"hash\"");
			json_decref(j);
			break;
		}
		seq = (uint64_t)json_integer_value(s);
		if (seq != expect) {
			if (seq > expect)
				rc = report(r, seq, lineno, "seq %llu follows seq %llu: record %llu is "
					    "missing (deleted) or out of order",
					    (unsigned long long)seq, (unsigned long long)(expect - 1),
					    (unsigned long long)expect);
			else
				rc = report(r, seq, lineno, "seq %llu follows seq %llu: records are "
					    "out of order or repeated", (unsigned long long)seq,
					    (unsigned long long)(expect - 1));
			json_decref(j);
			break;
		}
		if (strcmp(json_string_value(p), prev)) {
			rc = report(r, seq, lineno, "\"prev\" does not match the hash of the record "
				    "before it (a record was removed, replaced or reordered)");
			json_decref(j);
			break;
		}
		if (record_hash(j, prev, want) || strcmp(want, json_string_value(h))) {
			rc = report(r, seq, lineno, "hash does not match the record's contents "
				    "(the record was edited)");
			json_decref(j);
			break;
		}
		memcpy(prev, want, sizeof(prev));
		if (have_head && seq == head_seq)
			memcpy(at_head_seq, want, sizeof(at_head_seq));
		json_decref(j);
		r->records++;
		expect++;
	}
	if (!rc && ferror(f))
		rc = -EIO;
	if (!rc) {
		uint64_t last = expect - 1;

		if (head_bad) {
			rc = report(r, last + 1, lineno + 1, "head file %s is malformed",
				    head_path ? head_path : "?");
		} else if (!have_head) {
			if (last)
				rc = report(r, last + 1, lineno + 1, "head file %s is missing: "
					    "a cut-off tail could not be detected",
					    head_path ? head_path : "?");
		} else if (head_seq > last) {
			rc = report(r, last + 1, lineno + 1, "the log ends at record %llu but its head "
				    "says %llu: records %llu..%llu were removed (truncated)",
				    (unsigned long long)last, (unsigned long long)head_seq,
				    (unsigned long long)last + 1, (unsigned long long)head_seq);
		} else if (head_seq == last && strcmp(head_hash, prev)) {
			rc = report(r, last, lineno, "the last record's hash differs from the head's: "
				    "the tail was replaced");
		} else if (head_seq + 1 < last) {
			/* every record verified, so record k is on line k */
			rc = report(r, head_seq + 1, head_seq + 1,
				    "records after %llu were added without updating the head",
				    (unsigned long long)head_seq);
		} else if (head_seq < last && head_seq && strcmp(head_hash, at_head_seq)) {
			/* head one behind (an append died before the head
			 * update) is fine, if it names the record it says */
			rc = report(r, head_seq, head_seq, "record %llu's hash differs from the "
				    "head's", (unsigned long long)head_seq);
		}
		if (rc == 1 && r->first_bad <= r->records)
			r->records = r->first_bad ? r->first_bad - 1 : 0;
	}
	free(buf);
	free(hbuf);
	free(head_path);
	fclose(f);
	return rc;
}

void sbx_audit_report_free(struct sbx_audit_report *r)
{
	if (!r)
		return;
	free(r->problem);
	r->problem = NULL;
}
