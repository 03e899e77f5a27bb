// SPDX-License-Identifier: GPL-2.0
/*
 * Rename laundering, through sbx_path_rename: renaming is unlinking the
 * old name and may carry a file past name rules, so the source needs read
 * and write. A file under a read-denied directory cannot be renamed out
 * of it; a directory pinned above a protected path cannot be moved aside;
 * a target in an ask-for-write directory is asked for; a rename elsewhere
 * goes through. Every rename, by anyone, moves the rename and link epochs
 * that the verdict caches are checked against.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "prog_tests.h"

#define DIR_ "/tmp/sbx-prog-rename"
#define POLICY 17
#define RULE_SECRETS 41
#define RULE_INBOX 43

struct mv {
	const char *from, *to;
};

static int rename_errno(void *arg)
{
	const struct mv *m = arg;

	return rename(m->from, m->to) ? errno : 0;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static int rename_check(void)
{
	struct sbx_policy_hdr pol = { .policy_id = POLICY };
	struct mv out_of_secrets = { DIR_ "/secrets/key", DIR_ "/open/key" },
		  pinned_aside = { DIR_ "/repo", DIR_ "/repo.orig" },
		  into_inbox = { DIR_ "/open/a", DIR_ "/inbox/a" },
		  plain = { DIR_ "/open/a", DIR_ "/open/b" };
	static const struct { __u16 op; __u8 v; __u32 rule; } want[] = {
		{ SBX_OP_RENAME_FROM, SBX_V_DENY, RULE_SECRETS },
		{ SBX_OP_RENAME_FROM, SBX_V_DENY, SBX_RULE_PINNED },
		{ SBX_OP_RENAME_TO, SBX_V_ASK, RULE_INBOX },
	};
	uint64_t ren, lnk;
	struct pt t;
	int rc, n;

	for (int a = 0; a < SBX_ACC_MAX; a++)
		pol.file_default[a] = SBX_V_ALLOW;
	if (system("rm -rf " DIR_ " && mkdir -p " DIR_ "/secrets " DIR_ "/open " DIR_ "/inbox "
		   DIR_ "/repo/.git && echo s >" DIR_ "/secrets/key && echo a >" DIR_ "/open/a")) {
		printf("FAIL: sbx_path_rename: cannot make " DIR_ "\n");
		return 1;
	}
	if (pt_setup(&t, "sbx_path_rename", &pol))
		goto out;
	/* what the daemon compiles from "read: deny DIR/secrets/", "write:
	 * ask DIR/inbox/" and a protected DIR/repo/.git (its parent pinned) */
	pt_inode_rule(&t, DIR_ "/secrets", SBX_ACC_READ, SBX_V_DENY, RULE_SECRETS, false);
	pt_inode_rule(&t, DIR_ "/inbox", SBX_ACC_WRITE, SBX_V_ASK, RULE_INBOX, false);
	pt_inode_rule(&t, DIR_ "/repo", 0, 0, 0, true);

	rc = pt_in_session(&t, rename_errno, &out_of_secrets);
	PT_CHECK(&t, rc == EPERM, "a read-denied file renamed out: %d, want EPERM", rc);
	PT_CHECK(&t, exists(DIR_ "/secrets/key") && !exists(DIR_ "/open/key"),
		 "the refused rename moved the file");
	rc = pt_in_session(&t, rename_errno, &pinned_aside);
	PT_CHECK(&t, rc == EPERM, "a pinned directory moved aside: %d, want EPERM", rc);
	PT_CHECK(&t, exists(DIR_ "/repo/.git"), "the refused rename moved the directory");
	rc = pt_in_session(&t, rename_errno, &into_inbox);
	PT_CHECK(&t, rc == EPERM, "into an ask-for-write directory: %d, want EPERM", rc);
	rc = pt_in_session(&t, rename_errno, &plain);
	PT_CHECK(&t, rc == 0, "a rename no rule names: %d, want 0", rc);
	PT_CHECK(&t, exists(DIR_ "/open/b"), "the allowed rename did not happen");

	n = pt_events(&t);
	PT_CHECK(&t, n == 3, "%d events, want 3 (one per refused rename)", n);
	for (int i = 0; i < n && i < 3; i++)
		PT_CHECK(&t, t.ev[i].op == want[i].op && t.ev[i].verdict == want[i].v &&
			     t.ev[i].rule_id == want[i].rule && t.ev[i].cgid == t.cgid &&
			     t.ev[i].ret == -EPERM,
			 "event %d: op %u verdict %u rule %u ret %d; want op %u verdict %u rule %u",
			 i, t.ev[i].op, t.ev[i].verdict, t.ev[i].rule_id, t.ev[i].ret, want[i].op,
			 want[i].v, want[i].rule);

	/* the map effect: a rename outside every session moves both epochs
	 * (others in the machine may move them too: at least one step) */
	ren = pt_epoch(&t, SBX_EPOCH_RENAME);
	lnk = pt_epoch(&t, SBX_EPOCH_LINK);
	rc = rename(DIR_ "/secrets/key", DIR_ "/open/key") ? errno : 0;
	PT_CHECK(&t, rc == 0, "outside the session: %d, want 0", rc);
	PT_CHECK(&t, pt_epoch(&t, SBX_EPOCH_RENAME) > ren && pt_epoch(&t, SBX_EPOCH_LINK) > lnk,
		 "epochs rename %llu -> %llu, link %llu -> %llu: want both moved",
		 (unsigned long long)ren, (unsigned long long)pt_epoch(&t, SBX_EPOCH_RENAME),
		 (unsigned long long)lnk, (unsigned long long)pt_epoch(&t, SBX_EPOCH_LINK));
out:
	pt_teardown(&t);
	system("rm -rf " DIR_);
	return t.failed || !t.link;
}
PT_TEST(rename_check);
