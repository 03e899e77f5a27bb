// SPDX-License-Identifier: GPL-2.0
/*
 * kernel.c - the BPF side of the daemon: load, attach and pin the
 * programs once, adopt what is pinned ever after.
 *
 * Enforcement must outlive the daemon (if it is killed, sessions stay
 * confined), so links and maps are pinned under SBX_PIN_DIR. Pinning is
 * all or nothing: everything is pinned into a temporary directory that
 * is renamed into place last, so a crash midway never leaves a half
 * state that a later daemon would adopt.
 *
 * Programs are pinned at load; their links are made from those pins on
 * demand (sbx_kernel_attach, at the first session) and dropped by
 * unpinning them (sbx_kernel_detach, when no session has existed for a
 * while): a machine with no session pays for no hook.
 *
 * Cgroup programs (SEC("cgroup/..."), dns.bpf.c) are attached to the
 * sessions' root, <cgroup2>/bpfsbx, by links pinned next to the LSM links;
 * if that directory is ever made anew, sbx_sessions_root_sync() moves
 * them onto it, and until it has, the kernel does not count on them.
 */
#include <dirent.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "user/daemon/kernel.h"
#include "user/daemon/dev_ports.h"
#include "user/daemon/lsm_diag.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "user/daemon/verifier.h"
#include "lib/json.h"
#include "policy/landlock.h"

#define BPF_FS_MAGIC 0xcafe4a11
/* the kernel's own ENOTSUPP, which a map type without batch operations returns */
#define ENOTSUPP_KERNEL 524

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
	SLOT("sbx_listeners", listeners),
	SLOT("sbx_ctl_peers", ctl_peers),
	SLOT("sbx_dns_resolvers", dns_resolvers),
	SLOT("sbx_dns_ports", dns_ports),
	SLOT("sbx_dns_sk", dns_sk),
	SLOT("sbx_learned", learned),
	SLOT("sbx_dev_ports", dev_ports),
	SLOT("sbx_held_ports", held_ports),
	SLOT("sbx_removals", removals),
};

static int *slot_fd(struct sbx_kernel *k, const struct map_slot *s)
{
	return (int *)((char *)k + s->off);
}

bool sbx_bpf_lsm_active(char **lsm_list)
{
	char *buf = NULL;
	bool on = false;

	if (sbx_read_file("/sys/kernel/security/lsm", 4096, &buf, NULL) == 0)
		on = sbx_list_has(buf, "bpf");
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

int sbx_kernel_sec_hooks(void)
{
	struct stat st;

	if (!sbx_kernel_pinned())
		return -1;
	return stat(SBX_PIN_DIR "/progs/sbx_ll_unix_stream_connect", &st) == 0 ||
	       stat(SBX_PIN_DIR "/progs/sbx_unix_stream_connect", &st) == 0;
}

bool sbx_kernel_decides(const struct sbx_kernel *k)
{
	/* the landlock tier's programs load all together or not at all */
	return k->tier == SBX_TIER_LANDLOCK && sbx_kernel_sec_hooks() == 1;
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

/* the program libbpf last reported as failing to load, for the error */
static char failed_prog[64];

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];
	va_list copy;

	if (getenv("BPFSBX_DEBUG_LIBBPF"))
		return vfprintf(stderr, fmt, ap);	/* whole verifier logs */
	va_copy(copy, ap);
	vsnprintf(line, sizeof(line), fmt, copy);
	va_end(copy);
	if (!strncmp(line, "libbpf: prog '", 14) && strstr(line, "': failed to load"))
		snprintf(failed_prog, sizeof(failed_prog), "%.*s",
			 (int)strcspn(line + 14, "'"), line + 14);
	if (level == LIBBPF_DEBUG && !getenv("BPFSBX_DEBUG_LIBBPF"))
		return 0;
	return fputs(line, stderr);
}

/* ": sbx_x was rejected after N instructions", for the load error */
static const char *failed_program(json_t *costs)
{
	static char buf[160];
	json_t *o;
	size_t i;

	if (!failed_prog[0])
		return "";
	snprintf(buf, sizeof(buf), ": the verifier rejected %s", failed_prog);
	json_array_foreach(json_object_get(costs, "programs"), i, o) {
		json_t *n = json_object_get(o, "processed_insns");

		if (n && !strcmp(sbx_json_str(o, "program"), failed_prog))
			snprintf(buf, sizeof(buf), ": the verifier rejected %s after %lld "
				 "instructions", failed_prog, (long long)json_integer_value(n));
	}
	return buf;
}

