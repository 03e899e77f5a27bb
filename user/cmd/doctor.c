// SPDX-License-Identifier: GPL-2.0
/*
 * doctor.c - `bpfsbx doctor`: can this machine enforce, and if not, what
 * exactly to change. Every check prints ok / FAIL / note and a fix.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bpfsbx.skel.h"
#include "user/cmd/cmd.h"
#include "user/daemon/kernel.h"
#include "user/daemon/loop.h"
#include "user/daemon/state.h"
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "user/daemon/verifier.h"

#define CGROUP2_SUPER_MAGIC 0x63677270
#define BPF_FS_MAGIC 0xcafe4a11

static int failures;

static void check(bool ok, const char *what, const char *fix, ...)
	__attribute__((format(printf, 3, 4)));
static void check(bool ok, const char *what, const char *fix, ...)
{
	va_list ap;

	printf("%-5s %s\n", ok ? "ok" : "FAIL", what);
	if (!ok) {
		failures++;
		if (fix) {
			printf("      fix: ");
			va_start(ap, fix);
			vprintf(fix, ap);
			va_end(ap);
			printf("\n");
		}
	}
}

/* the options of the cgroup2 mount at root, as /proc/self/mounts has them */
static char *cgroup2_options(const char *root)
{
	FILE *f = fopen("/proc/self/mounts", "re");
	char dev[256], dir[4096], type[64], opts[1024];
	char *r = NULL;

	while (f && !r && fscanf(f, "%255s %4095s %63s %1023s %*d %*d", dev, dir, type, opts) == 4)
		if (!strcmp(type, "cgroup2") && !strcmp(dir, root))
			r = strdup(opts);
	if (f)
		fclose(f);
	return r;
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	printf("note  ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static bool fs_is(const char *path, unsigned long magic)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && (unsigned long)sf.f_type == magic;
}

static char *kconfig(const char *key)
{
	struct utsname u;
	char *path, *buf = NULL, *p, *val = NULL;

	if (uname(&u))
		return NULL;
	path = sbx_asprintf("/boot/config-%s", u.release);
	if (sbx_read_file(path, 16 << 20, &buf, NULL) == 0) {
		char *needle = sbx_asprintf("\n%s=", key);

		p = strstr(buf, needle);
		if (p) {
			p += strlen(needle);
			val = strndup(p, strcspn(p, "\n"));
		}
		free(needle);
	}
	free(buf);
	free(path);
	return val;
}

static int libbpf_silent(enum libbpf_print_level l, const char *f, va_list ap)
{
	(void)l;
	(void)f;
	(void)ap;
	return 0;
}

static int cmd_doctor(int argc, char **argv)
{
	struct utsname u;
	char *lsm = NULL, *cfg, *lockdown = NULL;
	bool bpf_lsm, in_session;
	struct stat st;
	pid_t dpid = 0;
	json_t *costs = NULL;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: bpfsbx doctor\n\nCheck that this machine can enforce bpfsbx "
		       "policies, and say what to change if not.\n");
		return SBX_EXIT_OK;
	}
	if (argc > 1) {
		sbx_err("doctor: unexpected argument '%s'", argv[1]);
		return SBX_EXIT_USAGE;
	}
	failures = 0;
	uname(&u);
	printf("kernel %s %s\n", u.release, u.machine);
	{
		unsigned maj = 0, min = 0;

		sscanf(u.release, "%u.%u", &maj, &min);
		check(maj > 6 || (maj == 6 && min >= 1), "the kernel is 6.1 or newer",
		      "install a newer kernel: Debian 12 packages 6.12 "
		      "(linux-image-6.12*-amd64), Ubuntu 22.04 its HWE kernel "
		      "(linux-generic-hwe-22.04, 6.8)");
		note("tested kernels: Debian's 6.1 and 6.12 (every release is verified and "
		     "tested on both); this one is %s", (maj == 6 && (min == 1 || min == 12)) ?
		     "one of those lines" : "another: the programs' verifier cost below tells "
		     "whether they load here");
	}

	bpf_lsm = sbx_bpf_lsm_active(&lsm);
	if (lsm)
		lsm[strcspn(lsm, "\n")] = 0;
	if (!lsm && !fs_is("/sys/kernel/security", 0x73636673)) {
		check(false, "securityfs is mounted at /sys/kernel/security",
		      "mount -t securityfs securityfs /sys/kernel/security");
	}
	cfg = kconfig("CONFIG_BPF_LSM");
	check(bpf_lsm, "BPF-LSM is active (\"bpf\" in /sys/kernel/security/lsm)",
	      "%s%s%s", cfg && !strcmp(cfg, "y") ?
	      "the kernel has CONFIG_BPF_LSM=y but does not enable it: add \"lsm=" :
	      "this kernel may lack CONFIG_BPF_LSM; if it has it, add \"lsm=",
	      lsm && *lsm ? lsm : "landlock,lockdown,yama,integrity,apparmor",
	      ",bpf\" to the kernel command line (Debian/Ubuntu: GRUB_CMDLINE_LINUX in "
	      "/etc/default/grub, then update-grub and reboot; Ubuntu kernels ship "
	      "CONFIG_BPF_LSM=y without bpf in the default list)");
	if (lsm)
		note("active LSMs: %s", lsm);
	free(cfg);

	check(stat("/sys/kernel/btf/vmlinux", &st) == 0,
	      "kernel BTF at /sys/kernel/btf/vmlinux (needed for CO-RE)",
	      "use a kernel built with CONFIG_DEBUG_INFO_BTF=y (Debian's and Ubuntu's are)");
	{
		char *root = NULL, *err = NULL;
		bool ok = sbx_cgroup_root(&root, &err) == 0;

		check(ok, "cgroup v2 is mounted",
		      "mount -t cgroup2 none /sys/fs/cgroup (or boot with "
		      "systemd.unified_cgroup_hierarchy=1)");
		if (ok) {
			char *opts = cgroup2_options(root);

			note("cgroup v2 at %s; sessions live under %s/" SBX_CGROUP_DIR_NAME, root,
			     root);
			/* moving `run` into its session waits for an RCU grace
			 * period (about 10 ms) unless this mount option is on */
			if (opts && !strstr(opts, "favordynmods"))
				note("session starts would be about 10 ms faster with cgroup2's "
				     "favordynmods (forks get a little dearer, system-wide): "
				     "mount -o remount,%s,favordynmods %s", opts, root);
			else if (opts)
				note("cgroup2 is mounted with favordynmods: session starts move "
				     "the caller without waiting for an RCU grace period");
			free(opts);
		}
		free(root);
		free(err);
	}
	check(fs_is("/sys/fs/bpf", BPF_FS_MAGIC), "bpffs is mounted at /sys/fs/bpf",
	      "mount -t bpf bpf /sys/fs/bpf (the daemon does this itself when it can)");

	if (sbx_read_file("/sys/kernel/security/lockdown", 4096, &lockdown, NULL) == 0) {
		bool conf = strstr(lockdown, "[confidentiality]") != NULL;

		check(!conf, "kernel lockdown is not in confidentiality mode",
		      "lockdown=confidentiality forbids BPF reads of kernel memory, which every "
		      "check needs; boot with lockdown=integrity or none");
		free(lockdown);
	}

	/* overlayfs over layers on different file systems, without xino,
	 * gives different files the same (device, inode) */
	{
		FILE *f = fopen("/proc/self/mountinfo", "re");
		char line[4096];

		while (f && fgets(line, sizeof(line), f)) {
			char mnt[1024];

			if (!strstr(line, " - overlay ") || strstr(line, "xino=on"))
				continue;
			if (sscanf(line, "%*d %*d %*s %*s %1023s", mnt) == 1)
				note("overlayfs at %s is mounted without xino=on: if its layers are on "
				     "different file systems, files can share an inode number and "
				     "inode rules may match the wrong file (mount with xino=on)", mnt);
		}
		if (f)
			fclose(f);
	}

	in_session = sbx_pid_in_session(getpid(), NULL, 0);
	if (in_session)
		note("this shell is inside a bpfsbx session");

	if (geteuid() == 0 && bpf_lsm && !sbx_kernel_pinned()) {
		/* not loaded yet: load (without attaching) to see that the
		 * verifier takes every program here, and at what cost */
		struct sbx_bpf *skel;
		struct sbx_cost_logs *logs;
		char *verr = NULL;
		int rc;

		libbpf_set_print(libbpf_silent);
		skel = sbx_bpf__open();
		rc = skel ? sbx_select_variants(skel->obj, &verr) : -errno;
		if (!rc) {
			logs = sbx_costs_prepare(skel->obj);
			rc = sbx_bpf__load(skel);
			costs = sbx_costs_collect(skel->obj, logs);
		}
		check(rc == 0, "the BPF-LSM programs load (verifier accepts them)",
		      "loading failed with %s%s%s", verr ? verr : strerror(-rc), rc == -EPERM ?
		      ": the kernel refuses LSM programs here (a host or container "
		      "restriction, e.g. a hypervisor sandbox or seccomp); run bpfsbx in a VM "
		      "or on the host itself" : "",
		      rc == -E2BIG ? ": a program is too complex for this kernel's verifier "
		      "(see the table below); please report it with `bpfsbx doctor` output" : "");
		free(verr);
		sbx_bpf__destroy(skel);
	} else if (geteuid() != 0) {
		note("run as root to also test-load the BPF programs");
	} else if (sbx_kernel_pinned()) {
		char *text = NULL;

		if (sbx_read_file(SBX_VERIFIER_FILE, 1 << 20, &text, NULL) == 0)
			costs = json_loads(text, 0, NULL);
		free(text);
		if (!costs)
			note("no verifier figures (" SBX_VERIFIER_FILE "): they are recorded by the "
			     "daemon that loads the programs");
	}
	if (costs) {
		int over = sbx_costs_print(stdout, costs);

		check(over == 0, "every program verifies within the budget",
		      "%d program(s) over the budget or not loaded (see above)", over);
		json_decref(costs);
	}

	if (sbx_daemon_running(&dpid))
		note("daemon: running (pid %d)", (int)dpid);
	else
		note("daemon: not running (sudo systemctl start bpfsbx, or sudo bpfsbx daemon)");
	note("enforcement: %s", sbx_kernel_pinned() ? "programs pinned under " SBX_PIN_DIR :
		"not loaded");

	printf("\nknown limits (see README, \"Known limits\"):\n"
	       "  - scripts read by an interpreter (python x.py) are governed by file read\n"
	       "    rules, not exec rules; a copy of an exec-denied binary is a new file\n"
	       "  - file descriptors opened before a session started are not re-checked\n"
	       "  - abstract unix sockets (no path) are not checked\n"
	       "  - host names are resolved when a session starts, not followed after\n");
	free(lsm);
	printf("\n%s\n", failures ? "bpfsbx cannot enforce on this machine yet: fix the FAIL lines"
				  : "bpfsbx can enforce on this machine");
	return failures ? SBX_EXIT_FAIL : SBX_EXIT_OK;
}

SBX_COMMAND(doctor, "doctor", "", "check that this machine can enforce", cmd_doctor);
