// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the syslog sink (user/daemon/syslog.c): the
 * --syslog target parser, and the RFC 5424 message of a record whose
 * strings are arbitrary bytes. Oracle: a parsed target is one the
 * transport can use (an absolute socket path, or a host and a port of
 * 1..65535); a refused one says why; the message is valid UTF-8 and its
 * one SD element ends at the first ']' that no backslash escapes, right
 * where the parameters end: a value cannot close it early, nor open a
 * second element.
 *
 *   make fuzz && build/fuzz/fuzz_syslog tools/fuzz/corpus/fuzz_syslog
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "queue/render.h"
#include "user/daemon/syslog.h"

static bool utf8(const char *s)
{
	size_t left = strlen(s), n;
	unsigned cp;

	for (; left; s += n, left -= n)
		if (!(n = sbx_utf8_decode((const unsigned char *)s, left, &cp)))
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *err = NULL, *msg, *sd, *end;
	struct sbx_syslog_target t;
	struct timespec ts = { 0 };
	struct sbx_evrec r;
	long port;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	if (sbx_syslog_parse_target(s, &t, &err) == 0) {
		if (t.proto == SBX_SYSLOG_UNIX) {
			if (t.path[0] != '/')
				abort();
		} else {
			port = strtol(t.port, &end, 10);
			if (!t.host[0] || *end || port < 1 || port > 65535)
				abort();
		}
	} else if (!err) {
		abort();
	}
	free(err);

	sbx_evrec_init(&r, "kernel", &ts);
	r.object = s;
	r.exe = s + size / 2;
	r.verdict = "deny";
	msg = sbx_syslog_format(&r, "h", 1);
	if (!msg)
		abort();
	sd = strchr(msg, '[');
	for (end = sd + 1; *end && *end != ']'; end++)
		if (*end == '\\' && end[1])
			end++;
	/* the element ends after the last parameter: the verdict's */
	if (*end != ']' || strncmp(end - 15, " verdict=\"deny\"", 15) || end[1] != ' ')
		abort();
	*end = 0;
	if (!utf8(sd))
		abort();
	free(msg);
	free(s);
	return 0;
}