bool sbx_prog_type_is_cgroup(int type)
{
	switch (type) {
	case BPF_PROG_TYPE_CGROUP_SKB:
	case BPF_PROG_TYPE_CGROUP_SOCK:
	case BPF_PROG_TYPE_CGROUP_SOCK_ADDR:
	case BPF_PROG_TYPE_CGROUP_SOCKOPT:
	case BPF_PROG_TYPE_CGROUP_SYSCTL:
	case BPF_PROG_TYPE_CGROUP_DEVICE:
	case BPF_PROG_TYPE_SOCK_OPS:
		return true;
	default:
		return false;
	}
}

/* <cgroup2>/bpfsbx, made if needed: O_DIRECTORY fd, and its cgroup id */
static int open_sessions_root(const char *cg_root, uint64_t *id, char **err)
{
	char *base = sbx_asprintf("%s/" SBX_CGROUP_DIR_NAME, cg_root);
	struct stat st;
	int fd;

	if (mkdir(base, 0755) && errno != EEXIST) {
		*err = sbx_asprintf("creating %s: %s", base, strerror(errno));
		free(base);
		return -1;
	}
	fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		*err = sbx_asprintf("%s: %s", base, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(base);
		return -1;
	}
	*id = st.st_ino;	/* cgroup2: the inode is the id */
	free(base);
	return fd;
}

/* bpf/inbound.bpf.c: outside clients of a session's listener; they run
 * for every process, so they go on the cgroup root, not the sessions' */
static bool on_cgroup_root(const char *prog)
{
	return !strncmp(prog, "sbx_inbound_", 12);
}

/*
 * The attach type of each cgroup program, by name. A pinned program does
 * not say it (struct bpf_prog_info has no expected_attach_type); the
 * object this binary carries does, so it is opened once, without a load.
 */
struct cg_type {
	char name[128];	/* the whole name, as pinned (the kernel keeps 15 bytes) */
	enum bpf_attach_type type;
};
static struct cg_type *cg_types;
static size_t n_cg_types;

static int cgroup_types_read(char **err)
{
	struct sbx_bpf *skel;
	struct bpf_program *p;

	if (cg_types)
		return 0;
	skel = sbx_bpf__open();
	if (!skel) {
		*err = sbx_asprintf("opening the BPF object failed: %s", strerror(errno));
		return -EINVAL;
	}
	cg_types = sbx_calloc(skel->skeleton->prog_cnt + 1, sizeof(*cg_types));
	bpf_object__for_each_program(p, skel->obj) {
		if (!sbx_prog_type_is_cgroup(bpf_program__type(p)))
			continue;
		snprintf(cg_types[n_cg_types].name, sizeof(cg_types[0].name), "%s",
			 bpf_program__name(p));
		cg_types[n_cg_types++].type = bpf_program__expected_attach_type(p);
	}
	sbx_bpf__destroy(skel);
	return 0;
}

