// SPDX-License-Identifier: GPL-2.0
/*
 * notify.c - sd_notify for bpfsbx.service (Type=notify), so that
 * `systemctl start bpfsbx` returns once the programs are loaded, attached
 * and the control socket listens, not when the process has merely started:
 * a `bpfsbx run` right after it finds a confining daemon.
 *
 * libsystemd is opened only when NOTIFY_SOCKET is set (lib/dynload.c), as
 * the journal opens it: a daemon started by hand or in the VM suite loads
 * nothing. NOTIFY_SOCKET set and no libsystemd is a service that systemd
 * will time out, so that is said once, loudly; the daemon runs on.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/dynload.h"
#include "lib/log.h"
#include "user/daemon/notify.h"

static const char *const libsystemd_names[] = { "libsystemd.so.0", "libsystemd.so", NULL };
static struct sbx_dynlib libsystemd = { .sonames = libsystemd_names };

int sbx_notify(const char *fmt, ...)
{
	static int (*notify)(int unset_environment, const char *state);
	static int warned;
	char *state;
	va_list ap;
	int rc;

	if (!getenv("NOTIFY_SOCKET"))
		return 0;
	if (!notify && !(notify = sbx_dynsym(&libsystemd, "sd_notify"))) {
		if (!warned++)
			sbx_warn("NOTIFY_SOCKET is set but libsystemd cannot be opened (%s): "
				 "systemd is not told that the daemon is ready", libsystemd.error);
		return -1;
	}
	va_start(ap, fmt);
	rc = vasprintf(&state, fmt, ap);
	va_end(ap);
	if (rc < 0)
		return -1;
	rc = notify(0, state);
	if (rc < 0 && !warned++)
		sbx_warn("sd_notify: %s", strerror(-rc));
	free(state);
	return rc < 0 ? -1 : 0;
}
