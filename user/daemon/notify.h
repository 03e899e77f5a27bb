/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SBX_NOTIFY_H
#define SBX_NOTIFY_H

/*
 * Tell the service manager (systemd, Type=notify) about the daemon's
 * state: "READY=1\nSTATUS=...", "STOPPING=1". Nothing happens without
 * NOTIFY_SOCKET (the daemon was not started by systemd's notify
 * protocol). Returns 0 when sent or when there is no one to tell.
 */
int sbx_notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