static int cgroup_type_of(const char *name, enum bpf_attach_type *t)
{
	for (size_t i = 0; i < n_cg_types; i++) {
		if (!strcmp(cg_types[i].name, name)) {
			*t = cg_types[i].type;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * The sessions' root was made anew (its id changed): links on the old
 * directory no longer run. Make a link of each pinned cgroup link's
 * program on the new one and pin it in the old one's place.
 */
static int relink_cgroup_progs(int root_fd, char **err)
{
	DIR *dir = opendir(SBX_PIN_DIR "/links");
	struct dirent *de;
	int rc = 0;

	if (!dir) {
		*err = sbx_asprintf("%s/links: %s", SBX_PIN_DIR, strerror(errno));
		return -errno;
	}
	while (!rc && (de = readdir(dir))) {
		struct bpf_link_info info = {};
		__u32 len = sizeof(info);
		char *path, *tmp;
		int lfd, pfd, nfd;

		if (de->d_name[0] == '.' || on_cgroup_root(de->d_name))
			continue;	/* the cgroup root is never made anew */
		path = sbx_asprintf(SBX_PIN_DIR "/links/%s", de->d_name);
		lfd = bpf_obj_get(path);
		if (lfd < 0 || bpf_obj_get_info_by_fd(lfd, &info, &len) ||
		    info.type != BPF_LINK_TYPE_CGROUP) {
			if (lfd >= 0)
				close(lfd);
			free(path);
			continue;
		}
		close(lfd);
		pfd = bpf_prog_get_fd_by_id(info.prog_id);
		nfd = pfd < 0 ? -1 : bpf_link_create(pfd, root_fd, info.cgroup.attach_type, NULL);
		tmp = sbx_asprintf(SBX_PIN_DIR "/links/_new_%s", de->d_name);
		if (nfd < 0 || bpf_obj_pin(nfd, tmp) || rename(tmp, path)) {
			rc = -errno;
			*err = sbx_asprintf("moving %s onto the new sessions' cgroup: %s",
					    de->d_name, strerror(-rc));
			unlink(tmp);
		}
		if (nfd >= 0)
			close(nfd);
		if (pfd >= 0)
			close(pfd);
		free(tmp);
		free(path);
	}
	closedir(dir);
	return rc;
}

/* the landlock tier's own programs (bpf/network.bpf.c): fentry and
 * fmod_ret on security_* functions, which need no BPF-LSM */
static bool landlock_tier_prog(const char *name)
{
	return !strncmp(name, "sbx_ll_", 7);
}

/*
 * The fallback tier (BPF-LSM off): the cgroup programs load (they decide
 * IP destinations on both tiers, dns.bpf.c); with sec_hooks,
 * every tracing program loads too: the tier's own on security_* functions
 * (unix sockets, ports, files, terminals, IPC) and the fexit programs of
 * bpf/ports.bpf.c, which both tiers need (who holds a loopback port, a
 * socket bound to a device). The LSM programs are not loaded at all, so
 * none is pinned either; nor are the inode storage maps, which only LSM
 * programs use and which the kernel cannot make without BPF-LSM's inode
 * blob (EOPNOTSUPP).
 */
static void landlock_tier_programs(struct sbx_bpf *skel, bool sec_hooks)
{
	struct bpf_map *map;

	for (int i = 0; i < skel->skeleton->prog_cnt; i++) {
		struct bpf_program *p = *skel->skeleton->progs[i].prog;
		enum bpf_prog_type t = bpf_program__type(p);

		if (!sbx_prog_type_is_cgroup(t) && !(sec_hooks && t == BPF_PROG_TYPE_TRACING))
			bpf_program__set_autoload(p, false);
	}
	bpf_object__for_each_map(map, skel->obj)
		if (bpf_map__type(map) == BPF_MAP_TYPE_INODE_STORAGE)
			bpf_map__set_autocreate(map, false);
}

static void bpf_lsm_tier_programs(struct sbx_bpf *skel)
{
	for (int i = 0; i < skel->skeleton->prog_cnt; i++) {
		struct bpf_program *p = *skel->skeleton->progs[i].prog;

		if (landlock_tier_prog(bpf_program__name(p)))
			bpf_program__set_autoload(p, false);
	}
	/* lsm/socket_create decides the same, and before it */
	bpf_program__set_autoload(skel->progs.sbx_sock_create, false);
	/* the tier's verdict cache: the full tier's is on the inodes */
	bpf_map__set_autocreate(skel->maps.sbx_ll_vcache, false);
	skel->rodata->sbx_lsm_connects = 1;
}

static int load_and_pin(enum sbx_tier tier, char **err)
{
	struct sbx_bpf *skel = NULL;
	struct sbx_cost_logs *logs;
	json_t *costs = NULL;
	struct bpf_map *map;
	char tmp[128], sub[160];
	struct sbx_config cfg = { .abi_version = SBX_ABI_VERSION };
	__u32 zero = 0;
	int rc;

	/* bpffs refuses names with a dot */
	snprintf(tmp, sizeof(tmp), SBX_PIN_DIR "_new_%d", (int)getpid());
	rm_tree(tmp);
	libbpf_set_print(libbpf_quiet);

	/* the landlock tier tries its programs on security_* first; a
	 * kernel that refuses them (no BPF trampolines) gets the tier
	 * without, and doctor's table says so (the pins are what it reads) */
	for (int with_unix = tier == SBX_TIER_LANDLOCK;; with_unix = 0) {
		skel = sbx_bpf__open();
		if (!skel) {
			rc = -errno;
			*err = sbx_asprintf("opening the BPF object failed: %s", strerror(-rc));
			return rc;
		}
		skel->rodata->sbx_session_level = 2;
		skel->rodata->sbx_fmode_backing = fmode_backing_bit();
		rc = sbx_select_variants(skel->obj, err);
		if (rc)
			goto fail;
		if (tier == SBX_TIER_LANDLOCK)
			landlock_tier_programs(skel, with_unix);
		else
			bpf_lsm_tier_programs(skel);
		failed_prog[0] = 0;
		logs = getenv("BPFSBX_DEBUG_LIBBPF") ? NULL : sbx_costs_prepare(skel->obj);
		rc = sbx_bpf__load(skel);
		costs = sbx_costs_collect(skel->obj, logs);
		if (!rc || !with_unix)
			break;
		sbx_warn("the landlock tier's programs on security_* do not load here (%s%s): "
			 "unix sockets and ports are not decided by owner on this kernel",
			 strerror(-rc), failed_program(costs));
		sbx_bpf__destroy(skel);
		json_decref(costs);
		skel = NULL;
		costs = NULL;
	}
	if (rc) {
		*err = sbx_asprintf("loading the BPF programs failed (%s)%s; set "
				    "BPFSBX_DEBUG_LIBBPF=1 for the verifier log", strerror(-rc),
				    failed_program(costs));
		goto fail;
	}
	/* what verifying each program cost on this kernel, for doctor */
	{
		char *text = json_dumps(costs, JSON_INDENT(1));

		if (!text || sbx_write_file_atomic(SBX_VERIFIER_FILE, text, strlen(text), 0644))
			sbx_warn("could not write " SBX_VERIFIER_FILE);
		free(text);
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.sbx_config), &zero, &cfg, BPF_ANY)) {
		rc = -errno;
		*err = sbx_asprintf("initialising sbx_config: %s", strerror(-rc));
		goto fail;
	}
	/* no links yet: sbx_kernel_attach makes them from the pinned
	 * programs, at the first session */

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

		if (bpf_map__is_internal(map) || !bpf_map__autocreate(map))
			continue;	/* .rodata: held by the programs; or not made here */
		p = sbx_asprintf("%s/maps/%s", tmp, bpf_map__name(map));
		rc = bpf_map__pin(map, p);
		free(p);
		if (rc) {
			*err = sbx_asprintf("pinning map %s: %s", bpf_map__name(map), strerror(-rc));
			goto fail;
		}
	}
	for (int i = 0; i < skel->skeleton->prog_cnt; i++) {
		char *p;

		if (!bpf_program__autoload(*skel->skeleton->progs[i].prog))
			continue;	/* a variant for another kernel */
		/* the links are made from these pins, again after every
		 * detach, with no second load and verification */
		p = sbx_asprintf("%s/progs/%s", tmp, skel->skeleton->progs[i].name);
		rc = bpf_program__pin(*skel->skeleton->progs[i].prog, p);
		free(p);
		if (rc) {
			*err = sbx_asprintf("pinning program %s: %s",
					    skel->skeleton->progs[i].name, strerror(-rc));
			goto fail;
		}
	}
	if (rename(tmp, SBX_PIN_DIR)) {
		rc = -errno;
		*err = sbx_asprintf("publishing %s: %s (is another daemon starting?)",
				    SBX_PIN_DIR, strerror(-rc));
		goto fail;
	}
	/* The pins now hold the programs and maps; the skeleton can go. */
	sbx_bpf__destroy(skel);
	json_decref(costs);
	return 0;
fail:
	rm_tree(tmp);
	sbx_bpf__destroy(skel);
	json_decref(costs);
	return rc ? rc : -EINVAL;
}

