// SPDX-License-Identifier: GPL-2.0
/*
 * The decision walk, through sbx_file_open: a read rule on a directory
 * decides for a file two levels below it (the walk climbed), a file beside
 * it falls to the policy's default, and the verdict lands in the inode's
 * verdict cache (sbx_vcache) and in an event.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bpf/sbx_values.h"
#include "prog_tests.h"

#define DIR_ "/tmp/sbx-prog-walk"
#define POLICY 7
#define RULE_SECRETS 31

static int open_errno(void *path)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int decision_walk(void)
{
	struct sbx_policy_hdr pol = { .policy_id = POLICY };
	struct sbx_vcache vc = {};
	struct pt t;
	int fd, rc, n;

	for (int a = 0; a < SBX_ACC_MAX; a++)
		pol.file_default[a] = SBX_V_ALLOW;
	if (system("rm -rf " DIR_ " && mkdir -p " DIR_ "/secrets/deep " DIR_ "/open && "
		   "echo s >" DIR_ "/secrets/deep/key && echo o >" DIR_ "/open/file")) {
		printf("FAIL: sbx_file_open: cannot make " DIR_ "\n");
		return 1;
	}
	if (pt_setup(&t, "sbx_file_open", &pol))
		goto out;
	/* the daemon's compiled "read: deny" on DIR/secrets, keyed by inode */
	pt_inode_rule(&t, DIR_ "/secrets", SBX_ACC_READ, SBX_V_DENY, RULE_SECRETS, false);

	rc = pt_in_session(&t, open_errno, DIR_ "/secrets/deep/key");
	PT_CHECK(&t, rc == EPERM, "a read under a denied directory: errno %d, want EPERM", rc);
	rc = pt_in_session(&t, open_errno, DIR_ "/open/file");
	PT_CHECK(&t, rc == 0, "a read outside it: errno %d, want 0 (the default)", rc);
	rc = open_errno(DIR_ "/secrets/deep/key");
	PT_CHECK(&t, rc == 0, "outside the session: errno %d, want 0", rc);

	n = pt_events(&t);
	PT_CHECK(&t, n == 1, "%d events, want 1 (the denial)", n);
	if (n >= 1) {
		PT_CHECK(&t, t.ev[0].op == SBX_OP_OPEN_READ && t.ev[0].verdict == SBX_V_DENY &&
			     t.ev[0].rule_id == RULE_SECRETS && t.ev[0].cgid == t.cgid &&
			     t.ev[0].ret == -EPERM,
			 "event op %u verdict %u rule %u cgid %llu ret %d", t.ev[0].op,
			 t.ev[0].verdict, t.ev[0].rule_id, (unsigned long long)t.ev[0].cgid,
			 t.ev[0].ret);
		PT_CHECK(&t, strstr(t.ev[0].path + (t.ev[0].path_off & (SBX_EVENT_PATH_MAX - 1)),
				    "secrets/deep/key") != NULL,
			 "event path does not name the file");
	}
	PT_CHECK(&t, pt_stat(&t, SBX_STAT_DENY) == 1, "deny count %llu, want 1",
		 (unsigned long long)pt_stat(&t, SBX_STAT_DENY));

	/* the map effect: the walk's verdict is remembered on the inode */
	fd = open(DIR_ "/secrets/deep/key", O_RDONLY);
	rc = bpf_map_lookup_elem(bpf_map__fd(t.skel->maps.sbx_vcache), &fd, &vc);
	PT_CHECK(&t, rc == 0, "no verdict cached on the denied file");
	PT_CHECK(&t, rc || (vc.policy_id == POLICY && (vc.valid & SBX_ACCBIT(SBX_ACC_READ)) &&
			    vc.v[SBX_ACC_READ] == SBX_V_DENY &&
			    vc.rule[SBX_ACC_READ] == RULE_SECRETS),
		 "cached verdict policy %u valid %#x read %u rule %u", vc.policy_id, vc.valid,
		 vc.v[SBX_ACC_READ], vc.rule[SBX_ACC_READ]);
	close(fd);

	/* a second open is answered from the cache, with the same verdict */
	rc = pt_in_session(&t, open_errno, DIR_ "/secrets/deep/key");
	PT_CHECK(&t, rc == EPERM, "the cached read: errno %d, want EPERM", rc);
	PT_CHECK(&t, pt_stat(&t, SBX_STAT_CACHE_HIT) >= 1, "no cache hit counted");
out:
	pt_teardown(&t);
	system("rm -rf " DIR_);
	return t.failed || !t.link;
}
PT_TEST(decision_walk);
