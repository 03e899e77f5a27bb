// SPDX-License-Identifier: GPL-2.0
/*
 * dirwatch.c - inotify on the way to paths (see dirwatch.h).
 *
 * A watched directory keeps the names on the ways that pass through it,
 * and for each name the owners whose ways it is on: an event for another
 * name there (a file created in the project, say) changes nothing.
 */
#include <errno.h>
#include <limits.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/vfs.h>
#include "lib/alloc.h"
#include "lib/dirwatch.h"

#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | \
		    IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)

struct wname {
	char *name;
	uint32_t *owners;
	size_t n;
};

struct wdir {
	char *path;
	int wd;			/* -1: its watch went (the directory was removed) */
	struct wname *names;
	size_t n;
};

struct ostate {
	uint32_t owner;
	bool stale;		/* a change on its way, not yet checked */
	bool broken;		/* a watch could not be set: always stale */
};

struct sbx_dirwatch {
	int fd;
	void *by_path;		/* tsearch tree of struct wdir *, by path */
	struct wdir **dirs;
	size_t ndirs;
	struct ostate *owners;
	size_t nowners;
};

/*
 * inotify reports the changes made through this kernel only: on NFS, CIFS,
 * 9p or FUSE another machine (or the server) can remove and make again a
 * directory unseen. A way through any other file system is not watched:
 * its owner stays stale, and the caller checks the paths themselves.
 */
static bool local_fs(const char *path)
{
	static const long local[] = {
		0xEF53,		/* ext2, ext3, ext4 */
		0x58465342,	/* xfs */
		0x9123683E,	/* btrfs */
		0x01021994,	/* tmpfs */
		0xF2F52010,	/* f2fs */
		0x794c7630,	/* overlayfs (its changes go through this kernel) */
	};
	struct statfs sf;

	if (statfs(path, &sf))
		return false;
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
		if ((long)sf.f_type == local[i])
			return true;
	return false;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct wdir *)a)->path, ((const struct wdir *)b)->path);
}

struct sbx_dirwatch *sbx_dirwatch_new(void)
{
	struct sbx_dirwatch *w;
	int fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);

	if (fd < 0)
		return NULL;
	w = sbx_calloc(1, sizeof(*w));
	w->fd = fd;
	return w;
}

static void wdir_free(struct wdir *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->names[i].name);
		free(d->names[i].owners);
	}
	free(d->names);
	free(d->path);
	free(d);
}

static void noop_free(void *p)
{
	(void)p;
}

void sbx_dirwatch_free(struct sbx_dirwatch *w)
{
	if (!w)
		return;
	tdestroy(w->by_path, noop_free);
	for (size_t i = 0; i < w->ndirs; i++)
		wdir_free(w->dirs[i]);
	free(w->dirs);
	free(w->owners);
	close(w->fd);
	free(w);
}

static struct ostate *ostate(struct sbx_dirwatch *w, uint32_t owner, bool create)
{
	for (size_t i = 0; i < w->nowners; i++)
		if (w->owners[i].owner == owner)
			return &w->owners[i];
	if (!create)
		return NULL;
	w->owners = sbx_realloc_array(w->owners, w->nowners + 1, sizeof(*w->owners));
	w->owners[w->nowners] = (struct ostate){ .owner = owner, .stale = true };
	return &w->owners[w->nowners++];
}

static void mark_stale(struct sbx_dirwatch *w, const uint32_t *owners, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ostate *o = ostate(w, owners[i], false);

		if (o)
			o->stale = true;
	}
}

static struct wdir *wdir_get(struct sbx_dirwatch *w, const char *path, int *err)
{
	struct wdir key = { .path = (char *)path }, *d, **found;

	found = tfind(&key, &w->by_path, cmp_path);
	if (found)
		return *found;
	if (!local_fs(path)) {
		*err = -EREMOTE;
		return NULL;
	}
	d = sbx_calloc(1, sizeof(*d));
	d->path = sbx_strdup(path);
	d->wd = inotify_add_watch(w->fd, path, WATCH_MASK);
	if (d->wd < 0) {
		*err = -errno;
		wdir_free(d);
		return NULL;
	}
	if (!tsearch(d, &w->by_path, cmp_path)) {
		*err = -ENOMEM;
		inotify_rm_watch(w->fd, d->wd);
		wdir_free(d);
		return NULL;
	}
	w->dirs = sbx_realloc_array(w->dirs, w->ndirs + 1, sizeof(*w->dirs));
	w->dirs[w->ndirs++] = d;
	return d;
}

static void wdir_interest(struct wdir *d, const char *name, size_t len, uint32_t owner)
{
	struct wname *nm = NULL;

	for (size_t i = 0; i < d->n && !nm; i++)
		if (strlen(d->names[i].name) == len && !memcmp(d->names[i].name, name, len))
			nm = &d->names[i];
	if (!nm) {
		d->names = sbx_realloc_array(d->names, d->n + 1, sizeof(*d->names));
		nm = &d->names[d->n++];
		*nm = (struct wname){ .name = sbx_asprintf("%.*s", (int)len, name) };
	}
	for (size_t i = 0; i < nm->n; i++)
		if (nm->owners[i] == owner)
			return;
	nm->owners = sbx_realloc_array(nm->owners, nm->n + 1, sizeof(*nm->owners));
	nm->owners[nm->n++] = owner;
}