int sbx_kernel_up(struct sbx_kernel *k, bool load, char **err)
{
	int rc, ll_errno;

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		*slot_fd(k, &slots[i]) = -1;
	k->loaded_here = false;
	errno = 0;
	k->landlock_abi = sbx_landlock_abi();
	ll_errno = errno;
	k->tier = SBX_TIER_BPF_LSM;

	{
		/* doctor's diagnosis, so that run and the daemon say the same */
		struct sbx_lsm_diag d;

		sbx_lsm_diagnose(&d, load && !sbx_kernel_pinned());
		if ((d.state == SBX_LSM_NOT_BUILT || d.state == SBX_LSM_NOT_LISTED) &&
		    k->landlock_abi < 1) {
			*err = sbx_asprintf("%s, and Landlock is %s, so bpfsbx cannot confine "
					    "anything here; fix: %s, or add landlock to lsm= "
					    "('bpfsbx doctor' says more)", d.why,
					    ll_errno == EOPNOTSUPP ? "disabled at boot" : "not in this "
					    "kernel", d.fix ? d.fix : "boot a kernel with BPF-LSM");
			sbx_lsm_diag_free(&d);
			return -EOPNOTSUPP;
		}
		if ((d.state == SBX_LSM_NOT_BUILT || d.state == SBX_LSM_NOT_LISTED) &&
		    (access(SBX_PIN_DIR "/progs/sbx_file_open", F_OK) == 0 ||
		     access(SBX_PIN_DIR "/links/sbx_file_open", F_OK) == 0)) {
			/* the pins are the full tier's, and this kernel no longer
			 * says it has BPF-LSM: adopt neither tier */
			*err = sbx_asprintf("%s; fix: %s ('bpfsbx doctor' says more); the programs "
					    "pinned under " SBX_PIN_DIR " are the bpf-lsm tier's: "
					    "'bpfsbx unload' removes them", d.why,
					    d.fix ? d.fix : "");
			sbx_lsm_diag_free(&d);
			return -EOPNOTSUPP;
		} else if (d.state == SBX_LSM_NOT_BUILT || d.state == SBX_LSM_NOT_LISTED) {
			k->tier = SBX_TIER_LANDLOCK;
		} else if (d.state != SBX_LSM_OK) {
			rc = d.state == SBX_LSM_REFUSED ? -d.load_errno : -EOPNOTSUPP;
			*err = sbx_asprintf("%s; fix: %s ('bpfsbx doctor' says more)", d.why,
					    d.fix ? d.fix : "");
			sbx_lsm_diag_free(&d);
			return rc;
		}
		sbx_lsm_diag_free(&d);
	}
	rc = ensure_bpffs(err);
	if (rc)
		return rc;
	if (!sbx_kernel_pinned()) {
		if (!load) {
			*err = sbx_strdup("bpfsbx is not loaded (no pins under " SBX_PIN_DIR ")");
			return -ENOENT;
		}
		rc = load_and_pin(k->tier, err);
		if (rc)
			return rc;
		k->loaded_here = true;
	}
	rc = adopt(k, err);
	rc = rc ?: cgroup_types_read(err);
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

/* ---- links on demand ------------------------------------------------------ */

/* names of the pins in dir (not . or ..), malloc'd, NULL-terminated */
static char **pin_names(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (*n + 1 >= cap) {
			cap = cap ? cap * 2 : 64;
			v = sbx_realloc_array(v, cap, sizeof(*v));
		}
		v[(*n)++] = sbx_strdup(de->d_name);
	}
	closedir(d);
	if (v)
		v[*n] = NULL;
	return v;
}

