// SPDX-License-Identifier: GPL-2.0
/*
 * containers.c - a container becomes a session: its runtime's OCI hook
 * (`bpfsbx oci-hook`, at createRuntime) sends the container's state, and
 * the container's own cgroup becomes the session's.
 *
 * The runtime has put the container's init into its cgroup and waits for
 * every createRuntime hook before it lets the init go on, so nothing of
 * the container has run yet. The hook is believed for nothing but which
 * process to look at: the daemon reads that process's cgroup itself, with
 * a pidfd held so that the pid cannot be another process's by then. The
 * reply comes after the session's kernel entry exists; the hook fails, and
 * with it the container, on anything else.
 *
 * The entry arms at the container's first exec (SBX_PF_ARMING,
 * bpf/exec.bpf.c): until then only the runtime runs there, and it needs
 * what no session may do (pivot_root, mounts, capabilities).
 *
 * The cgroup must be directly below <cgroup2>/bpfsbx, where the kernel's
 * one-compare gate for processes outside every session looks
 * (bpf/sbx_common.h): a container elsewhere is refused, so that no
 * session needs the gate widened.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>
#include "lib/alloc.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/mountinfo.h"
#include "lib/text.h"
#include "lib/shipped.h"
#include "user/daemon/containers.h"
#include "user/daemon/control_ops.h"
#include "user/daemon/sessions.h"

/* The first annotation of keys that is set and not empty, or NULL. */
static const char *annotation(const json_t *ann, const char *const *keys)
{
	for (; *keys; keys++) {
		const char *v = sbx_json_str(ann, *keys);

		if (v && *v)
			return v;
	}
	return NULL;
}

/* Where each field of the identity comes from, in order: bpfsbx's own
 * annotations, then containerd's CRI annotations, CRI-O's and kubelet's
 * (docs/CONTAINERS.md). */
static const char *const name_keys[] = {
	"io.bpfsbx.name", "io.kubernetes.cri.container-name", "io.kubernetes.container.name",
	"io.kubernetes.cri-o.ContainerName", "nerdctl/name", NULL };
static const char *const pod_keys[] = {
	"io.kubernetes.cri.sandbox-name", "io.kubernetes.pod.name",
	"io.kubernetes.cri-o.SandboxName", NULL };
static const char *const ns_keys[] = {
	"io.kubernetes.cri.sandbox-namespace", "io.kubernetes.pod.namespace",
	"io.kubernetes.cri-o.Namespace", NULL };
static const char *const uid_keys[] = {
	"io.kubernetes.cri.sandbox-uid", "io.kubernetes.pod.uid", NULL };
static const char *const image_keys[] = {
	"io.kubernetes.cri.image-name", "io.kubernetes.cri-o.ImageName",
	"org.opencontainers.image.ref.name", NULL };
static const char *const type_keys[] = {
	"io.kubernetes.cri.container-type", "io.kubernetes.cri-o.ContainerType", NULL };

json_t *sbx_container_identity(const char *id, const char *bundle, const json_t *ann)
{
	const char *name = annotation(ann, name_keys);
	const char *pod = annotation(ann, pod_keys), *ns = annotation(ann, ns_keys);
	const char *uid = annotation(ann, uid_keys), *image = annotation(ann, image_keys);
	json_t *o = json_pack("{s:s}", "id", id);
	char shortid[13];

	if (!name) {
		snprintf(shortid, sizeof(shortid), "%s", id);
		name = shortid;
	}
	json_object_set_new(o, "name", json_string(name));
	if (pod)
		json_object_set_new(o, "pod", json_string(pod));
	if (ns)
		json_object_set_new(o, "namespace", json_string(ns));
	if (uid)
		json_object_set_new(o, "pod_uid", json_string(uid));
	if (image)
		json_object_set_new(o, "image", json_string(image));
	if (bundle)
		json_object_set_new(o, "bundle", json_string(bundle));
	return o;
}

