// SPDX-License-Identifier: GPL-2.0
/*
 * identity.c - file identity as the kernel sees it, and lexical path handling.
 *
 * The BPF programs name a file by (inode->i_sb->s_dev, inode->i_ino).
 * stat(2) does not report that pair on overlayfs and btrfs (st_dev there
 * is a per-subvolume or per-layer anonymous device), so the identity is
 * read from /proc/self/fdinfo (mnt_id, ino) of an O_PATH descriptor and
 * the mount's major:minor from /proc/self/mountinfo, which shows the
 * superblock's s_dev.
 *
 * That is an open, a read of a proc file and a close per file. On the
 * file systems whose getattr reports the superblock's device and the
 * inode's own number (generic_fillattr: ext2/3/4, xfs, tmpfs), one
 * statx gives the same pair, with the mount id in the same call so
 * that the file system is known for the very object that was stat'ed.
 * The fast path is taken only there, and only when statx's device is
 * the one mountinfo shows for that mount; anything else (overlayfs,
 * btrfs, 9p, FUSE, a mount we do not know yet) takes the slow path.
 * BPFSBX_IDENT_SLOW=1 forces the slow path, for the test that compares
 * the two on each file system.
 *
 * The mountinfo table is the only global state of policy/: it is cached
 * because compiling a policy asks for hundreds of identities, re-read
 * whenever an unknown mount id turns up (a mount appeared since), and
 * guarded by a mutex so that tests and the daemon may call in from any
 * thread, any number of times.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/fs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"
#include "lib/alloc.h"
#include "lib/mountinfo.h"

struct mnt_dev {
	int mnt_id;
	uint32_t dev;	/* kernel encoding: major << 20 | minor */
	bool stat_is_kernel;	/* statx reports (s_dev, i_ino) on this mount */
};

/* file systems whose getattr is generic_fillattr's (dev = s_dev, ino = i_ino) */
static bool fstype_stat_is_kernel(const char *t)
{
	static const char *const ok[] = { "ext2", "ext3", "ext4", "xfs", "tmpfs" };

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(t, ok[i]))
			return true;
	return false;
}

static pthread_mutex_t mnt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mnt_dev *mnt_tab;
static size_t mnt_n;

/* *tab, *n: the mounts of the mount namespace that path's mountinfo shows */
static int mountinfo_read(const char *path, struct mnt_dev **out, size_t *out_n)
{
	struct sbx_mount *ms;
	struct mnt_dev *tab;
	size_t n;
	int err = sbx_mountinfo_read(path, &ms, &n);

	if (err)
		return err;
	tab = calloc(n ? n : 1, sizeof(*tab));
	for (size_t i = 0; tab && i < n; i++) {
		tab[i].mnt_id = ms[i].id;
		tab[i].dev = (ms[i].maj << 20) | (ms[i].min & 0xfffff);
		tab[i].stat_is_kernel = fstype_stat_is_kernel(ms[i].fstype);
	}
	sbx_mountinfo_free(ms, n);
	if (!tab)
		return -ENOMEM;
	*out = tab;
	*out_n = n;
	return 0;
}

/*
 * A mount id is reused as soon as its mount is gone (the kernel takes the
 * lowest free one), so a cached table can name a new mount's id with the
 * device of an unmounted one: the identities of its files, and the rules
 * made on them, would be wrong. poll(2) on an open mountinfo file reports
 * POLLPRI once after each change of the mount table (mounts_poll,
 * fs/proc_namespace.c), so the cache is checked before every use. Called
 * after the object was opened or stat'ed: while a descriptor holds a
 * mount, its id is not reused.
 */
static int mnt_poll_fd = -1;
/* bumped at each read of the table: a batch of identities taken from it
 * (sbx_kident_statx) holds only if no thread read it again meanwhile,
 * which would have taken the event the batch's closing poll looks for */