static void names_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static bool link_pinned(const char *name)
{
	char *p = sbx_asprintf(SBX_PIN_DIR "/links/%s", name);
	struct stat st;
	bool yes = stat(p, &st) == 0;

	free(p);
	return yes;
}

bool sbx_kernel_attached(void)
{
	size_t n;
	char **progs = pin_names(SBX_PIN_DIR "/progs", &n);
	bool all = progs != NULL;

	for (size_t i = 0; all && i < n; i++)
		all = link_pinned(progs[i]);
	names_free(progs);
	return all;
}

/*
 * Move an epoch that BPF programs also move, from user space: far ahead,
 * not by one. An increment a program makes between the read and the
 * write is lost, but every value a cache entry can have recorded until
 * then stays far below the new one, so none of them matches again.
 */
#define EPOCH_LEAP (1ull << 20)

static int epoch_leap(const struct sbx_kernel *k, __u32 key)
{
	__u64 v;

	if (bpf_map_lookup_elem(k->epoch, &key, &v))
		return -errno;
	v += EPOCH_LEAP;
	return bpf_map_update_elem(k->epoch, &key, &v, BPF_ANY) ? -errno : 0;
}

/*
 * While no link existed, no hook saw what happened: renames, links and
 * mounts (the file verdicts cached on inodes, and the policy cache's
 * hard-link scans, trust SBX_EPOCH_RENAME and SBX_EPOCH_LINK); ports
 * taken and left (SBX_EPOCH_PORTS: loopback listeners remembered on
 * sockets); sockets bound to a device (sbx_dev_ports, which only the
 * fexit programs of ports.bpf.c fill). Run once the links exist, so that
 * whatever happens from then on is seen by the hooks and whatever
 * happened before is covered here. Sessions' own marks (socket owners,
 * FIFOs, ptys, keys) need nothing: with no session, nothing was marked,
 * and unmarked counts as outside.
 */
