/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mountinfo.h - the mounts that a /proc/PID/mountinfo file lists
 * (proc_pid_mountinfo(5)): one reader for the identities of policy/ and
 * the container checks of the daemon.
 */
#ifndef SBX_MOUNTINFO_H
#define SBX_MOUNTINFO_H

#include <stdbool.h>
#include <stddef.h>

struct sbx_mount {
	int id, parent;
	unsigned maj, min;	/* the superblock's s_dev */
	char *point;		/* where it is mounted, unescaped */
	char fstype[32];
};

/*
 * Parse one line in place (point points into it). false: not a mount
 * line (no separator, too few fields).
 */
bool sbx_mountinfo_parse(char *line, struct sbx_mount *m);
/*
 * Every mount of the file at path, in its order (a later mount at the same
 * point is above an earlier one). 0, or -errno (-ENOMEM included); lines
 * that are no mount are skipped.
 */
int sbx_mountinfo_read(const char *path, struct sbx_mount **out, size_t *n);
void sbx_mountinfo_free(struct sbx_mount *tab, size_t n);

#endif
