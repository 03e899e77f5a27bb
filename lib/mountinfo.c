// SPDX-License-Identifier: GPL-2.0
/*
 * mountinfo.c - the mounts that a mountinfo file lists (see mountinfo.h).
 *
 * A line: id parent maj:min root point options [optional fields...] - type
 * source super-options. The optional fields vary in number, so the type is
 * found after the " - " separator; the kernel escapes space, tab, newline
 * and backslash in paths as \ooo (seq_path's mangle), which is undone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/alloc.h"
#include "lib/mountinfo.h"

static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++, o++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o = *s;
		}
	}
	*o = 0;
}

bool sbx_mountinfo_parse(char *l, struct sbx_mount *m)
{
	char *sep = strstr(l, " - "), *f[5], *save = NULL;

	if (!sep || sscanf(l, "%d %d %u:%u", &m->id, &m->parent, &m->maj, &m->min) != 4 ||
	    sscanf(sep + 3, "%31s", m->fstype) != 1)
		return false;
	*sep = 0;
	f[0] = strtok_r(l, " \n", &save);
	for (int i = 1; i < 5; i++)
		if (!(f[i] = strtok_r(NULL, " \n", &save)))
			return false;
	m->point = f[4];
	unescape(m->point);
	return true;
}

void sbx_mountinfo_free(struct sbx_mount *tab, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(tab[i].point);
	free(tab);
}

int sbx_mountinfo_read(const char *path, struct sbx_mount **out, size_t *out_n)
{
	FILE *f = fopen(path, "re");
	struct sbx_mount *tab = NULL, m;
	size_t n = 0, cap = 0, lcap = 0;
	char *line = NULL;
	int rc = 0;

	if (!f)
		return -errno;
	while (getline(&line, &lcap, f) > 0) {
		if (!sbx_mountinfo_parse(line, &m))
			continue;
		if (!SBX_GROW(tab, cap, n + 1, 64) || !(m.point = strdup(m.point))) {
			rc = -ENOMEM;
			break;
		}
		tab[n++] = m;
	}
	/* getline stops at the end, or on an error (ENOMEM) that an older
	 * glibc does not flag: a table cut short is no table */
	if (!rc && (ferror(f) || !feof(f)))
		rc = errno ? -errno : -EIO;
	free(line);
	fclose(f);
	if (rc) {
		sbx_mountinfo_free(tab, n);
		return rc;
	}
	*out = tab;
	*out_n = n;
	return 0;
}
