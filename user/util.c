// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "user/util.h"

static const char *log_prefix = "bpfsbx";
static bool log_ts;

void sbx_set_log_prefix(const char *prefix) { log_prefix = prefix; }
void sbx_set_log_timestamps(bool on) { log_ts = on; }

static void vlog(const char *level, const char *fmt, va_list ap)
{
	char ts[40];

	if (log_ts) {
		sbx_rfc3339_now(ts, sizeof(ts));
		fprintf(stderr, "%s ", ts);
	}
	fprintf(stderr, "%s: %s", log_prefix, level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void sbx_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void sbx_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void sbx_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

static void oom(void)
{
	fprintf(stderr, "%s: out of memory\n", log_prefix);
	abort();
}

char *sbx_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		oom();
	va_end(ap);
	return s;
}

char *sbx_strdup(const char *s)
{
	char *d = strdup(s ? s : "");

	if (!d)
		oom();
	return d;
}

void *sbx_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom();
	return p;
}

void sbx_rfc3339(char *buf, size_t len, const struct timespec *ts)
{
	struct tm tm;

	gmtime_r(&ts->tv_sec, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 ts->tv_nsec / 1000000);
}

void sbx_rfc3339_now(char *buf, size_t len)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	sbx_rfc3339(buf, len, &ts);
}

uint64_t sbx_boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct timespec sbx_boot_to_real(uint64_t boot_ns)
{
	struct timespec real, out;
	uint64_t now_boot = sbx_boot_ns(), real_ns;

	clock_gettime(CLOCK_REALTIME, &real);
	real_ns = (uint64_t)real.tv_sec * 1000000000ull + real.tv_nsec;
	if (boot_ns <= now_boot)
		real_ns -= now_boot - boot_ns;
	out.tv_sec = real_ns / 1000000000ull;
	out.tv_nsec = real_ns % 1000000000ull;
	return out;
}

int sbx_read_file(const char *path, size_t max, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0, cap = 4096;
	char *buf;

	if (fd < 0)
		return -errno;
	buf = sbx_calloc(1, cap + 1);
	for (;;) {
		ssize_t r;

		if (n == cap) {
			if (cap >= max) {
				free(buf);
				close(fd);
				return -EFBIG;
			}
			cap = cap * 2 > max ? max : cap * 2;
			buf = realloc(buf, cap + 1);
			if (!buf)
				oom();
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			free(buf);
			close(fd);
			return r;
		}
		if (r == 0)
			break;
		n += r;
	}
	close(fd);
	buf[n] = 0;
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int sbx_write_file_atomic(const char *path, const void *buf, size_t len, int mode)
{
	char *tmp = sbx_asprintf("%s.tmp-%d", path, (int)getpid());
	char *dcopy = sbx_strdup(path);
	const char *dir = dirname(dcopy);
	int fd, dfd, rc = 0;
	const char *p = buf;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		p += w;
		len -= w;
	}
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc) {
		unlink(tmp);
		goto out;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
out:
	free(tmp);
	free(dcopy);
	return rc;
}

int sbx_mkdir_p(const char *path, int mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

bool sbx_parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

char *sbx_abspath(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return sbx_strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return sbx_strdup(path);
	return sbx_asprintf("%s/%s", cwd, path);
}