const char *sbx_container_in_process(const json_t *ann)
{
	/* crun's handlers (wasm runtimes, krun) and the wasm variant run the
	 * workload in the runtime's own process or a VM: no exec arms it */
	static const char *const keys[] = { "run.oci.handler", "module.wasm.image/variant",
					    NULL };

	for (int i = 0; keys[i]; i++)
		if (sbx_json_str(ann, keys[i]))
			return keys[i];
	return NULL;
}

bool sbx_container_is_sandbox(const json_t *ann)
{
	const char *t = annotation(ann, type_keys);

	return t && !strcmp(t, "sandbox");
}

/* runc's rule for a container id (libcontainer: ^[\w+-\.]+$) */
static bool id_valid(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > 1024 || !strcmp(id, ".") || !strcmp(id, ".."))
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("_+-.", *p)))
			return false;
	return true;
}

/*
 * The cgroup pid is in, as a path below the daemon's cgroup2 mount, if it
 * is directly below bpfsbx's directory; NULL and *err otherwise. pidfd
 * was opened before: the process it names is still alive after the read,
 * so the file read was that process's.
 */
static char *container_cgroup(struct sbx_daemon *d, pid_t pid, int pidfd, char **err)
{
	static const char prefix[] = "/" SBX_CGROUP_DIR_NAME "/";
	char *cg = sbx_pid_cgroup(pid), *name;

	if (!cg) {
		*err = sbx_asprintf("the container's process %d: cannot read its cgroup", (int)pid);
		return NULL;
	}
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0)) {
		*err = sbx_asprintf("the container's process %d exited while it was adopted",
				    (int)pid);
		free(cg);
		return NULL;
	}
	name = cg + sizeof(prefix) - 1;
	if (strncmp(cg, prefix, sizeof(prefix) - 1) || !*name || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, "..")) {
		*err = sbx_asprintf("the container's cgroup %s is not directly below %s/%s, where "
				    "sessions are: give runc or crun \"cgroupsPath\": \"/%s/ID\" in "
				    "config.json, or podman --cgroup-manager=cgroupfs "
				    "--cgroup-parent=/%s (docs/CONTAINERS.md)", cg, d->cg_root,
				    SBX_CGROUP_DIR_NAME, SBX_CGROUP_DIR_NAME, SBX_CGROUP_DIR_NAME);
		free(cg);
		return NULL;
	}
	name = sbx_asprintf("%s%s", d->cg_root, cg);
	free(cg);
	return name;
}

/* Does a config.json mount bind a host path? */
static bool is_bind(const json_t *m)
{
	const char *type = sbx_json_str(m, "type");
	const json_t *o;
	size_t i;

	if (type && !strcmp(type, "bind"))
		return true;
	json_array_foreach(json_object_get(m, "options"), i, o)
		if (json_is_string(o) && (!strcmp(json_string_value(o), "bind") ||
					  !strcmp(json_string_value(o), "rbind")))
			return true;
	return false;
}

/* File systems a runtime mounts of its own, which show no host file: the
 * rest (an overlay whose lower layer is a host directory, a block device)
 * would show host files the policy's rules are not grafted onto. */
static bool is_own_fs(const json_t *m)
{
	static const char *const own[] = { "proc", "sysfs", "tmpfs", "devpts", "mqueue",
					   "cgroup", "cgroup2", "shm", NULL };
	const char *type = sbx_json_str(m, "type");

	for (int i = 0; type && own[i]; i++)
		if (!strcmp(type, own[i]))
			return true;
	return false;
}

/*
 * What the kernel would let such a container's root do around the policy:
 * raw disks and memory (CAP_SYS_RAWIO, a block device allowed), files by
 * handle (CAP_DAC_READ_SEARCH: open_by_handle_at), the kernel itself
 * (CAP_SYS_ADMIN, CAP_SYS_MODULE). NULL, or why it is refused.
 */
