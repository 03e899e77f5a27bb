// SPDX-License-Identifier: GPL-2.0
/*
 * The protection table doctor prints (user/sandbox/tier.c): on this
 * kernel, and on a 6.1-like one (Landlock ABI 2, no MFD_NOEXEC_SEAL),
 * each row is marked by what the kernel has and bpfsbx uses: "enforced"
 * only where run and the daemon apply it, and the unix rows by whether
 * the daemon's programs on security_unix_* are pinned.
 */
#include <stdio.h>
#include <string.h>
#include "lib/text.h"
#include "user/sandbox/tier.h"
#include "tests/unit/unit.h"

SBX_TEST(sandbox, tier_table_follows_the_probe)
{
	struct sbx_tier_probe p;
	struct sbx_protection rows[SBX_TIER_ROWS];
	unsigned n;
	bool saw_memfd = false;

	/* an LSM list as Ubuntu's (the file ends in a newline) */
	sbx_tier_probe(&p, false, "lockdown,capability,landlock,yama,apparmor\n");
	CU_ASSERT(p.lsm_read && !p.bpf_listed);
	printf("    tier: %s, Landlock ABI %d, seccomp %d, memfd noexec %d, cgroup2 %d\n",
	       sbx_tier_name(p.tier), p.landlock_abi, p.seccomp_filter, p.memfd_noexec,
	       p.cgroup2);
	CU_ASSERT_NOT_EQUAL(p.tier, SBX_TIER_BPF_LSM);
	CU_ASSERT_EQUAL(p.tier, p.landlock_abi >= 1 && p.seccomp_filter && p.cgroup2 ?
			SBX_TIER_LANDLOCK : SBX_TIER_NONE);
	n = sbx_tier_protections(&p, rows, SBX_TIER_ROWS);
	CU_ASSERT(n > 10 && n <= SBX_TIER_ROWS);
	for (unsigned i = 0; i < n && i < SBX_TIER_ROWS; i++) {
		/* the programs' own refusals, and Landlock's of opens and execs */
		if (!strncmp(rows[i].what, "events for file", 15))
			CU_ASSERT_EQUAL(rows[i].state, SBX_PROT_ENFORCED);
		/* not loaded yet: enforced once the programs are, said so */
		if (!strncmp(rows[i].what, "unix", 4))
			CU_ASSERT(rows[i].state == SBX_PROT_ENFORCED && rows[i].note &&
				  strstr(rows[i].note, "once the daemon"));
		/* signals: the program on security_task_kill, or Landlock's
		 * scope from ABI 6 (landlock.c sets it) */
		if (!strncmp(rows[i].what, "signals", 7))
			CU_ASSERT_EQUAL(rows[i].state == SBX_PROT_ENFORCED,
					p.sec_hooks != 0 || p.landlock_abi >= 6);
		if (!strncmp(rows[i].what, "abstract", 8))
			CU_ASSERT(strstr(rows[i].mechanism, p.landlock_abi >= 6 ? "scope" :
					 "unix hooks") != NULL);
		/* memfd and unlinked files: the program on security_file_open,
		 * or seccomp's part where the kernel has MFD_NOEXEC_SEAL */
		if (!strncmp(rows[i].what, "memfd exec", 10)) {
			saw_memfd = true;
			CU_ASSERT_EQUAL(rows[i].state, p.sec_hooks != 0 ? SBX_PROT_ENFORCED :
					p.memfd_noexec && p.seccomp_filter ? SBX_PROT_PARTIAL :
					SBX_PROT_NOT_ENFORCED);
		}
	}
	CU_ASSERT(saw_memfd);
	/* listed but refused (lockdown, a container): the daemon refuses too */
	sbx_tier_probe(&p, false, "lockdown,capability,bpf\n");
	CU_ASSERT(p.lsm_read && p.bpf_listed);
	CU_ASSERT_EQUAL(p.tier, SBX_TIER_NONE);
	sbx_tier_probe(&p, false, NULL);
	CU_ASSERT(!p.lsm_read && !p.bpf_listed);

	/* a 6.1-like kernel: Landlock ABI 2, no MFD_NOEXEC_SEAL; with the
	 * unix programs pinned (6.1 takes them), then refused */
	p.landlock_abi = 2;
	p.memfd_noexec = false;
	p.seccomp_filter = true;
	p.cgroup2 = true;
	for (p.sec_hooks = 1; p.sec_hooks >= 0; p.sec_hooks--) {
		n = sbx_tier_protections(&p, rows, SBX_TIER_ROWS);
		for (unsigned i = 0; i < n && i < SBX_TIER_ROWS; i++) {
			bool off = rows[i].state == SBX_PROT_NOT_ENFORCED;
			bool want_off = (!p.sec_hooks && !strncmp(rows[i].what, "memfd exec", 10)) ||
				!strcmp(rows[i].what, "device ioctls") ||
				(!p.sec_hooks && (!strncmp(rows[i].what, "unix", 4) ||
						  !strncmp(rows[i].what, "signals", 7) ||
						  !strncmp(rows[i].what, "exec without", 12) ||
						  !strcmp(rows[i].what, "truncate") ||
						  !strncmp(rows[i].what, "descriptors", 11) ||
						  !strncmp(rows[i].what, "terminals", 9) ||
						  !strncmp(rows[i].what, "abstract", 8) ||
						  !strncmp(rows[i].what, "a session's loopback", 20) ||
						  !strncmp(rows[i].what, "SysV", 4) ||
						  !strncmp(rows[i].what, "file asks", 9) ||
						  !strncmp(rows[i].what, "kernel keys", 11) ||
						  !strcmp(rows[i].what, "events for file and exec denials"))) ||
				!strcmp(rows[i].what, "events for the never-list");

			if (off != want_off)
				printf("    tier: at ABI 2, hooks %d, \"%s\" is %s\n", p.sec_hooks,
				       rows[i].what, sbx_prot_state_name(rows[i].state));
			CU_ASSERT_EQUAL(off, want_off);
			/* the rest is enforced at ABI 2: files, exec, network, the
			 * never-list; without the programs, reads (by place, not by
			 * name), writes and FIFOs in part */
			bool part = (!p.sec_hooks && (!strncmp(rows[i].what, "named FIFOs", 11) ||
						  !strncmp(rows[i].what, "file writes", 11) ||
						  !strncmp(rows[i].what, "file reads", 10)));

			CU_ASSERT_EQUAL(rows[i].state == SBX_PROT_NOT_ENFORCED ? 0 :
					rows[i].state == SBX_PROT_ENFORCED ? 1 : 2,
					want_off ? 0 : part ? 2 : 1);
		}
	}
}

