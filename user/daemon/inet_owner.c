// SPDX-License-Identifier: GPL-2.0
/*
 * inet_owner.c - who serves a local TCP or UDP port (see inet_owner.h).
 *
 * /proc/net/{tcp,udp}{,6} give the listening socket's inode; the process
 * is the one with a descriptor "socket:[inode]". Only run for an event
 * (deny or ask, folded), never per connect.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "user/daemon/inet_owner.h"

/* the hex address of /proc/net/tcp and friends: 32-bit words, each in host order */
static int parse_hexaddr(const char *hex, size_t words, uint8_t *out)
{
	for (size_t w = 0; w < words; w++) {
		char part[9];
		uint32_t v;

		memcpy(part, hex + 8 * w, 8);
		part[8] = 0;
		if (sscanf(part, "%8x", &v) != 1)
			return -1;
		memcpy(out + 4 * w, &v, 4);
	}
	return 0;
}

static unsigned long listening_inode(int family, const uint8_t *addr, uint16_t port,
				     uint8_t proto)
{
	static const uint8_t any[16];
	size_t words = family == AF_INET6 ? 4 : 1, alen = 4 * words;
	char path[32], line[512];
	unsigned long found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/net/%s%s", proto == IPPROTO_TCP ? "tcp" : "udp",
		 family == AF_INET6 ? "6" : "");
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char local[40], st[4];
		unsigned lport;
		unsigned long ino;
		uint8_t a[16];

		if (sscanf(line, " %*u: %39[0-9A-Fa-f]:%x %*s %3s %*s %*s %*s %*s %*s %lu",
			   local, &lport, st, &ino) != 4 || strlen(local) != 8 * words)
			continue;
		/* TCP_LISTEN (0A); an unconnected UDP socket is TCP_CLOSE (07) */
		if (lport != port || strcmp(st, proto == IPPROTO_TCP ? "0A" : "07"))
			continue;
		if (parse_hexaddr(local, words, a))
			continue;
		if (!memcmp(a, addr, alen) || !memcmp(a, any, alen))
			found = ino;
	}
	fclose(f);
	return found;
}

pid_t sbx_inet_owner(int family, const uint8_t *addr, uint16_t port, uint8_t proto)
{
	unsigned long ino = listening_inode(family, addr, port, proto);
	char want[48];
	DIR *proc;
	struct dirent *de;
	pid_t pid = 0;

	if (!ino && family == AF_INET) {
		/* a dual-stack IPv6 listener serves IPv4 too */
		uint8_t m[16] = { [10] = 0xff, [11] = 0xff };

		memcpy(m + 12, addr, 4);
		ino = listening_inode(AF_INET6, m, port, proto);
	}
	if (!ino || !(proc = opendir("/proc")))
		return 0;
	snprintf(want, sizeof(want), "socket:[%lu]", ino);
	while (!pid && (de = readdir(proc))) {
		char dir[64], link[64], *end;
		long p = strtol(de->d_name, &end, 10);
		DIR *fds;
		struct dirent *fe;

		if (*end || p <= 0)
			continue;
		snprintf(dir, sizeof(dir), "/proc/%ld/fd", p);
		fds = opendir(dir);
		while (fds && (fe = readdir(fds))) {
			char fpath[384];
			ssize_t n;

			snprintf(fpath, sizeof(fpath), "%s/%s", dir, fe->d_name);
			n = readlink(fpath, link, sizeof(link) - 1);
			if (n > 0 && (link[n] = 0, !strcmp(link, want))) {
				pid = (pid_t)p;
				break;
			}
		}
		if (fds)
			closedir(fds);
	}
	closedir(proc);
	return pid;
}