static const char *too_privileged(const json_t *cfg)
{
	static const char *const caps[] = { "CAP_SYS_ADMIN", "CAP_SYS_RAWIO", "CAP_SYS_MODULE",
					    "CAP_DAC_READ_SEARCH", NULL };
	const json_t *set = json_object_get(json_object_get(cfg, "process"), "capabilities");
	const json_t *v, *d;
	const char *k;
	size_t i;

	json_object_foreach((json_t *)set, k, v)
		json_array_foreach(v, i, d)
			for (int c = 0; caps[c]; c++)
				if (json_is_string(d) && !strcmp(json_string_value(d), caps[c]))
					return caps[c];
	json_array_foreach(json_object_get(json_object_get(json_object_get(cfg, "linux"),
							    "resources"), "devices"), i, d) {
		const char *type = sbx_json_str(d, "type");

		if (json_is_true(json_object_get(d, "allow")) &&
		    (!type || !strcmp(type, "a") || !strcmp(type, "b")) &&
		    (!sbx_json_str(d, "access") || strchr(sbx_json_str(d, "access"), 'r') ||
		     strchr(sbx_json_str(d, "access"), 'w')))
			return "a block device allowed (linux.resources.devices)";
	}
	return NULL;
}

static char *bundle_path(const char *bundle, const char *p)
{
	return p[0] == '/' ? sbx_strdup(p) : sbx_asprintf("%s/%s", bundle, p);
}

/* one graft: the host path and what is there now */
static int graft_at(struct sbx_graft *g, char *path, char **err)
{
	int rc = sbx_kident(path, true, &g->dev, &g->ino);

	if (rc) {
		*err = sbx_asprintf("%s: %s", path, strerror(-rc));
		free(path);
		return rc;
	}
	g->path = path;
	return 0;
}

/* a device of our mount namespace's mounts, the host's */
static bool host_device(const struct sbx_mount *hs, size_t n, unsigned maj, unsigned min)
{
	for (size_t i = 0; i < n; i++)
		if (hs[i].maj == maj && hs[i].min == min)
			return true;
	return false;
}

/*
 * A file system the runtime made for the container, which shows no host
 * file: proc, sysfs, cgroup, mqueue, devpts, and a tmpfs of no host
 * mount (a bind of a host tmpfs directory is the host's, and is checked).
 */
static bool own_mount(const struct sbx_mount *m, const struct sbx_mount *hs, size_t n_hs)
{
	static const char *const own[] = { "proc", "sysfs", "devpts", "mqueue", "cgroup",
					   "cgroup2", NULL };

	for (int i = 0; own[i]; i++)
		if (!strcmp(m->fstype, own[i]))
			return true;
	return !strcmp(m->fstype, "tmpfs") && !host_device(hs, n_hs, m->maj, m->min);
}

/* Another mount at the same point after mount k (it hides k)? */
static bool covered(const struct sbx_mount *ms, size_t n, size_t k)
{
	for (size_t j = k + 1; j < n; j++)
		if (!strcmp(ms[j].point, ms[k].point))
			return true;
	return false;
}

/* a and b the same path but for repeated and trailing slashes */
static bool same_dest(const char *a, const char *b)
{
	for (;;) {
		while (a[0] == '/' && (a[1] == '/' || !a[1]))
			a++;
		while (b[0] == '/' && (b[1] == '/' || !b[1]))
			b++;
		if (*a != *b)
			return false;
		if (!*a)
			return true;
		a++;
		b++;
	}
}

/* Is mount i of config.json hidden by a later one at its destination? */
static bool hidden(const json_t *mounts, size_t i)
{
	const char *dest = sbx_json_str(json_array_get(mounts, i), "destination");

	for (size_t j = i + 1; dest && j < json_array_size(mounts); j++) {
		const char *d = sbx_json_str(json_array_get(mounts, j), "destination");

		if (d && same_dest(dest, d))
			return true;
	}
	return false;
}

/* an accepted mount: where the container has it, and its host path */
struct seen {
	char *point;
	char *host;
};

/*
 * A mount that is no graft's root may be a host mount that an rbind
 * brought in below one that is: the host has it at the same place below
 * that bind's source. The kernel's walk then goes up from it through the
 * host's directories to the bind's root and its graft, as on the host.
 * dev, ino: its root's identity. Its host path (malloc'd), or NULL: a
 * mount of no source.
 */
