// SPDX-License-Identifier: GPL-2.0
/*
 * lsm_diag.c - can BPF-LSM enforce here, and if not, which of the three
 * reasons (see lsm_diag.h). Each is told by what the kernel itself says:
 * its build configuration (/boot/config-RELEASE or /proc/config.gz) or,
 * without one, its BTF (a kernel with BPF-LSM has a bpf_lsm_file_open
 * function to attach to); its LSM list in securityfs; and a test load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "lib/alloc.h"
#include "lib/fileio.h"
#include "lib/text.h"
#include "user/daemon/lsm_diag.h"

#define SECURITYFS_MAGIC 0x73636673
#define SECURITY_DIR "/sys/kernel/security"

/* "y", "n" (not set) or NULL (no configuration to read); *where names it */
static char *config_bpf_lsm(char **where)
{
	struct utsname u;
	char *path, *buf = NULL, *val = NULL;
	size_t len = 0;

	*where = NULL;
	if (uname(&u))
		return NULL;
	path = sbx_asprintf("/boot/config-%s", u.release);
	if (sbx_read_file(path, 16 << 20, &buf, &len)) {
		gzFile z = gzopen("/proc/config.gz", "rb");

		free(path);
		path = NULL;
		if (z) {
			size_t cap = 1 << 20;
			int n;

			buf = sbx_calloc(1, cap + 1);
			while (len < cap && (n = gzread(z, buf + len, (unsigned)(cap - len))) > 0)
				len += (size_t)n;
			buf[len] = 0;
			gzclose(z);
			path = sbx_strdup("/proc/config.gz");
		}
	}
	if (path && buf) {
		if (strstr(buf, "\nCONFIG_BPF_LSM=y"))
			val = sbx_strdup("y");
		else
			val = sbx_strdup("n");	/* "# CONFIG_BPF_LSM is not set", or absent */
		*where = path;
	} else {
		free(path);
	}
	free(buf);
	return val;
}

/* the BTF id of bpf_lsm_file_open, the hook a BPF-LSM kernel exposes; 0 if none */
static int lsm_hook_btf_id(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int id;

	if (!btf)
		return 0;
	id = btf__find_by_name_kind(btf, "bpf_lsm_file_open", BTF_KIND_FUNC);
	btf__free(btf);
	return id > 0 ? id : 0;
}

static char *read_lsm_list(void)
{
	struct statfs sf;
	char *buf = NULL;

	if (sbx_read_file(SECURITY_DIR "/lsm", 4096, &buf, NULL) == 0) {
		buf[strcspn(buf, "\n")] = 0;
		return buf;
	}
	/* not mounted (a container, a minimal init): root mounts it, as
	 * systemd would, rather than guess what it would say */
	if (geteuid() == 0 && (statfs(SECURITY_DIR, &sf) || sf.f_type != SECURITYFS_MAGIC) &&
	    mount("securityfs", SECURITY_DIR, "securityfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) == 0 &&
	    sbx_read_file(SECURITY_DIR "/lsm", 4096, &buf, NULL) == 0) {
		buf[strcspn(buf, "\n")] = 0;
		return buf;
	}
	return NULL;
}

char *sbx_lsm_boot_param(const char *lsm)
{
	char *out = sbx_strdup("lsm="), *copy = sbx_strdup(lsm ? lsm : ""), *save = NULL;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *next;

		if (!strcmp(t, "capability") || !strcmp(t, "bpf"))
			continue;
		next = sbx_asprintf("%s%s,", out, t);
		free(out);
		out = next;
	}
	free(copy);
	{
		char *next = sbx_asprintf("%sbpf", out);

		free(out);
		out = next;
	}
	return out;
}

/* 0, or the errno of loading or attaching a program that allows all */
static int test_load(int btf_id)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = BPF_LSM_MAC,
		    .attach_btf_id = (__u32)btf_id);
	int fd, link, rc = 0;

	fd = bpf_prog_load(BPF_PROG_TYPE_LSM, "sbx_probe", "GPL", insns, 2, &o);
	if (fd < 0)
		return -fd;
	link = bpf_link_create(fd, 0, BPF_LSM_MAC, NULL);
	if (link < 0)
		rc = -link;
	else
		close(link);	/* detached again: it allowed, and only for an instant */
	close(fd);
	return rc;
}

