// SPDX-License-Identifier: GPL-2.0
/*
 * daemon_kernel.c - the BPF side of the daemon: load, attach and pin the
 * programs once, adopt what is pinned ever after.
 *
 * Enforcement must outlive the daemon (if it is killed, sessions stay
 * confined), so links and maps are pinned under SBX_PIN_DIR. Pinning is
 * all or nothing: everything is pinned into a temporary directory that
 * is renamed into place last, so a crash midway never leaves a half
 * state that a later daemon would adopt.
 */
#include <dirent.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpfsbx.skel.h"
#include "user/daemon.h"
#include "user/util.h"

#define BPF_FS_MAGIC 0xcafe4a11

struct map_slot {
	const char *name;
	size_t off;		/* of the fd in struct sbx_kernel */
};

#define SLOT(n, f) { n, offsetof(struct sbx_kernel, f) }
static const struct map_slot slots[] = {
	SLOT("sbx_sessions", sessions),
	SLOT("sbx_inode_rules", inode_rules),
	SLOT("sbx_chain_rules", chain_rules),
	SLOT("sbx_name_rules", name_rules),
	SLOT("sbx_net4", net4),
	SLOT("sbx_net6", net6),
	SLOT("sbx_grants", grants),
	SLOT("sbx_protected", protected_),
	SLOT("sbx_config", config),
	SLOT("sbx_stats", stats),
	SLOT("sbx_events", events),
	SLOT("sbx_epoch", epoch),
};

static int *slot_fd(struct sbx_kernel *k, const struct map_slot *s)
{
	return (int *)((char *)k + s->off);
}

bool sbx_bpf_lsm_active(char **lsm_list)
{
	char *buf = NULL;
	bool on = false;

	if (sbx_read_file("/sys/kernel/security/lsm", 4096, &buf, NULL) == 0) {
		char *copy = sbx_strdup(buf), *save = NULL;

		for (char *t = strtok_r(copy, ",\n", &save); t; t = strtok_r(NULL, ",\n", &save))
			if (!strcmp(t, "bpf"))
				on = true;
		free(copy);
	}
	if (lsm_list)
		*lsm_list = buf;
	else
		free(buf);
	return on;
}

bool sbx_kernel_pinned(void)
{
	struct stat st;

	return stat(SBX_PIN_DIR "/maps/sbx_sessions", &st) == 0;
}

static int ensure_bpffs(char **err)
{
	struct statfs sf;

	if (statfs("/sys/fs/bpf", &sf) == 0 && (unsigned long)sf.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		*err = sbx_asprintf("bpffs is not mounted at /sys/fs/bpf and mounting it failed: %s",
				    strerror(errno));
		return -errno;
	}
	return 0;
}

static void rm_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d) {
		unlink(dir);
		return;
	}
	while ((de = readdir(d))) {
		char *p;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		p = sbx_asprintf("%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR)
			rm_tree(p);
		else
			unlink(p);
		free(p);
	}
	closedir(d);
	rmdir(dir);
}

static int adopt(struct sbx_kernel *k, char **err)
{
	struct sbx_config cfg;
	__u32 zero = 0;

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		char *p = sbx_asprintf(SBX_PIN_DIR "/maps/%s", slots[i].name);
		int fd = bpf_obj_get(p);

		if (fd < 0) {
			*err = sbx_asprintf("pinned bpfsbx state is incomplete (%s: %s); "
					    "remove it with 'bpfsbx unload'", p, strerror(errno));
			free(p);
			return -ENOENT;
		}
		free(p);
		*slot_fd(k, &slots[i]) = fd;
	}
	if (bpf_map_lookup_elem(k->config, &zero, &cfg) || cfg.abi_version != SBX_ABI_VERSION) {
		*err = sbx_asprintf("pinned bpfsbx state has ABI %u, this binary has %u; "
				    "run 'bpfsbx unload' to replace it", cfg.abi_version,
				    SBX_ABI_VERSION);
		return -EPROTO;
	}
	return 0;
}

/*
 * Kernels newer than 6.1 mark overlayfs backing files with FMODE_BACKING
 * (a bit that moved once); 6.1 keeps the overlay path with the real
 * inode, which the program detects without a flag.
 */