static char *host_submount(const struct seen *ok, size_t n, const char *point, uint32_t dev,
			   uint64_t ino)
{
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	const struct seen *up = NULL;
	struct statx sx;
	uint32_t hdev;
	uint64_t hino;
	char *host;
	int hfd;

	for (size_t i = 0; i < n; i++)
		if (sbx_path_within(point, ok[i].point) && strcmp(point, ok[i].point) &&
		    (!up || strlen(ok[i].point) > strlen(up->point)))
			up = &ok[i];
	if (!up)
		return NULL;
	host = sbx_asprintf("%s%s", strcmp(up->host, "/") ? up->host : "",
			    point + (strcmp(up->point, "/") ? strlen(up->point) : 0));
	hfd = (int)syscall(SYS_openat2, AT_FDCWD, host, &how, sizeof(how));
	if (hfd < 0 || statx(hfd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO, &sx) ||
	    !(sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) || sbx_kident_fd(hfd, &hdev, &hino) ||
	    hdev != dev || hino != ino) {
		free(host);
		host = NULL;
	}
	if (hfd >= 0)
		close(hfd);
	return host;
}

/*
 * runc runs createRuntime after it made the container's mounts and
 * before pivot_root. The grafts were made on what each source path names
 * now; a source swapped since the runtime mounted it (a symbolic link
 * that led elsewhere then), a mount point renamed, or a mount that
 * config.json no longer lists would leave a mount root the kernel's walk
 * enters with no graft on it. So every mount of the container, as its
 * mount namespace lists them, must be the root of one of the grafts, or
 * a host mount an rbind brought in below one (host_submount), found by
 * its mount id (not by a name that can be swapped). And every graft must
 * be such a mount's root but those hidden[i] (a later mount at the same
 * destination): a runtime that mounts after its hooks ran would leave
 * nothing to check, and is refused. 0, or -EPERM with *err.
 */
static int mounts_are_grafts(pid_t pid, const struct sbx_graft *g, const bool *hid,
			     const char *cfgpath, char **err)
{
	struct stat its, ours;
	char p[64], *top = NULL;
	struct sbx_mount *ms = NULL, *hs = NULL;
	struct seen *ok = NULL;
	size_t n_ok = 0, cap = 0, n_g = 0, n_ms = 0, n_hs = 0;
	int rootfd, fd, rc = 0;
	bool *seen;

	snprintf(p, sizeof(p), "/proc/%d/root", (int)pid);
	rootfd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || fstat(rootfd, &its) || stat("/", &ours)) {
		*err = sbx_asprintf("the container's root: %s", strerror(errno));
		if (rootfd >= 0)
			close(rootfd);
		return -EPERM;
	}
	/* before pivot_root its root is the host's, and its mounts are
	 * below its root filesystem's path; after, all of them are its */
	if (its.st_dev == ours.st_dev && its.st_ino == ours.st_ino) {
		top = realpath(g[0].path, NULL);
		if (!top) {
			*err = sbx_asprintf("%s: %s", g[0].path, strerror(errno));
			close(rootfd);
			return -EPERM;
		}
	}
	while (g[n_g].path)
		n_g++;
	seen = sbx_calloc(n_g + 1, sizeof(*seen));
	snprintf(p, sizeof(p), "/proc/%d/mountinfo", (int)pid);
	rc = sbx_mountinfo_read(p, &ms, &n_ms);
	if (!rc)
		rc = sbx_mountinfo_read("/proc/self/mountinfo", &hs, &n_hs);
	if (rc) {
		*err = sbx_asprintf("the container's mounts: %s", strerror(-rc));
		rc = -EPERM;
	}
	for (size_t k = 0; !rc && k < n_ms; k++) {
		const struct sbx_mount *m = &ms[k];
		struct statx sx = { 0 };
		uint32_t dev;
		uint64_t ino;
		char *hpath = NULL;

		if (!sbx_path_within(m->point, top ? top : "/") || own_mount(m, hs, n_hs))
			continue;
		fd = sbx_open_in(pid, rootfd, m->point, SBX_IN_NOFOLLOW | SBX_IN_NO_SYMLINKS);
		if (fd >= 0 && statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID,
				     &sx) == 0 && (sx.stx_mask & STATX_MNT_ID) &&
		    sx.stx_mnt_id != (uint64_t)m->id && covered(ms, n_ms, k)) {
			/* hidden below a later mount at its point, which is
			 * checked in its turn */
			close(fd);
			continue;
		}
		if (fd >= 0 && (sx.stx_mask & STATX_MNT_ID) && sx.stx_mnt_id == (uint64_t)m->id &&
		    (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) &&
		    !sbx_kident_fd_in(fd, pid, &dev, &ino)) {
			for (size_t i = 0; g[i].path; i++)
				if (g[i].dev == dev && g[i].ino == ino) {
					seen[i] = true;
					if (!hpath)
						hpath = realpath(g[i].path, NULL);
				}
			if (!hpath)
				hpath = host_submount(ok, n_ok, m->point, dev, ino);
		}
		if (hpath) {
			if (!SBX_GROW(ok, cap, n_ok + 1, 16))
				abort();
			ok[n_ok].point = sbx_strdup(m->point);
			ok[n_ok++].host = hpath;
		} else {
			*err = sbx_asprintf("%s: the container's mount at %s (%s) is not the root of "
					    "any of its sources as they are now%s%s: a source "
					    "replaced since the runtime mounted it (or that led "
					    "elsewhere then), a mount point moved, or a mount that "
					    "config.json does not list, so the policy there is not "
					    "known", cfgpath, m->point, m->fstype, fd < 0 ? ": " : "",
					    fd < 0 ? strerror(-fd) : "");
			rc = -EPERM;
		}
		if (fd >= 0)
			close(fd);
	}
	for (size_t i = 0; !rc && i < n_g; i++)
		if (!seen[i] && !hid[i]) {
			*err = sbx_asprintf("%s: %s is mounted nowhere in the container when its hook "
					    "runs: this runtime mounts after its createRuntime hooks, "
					    "so its mounts cannot be checked", cfgpath, g[i].path);
			rc = -EPERM;
		}
	free(seen);
	for (size_t i = 0; i < n_ok; i++) {
		free(ok[i].point);
		free(ok[i].host);
	}
	free(ok);
	sbx_mountinfo_free(ms, n_ms);
	sbx_mountinfo_free(hs, n_hs);
	free(top);
	close(rootfd);
	return rc;
}