static unsigned long mnt_gen;
/* a forked child shares the file, and its event: it opens its own (set
 * by the atfork handler, where a getpid per use was a syscall more for
 * every identity, thousands in a Landlock plan) */
static bool mnt_forked;
static pthread_once_t mnt_atfork_once = PTHREAD_ONCE_INIT;

/* the lock is taken across fork(): a child of the multi-threaded daemon
 * (a compile as the user) must not start with it held by a thread it
 * does not have */
static void mnt_before_fork(void)
{
	pthread_mutex_lock(&mnt_lock);
}

static void mnt_in_parent(void)
{
	pthread_mutex_unlock(&mnt_lock);
}

static void mnt_in_child(void)
{
	mnt_forked = true;
	pthread_mutex_unlock(&mnt_lock);
}

static void mnt_atfork(void)
{
	pthread_atfork(mnt_before_fork, mnt_in_parent, mnt_in_child);
}

static bool mnt_changed(void)
{
	struct pollfd p = { .fd = mnt_poll_fd, .events = POLLPRI };

	return mnt_poll_fd < 0 || mnt_forked || poll(&p, 1, 0) != 0;
}

static int mountinfo_reload(void)
{
	struct mnt_dev *tab;
	size_t n;
	int err;

	/* the event is taken before the read: a change during it is seen
	 * at the next use */
	pthread_once(&mnt_atfork_once, mnt_atfork);
	if (mnt_poll_fd >= 0 && mnt_forked) {
		close(mnt_poll_fd);
		mnt_poll_fd = -1;
	}
	mnt_forked = false;
	if (mnt_poll_fd < 0) {
		mnt_poll_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	} else {
		(void)mnt_changed();
	}
	mnt_gen++;
	err = mountinfo_read("/proc/self/mountinfo", &tab, &n);
	if (err) {
		/* the change was taken: a table kept now would pass for fresh */
		free(mnt_tab);
		mnt_tab = NULL;
		mnt_n = 0;
		return err;
	}
	free(mnt_tab);
	mnt_tab = tab;
	mnt_n = n;
	return 0;
}

static int mnt_lookup(int mnt_id, uint32_t *dev, bool *stat_ok)
{
	for (size_t i = 0; i < mnt_n; i++)
		if (mnt_tab[i].mnt_id == mnt_id) {
			*dev = mnt_tab[i].dev;
			if (stat_ok)
				*stat_ok = mnt_tab[i].stat_is_kernel;
			return 0;
		}
	return -ENOENT;
}

static int mnt_dev_of(int mnt_id, uint32_t *dev)
{
	int err;

	pthread_mutex_lock(&mnt_lock);
	err = mnt_changed() ? -ENOENT : mnt_lookup(mnt_id, dev, NULL);
	if (err) {
		/* unknown: a mount came or went since the last read */
		err = mountinfo_reload();
		if (!err)
			err = mnt_lookup(mnt_id, dev, NULL);
	}
	pthread_mutex_unlock(&mnt_lock);
	return err;
}

/*
 * The fast path: one statx of (dirfd, path, flags). 0 with the identity;
 * 1: not this way (another file system, an unknown mount, no mount id,
 * forced slow), the caller takes the slow path; -errno: no such object.
 */
static bool forced_slow(void)
{
	static int forced = -1;

	if (forced < 0) {
		const char *e = getenv("BPFSBX_IDENT_SLOW");

		forced = e && *e && strcmp(e, "0");
	}
	return forced;
}

