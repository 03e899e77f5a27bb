// SPDX-License-Identifier: GPL-2.0
/* fileio.c - see fileio.h */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "lib/alloc.h"
#include "lib/fileio.h"

#ifdef SBX_UNIT_TEST
int sbx_test_crash_at;
int sbx_test_crash_step;
#endif

/* The crash tests die here (see fileio.h). */
void sbx_crash_point(void)
{
#ifdef SBX_UNIT_TEST
	if (sbx_test_crash_at && ++sbx_test_crash_step == sbx_test_crash_at)
		raise(SIGKILL);
#endif
}

int sbx_write_all(int fd, const void *buf, size_t len)
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

int sbx_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t r = read(fd, p, len);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EPIPE;
		p += r;
		len -= (size_t)r;
	}
	return 0;
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
			buf = sbx_realloc_array(buf, cap + 1, 1);
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

	/* the open first: the directory is there nearly always, and a failed
	 * mkdirat costs a path walk of its own */
	fd = sbx_openat_beneath(dirfd, name, O_RDONLY | O_DIRECTORY, 0);
	if (fd == -ENOENT && create) {
		/* mkdirat never follows a symlink in the last component: a
		 * symlink planted meanwhile makes it fail with EEXIST, and the
		 * open below then refuses it with ELOOP */
		if (mkdirat(dirfd, name, 0700) == 0)
			made = true;
		else if (errno != EEXIST)
			return -errno;
		fd = sbx_openat_beneath(dirfd, name, O_RDONLY | O_DIRECTORY, 0);
	}
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

uint32_t sbx_rand32(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r)) {
		struct timeval tv;

		/* getrandom cannot fail for 4 bytes once the pool is up;
		 * uniqueness, not secrecy, is what the value is for */
		gettimeofday(&tv, NULL);
		r = (uint32_t)tv.tv_usec ^ ((unsigned)getpid() << 16);
	}
	return r;
}

/* RENAME_NOREPLACE, or link+unlink on file systems that lack it */
int sbx_rename_noreplace(int dirfd, const char *from, int todirfd, const char *to)
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

static int write_atomic(int dirfd, const char *name, const void *buf, size_t len,
			enum sbx_write_mode mode, uid_t uid, gid_t gid, mode_t perm)
{
	char tmp[NAME_MAX + 1];
	int fd, rc;

	if (!name[0] || strchr(name, '/') || strlen(name) > 200)
		return -EINVAL;
	snprintf(tmp, sizeof(tmp), ".tmp-%s-%d-%08x", name, (int)getpid(), sbx_rand32());
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (perm != 0600 && fchmod(fd, perm) < 0) {
		rc = -errno;
		goto fail;
	}
	sbx_crash_point();	/* 1: temporary file created */
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid) < 0) {
		rc = -errno;
		goto fail;
	}
	rc = sbx_write_all(fd, buf, len);
	if (rc)
		goto fail;
	sbx_crash_point();	/* 2: written */
	if (mode != SBX_W_REPLACE_NOSYNC && fsync(fd) < 0) {
		rc = -errno;
		goto fail;
	}
	sbx_crash_point();	/* 3: on disk */
	close(fd);
	fd = -1;

	switch (mode) {
	case SBX_W_NOREPLACE:
		rc = sbx_rename_noreplace(dirfd, tmp, dirfd, name);
		break;
	case SBX_W_REPLACE:
	case SBX_W_REPLACE_NOSYNC:
		rc = renameat(dirfd, tmp, dirfd, name) < 0 ? -errno : 0;
		break;
	case SBX_W_EXISTING:
		/* an exchange fails with ENOENT when name is gone (claimed
		 * meanwhile), so a bump can never resurrect a request */
		if (renameat2(dirfd, tmp, dirfd, name, RENAME_EXCHANGE) == 0) {
			sbx_crash_point();	/* 4: exchanged */
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
	sbx_crash_point();	/* 4: renamed into place */
	if (mode != SBX_W_EXISTING && mode != SBX_W_REPLACE_NOSYNC && fsync(dirfd) < 0)
		return -errno;
	sbx_crash_point();	/* 5: directory on disk */
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlinkat(dirfd, tmp, 0);
	return rc;
}

int sbx_write_atomic(int dirfd, const char *name, const void *buf, size_t len,
		     enum sbx_write_mode mode, uid_t uid, gid_t gid)
{
	return write_atomic(dirfd, name, buf, len, mode, uid, gid, 0600);
}

int sbx_write_atomic_perm(int dirfd, const char *name, const void *buf, size_t len,
			  enum sbx_write_mode mode, uid_t uid, gid_t gid, mode_t perm)
{
	return write_atomic(dirfd, name, buf, len, mode, uid, gid, perm);
}

int sbx_write_file_atomic(const char *path, const void *buf, size_t len, mode_t perm)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) :
			    strdup(".");
	int dfd, rc;

	if (!dir)
		return -ENOMEM;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (dfd < 0)
		return -errno;
	rc = write_atomic(dfd, slash ? slash + 1 : path, buf, len, SBX_W_REPLACE, (uid_t)-1,
			  (gid_t)-1, perm);
	close(dfd);
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

int sbx_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	/* the whole path first: its parents are nearly always there */
	if (mkdir(path, mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return -errno;
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

char *sbx_abspath(const char *path)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return sbx_strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return sbx_strdup(path);
	return sbx_asprintf("%s/%s", cwd, path);
}