/*
 * The mount roots the container sees its files through, from its
 * config.json: its root filesystem and every bind mount's source, each
 * with its identity, which must be the mount's as the container sees it.
 * The kernel's walk enters each at its root from inside, so each carries
 * the policy's decision at its host path (policy/graft.c). Ended by a
 * NULL path; NULL and *err when they cannot be known: a container whose
 * mounts are not known is not started.
 */
static struct sbx_graft *container_grafts(const char *bundle, pid_t pid, char **err)
{
	char *path, *text = NULL;
	json_t *cfg, *m, *mounts;
	json_error_t je;
	struct sbx_graft *v;
	bool *hid;
	size_t n = 0, i;
	int rc;

	if (!bundle || bundle[0] != '/') {
		*err = sbx_strdup("the state names no bundle (an absolute path), so the "
				  "container's mounts are not known");
		return NULL;
	}
	path = sbx_asprintf("%s/config.json", bundle);
	rc = sbx_read_file(path, 16u << 20, &text, NULL);
	if (rc) {
		*err = sbx_asprintf("reading %s: %s", path, strerror(-rc));
		free(path);
		return NULL;
	}
	cfg = json_loads(text, 0, &je);
	free(text);
	if (!json_is_object(cfg) || !json_is_string(json_object_get(json_object_get(cfg, "root"),
								 "path"))) {
		*err = sbx_asprintf("%s:%d:%d: %s", path, je.line, je.column,
				    cfg ? "no root.path" : je.text);
		json_decref(cfg);
		free(path);
		return NULL;
	}
	if (too_privileged(cfg)) {
		*err = sbx_asprintf("%s grants %s: the kernel would give such a container's root "
				    "ways around any policy (raw devices, files by handle, the "
				    "kernel), so it is not made a session", path, too_privileged(cfg));
		json_decref(cfg);
		free(path);
		return NULL;
	}
	mounts = json_object_get(cfg, "mounts");
	v = sbx_calloc(json_array_size(mounts) + 2, sizeof(*v));
	hid = sbx_calloc(json_array_size(mounts) + 2, sizeof(*hid));
	rc = graft_at(&v[n], bundle_path(bundle, sbx_json_str(json_object_get(cfg, "root"),
							       "path")), err);
	if (!rc)
		n++;
	json_array_foreach(mounts, i, m) {
		if (rc)
			break;
		if (is_bind(m) && sbx_json_str(m, "source")) {
			rc = graft_at(&v[n], bundle_path(bundle, sbx_json_str(m, "source")), err);
			if (!rc)
				hid[n++] = hidden(mounts, i);
		} else if (!is_own_fs(m)) {
			*err = sbx_asprintf("%s: the mount at %s is of type %s, which may show host "
					    "files the policy cannot follow into it (bind mounts and "
					    "the runtime's own proc, sysfs, tmpfs, devpts, mqueue and "
					    "cgroup are taken)", path,
					    sbx_json_str(m, "destination") ?: "?",
					    sbx_json_str(m, "type") ?: "(none)");
			rc = -EPERM;
		}
	}
	if (!rc)
		rc = mounts_are_grafts(pid, v, hid, path, err);
	free(hid);
	json_decref(cfg);
	free(path);
	if (rc) {
		sbx_grafts_free(v);
		return NULL;
	}
	return v;
}