static int kident_statx(int dirfd, const char *path, int flags, uint32_t *dev, uint64_t *ino)
{
	struct statx sx;
	uint32_t mdev = 0, sdev;
	bool ok = false;
	int err;

	if (statx(dirfd, path, flags | AT_STATX_SYNC_AS_STAT, STATX_INO | STATX_MNT_ID, &sx))
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ||
		       errno == EACCES || errno == ENAMETOOLONG ? -errno : 1;
	if (!(sx.stx_mask & STATX_MNT_ID) || !(sx.stx_mask & STATX_INO))
		return 1;
	pthread_mutex_lock(&mnt_lock);
	/* a mount the table calls one whose stat is not the kernel's
	 * (overlayfs, 9p, btrfs) goes the slow way, which checks the table
	 * itself: a stale answer here can only send it there */
	if (!mnt_lookup((int)sx.stx_mnt_id, &mdev, &ok) && !ok) {
		pthread_mutex_unlock(&mnt_lock);
		return 1;
	}
	err = mnt_changed() ? mountinfo_reload() : 0;
	if (!err)
		err = mnt_lookup((int)sx.stx_mnt_id, &mdev, &ok);
	pthread_mutex_unlock(&mnt_lock);
	if (err)
		return 1;	/* the slow path reads mountinfo again */
	sdev = (sx.stx_dev_major << 20) | (sx.stx_dev_minor & 0xfffff);
	if (!ok || sdev != mdev)
		return 1;
	*dev = sdev;
	*ino = sx.stx_ino;
	return 0;
}

/* No poll here, and no descriptor holds the object: what makes the table's
 * answer right is the caller's check around its batch of statx calls
 * (sbx_kident_mounts_unchanged), which no mount change gets past. */
int sbx_kident_statx(const struct statx *sx, uint32_t *dev, uint64_t *ino)
{
	uint32_t mdev = 0, sdev;
	bool ok = false;
	int err;

	if (forced_slow() || !(sx->stx_mask & STATX_MNT_ID) || !(sx->stx_mask & STATX_INO))
		return 1;
	pthread_mutex_lock(&mnt_lock);
	err = mnt_lookup((int)sx->stx_mnt_id, &mdev, &ok);
	pthread_mutex_unlock(&mnt_lock);
	sdev = (sx->stx_dev_major << 20) | (sx->stx_dev_minor & 0xfffff);
	if (!err && !ok)
		return 2;	/* overlayfs, 9p, btrfs: no statx tells */
	if (err || sdev != mdev)
		return 1;
	*dev = sdev;
	*ino = sx->stx_ino;
	return 0;
}

bool sbx_kident_mounts_unchanged(unsigned long *gen)
{
	bool changed, same;

	pthread_once(&mnt_atfork_once, mnt_atfork);
	pthread_mutex_lock(&mnt_lock);
	changed = mnt_changed();
	same = !changed && mnt_tab && *gen == mnt_gen;
	/* the poll took the event: the table is read again at once, or a
	 * stale one would pass for current at the next use */
	if (changed || !mnt_tab)
		(void)mountinfo_reload();
	*gen = mnt_gen;
	pthread_mutex_unlock(&mnt_lock);
	return same;
}

/* the number of line l when the line is "name value" */
static bool fdinfo_field(const char *l, const char *name, unsigned long long *v)
{
	size_t n = strlen(name);
	char *end;

	if (strncmp(l, name, n))
		return false;
	*v = strtoull(l + n, &end, 10);
	return end != l + n;
}

/* a mount of another mount namespace, by a process of it: not cached */
static int mnt_dev_of_pid(int mnt_id, pid_t pid, uint32_t *dev)
{
	char path[64];
	struct mnt_dev *tab;
	size_t n;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	err = mountinfo_read(path, &tab, &n);
	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < n; i++)
		if (tab[i].mnt_id == mnt_id) {
			*dev = tab[i].dev;
			err = 0;
		}
	free(tab);
	return err;
}

static int kident_fdinfo_in(int fd, pid_t pid, uint32_t *dev, uint64_t *ino);

static int kident_fdinfo(int fd, uint32_t *dev, uint64_t *ino)
{
	return kident_fdinfo_in(fd, 0, dev, ino);
}

