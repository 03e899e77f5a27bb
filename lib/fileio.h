/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fileio.h - reading and writing files so that a crash or a planted link
 * cannot leave a half-written file or redirect a write.
 *
 * The daemon runs as root and writes into directories that an
 * unprivileged user controls, so paths below such a directory are
 * resolved relative to a directory fd with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS), and no existing file is ever opened for writing:
 * content changes are a new file renamed into place.
 */
#ifndef SBX_FILEIO_H
#define SBX_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* write(2)/read(2) until done; 0 or -errno (-EPIPE: EOF before len bytes) */
int sbx_write_all(int fd, const void *buf, size_t len);
int sbx_read_all(int fd, void *buf, size_t len);

/* Whole file (up to max bytes, -EFBIG beyond) into a NUL-terminated buffer. */
int sbx_read_file(const char *path, size_t max, char **out, size_t *len);

/* openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
 * returns the fd or -errno (-ELOOP: a symlink on the way). */
int sbx_openat_beneath(int dirfd, const char *path, int flags, mode_t mode);
/* mkdir (0700) if missing and open the directory beneath dirfd; a new
 * directory gets uid/gid ((uid_t)-1: unchanged). Returns fd or -errno. */
int sbx_opendir_beneath(int dirfd, const char *name, bool create, uid_t uid, gid_t gid);
/* Read a regular file beneath dirfd (never a fifo, device or symlink:
 * -ENOTSUP), at most max bytes (-EFBIG beyond). *buf is NUL terminated. */
int sbx_read_file_at(int dirfd, const char *name, size_t max, char **buf, size_t *len,
		     struct stat *st);

enum sbx_write_mode {
	SBX_W_NOREPLACE,	/* fail with -EEXIST if name exists */
	SBX_W_REPLACE,		/* replace (or create) name */
	SBX_W_EXISTING,		/* replace name only if it exists (-ENOENT) */
	SBX_W_REPLACE_NOSYNC,	/* replace, atomic but without any fsync: what a
				 * machine crash may lose is rebuilt or advisory */
};
/* Temporary file ".tmp-NAME-PID-RAND" in dirfd, write, fsync, rename,
 * fsync of the directory. Mode 0600, owned by uid/gid when not -1. */
int sbx_write_atomic(int dirfd, const char *name, const void *buf, size_t len,
		     enum sbx_write_mode mode, uid_t uid, gid_t gid);
/* The same with the file's mode (sbx_write_atomic's is 0600). */
int sbx_write_atomic_perm(int dirfd, const char *name, const void *buf, size_t len,
			  enum sbx_write_mode mode, uid_t uid, gid_t gid, mode_t perm);
/* The same for a path (its directory is opened as given), with mode perm. */
int sbx_write_file_atomic(const char *path, const void *buf, size_t len, mode_t perm);

/* renameat2(RENAME_NOREPLACE), or link+unlink where the fs lacks it */
int sbx_rename_noreplace(int dirfd, const char *from, int todirfd, const char *to);
int sbx_mkdir_p(const char *path, mode_t mode);
/* "a.yaml" -> "/cwd/a.yaml" (no symlink resolution); malloc'd */
char *sbx_abspath(const char *path);

/* 32 random bits for unique names: uniqueness, not secrecy */
uint32_t sbx_rand32(void);

/* One step of a write sequence: a no-op outside unit tests. */
void sbx_crash_point(void);
#ifdef SBX_UNIT_TEST
/* Test hook: the write paths count their steps (tmp created, written,
 * fsynced, renamed, directory fsynced; the queue's decide: claim removed)
 * and raise(SIGKILL) when the count reaches sbx_test_crash_at (0: never). */
extern int sbx_test_crash_at;
extern int sbx_test_crash_step;
#endif

#endif