/* The project's policy, as `run` picks it: its own, else agent-default. */
static char *project_policy(const char *project)
{
	char *p = sbx_asprintf("%s/.sandbox/policy.yaml", project);
	struct stat st;

	if (stat(p, &st) == 0)
		return p;
	free(p);
	return sbx_shipped_policy("agent-default", NULL, NULL);
}

json_t *sbx_container_adopt(struct sbx_daemon *d, json_t *req)
{
	const json_t *state = json_object_get(req, "state"), *ann;
	const char *id = sbx_json_str(state, "id"), *bundle = sbx_json_str(state, "bundle");
	const char *project = sbx_json_str(req, "project");
	json_t *pidj = json_object_get(state, "pid"), *identity, *diags = NULL, *r;
	struct sbx_session_rt *s;
	char *cgroup, *policy, *err = NULL;
	struct sbx_graft *grafts;
	struct passwd *pw;
	struct stat st;
	int pidfd, rc;
	pid_t pid;

	ann = json_is_object(json_object_get(state, "annotations")) ?
		json_object_get(state, "annotations") : NULL;
	if (!id || !id_valid(id))
		return sbx_ctl_error("adopt: \"state.id\" is not a container id");
	if (!json_is_integer(pidj) || json_integer_value(pidj) <= 1 ||
	    json_integer_value(pidj) > 0x3fffffff)
		return sbx_ctl_error("adopt: container %s: \"state.pid\" is not a process of the "
				     "host (the hook must run at createRuntime or prestart)", id);
	if (sbx_container_is_sandbox(ann))
		return json_pack("{s:b,s:s}", "ok", 1, "skipped",
				 "a pod's sandbox (pause) container runs no agent");
	if (sbx_container_in_process(ann))
		return sbx_ctl_error("adopt: container %s: annotation %s: the runtime runs such a "
				     "workload without the exec its session arms at, so it would "
				     "never be confined; not made a session", id,
				     sbx_container_in_process(ann));
	/* the landlock tier confines a session from within: `run` restricts
	 * itself before it runs the command, which no runtime does */
	if (d->k.tier != SBX_TIER_BPF_LSM)
		return sbx_ctl_error("adopt: container %s: container sessions need the bpf-lsm tier, "
				     "and this kernel has the %s tier (a session there confines "
				     "itself in `bpfsbx run`, which a container runtime does not); "
				     "'bpfsbx doctor' names the lsm= line that brings it",
				     id, sbx_tier_name(d->k.tier));
	if (!project || project[0] != '/' || stat(project, &st) || !S_ISDIR(st.st_mode))
		return sbx_ctl_error("adopt: container %s: project directory '%s' does not exist",
				     id, project ? project : "");
	pid = (pid_t)json_integer_value(pidj);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return sbx_ctl_error("adopt: container %s: process %d: %s", id, (int)pid,
				     strerror(errno));
	cgroup = container_cgroup(d, pid, pidfd, &err);
	if (!cgroup) {
		close(pidfd);
		r = sbx_ctl_error("adopt: container %s: %s", id, err);
		free(err);
		return r;
	}
	grafts = container_grafts(bundle, pid, &err);
	/* its mounts were read through /proc/PID: of this process only if
	 * it still lives (a pid is reused once it is gone) */
	if (grafts && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0)) {
		sbx_grafts_free(grafts);
		grafts = NULL;
		err = sbx_asprintf("the container's process %d exited while it was adopted",
				   (int)pid);
	}
	close(pidfd);
	if (!grafts) {
		free(cgroup);
		r = sbx_ctl_error("adopt: container %s: %s", id, err);
		free(err);
		return r;
	}
	policy = project_policy(project);
	if (!policy) {
		sbx_grafts_free(grafts);
		free(cgroup);
		return sbx_ctl_error("adopt: container %s: no %s/.sandbox/policy.yaml, and the "
				     "shipped agent-default policy is not installed", id, project);
	}
	/* the project's owner is the session's user: whose rules, queue and
	 * home; the container's own users do not matter to the policy. With
	 * no home, `~` would be nowhere and credential rules with it. */
	pw = getpwuid(st.st_uid);
	if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/') {
		free(cgroup);
		free(policy);
		sbx_grafts_free(grafts);
		return sbx_ctl_error("adopt: container %s: the project's owner (uid %u) has no "
				     "home directory, which the policy's ~ needs", id, st.st_uid);
	}
	identity = sbx_container_identity(id, bundle, ann);
	rc = sbx_session_create_adopted(d, pid, st.st_uid, pw->pw_gid, policy,
					project, cgroup, identity, grafts, &s, &err, &diags);
	sbx_grafts_free(grafts);
	free(cgroup);
	free(policy);
	if (rc) {
		r = sbx_ctl_error("adopt: container %s: %s", id, err ? err : strerror(-rc));
		free(err);
		json_decref(identity);
		if (diags)
			json_object_set_new(r, "diagnostics", diags);
		return r;
	}
	sbx_info("container %s (%s) adopted as session %s, cgroup %s, pid %d", id,
		 sbx_json_str(identity, "name"), s->name, s->cgroup_path, (int)pid);
	r = json_pack("{s:b,s:s,s:I,s:O}", "ok", 1, "session", s->name, "cgid",
		      (json_int_t)s->cgid, "container", identity);
	json_decref(identity);
	json_decref(diags);
	return r;
}