static int forget_the_unseen(const struct sbx_kernel *k, char **err)
{
	static const __u32 leap[] = { SBX_EPOCH_RENAME, SBX_EPOCH_LINK, SBX_EPOCH_PORTS };
	size_t noted = 0;
	int rc;

	rc = sbx_dev_ports_scan(k->dev_ports, &noted, err);
	if (rc)
		return rc;
	if (noted) {
		rc = epoch_leap(k, SBX_EPOCH_DEV_PORTS);
		if (rc) {
			*err = sbx_asprintf("moving the device ports epoch: %s", strerror(-rc));
			return rc;
		}
	}
	for (size_t i = 0; i < sizeof(leap) / sizeof(leap[0]); i++) {
		rc = epoch_leap(k, leap[i]);
		if (rc) {
			*err = sbx_asprintf("moving epoch %u: %s", leap[i], strerror(-rc));
			return rc;
		}
	}
	/* the datagram verdicts remembered on sockets, too */
	sbx_net_changed(k);
	return 0;
}

/*
 * The kernel releases an unpinned link from a work queue, after the
 * unlink has returned: an attach right after a detach can find the
 * program still on its trampoline (EBUSY) or cgroup (EEXIST) for a while.
 */
#define RELINK_WAIT_MS 60000

static int make_link(int pfd, const struct bpf_prog_info *info, const char *name,
		     int sessions_fd, int root_fd, enum bpf_attach_type at)
{
	if (sbx_prog_type_is_cgroup(info->type))
		return bpf_link_create(pfd, on_cgroup_root(name) ? root_fd : sessions_fd, at, NULL);
	/* LSM programs by BPF_LINK_CREATE; fexit programs (and LSM ones where
	 * that is refused) the way libbpf attaches them */
	if (info->type == BPF_PROG_TYPE_LSM) {
		int fd = bpf_link_create(pfd, 0, BPF_LSM_MAC, NULL);

		if (fd >= 0 || errno == EBUSY)
			return fd;
	}
	return bpf_raw_tracepoint_open(NULL, pfd);
}

/* one program's link, from its pin, pinned in links/ */
static int link_one(const char *name, int sessions_fd, int root_fd, char **err)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	enum bpf_attach_type at = 0;
	char *path = sbx_asprintf(SBX_PIN_DIR "/progs/%s", name);
	int pfd = bpf_obj_get(path), lfd = -1, rc = 0;

	free(path);
	if (pfd < 0 || bpf_obj_get_info_by_fd(pfd, &info, &len)) {
		rc = -errno;
		*err = sbx_asprintf("program %s: %s", name, strerror(-rc));
		goto out;
	}
	if (sbx_prog_type_is_cgroup(info.type) && cgroup_type_of(name, &at)) {
		rc = -ENOENT;
		*err = sbx_asprintf("program %s is not in this binary's object (run "
				    "'bpfsbx unload' to replace the pinned state)", name);
		goto out;
	}
	for (int64_t until = sbx_now_ms() + RELINK_WAIT_MS;;) {
		lfd = make_link(pfd, &info, name, sessions_fd, root_fd, at);
		if (lfd >= 0 || (errno != EBUSY && errno != EEXIST) || sbx_now_ms() > until)
			break;
		usleep(20000);
	}
	if (lfd < 0) {
		rc = -errno;
		*err = sbx_asprintf("attaching %s: %s", name, strerror(-rc));
		goto out;
	}
	path = sbx_asprintf(SBX_PIN_DIR "/links/%s", name);
	if (bpf_obj_pin(lfd, path)) {
		rc = -errno;
		*err = sbx_asprintf("pinning link %s: %s", name, strerror(-rc));
	}
	free(path);
out:
	if (lfd >= 0)
		close(lfd);
	if (pfd >= 0)
		close(pfd);
	return rc;
}