static const char grub[] = " to the kernel command line (Debian/Ubuntu: GRUB_CMDLINE_LINUX in "
			   "/etc/default/grub, then update-grub) and reboot";

void sbx_lsm_diagnose(struct sbx_lsm_diag *d, bool try_load)
{
	char *cfg;
	int btf_id;

	memset(d, 0, sizeof(*d));
	d->lsm = read_lsm_list();
	cfg = config_bpf_lsm(&d->config);
	btf_id = lsm_hook_btf_id();

	if ((cfg && !strcmp(cfg, "n")) || (!cfg && !btf_id && !sbx_list_has(d->lsm, "bpf"))) {
		d->state = SBX_LSM_NOT_BUILT;
		d->why = cfg ? sbx_asprintf("BPF-LSM is not active: this kernel is built without it "
					    "(CONFIG_BPF_LSM is not set in %s)", d->config)
			     : sbx_strdup("BPF-LSM is not active: this kernel is built without it "
					  "(its BTF has no bpf_lsm_ hooks)");
		d->fix = sbx_strdup("boot a kernel built with CONFIG_BPF_LSM=y (Debian's and "
				    "Ubuntu's are: linux-image-amd64, linux-generic)");
	} else if (!d->lsm) {
		d->state = SBX_LSM_UNKNOWN;
		d->why = sbx_strdup("the active LSMs cannot be read: securityfs is not mounted at "
				    SECURITY_DIR);
		d->fix = sbx_strdup(geteuid() ? "run as root (bpfsbx mounts securityfs itself)"
					      : "mount -t securityfs securityfs " SECURITY_DIR);
	} else if (!sbx_list_has(d->lsm, "bpf")) {
		char *param = sbx_lsm_boot_param(d->lsm);

		d->state = SBX_LSM_NOT_LISTED;
		d->why = sbx_asprintf("BPF-LSM is not active: it is built into this kernel, but "
				      "'bpf' is not in its LSM list (%s)", d->lsm);
		d->fix = sbx_asprintf("add \"%s\"%s", param, grub);
		free(param);
	} else if (try_load && geteuid() == 0 && btf_id) {
		int e = test_load(btf_id);
		char *lockdown = NULL;

		d->tested = true;
		if (e) {
			d->state = SBX_LSM_REFUSED;
			d->load_errno = e;
			/* "none [integrity] confidentiality": the bracketed one is in force */
			if (sbx_read_file(SECURITY_DIR "/lockdown", 4096, &lockdown, NULL) == 0) {
				char *b = strchr(lockdown, '['), *mode;

				mode = sbx_strdup(b ? b + 1 : lockdown);
				mode[strcspn(mode, "]\n")] = 0;
				free(lockdown);
				lockdown = mode;
			}
			d->why = sbx_asprintf("BPF-LSM is in the LSM list (%s), but loading an LSM "
					      "program is refused here (%s): kernel lockdown (mode %s), a "
					      "container, seccomp or the host's BPF policy forbids it",
					      d->lsm, strerror(e), lockdown ? lockdown : "not readable");
			d->fix = sbx_strdup("nothing on this machine's command line changes this: run "
					    "bpfsbx where LSM programs may be loaded (the host itself, "
					    "or a VM), or use hooks only here");
			free(lockdown);
		} else {
			d->why = sbx_asprintf("BPF-LSM is active (%s) and an LSM program loads here",
					      d->lsm);
		}
	} else {
		d->why = sbx_asprintf("BPF-LSM is in the LSM list (%s)", d->lsm);
	}
	free(cfg);
}

void sbx_lsm_diag_free(struct sbx_lsm_diag *d)
{
	free(d->lsm);
	free(d->config);
	free(d->why);
	free(d->fix);
	memset(d, 0, sizeof(*d));
}