static unsigned fmode_backing_bit(void)
{
	struct utsname u;
	unsigned maj = 0, min = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &maj, &min) != 2)
		return 0;
	if (maj < 6 || (maj == 6 && min < 5))
		return 0;
	if (maj == 6 && min < 12)
		return 1u << 25;
	return 1u << 24;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !getenv("BPFSBX_DEBUG_LIBBPF"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int load_and_pin(char **err)
{
	struct sbx_bpf *skel = NULL;
	struct bpf_map *map;
	char tmp[128], sub[160];
	struct sbx_config cfg = { .abi_version = SBX_ABI_VERSION };
	__u32 zero = 0;
	int rc;

	/* bpffs refuses names with a dot */
	snprintf(tmp, sizeof(tmp), SBX_PIN_DIR "_new_%d", (int)getpid());
	rm_tree(tmp);
	libbpf_set_print(libbpf_quiet);

	skel = sbx_bpf__open();
	if (!skel) {
		rc = -errno;
		*err = sbx_asprintf("opening the BPF object failed: %s", strerror(-rc));
		return rc;
	}
	skel->rodata->sbx_session_level = 2;
	skel->rodata->sbx_fmode_backing = fmode_backing_bit();
	rc = sbx_bpf__load(skel);
	if (rc) {
		*err = sbx_asprintf("loading the BPF programs failed (%s); set "
				    "BPFSBX_DEBUG_LIBBPF=1 for the verifier log", strerror(-rc));
		goto fail;
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.sbx_config), &zero, &cfg, BPF_ANY)) {
		rc = -errno;
		*err = sbx_asprintf("initialising sbx_config: %s", strerror(-rc));
		goto fail;
	}
	rc = sbx_bpf__attach(skel);
	if (rc) {
		*err = sbx_asprintf("attaching the BPF-LSM programs failed: %s", strerror(-rc));
		goto fail;
	}

	rc = mkdir(tmp, 0700);
	snprintf(sub, sizeof(sub), "%s/maps", tmp);
	rc = rc ?: mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/links", tmp);
	rc = rc ?: mkdir(sub, 0700);
	snprintf(sub, sizeof(sub), "%s/progs", tmp);
	rc = rc ?: mkdir(sub, 0700);
	if (rc) {
		rc = -errno;
		*err = sbx_asprintf("creating %s: %s", tmp, strerror(-rc));
		goto fail;
	}
	bpf_object__for_each_map(map, skel->obj) {
		char *p;

		if (bpf_map__is_internal(map))
			continue;	/* .rodata: held by the programs */
		p = sbx_asprintf("%s/maps/%s", tmp, bpf_map__name(map));
		rc = bpf_map__pin(map, p);
		free(p);
		if (rc) {
			*err = sbx_asprintf("pinning map %s: %s", bpf_map__name(map), strerror(-rc));
			goto fail;
		}
	}
	for (int i = 0; i < skel->skeleton->prog_cnt; i++) {
		struct bpf_link *l = *skel->skeleton->progs[i].link;
		char *p = sbx_asprintf("%s/links/%s", tmp, skel->skeleton->progs[i].name);

		rc = l ? bpf_link__pin(l, p) : -ENOENT;
		free(p);
		/* the programs too, so that tools (tools/bench) can detach and
		 * re-attach without a new load and verification */
		if (!rc) {
			p = sbx_asprintf("%s/progs/%s", tmp, skel->skeleton->progs[i].name);
			rc = bpf_program__pin(*skel->skeleton->progs[i].prog, p);
			free(p);
		}
		if (rc) {
			*err = sbx_asprintf("pinning link %s: %s", skel->skeleton->progs[i].name,
					    strerror(-rc));
			goto fail;
		}
	}
	if (rename(tmp, SBX_PIN_DIR)) {
		rc = -errno;
		*err = sbx_asprintf("publishing %s: %s (is another daemon starting?)",
				    SBX_PIN_DIR, strerror(-rc));
		goto fail;
	}
	/* The pins now hold the links and maps; the skeleton can go. */
	sbx_bpf__destroy(skel);
	return 0;
