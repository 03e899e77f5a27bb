// SPDX-License-Identifier: GPL-2.0
/*
 * fs.c - the file system primitives of the folder queue: opening beneath
 * a directory without following symlinks, atomic writes, bounded reads,
 * ids and times.
 *
 * The daemon runs as root and writes into directories that an
 * unprivileged user controls, so every path is resolved relative to a
 * directory fd with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), and
 * no existing file is ever opened for writing: content changes are a new
 * file renamed into place, which cannot be redirected by a planted link.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include "queue/queue.h"

#ifdef SBX_UNIT_TEST
int sbx_test_crash_at;
int sbx_test_crash_step;
#endif

/* The crash tests die here (see queue.h). */
void sbx_queue_crash_point(void)
{
#ifdef SBX_UNIT_TEST
	if (sbx_test_crash_at && ++sbx_test_crash_step == sbx_test_crash_at)
		raise(SIGKILL);
#endif
}

int sbx_openat_beneath(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (unsigned)flags | O_CLOEXEC,
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	/* RESOLVE_NO_SYMLINKS covers the last component too (ELOOP); with
	 * O_NOFOLLOW | O_DIRECTORY a symlink would read as ENOTDIR instead */
	do
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (fd < 0 && (errno == EINTR || errno == EAGAIN));
	return fd < 0 ? -errno : (int)fd;
}

int sbx_opendir_beneath(int dirfd, const char *name, bool create, uid_t uid, gid_t gid)
{
	bool made = false;
	int fd;

	if (create) {
		/* mkdirat never follows a symlink in the last component: an
		 * existing symlink makes it fail with EEXIST, and the open
		 * below then refuses it with ELOOP */
		if (mkdirat(dirfd, name, 0700) == 0)
			made = true;
		else if (errno != EEXIST)
			return -errno;
	}
	fd = sbx_openat_beneath(dirfd, name, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	if (made) {
		if ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid) < 0) {
			int e = -errno;

			close(fd);
			return e;
		}
		fsync(dirfd);
	}
	return fd;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static unsigned rand32(void)
{
	unsigned r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r)) {
		struct timeval tv;

		/* getrandom cannot fail for 4 bytes once the pool is up;
		 * uniqueness, not secrecy, is what the value is for */
		gettimeofday(&tv, NULL);
		r = (unsigned)tv.tv_usec ^ ((unsigned)getpid() << 16);
	}
	return r;
}

/* RENAME_NOREPLACE, or link+unlink on file systems that lack it */
static int rename_noreplace(int dirfd, const char *from, int todirfd, const char *to)
{
	if (renameat2(dirfd, from, todirfd, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	if (linkat(dirfd, from, todirfd, to, 0) < 0)
		return -errno;
	unlinkat(dirfd, from, 0);
	return 0;
}

int sbx_rename_noreplace(int dirfd, const char *from, int todirfd, const char *to)
{
	return rename_noreplace(dirfd, from, todirfd, to);
}

int sbx_write_atomic(int dirfd, const char *name, const void *buf, size_t len,
		     enum sbx_write_mode mode, uid_t uid, gid_t gid)
{
	char tmp[NAME_MAX + 1];
	int fd, rc;

	if (!name[0] || strchr(name, '/') || strlen(name) > 200)
		return -EINVAL;
	snprintf(tmp, sizeof(tmp), ".tmp-%s-%d-%08x", name, (int)getpid(), rand32());
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	sbx_queue_crash_point();	/* 1: temporary file created */
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid) < 0) {
		rc = -errno;
		goto fail;
	}
	rc = write_all(fd, buf, len);
	if (rc)
		goto fail;
	sbx_queue_crash_point();	/* 2: written */
	if (mode != SBX_W_REPLACE_NOSYNC && fsync(fd) < 0) {
		rc = -errno;
		goto fail;
	}
	sbx_queue_crash_point();	/* 3: on disk */
	close(fd);
	fd = -1;

	switch (mode) {
	case SBX_W_NOREPLACE:
		rc = rename_noreplace(dirfd, tmp, dirfd, name);
		break;
	case SBX_W_REPLACE:
	case SBX_W_REPLACE_NOSYNC:
		rc = renameat(dirfd, tmp, dirfd, name) < 0 ? -errno : 0;
		break;
	case SBX_W_EXISTING:
		/* an exchange fails with ENOENT when name is gone (claimed
		 * meanwhile), so a bump can never resurrect a request */
		if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) == 0) {
			sbx_queue_crash_point();	/* 4: exchanged */
			unlinkat(dirfd, tmp, 0);
			return 0;
		}
		rc = -errno;
		if (rc == -EINVAL) {
			/* no RENAME_EXCHANGE here: check, then replace; a
			 * narrow race with a claim remains on such file systems */
			if (faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
				rc = -errno;
			else
				rc = renameat(dirfd, tmp, dirfd, name) < 0 ? -errno : 0;
		}
		break;
	default:
		rc = -EINVAL;
	}
	if (rc)
		goto fail;
	sbx_queue_crash_point();	/* 4: renamed into place */
	if (mode != SBX_W_EXISTING && mode != SBX_W_REPLACE_NOSYNC && fsync(dirfd) < 0)
		return -errno;
	sbx_queue_crash_point();	/* 5: directory on disk */
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	return rc;
}

