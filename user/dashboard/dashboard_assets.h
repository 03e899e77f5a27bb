/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dashboard_assets.h - the dashboard's page, carried inside the binary.
 * The files are those in user/dashboard/page/, plain HTML, CSS and
 * JavaScript; the Makefile turns them into byte arrays
 * (build/gen/dashboard_assets.c), so nothing is fetched from anywhere when
 * the page is served.
 */
#ifndef SBX_DASHBOARD_ASSETS_H
#define SBX_DASHBOARD_ASSETS_H

#include <stddef.h>

struct sbx_dash_asset {
	const char *path;		/* "/index.html": "/" and the file's name */
	const unsigned char *data;
	size_t len;
};

/* ends with an entry whose path is NULL */
extern const struct sbx_dash_asset sbx_dash_assets[];

#endif
