// SPDX-License-Identifier: GPL-2.0
/* control_client.c - the client side of the daemon's control socket. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include "bpf/bpfsbx.h"
#include "user/control/control_client.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "lib/json.h"

const char *sbx_control_path(void)
{
	const char *p = getenv(SBX_CONTROL_ENV);

	return p && *p ? p : SBX_CONTROL_SOCK;
}

static int set_err(char **err, int rc, const char *what)
{
	if (err)
		*err = sbx_asprintf("%s: %s", what, strerror(-rc));
	return rc;
}

/* Replies can take a while (a policy compile resolves host names). */
#define CTL_TIMEOUT_MS 120000

int sbx_ctl_call(json_t *req, json_t **reply, char **err)
{
	return sbx_ctl_call_fd(req, -1, reply, err);
}

/* the first byte of the request, with pass_fd as SCM_RIGHTS */
static ssize_t send_with_fd(int fd, const char *buf, int pass_fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &pass_fd, sizeof(int));
	return sendmsg(fd, &mh, MSG_NOSIGNAL);
}

int sbx_ctl_call_fd(json_t *req, int pass_fd, json_t **reply, char **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = sbx_control_path();
	char *line = NULL, *buf = NULL;
	size_t len = 0, cap = 0;
	json_error_t jerr;
	int fd, rc = 0;

	*reply = NULL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return set_err(err, -ENAMETOOLONG, path);
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return set_err(err, -errno, "socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		close(fd);
		if (err)
			*err = sbx_asprintf("no bpfsbx daemon at %s (%s)", path, strerror(-rc));
		return rc;
	}
	/* Inside a session the socket's path may come from an environment the
	 * agent shaped: only root's end is the daemon (which loads BPF, so is
	 * always root), whatever answers elsewhere (a learning flag, an
	 * approval) is not believed. */
	{
		struct ucred uc;
		socklen_t ul = sizeof(uc);

		if (sbx_in_session(NULL) &&
		    (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &ul) || uc.uid != 0)) {
			close(fd);
			if (err)
				*err = sbx_asprintf("%s is not the bpfsbx daemon's socket (its end is "
						    "not root's)", path);
			return -EPERM;
		}
	}
	line = json_dumps(req, JSON_COMPACT);
	if (!line) {
		close(fd);
		return set_err(err, -ENOMEM, "encoding request");
	}
	/* the request and its newline in one send: one wake-up of the daemon */
	len = strlen(line);
	line = sbx_realloc_array(line, len + 2, 1);
	line[len++] = '\n';
	line[len] = 0;
	if (pass_fd >= 0) {
		if (send_with_fd(fd, line, pass_fd) != 1) {
			rc = set_err(err, -errno, "sending to the daemon");
			goto out;
		}
	}
	for (size_t off = pass_fd >= 0 ? 1 : 0; off < len;) {
		ssize_t w = send(fd, line + off, len - off, MSG_NOSIGNAL);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = set_err(err, -errno, "sending to the daemon");
			goto out;
		}
		off += w;
	}

	len = 0;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (len + 4096 > cap) {
			if (cap >= SBX_CONTROL_MAX_MSG) {
				rc = set_err(err, -EMSGSIZE, "reply from the daemon");
				goto out;
			}
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap + 1);
			if (!buf) {
				rc = set_err(err, -ENOMEM, "reading reply");
				goto out;
			}
		}
		r = poll(&pfd, 1, CTL_TIMEOUT_MS);
		if (r == 0) {
			rc = set_err(err, -ETIMEDOUT, "waiting for the daemon");
			goto out;
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = set_err(err, -errno, "waiting for the daemon");
			goto out;
		}
		r = recv(fd, buf + len, cap - len, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = set_err(err, -errno, "reading from the daemon");
			goto out;
		}
		if (r == 0)
			break;
		len += r;
		if (memchr(buf + len - r, '\n', r))
			break;
	}
	if (!len) {
		rc = set_err(err, -ECONNRESET, "the daemon closed the connection without a reply");
		goto out;
	}
	buf[len] = 0;
	*reply = json_loads(buf, JSON_DISABLE_EOF_CHECK, &jerr);
	if (!*reply || !json_is_object(*reply)) {
		json_decref(*reply);
		*reply = NULL;
		if (err)
			*err = sbx_asprintf("malformed reply from the daemon: %s", jerr.text);
		rc = -EPROTO;
	}
out:
	free(line);
	free(buf);
	close(fd);
	return rc;
}

int sbx_pid_session(pid_t pid, char **name)
{
	const char *prefix = "0::/" SBX_CGROUP_DIR_NAME "/";
	char path[64], line[4096];
	bool read_any = false;
	int rc = 0;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p;

		read_any = true;
		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		p = line + strlen(prefix);
		p[strcspn(p, "/\n")] = 0;
		if (!*p)
			continue;
		rc = 1;
		if (name)
			*name = sbx_strdup(p);
		break;
	}
	fclose(f);
	return rc ? rc : read_any ? 0 : -ENODATA;
}

bool sbx_in_session(char **name)
{
	return sbx_pid_session(0, name) == 1;
}

int sbx_ctl_protect_listener(int listen_fd, char **err)
{
	json_t *req = json_pack("{s:s}", "op", "protect_listener"), *r = NULL;
	int rc = sbx_ctl_call_fd(req, listen_fd, &r, err);

	json_decref(req);
	if (rc)
		return rc;
	if (!json_is_true(json_object_get(r, "ok"))) {
		if (err)
			*err = sbx_strdup(sbx_json_str(r, "error"));
		rc = -EPERM;
	}
	json_decref(r);
	return rc;
}