int sbx_kernel_attach(struct sbx_kernel *k, const char *cg_root, char **err)
{
	struct sbx_config cfg;
	size_t n;
	char **progs = pin_names(SBX_PIN_DIR "/progs", &n);
	uint64_t id = 0;
	__u32 zero = 0;
	int sfd = -1, rfd = -1, rc = 0;

	if (!progs) {
		*err = sbx_asprintf("no pinned programs under %s/progs: %s", SBX_PIN_DIR,
				    strerror(errno));
		return -ENOENT;
	}
	sfd = open_sessions_root(cg_root, &id, err);
	rfd = sfd < 0 ? -1 : open(cg_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0) {
		rc = -EIO;
		if (sfd >= 0)
			*err = sbx_asprintf("%s: %s", cg_root, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		if (link_pinned(progs[i]))
			continue;
		rc = link_one(progs[i], sfd, rfd, err);
	}
	if (rc)
		goto out;
	/* even when every link is there already: a try that made them and
	 * then failed here left the unseen unforgotten */
	rc = forget_the_unseen(k, err);
	if (rc)
		goto out;
	if (bpf_map_lookup_elem(k->config, &zero, &cfg) == 0) {
		cfg.cgroup_progs_root = id;
		if (bpf_map_update_elem(k->config, &zero, &cfg, BPF_ANY))
			rc = -errno;
	} else {
		rc = -errno;
	}
	if (rc)
		*err = sbx_asprintf("writing sbx_config: %s", strerror(-rc));
out:
	if (sfd >= 0)
		close(sfd);
	if (rfd >= 0)
		close(rfd);
	names_free(progs);
	return rc;
}

int sbx_kernel_detach(size_t *n, char **err)
{
	size_t m;
	char **links = pin_names(SBX_PIN_DIR "/links", &m);
	int rc = 0;

	*n = 0;
	for (size_t i = 0; i < m; i++) {
		char *p = sbx_asprintf(SBX_PIN_DIR "/links/%s", links[i]);

		/* the pin is the link's last reference: the program detaches */
		if (unlink(p) == 0)
			(*n)++;
		else if (errno != ENOENT && !rc)
			rc = -errno;
		free(p);
	}
	if (rc)
		*err = sbx_asprintf("unpinning links under %s/links: %s", SBX_PIN_DIR,
				    strerror(-rc));
	names_free(links);
	return rc;
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

void sbx_net_changed(const struct sbx_kernel *k)
{
	__u32 key = SBX_EPOCH_NET;
	__u64 v;

	/* only the daemon writes this counter: read, add, write is safe */
	if (bpf_map_lookup_elem(k->epoch, &key, &v) == 0) {
		v++;
		if (bpf_map_update_elem(k->epoch, &key, &v, BPF_ANY) == 0)
			return;
	}
	sbx_warn("moving the network epoch: %s", strerror(errno));
}

void sbx_session_ports_forget(const struct sbx_kernel *k)
{
	static const struct sbx_held_ports none;
	__u32 key = SBX_EPOCH_SESSION_PORTS, zero = 0;
	__u64 word = 0;

	if (bpf_map_update_elem(k->epoch, &key, &word, BPF_ANY))
		sbx_warn("clearing the session ports word: %s", strerror(errno));
	if (bpf_map_update_elem(k->held_ports, &zero, &none, BPF_ANY))
		sbx_warn("clearing the sessions' ports: %s", strerror(errno));
}

/*
 * The keys of a hash map for which match() says so (every key for a NULL
 * match). The walk visits every bucket of the map, used or not (65,536 or
 * more here), so it belongs off the path of a session's start and end.
 */
void *sbx_map_keys(int fd, size_t key_size, bool (*match)(const void *key, void *ctx),
		   void *ctx, size_t *count)
{
	unsigned char *key = sbx_calloc(1, key_size), *next = sbx_calloc(1, key_size);
	unsigned char *keys = NULL;
	size_t n = 0, cap = 0;
	int first = 1;

	while (bpf_map_get_next_key(fd, first ? NULL : key, next) == 0) {
		first = 0;
		if (!match || match(next, ctx)) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				keys = sbx_realloc_array(keys, cap, key_size);
			}
			memcpy(keys + n * key_size, next, key_size);
			n++;
		}
		memcpy(key, next, key_size);
	}
	free(key);
	free(next);
	if (errno != ENOENT) {
		/* a walk that stopped early is no list of the keys */
		int e = errno;

		free(keys);
		*count = 0;
		errno = e;
		return NULL;
	}
	errno = 0;
	*count = n;
	return keys;
}

/* Collect first: deleting while iterating a hash map restarts the walk. */
int sbx_map_delete_keys_if(int fd, size_t key_size,
			   bool (*doomed)(const void *key, void *ctx), void *ctx)
{
	size_t n;
	unsigned char *victims = sbx_map_keys(fd, key_size, doomed, ctx, &n);
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		if (bpf_map_delete_elem(fd, victims + i * key_size) && errno != ENOENT)
			rc = -errno;
	free(victims);
	return rc;
}

/*
 * Delete exactly these keys; absent ones are skipped. Hash maps take them
 * in one BPF_MAP_DELETE_BATCH (the kernel stops at an absent key and says
 * how many went before it); maps without batch operations, the LPM tries
 * of 6.1 and 6.12, one syscall per key.
 */