fail:
	rm_tree(tmp);
	sbx_bpf__destroy(skel);
	return rc ? rc : -EINVAL;
}

int sbx_kernel_up(struct sbx_kernel *k, bool load, char **err)
{
	int rc;

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		*slot_fd(k, &slots[i]) = -1;
	k->loaded_here = false;

	if (!sbx_bpf_lsm_active(NULL)) {
		*err = sbx_strdup("BPF-LSM is not active on this kernel: 'bpf' is missing from "
				  "/sys/kernel/security/lsm (run 'bpfsbx doctor' for how to enable it)");
		return -EOPNOTSUPP;
	}
	rc = ensure_bpffs(err);
	if (rc)
		return rc;
	if (!sbx_kernel_pinned()) {
		if (!load) {
			*err = sbx_strdup("bpfsbx is not loaded (no pins under " SBX_PIN_DIR ")");
			return -ENOENT;
		}
		rc = load_and_pin(err);
		if (rc)
			return rc;
		k->loaded_here = true;
	}
	rc = adopt(k, err);
	if (rc)
		sbx_kernel_close(k);
	return rc;
}

void sbx_kernel_close(struct sbx_kernel *k)
{
	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		int *fd = slot_fd(k, &slots[i]);

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

int sbx_kernel_unload(char **err)
{
	struct stat st;

	if (stat(SBX_PIN_DIR, &st)) {
		*err = sbx_strdup("bpfsbx is not loaded (nothing pinned under " SBX_PIN_DIR ")");
		return -ENOENT;
	}
	/* Links first: the programs detach as soon as their last pin goes. */
	rm_tree(SBX_PIN_DIR "/links");
	rm_tree(SBX_PIN_DIR);
	if (stat(SBX_PIN_DIR, &st) == 0) {
		*err = sbx_strdup("could not remove " SBX_PIN_DIR);
		return -EBUSY;
	}
	return 0;
}

int sbx_kernel_stats(const struct sbx_kernel *k, uint64_t out[SBX_STAT_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *vals;

	if (ncpu <= 0)
		return -EINVAL;
	vals = sbx_calloc(ncpu, sizeof(*vals));
	for (__u32 i = 0; i < SBX_STAT_MAX; i++) {
		out[i] = 0;
		if (bpf_map_lookup_elem(k->stats, &i, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			out[i] += vals[c];
	}
	free(vals);
	return 0;
}

/*
 * Delete every key of a hash map for which doomed() says so; the policy id
 * is the 32-bit word at id_off (network keys hold it big-endian).
 * Collect first: deleting while iterating a hash map restarts the walk.
 */
int sbx_map_delete_if(int fd, size_t key_size, size_t id_off, bool be,
		      bool (*doomed)(uint32_t id, void *ctx), void *ctx)
{
	unsigned char *key = sbx_calloc(1, key_size), *next = sbx_calloc(1, key_size);
	unsigned char *victims = NULL;
	size_t n = 0, cap = 0;
	int rc = 0, first = 1;

	while (bpf_map_get_next_key(fd, first ? NULL : key, next) == 0) {
		uint32_t v;

		first = 0;
		memcpy(&v, next + id_off, sizeof(v));
		if (doomed(be ? ntohl(v) : v, ctx)) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				victims = realloc(victims, cap * key_size);
				if (!victims)
					abort();
			}
			memcpy(victims + n * key_size, next, key_size);
			n++;
		}
		memcpy(key, next, key_size);
	}
	for (size_t i = 0; i < n; i++)
		if (bpf_map_delete_elem(fd, victims + i * key_size) && errno != ENOENT)
			rc = -errno;
	free(victims);
	free(key);
	free(next);
	return rc;
}

int sbx_map_count(int fd, size_t key_size)
{
	unsigned char *key = sbx_calloc(1, key_size), *next = sbx_calloc(1, key_size);
	int n = 0;

	while (bpf_map_get_next_key(fd, n ? key : NULL, next) == 0) {
		memcpy(key, next, key_size);
		n++;
	}
	free(key);
	free(next);
	return n;
}
