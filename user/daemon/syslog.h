/* SPDX-License-Identifier: GPL-2.0 */
/* syslog.h - events as RFC 5424 syslog messages with structured data (syslog.c). */
#ifndef SBX_SYSLOG_H
#define SBX_SYSLOG_H

#include <stdbool.h>
#include "user/daemon/evrec.h"

/* The SD-ID of bpfsbx's fields: a name@PEN id (RFC 5424, 6.3.2); 32473
 * is the enterprise number RFC 5612 reserves for documentation and
 * examples, as bpfsbx has none of its own. */
#define SBX_SYSLOG_SDID "bpfsbx@32473"

enum sbx_syslog_proto { SBX_SYSLOG_UNIX, SBX_SYSLOG_UDP, SBX_SYSLOG_TCP };

struct sbx_syslog_target {
	enum sbx_syslog_proto proto;
	char path[108];		/* UNIX: the socket (sun_path's size) */
	char host[256], port[6];	/* UDP, TCP */
};

/*
 * "unix:/dev/log" (or a path alone), "udp:HOST:PORT", "tcp:HOST:PORT";
 * HOST may be "[v6 address]". 0, or -EINVAL with *err naming what is
 * wrong (malloc'd).
 */
int sbx_syslog_parse_target(const char *s, struct sbx_syslog_target *t, char **err);
/* daemon --syslog TARGET: where every event also goes from now on. */
int sbx_syslog_configure(const char *target, char **err);
/*
 * r as one RFC 5424 message, without transport framing (malloc'd):
 * <PRI>1 TIME HOST bpfsbx PROCID KIND [bpfsbx@32473 k="v" ...] MESSAGE
 * Facility auth (4); severity by verdict. Parameter values escape '"',
 * '\' and ']' (RFC 5424, 6.3.3), and a byte that is not UTF-8 becomes
 * '?', since a value must be UTF-8.
 */
char *sbx_syslog_format(const struct sbx_evrec *r, const char *host, int procid);
void sbx_syslog_event(const struct sbx_evrec *r);
unsigned long sbx_syslog_sent(void);
unsigned long sbx_syslog_failures(void);

#endif