int sbx_map_delete_keys(int fd, const void *keys, size_t key_size, size_t n)
{
	const unsigned char *k = keys;
	bool batch = true;
	size_t done = 0;
	int rc = 0;

	while (done < n) {
		if (batch) {
			LIBBPF_OPTS(bpf_map_batch_opts, o);
			__u32 count = n - done;

			if (!bpf_map_delete_batch(fd, k + done * key_size, &count, &o))
				break;
			if (errno == ENOTSUPP_KERNEL || errno == EOPNOTSUPP || errno == EINVAL) {
				batch = false;	/* nothing was deleted */
				continue;
			}
			done += count;	/* deleted; the one at done failed */
		} else if (!bpf_map_delete_elem(fd, k + done * key_size)) {
			done++;
			continue;
		}
		if (errno != ENOENT)
			rc = -errno;
		done++;
	}
	return rc;
}

struct policy_id_test {
	size_t off;
	bool be;
	bool (*doomed)(uint32_t id, void *ctx);
	void *ctx;
};

static bool policy_id_doomed(const void *key, void *ctx)
{
	const struct policy_id_test *t = ctx;
	uint32_t v;

	memcpy(&v, (const unsigned char *)key + t->off, sizeof(v));
	return t->doomed(t->be ? ntohl(v) : v, t->ctx);
}

int sbx_map_delete_if(int fd, size_t key_size, size_t id_off, bool be,
		      bool (*doomed)(uint32_t id, void *ctx), void *ctx)
{
	struct policy_id_test t = { .off = id_off, .be = be, .doomed = doomed, .ctx = ctx };

	return sbx_map_delete_keys_if(fd, key_size, policy_id_doomed, &t);
}

/* ---- the sessions' cgroup ------------------------------------------------ */

int sbx_cgroup_root(char **path, char **err)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	char *best = NULL;

	if (!f) {
		*err = sbx_asprintf("reading /proc/self/mountinfo: %s", strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char root[PATH_MAX], mnt[PATH_MAX], *sep;

		sep = strstr(line, " - cgroup2 ");
		if (!sep)
			continue;
		if (sscanf(line, "%*d %*d %*s %4095s %4095s", root, mnt) != 2)
			continue;
		if (strcmp(root, "/"))
			continue;	/* a cgroup namespace view: not the real root */
		/* prefer the conventional place when it is mounted twice */
		if (!best || !strcmp(mnt, "/sys/fs/cgroup")) {
			free(best);
			best = sbx_strdup(mnt);
		}
	}
	fclose(f);
	if (!best) {
		*err = sbx_strdup("cgroup v2 is not mounted (run 'bpfsbx doctor')");
		return -ENOENT;
	}
	*path = best;
	return 0;
}

char *sbx_cgroup2_options(const char *root)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char dev[256], dir[4096], type[64], opts[1024];
	char *r = NULL;

	while (f && !r && fscanf(f, "%255s %4095s %63s %1023s %*d %*d", dev, dir, type, opts) == 4)
		if (!strcmp(type, "cgroup2") && !strcmp(dir, root))
			r = sbx_strdup(opts);
	if (f)
		fclose(f);
	return r;
}

/*
 * Create <cgroup2>/bpfsbx if needed and make sure the kernel's
 * sbx_config.sessions_root names it. The BPF side lets every task whose
 * ancestor is another cgroup pass without a lookup, so a session must
 * never start below a directory whose id the kernel does not have: any
 * failure here fails the session.
 */
int sbx_sessions_root_sync(struct sbx_kernel *k, const char *cg_root, char **err)
{
	struct sbx_config cfg;
	uint64_t id = 0;
	__u32 zero = 0;
	int rc = 0, fd;

	fd = open_sessions_root(cg_root, &id, err);
	if (fd < 0)
		return -EIO;
	if (bpf_map_lookup_elem(k->config, &zero, &cfg)) {
		rc = -errno;
		*err = sbx_asprintf("reading sbx_config: %s", strerror(-rc));
	} else if (cfg.sessions_root != id || cfg.cgroup_progs_root != id) {
		cfg.sessions_root = id;
		/* the cgroup programs first: DNS is redirected only once they
		 * run on this directory (sbx_dns.h) */
		if (cfg.cgroup_progs_root != id) {
			/* without them sessions still start: port 53 is then
			 * decided by the policy like any port (fail closed) */
			if (relink_cgroup_progs(fd, err) == 0) {
				cfg.cgroup_progs_root = id;
			} else {
				sbx_warn("%s; DNS is not redirected to the daemon", *err);
				free(*err);
				*err = NULL;
			}
		}
		if (bpf_map_update_elem(k->config, &zero, &cfg, BPF_ANY) && !rc) {
			rc = -errno;
			*err = sbx_asprintf("writing sbx_config: %s", strerror(-rc));
		}
	}
	close(fd);
	return rc;
}