/* pid: the mount ids are those of pid's mount namespace; 0: ours */
static int kident_fdinfo_in(int fd, pid_t pid, uint32_t *dev, uint64_t *ino)
{
	char path[64], buf[1024];
	int mnt_id = -1, have_ino = 0;
	ssize_t len;
	int pfd;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	pfd = open(path, O_RDONLY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	len = read(pfd, buf, sizeof(buf) - 1);
	close(pfd);
	if (len <= 0)
		return len < 0 ? -errno : -EIO;
	buf[len] = 0;
	/* "name:\tvalue" lines; sscanf per line cost more than the read */
	for (char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		unsigned long long v;

		if (fdinfo_field(l, "mnt_id:", &v) && v <= INT_MAX)
			mnt_id = (int)v;
		else if (fdinfo_field(l, "ino:", &v)) {
			*ino = v;
			have_ino = 1;
		}
	}
	/* fdinfo has shown "ino:" since Linux 5.14; without it there is no
	 * reliable identity, and guessing would be failing open */
	if (mnt_id < 0 || !have_ino)
		return -ENOTSUP;
	return pid ? mnt_dev_of_pid(mnt_id, pid, dev) : mnt_dev_of(mnt_id, dev);
}

int sbx_kident_fd(int fd, uint32_t *dev, uint64_t *ino)
{
	int err;

	if (!forced_slow()) {
		err = kident_statx(fd, "", AT_EMPTY_PATH, dev, ino);
		if (err <= 0)
			return err;
	}
	return kident_fdinfo(fd, dev, ino);
}

int sbx_kident_fast(const char *path, bool follow, uint32_t *dev, uint64_t *ino)
{
	return kident_statx(AT_FDCWD, path, follow ? 0 : AT_SYMLINK_NOFOLLOW, dev, ino);
}

int sbx_kident_slow(const char *path, bool follow, uint32_t *dev, uint64_t *ino)
{
	int fd = open(path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	int err;

	if (fd < 0)
		return -errno;
	err = kident_fdinfo(fd, dev, ino);
	close(fd);
	return err;
}

int sbx_kident(const char *path, bool follow, uint32_t *dev, uint64_t *ino)
{
	int err;

	if (!forced_slow()) {
		err = sbx_kident_fast(path, follow, dev, ino);
		if (err <= 0)
			return err;
	}
	return sbx_kident_slow(path, follow, dev, ino);
}

/*
 * ext2/3/4, xfs, btrfs and f2fs give a freed inode number to the next file
 * they make, with a new i_generation; (dev, ino, generation) names one
 * file for good. FS_IOC_GETVERSION reads it, from a descriptor that can
 * do I/O: the object is opened with O_PATH first, checked to be a regular
 * file or a directory with the identity asked about (so that no device or
 * FIFO is ever opened), and opened again through /proc/self/fd, which
 * reaches that same object.
 */
int sbx_kgen(const char *path, bool follow, uint32_t dev, uint64_t ino, uint32_t *gen)
{
	static const long reuse[] = {
		0xEF53,		/* ext2, ext3, ext4 */
		0x58465342,	/* xfs */
		0x9123683E,	/* btrfs */
		0xF2F52010,	/* f2fs */
	};
	/* numbers from a counter of the super block's (or the kernel's own
	 * objects): a freed one is not given again before it wraps */
	static const long unique[] = {
		0x01021994,	/* tmpfs */
		0x858458f6,	/* ramfs */
		0x9fa0,		/* proc */
		0x62656572,	/* sysfs */
		0x63677270,	/* cgroup2 */
	};
	struct statfs sf;
	struct stat st;
	char proc[64];
	uint32_t d;
	uint64_t i;
	bool known = false, once = false;
	int fd, io, rc = SBX_KGEN_NONE;
	unsigned int g;

	fd = open(path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	if (fd < 0)
		return SBX_KGEN_NONE;
	if (!fstatfs(fd, &sf)) {
		for (size_t k = 0; k < sizeof(reuse) / sizeof(reuse[0]); k++)
			known = known || (long)sf.f_type == reuse[k];
		for (size_t k = 0; k < sizeof(unique) / sizeof(unique[0]); k++)
			once = once || (long)sf.f_type == unique[k];
	}
	if (!known || fstat(fd, &st) || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) ||
	    sbx_kident_fd(fd, &d, &i) || d != dev || i != ino) {
		close(fd);
		return once ? SBX_KGEN_UNIQUE : SBX_KGEN_NONE;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	io = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
			  (S_ISDIR(st.st_mode) ? O_DIRECTORY : 0));
	if (io >= 0 && ioctl(io, FS_IOC_GETVERSION, &g) == 0) {
		*gen = g;
		rc = 0;
	}
	if (io >= 0)
		close(io);
	close(fd);
	return rc;
}

static const char *ftype_name(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:	return "file";
	case S_IFDIR:	return "dir";
	case S_IFLNK:	return "symlink";
	case S_IFCHR:	return "char";
	case S_IFBLK:	return "block";
	case S_IFIFO:	return "fifo";
	case S_IFSOCK:	return "socket";
	}
	return "unknown";
}

int sbx_open_in(pid_t pid, int dirfd, const char *path, unsigned flags)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (flags & SBX_IN_NOFOLLOW ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
			   (flags & SBX_IN_NO_SYMLINKS ? RESOLVE_NO_SYMLINKS : 0),
	};
	char root[64];
	int rfd = dirfd, fd = -EAGAIN;

	if (rfd < 0) {
		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
		rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rfd < 0)
			return -errno;
	}
	/* EAGAIN: a rename or mount raced a ".." of the lookup */
	for (int i = 0; i < 8 && fd == -EAGAIN; i++) {
		fd = (int)syscall(SYS_openat2, rfd, path, &how, sizeof(how));
		if (fd < 0)
			fd = -errno;
	}
	if (rfd != dirfd)
		close(rfd);
	return fd;
}