int sbx_dirwatch_add(struct sbx_dirwatch *w, uint32_t owner, const char *path)
{
	struct ostate *o = ostate(w, owner, true);
	char dir[PATH_MAX];
	const char *p = path;
	size_t dlen = 1;

	if (path[0] != '/' || strlen(path) >= sizeof(dir)) {
		o->broken = true;
		return -EINVAL;
	}
	dir[0] = '/';
	dir[1] = 0;
	for (;;) {
		const char *name, *end;
		struct wdir *d;
		int err = 0;

		while (*p == '/')
			p++;
		if (!*p)
			return 0;
		name = p;
		end = strchr(name, '/');
		if (!end)
			end = name + strlen(name);
		d = wdir_get(w, dir, &err);
		if (!d) {
			ostate(w, owner, false)->broken = true;
			return err;
		}
		wdir_interest(d, name, (size_t)(end - name), owner);
		/* the next directory on the way */
		if (dlen > 1)
			dir[dlen++] = '/';
		memcpy(dir + dlen, name, (size_t)(end - name));
		dlen += (size_t)(end - name);
		dir[dlen] = 0;
		p = end;
	}
}

void sbx_dirwatch_forget(struct sbx_dirwatch *w, uint32_t owner)
{
	struct wdir **gone = sbx_calloc(w->ndirs + 1, sizeof(*gone));
	size_t k = 0, ngone = 0;

	for (size_t i = 0; i < w->ndirs; i++) {
		struct wdir *d = w->dirs[i];
		size_t m = 0;

		for (size_t j = 0; j < d->n; j++) {
			struct wname *nm = &d->names[j];
			size_t q = 0;

			for (size_t x = 0; x < nm->n; x++)
				if (nm->owners[x] != owner)
					nm->owners[q++] = nm->owners[x];
			nm->n = q;
			if (!q) {
				free(nm->name);
				free(nm->owners);
				continue;
			}
			d->names[m++] = *nm;
		}
		d->n = m;
		if (!m) {
			tdelete(d, &w->by_path, cmp_path);
			gone[ngone++] = d;
			continue;
		}
		w->dirs[k++] = d;
	}
	w->ndirs = k;
	/* a watch is per inode: two paths of one directory share it */
	for (size_t i = 0; i < ngone; i++) {
		bool shared = gone[i]->wd < 0;

		for (size_t j = 0; j < k && !shared; j++)
			shared = w->dirs[j]->wd == gone[i]->wd;
		for (size_t j = 0; j < i && !shared; j++)
			shared = gone[j]->wd == gone[i]->wd;
		if (!shared)
			inotify_rm_watch(w->fd, gone[i]->wd);
	}
	for (size_t i = 0; i < ngone; i++)
		wdir_free(gone[i]);
	free(gone);
	for (size_t i = 0; i < w->nowners; i++)
		if (w->owners[i].owner == owner) {
			w->owners[i] = w->owners[--w->nowners];
			break;
		}
}

static void all_stale(struct sbx_dirwatch *w)
{
	for (size_t i = 0; i < w->nowners; i++)
		w->owners[i].stale = true;
}

static void event(struct sbx_dirwatch *w, const struct inotify_event *ev)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		all_stale(w);
		return;
	}
	for (size_t i = 0; i < w->ndirs; i++) {
		struct wdir *d = w->dirs[i];

		if (d->wd != ev->wd)
			continue;
		if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED)) {
			/* the directory itself: every way through it; its watch
			 * is gone (or going), set again at rearm */
			for (size_t j = 0; j < d->n; j++)
				mark_stale(w, d->names[j].owners, d->names[j].n);
			if (ev->mask & IN_IGNORED)
				d->wd = -1;
			continue;
		}
		if (!ev->len)
			continue;
		for (size_t j = 0; j < d->n; j++)
			if (!strcmp(d->names[j].name, ev->name))
				mark_stale(w, d->names[j].owners, d->names[j].n);
	}
}

static void drain(struct sbx_dirwatch *w)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(w->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			event(w, ev);
			p += sizeof(*ev) + ev->len;
		}
	}
}

bool sbx_dirwatch_stale(struct sbx_dirwatch *w, uint32_t owner)
{
	struct ostate *o;

	drain(w);
	o = ostate(w, owner, false);
	return !o || o->stale || o->broken;
}

void sbx_dirwatch_rearm(struct sbx_dirwatch *w, uint32_t owner)
{
	struct ostate *o;

	/* no drain here: an event queued since sbx_dirwatch_stale() may be
	 * of a change the caller's check did not see; the next call reads it */
	/* a directory whose watch went (removed and made again, or moved
	 * back) is watched again before changes count from now */
	for (size_t i = 0; i < w->ndirs; i++) {
		struct wdir *d = w->dirs[i];
		bool mine = false;

		for (size_t j = 0; j < d->n && !mine; j++)
			for (size_t x = 0; x < d->names[j].n && !mine; x++)
				mine = d->names[j].owners[x] == owner;
		if (!mine || d->wd >= 0)
			continue;
		d->wd = inotify_add_watch(w->fd, d->path, WATCH_MASK);
		if (d->wd < 0) {
			o = ostate(w, owner, true);
			o->broken = true;
		}
	}
	o = ostate(w, owner, true);
	o->stale = false;
}

unsigned sbx_dirwatch_count(const struct sbx_dirwatch *w)
{
	return w ? (unsigned)w->ndirs : 0;
}
