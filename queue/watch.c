// SPDX-License-Identifier: GPL-2.0
/*
 * watch.c - inotify on a queue's folders (see watch.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <unistd.h>
#include "queue/watch.h"

struct sbx_qwatch {
	int fd;
};

struct sbx_qwatch *sbx_qwatch_new(void)
{
	struct sbx_qwatch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (w->fd < 0) {
		int e = errno;

		free(w);
		errno = e;
		return NULL;
	}
	return w;
}

void sbx_qwatch_free(struct sbx_qwatch *w)
{
	if (!w)
		return;
	close(w->fd);
	free(w);
}

int sbx_qwatch_fd(const struct sbx_qwatch *w)
{
	return w->fd;
}

static uint32_t mask_of(unsigned what)
{
	uint32_t m = 0;

	/* the queue renames records in; CLOSE_WRITE also catches a file
	 * written in place by a hand or a tool that does not */
	if (what & SBX_QW_ARRIVED)
		m |= IN_MOVED_TO | IN_CLOSE_WRITE;
	if (what & SBX_QW_CREATED)
		m |= IN_CREATE;
	if (what & SBX_QW_LEFT)
		m |= IN_MOVED_FROM | IN_DELETE;
	if (what & SBX_QW_APPENDED)
		m |= IN_MODIFY;
	return m;
}

/* our own fd: the one magic link followed on purpose */
static int add_fd(struct sbx_qwatch *w, int dirfd, unsigned what)
{
	char path[64];
	int wd;

	if (dirfd < 0)
		return dirfd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dirfd);
	wd = inotify_add_watch(w->fd, path, mask_of(what));
	return wd < 0 ? -errno : wd;
}

int sbx_qwatch_add(struct sbx_qwatch *w, struct sbx_queue *q, enum sbx_qdir sub,
		   unsigned what)
{
	return add_fd(w, sbx_queue_dirfd(q, sub), what);
}

int sbx_qwatch_add_audit(struct sbx_qwatch *w, struct sbx_queue *q, unsigned what)
{
	int afd = sbx_openat_beneath(sbx_queue_sandbox_fd(q), "audit",
				     O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	int rc = add_fd(w, afd, what);

	if (afd >= 0)
		close(afd);
	return rc;
}

int sbx_qwatch_add_path(struct sbx_qwatch *w, const char *dir, unsigned what)
{
	int wd = inotify_add_watch(w->fd, dir, mask_of(what));

	return wd < 0 ? -errno : wd;
}

void sbx_qwatch_rm(struct sbx_qwatch *w, int id)
{
	if (id >= 0)
		inotify_rm_watch(w->fd, id);
}

int sbx_qwatch_read(struct sbx_qwatch *w, sbx_qwatch_fn *fn, void *arg)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	int count = 0;

	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? count : -errno;
		if (n == 0)
			return count;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			p += sizeof(*ev) + ev->len;
			count++;
			if (fn)
				fn(arg, ev->wd, ev->len ? ev->name : "");
		}
	}
}