int sbx_kident_fd_in(int fd, pid_t pid, uint32_t *dev, uint64_t *ino)
{
	return kident_fdinfo_in(fd, pid, dev, ino);
}

/* pid: path is as pid sees it, through its root and its mounts; 0: ours */
static int objid_nofollow(const char *path, pid_t pid, struct sbx_objid *id)
{
	struct stat st;
	int fd, err;

	/* one descriptor for every fact, so that they are of one object
	 * even if the name is swapped meanwhile; a container's absolute
	 * symbolic links lead where they lead in it, not in ours */
	fd = pid ? sbx_open_in(pid, -1, path, SBX_IN_NOFOLLOW) : open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return pid ? fd : -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	err = pid ? kident_fdinfo_in(fd, pid, &id->dev, &id->ino) :
		    sbx_kident_fd(fd, &id->dev, &id->ino);
	id->btime[0] = 0;
	{
		struct statx sx;

		if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) == 0 &&
		    (sx.stx_mask & STATX_BTIME))
			snprintf(id->btime, sizeof(id->btime), "%lld.%09u",
				 (long long)sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec);
	}
	close(fd);
	id->type = ftype_name(st.st_mode);
	id->nlink = (unsigned long)st.st_nlink;
	return err;
}

int sbx_objid_nofollow(const char *path, struct sbx_objid *id)
{
	return objid_nofollow(path, 0, id);
}

/* the reason, and -ESTALE, for sbx_objid_check() */
#define stale(rc, ...) (*(rc) = -ESTALE, sbx_asprintf(__VA_ARGS__))