int sbx_read_file_at(int dirfd, const char *name, size_t max, char **buf,
		     size_t *len, struct stat *st_out)
{
	struct stat st;
	size_t cap, n = 0;
	char *b;
	int fd, rc;

	/* O_NONBLOCK: a fifo planted under a queue name must not hang the
	 * reader; the fstat below then rejects it */
	fd = sbx_openat_beneath(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOTSUP;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	cap = (size_t)st.st_size + 1;
	b = malloc(cap + 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			/* grew while we read it */
			if (cap > max) {
				free(b);
				close(fd);
				return -EFBIG;
			}
			char *nb = realloc(b, cap * 2 + 1);

			if (!nb) {
				free(b);
				close(fd);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			free(b);
			close(fd);
			return rc;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (n > max) {
		free(b);
		return -EFBIG;
	}
	b[n] = 0;
	*buf = b;
	if (len)
		*len = n;
	if (st_out)
		*st_out = st;
	return 0;
}

/* ---- time ------------------------------------------------------------ */

char *sbx_time_rfc3339(time_t t)
{
	struct tm tm;
	char buf[32];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return strdup(buf);
}

static int digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int sbx_time_parse(const char *s, time_t *t)
{
	int Y, M, D, h, m, sec, oh = 0, om = 0, sign = 0;
	struct tm tm = { 0 };
	const char *p;

	if (!s || strlen(s) < 20)
		return -EINVAL;
	if (digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) || s[7] != '-' ||
	    digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't') ||
	    digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &m) ||
	    s[16] != ':' || digits(s + 17, 2, &sec))
		return -EINVAL;
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return -EINVAL;
	p = s + 19;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '+' ? 1 : -1;
		if (digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) ||
		    oh > 23 || om > 59)
			return -EINVAL;
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p)
		return -EINVAL;
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	*t = timegm(&tm) - sign * (oh * 3600 + om * 60);
	return 0;
}

/* ---- ids ------------------------------------------------------------- */

/*
 * "YYYYMMDDTHHMMSS.uuuuuuZ-PID-RAND": the time part has a fixed width, so
 * string order is time order. Within one process the microseconds are
 * made strictly increasing; pid and 32 random bits separate processes.
 */
char *sbx_id_new(void)
{
	static uint64_t last_us;
	struct timespec ts;
	uint64_t us, prev;
	struct tm tm;
	time_t secs;
	char buf[SBX_ID_MAX + 1];

	clock_gettime(CLOCK_REALTIME, &ts);
	us = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	prev = __atomic_load_n(&last_us, __ATOMIC_RELAXED);
	do {
		if (us <= prev)
			us = prev + 1;
	} while (!__atomic_compare_exchange_n(&last_us, &prev, us, false,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	secs = (time_t)(us / 1000000u);
	gmtime_r(&secs, &tm);
	snprintf(buf, sizeof(buf), "%04d%02d%02dT%02d%02d%02d.%06uZ-%d-%08x",
		 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		 tm.tm_sec, (unsigned)(us % 1000000u), (int)getpid(), rand32());
	return strdup(buf);
}

bool sbx_id_valid(const char *id)
{
	static const char shape[] = "DDDDDDDDTDDDDDD.DDDDDDZ-";
	size_t n, i;
	const char *p;

	if (!id)
		return false;
	n = strnlen(id, SBX_ID_MAX + 1);
	if (n > SBX_ID_MAX || n < sizeof(shape) - 1 + 3)
		return false;
	for (i = 0; i < sizeof(shape) - 1; i++) {
		if (shape[i] == 'D') {
			if (id[i] < '0' || id[i] > '9')
				return false;
		} else if (id[i] != shape[i]) {
			return false;
		}
	}
	p = id + i;
	/* pid: 1..10 digits */
	for (i = 0; p[i] >= '0' && p[i] <= '9'; i++)
		;
	if (i < 1 || i > 10 || p[i] != '-')
		return false;
	p += i + 1;
	/* random part: 8..32 lowercase hex digits */
	for (i = 0; (p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'); i++)
		;
	return i >= 8 && i <= 32 && p[i] == 0;
}

const char *sbx_queue_user(void)
{
	static char name[64];
	struct passwd *pw;

	if (!name[0]) {
		pw = getpwuid(getuid());
		if (pw && pw->pw_name && pw->pw_name[0])
			snprintf(name, sizeof(name), "%s", pw->pw_name);
		else
			snprintf(name, sizeof(name), "uid %u", (unsigned)getuid());
	}
	return name;
}

void sbx_queue_set_err(char **err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	free(*err);
	*err = NULL;
	va_start(ap, fmt);
	if (vasprintf(err, fmt, ap) < 0)
		*err = NULL;
	va_end(ap);
}
