// SPDX-License-Identifier: GPL-2.0
/*
 * fs.c - file identity as the kernel sees it, and lexical path handling.
 *
 * The BPF programs name a file by (inode->i_sb->s_dev, inode->i_ino).
 * stat(2) does not report that pair on overlayfs and btrfs (st_dev there
 * is a per-subvolume or per-layer anonymous device), so the identity is
 * read from /proc/self/fdinfo (mnt_id, ino) of an O_PATH descriptor and
 * the mount's major:minor from /proc/self/mountinfo, which shows the
 * superblock's s_dev.
 *
 * The mountinfo table is the only global state of policy/: it is cached
 * because compiling a policy asks for hundreds of identities, re-read
 * whenever an unknown mount id turns up (a mount appeared since), and
 * guarded by a mutex so that tests and the daemon may call in from any
 * thread, any number of times.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define SBX_POLICY_INTERNAL
#include "policy/policy.h"

struct mnt_dev {
	int mnt_id;
	uint32_t dev;	/* kernel encoding: major << 20 | minor */
};

static pthread_mutex_t mnt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mnt_dev *mnt_tab;
static size_t mnt_n;

static int mountinfo_reload(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	struct mnt_dev *tab = NULL;
	size_t n = 0, cap = 0;
	char *line = NULL;
	size_t lcap = 0;

	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		int id, parent;
		unsigned maj, min;

		if (sscanf(line, "%d %d %u:%u", &id, &parent, &maj, &min) != 4)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct mnt_dev *t = realloc(tab, ncap * sizeof(*t));

			if (!t) {
				free(tab);
				free(line);
				fclose(f);
				return -ENOMEM;
			}
			tab = t;
			cap = ncap;
		}
		tab[n].mnt_id = id;
		tab[n].dev = (maj << 20) | (min & 0xfffff);
		n++;
	}
	free(line);
	fclose(f);
	free(mnt_tab);
	mnt_tab = tab;
	mnt_n = n;
	return 0;
}

static int mnt_lookup(int mnt_id, uint32_t *dev)
{
	for (size_t i = 0; i < mnt_n; i++)
		if (mnt_tab[i].mnt_id == mnt_id) {
			*dev = mnt_tab[i].dev;
			return 0;
		}
	return -ENOENT;
}

static int mnt_dev_of(int mnt_id, uint32_t *dev)
{
	int err;

	pthread_mutex_lock(&mnt_lock);
	err = mnt_lookup(mnt_id, dev);
	if (err) {
		/* unknown: a mount came or went since the last read */
		err = mountinfo_reload();
		if (!err)
			err = mnt_lookup(mnt_id, dev);
	}
	pthread_mutex_unlock(&mnt_lock);
	return err;
}

int sbx_kident_fd(int fd, uint32_t *dev, uint64_t *ino)
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
	for (char *l = buf; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		unsigned long long v;

		if (sscanf(l, "mnt_id: %d", &mnt_id) == 1)
			continue;
		if (sscanf(l, "ino: %llu", &v) == 1) {
			*ino = v;
			have_ino = 1;
		}
	}
	/* fdinfo has shown "ino:" since Linux 5.14; without it there is no
	 * reliable identity, and guessing would be failing open */
	if (mnt_id < 0 || !have_ino)
		return -ENOTSUP;
	return mnt_dev_of(mnt_id, dev);
}

int sbx_kident(const char *path, bool follow, uint32_t *dev, uint64_t *ino)
{
	int fd = open(path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
	int err;

	if (fd < 0)
		return -errno;
	err = sbx_kident_fd(fd, dev, ino);
	close(fd);
	return err;
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