/* one parse of a comma list for the daemon, its diagnosis and the tier */
SBX_TEST(sandbox, list_has_matches_whole_items)
{
	CU_ASSERT(sbx_list_has("lockdown,capability,bpf\n", "bpf"));
	CU_ASSERT(sbx_list_has("bpf,landlock", "bpf"));
	CU_ASSERT(sbx_list_has("landlock,bpf", "bpf"));
	CU_ASSERT(!sbx_list_has("landlock,bpfx,ebpf", "bpf"));
	CU_ASSERT(!sbx_list_has("landlock\nbpf", "bpf"));
	CU_ASSERT(!sbx_list_has("", "bpf"));
	CU_ASSERT(!sbx_list_has(NULL, "bpf"));
}

/* one text test of "dir or below" for the policy's pseudo-fs warning, the
 * shell classifier's project check and the suggester's widening */
SBX_TEST(sandbox, path_within_is_by_whole_components)
{
	CU_ASSERT(sbx_path_within("/home/u/proj", "/home/u/proj"));
	CU_ASSERT(sbx_path_within("/home/u/proj/a", "/home/u/proj"));
	CU_ASSERT(sbx_path_within("/home/u/proj/a", "/home/u/proj/"));
	CU_ASSERT(!sbx_path_within("/home/u/project", "/home/u/proj"));
	CU_ASSERT(!sbx_path_within("/home/u", "/home/u/proj"));
	CU_ASSERT(sbx_path_within("/etc/passwd", "/"));
	CU_ASSERT(!sbx_path_within("/etc", NULL));
}