pid_t sbx_container_pid(const struct sbx_session_rt *s, char **why)
{
	char *p = sbx_asprintf("%s/cgroup.procs", s->cgroup_path), *buf = NULL;
	long pid = 0;

	if (sbx_read_file(p, 1 << 16, &buf, NULL) == 0)
		pid = strtol(buf, NULL, 10);
	if (pid <= 0)
		*why = sbx_asprintf("container %s has no process left to see its files and "
				    "network through", sbx_json_str(s->container, "name") ?: "?");
	free(p);
	free(buf);
	return pid > 0 ? (pid_t)pid : 0;
}

int sbx_container_netns(const struct sbx_session_rt *s, char **err)
{
	struct stat mine, its;
	pid_t pid;
	char *p;
	int fd;

	if (!s->container)
		return -1;
	pid = sbx_container_pid(s, err);
	if (!pid)
		return -ESRCH;
	p = sbx_asprintf("/proc/%d/ns/net", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	free(p);
	if (fd < 0 || fstat(fd, &its) || stat("/proc/self/ns/net", &mine)) {
		int rc = -errno;

		if (fd >= 0)
			close(fd);
		*err = sbx_asprintf("container %s: its network namespace: %s",
				    sbx_json_str(s->container, "id"), strerror(-rc));
		return rc < -1 ? rc : -EIO;
	}
	if (its.st_ino == mine.st_ino && its.st_dev == mine.st_dev) {
		close(fd);
		return -1;	/* the host's network */
	}
	return fd;
}