static int objid_check(const char *path, pid_t pid, bool new_name, uint32_t dev,
		       uint64_t ino, const char *type, const char *btime, char **why)
{
	struct sbx_objid id;
	char *dir = NULL, target[256];
	const char *name;
	int rc = 0, e;

	*why = NULL;
	if (!path || path[0] != '/') {
		*why = stale(&rc, "'%s' is not an absolute path, so it cannot be checked",
			     path ? path : "");
		return -EINVAL;
	}
	if (new_name) {
		name = strrchr(path, '/') + 1;
		dir = strndup(path, (size_t)(name - path > 1 ? name - path - 1 : 1));
		if (!dir)
			return -ENOMEM;
		e = objid_nofollow(dir, pid, &id);
		if (e)
			*why = stale(&rc, "%s: the directory %s is gone (%s)", path, dir,
				     strerror(-e));
		else if (id.dev != dev || id.ino != ino || strcmp(id.type, "dir"))
			*why = stale(&rc, "%s: the directory %s was replaced since the request "
				     "(now %s %u:%llu, asked for dir %u:%llu)", path, dir, id.type,
				     id.dev, (unsigned long long)id.ino, dev,
				     (unsigned long long)ino);
		else if (*name && objid_nofollow(path, pid, &id) == 0 && !strcmp(id.type, "symlink"))
			*why = stale(&rc, "%s is now a symbolic link; the request was for a new "
				     "file of that name", path);
		free(dir);
		return rc;
	}
	e = objid_nofollow(path, pid, &id);
	if (e == -ENOENT || e == -ENOTDIR)
		return *why = stale(&rc, "%s no longer exists", path), rc;
	if (e)
		return *why = stale(&rc, "%s: %s", path, strerror(-e)), rc;
	if (!strcmp(id.type, "symlink")) {
		int fd = pid ? sbx_open_in(pid, -1, path, SBX_IN_NOFOLLOW) : open(path, O_PATH | O_NOFOLLOW |
									    O_CLOEXEC);
		ssize_t n = fd >= 0 ? readlinkat(fd, "", target, sizeof(target) - 1) : -1;

		if (fd >= 0)
			close(fd);

		target[n > 0 ? n : 0] = 0;
		return *why = stale(&rc, "%s is now a symbolic link (to %s); the request was "
				    "for the file that was there", path, n > 0 ? target : "?"), rc;
	}
	if (id.dev != dev || id.ino != ino)
		return *why = stale(&rc, "%s now leads to another object (%s %u:%llu, the "
				    "request showed %u:%llu)", path, id.type, id.dev,
				    (unsigned long long)id.ino, dev, (unsigned long long)ino), rc;
	if (btime && *btime && id.btime[0] && strcmp(btime, id.btime))
		return *why = stale(&rc, "%s now leads to another file that reuses the inode "
				    "number of the one the request showed (born %s, not %s)", path,
				    id.btime, btime), rc;
	if (type && strcmp(type, id.type))
		return *why = stale(&rc, "%s is now a %s, the request showed a %s", path,
				    id.type, type), rc;
	if (!strcmp(id.type, "file") && id.nlink > 1) {
		*why = stale(&rc, "%s has %lu hard links: a grant on it would also cover "
			     "%lu other name(s) that were never shown", path, id.nlink,
			     id.nlink - 1);
		return -EMLINK;
	}
	return 0;
}

int sbx_objid_check(const char *path, bool new_name, uint32_t dev, uint64_t ino,
		    const char *type, const char *btime, char **why)
{
	return objid_check(path, 0, new_name, dev, ino, type, btime, why);
}

int sbx_objid_check_in(pid_t pid, const char *path, bool new_name, uint32_t dev,
		       uint64_t ino, const char *type, const char *btime, char **why)
{
	return objid_check(path, pid, new_name, dev, ino, type, btime, why);
}

char *sbx_path_normalize(const char *path)
{
	size_t len = strlen(path);
	char *out = malloc(len + 2);
	size_t o = 0;
	const char *p = path;

	if (!out)
		return NULL;
	out[o++] = '/';
	while (*p) {
		const char *e;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchr(p, '/');
		n = e ? (size_t)(e - p) : strlen(p);
		if (n == 1 && p[0] == '.') {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			/* lexical: ".." of "/" is "/" */
			if (o > 1) {
				o--;
				while (o > 1 && out[o - 1] != '/')
					o--;
				if (o > 1)
					o--;
			}
		} else {
			if (o > 1)
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p += n;
	}
	out[o] = 0;
	return out;
}
