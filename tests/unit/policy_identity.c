// SPDX-License-Identifier: GPL-2.0
/*
 * sbx_kident's two ways to the kernel's (s_dev, i_ino) of a file give the
 * same pair: one statx where the file system's getattr reports it (ext4,
 * xfs, tmpfs), O_PATH + fdinfo + mountinfo everywhere. Checked for files,
 * directories, symlinks (followed and not), hard links and missing names,
 * on the unit tests' directory and on /dev/shm (tmpfs) when there is one.
 * Where the file system is not one of those (procfs), the fast way must
 * decline rather than guess. The guest's overlayfs, tmpfs and ext4 are
 * compared by tests/kernel/t_files.sh, against the kernel's own decisions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include "policy/policy.h"
#include "tests/unit/unit.h"
#include "tests/unit/policy_helpers.h"

#define EXT4_MAGIC	0xEF53
#define XFS_MAGIC	0x58465342
#define TMPFS_MAGIC	0x01021994

static bool fast_expected(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf))
		return false;
	return sf.f_type == EXT4_MAGIC || sf.f_type == XFS_MAGIC || sf.f_type == TMPFS_MAGIC;
}

/* both ways agree on PATH; the fast one is taken when WANT_FAST */
static void same_identity(const char *path, bool follow, bool want_fast)
{
	uint32_t fdev = 0, sdev = 0;
	uint64_t fino = 0, sino = 0;
	int fr, sr;

	/* the slow way first: it loads the mount table the fast way uses */
	sr = sbx_kident_slow(path, follow, &sdev, &sino);
	fr = sbx_kident_fast(path, follow, &fdev, &fino);
	if (sr < 0) {
		/* a missing name: the fast way says so too, or declines */
		CU_ASSERT(fr == sr || fr == 1);
		return;
	}
	CU_ASSERT_EQUAL(sr, 0);
	if (want_fast)
		CU_ASSERT_EQUAL(fr, 0);
	if (fr == 0) {
		CU_ASSERT_EQUAL(fdev, sdev);
		CU_ASSERT_EQUAL(fino, sino);
	}
	/* and the batch way (a statx the caller made, the Landlock plan's
	 * walk), where the mount table did not change around it */
	{
		struct statx sx;
		uint32_t bdev = 0;
		uint64_t bino = 0;
		unsigned long gen = 0;
		int br;

		(void)sbx_kident_mounts_unchanged(&gen);
		CU_ASSERT_EQUAL_FATAL(statx(AT_FDCWD, path, (follow ? 0 : AT_SYMLINK_NOFOLLOW) |
					    AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS | STATX_MNT_ID,
					    &sx), 0);
		br = sbx_kident_statx(&sx, &bdev, &bino);
		CU_ASSERT(sbx_kident_mounts_unchanged(&gen));
		if (want_fast)
			CU_ASSERT_EQUAL(br, 0);
		if (br == 0) {
			CU_ASSERT_EQUAL(bdev, sdev);
			CU_ASSERT_EQUAL(bino, sino);
		}
	}
}

static void check_dir(const char *dir)
{
	bool fast = fast_expected(dir);
	char *f, *d, *l, *h, *m;

	CU_ASSERT_FATAL(asprintf(&f, "%s/ident-file", dir) > 0);
	CU_ASSERT_FATAL(asprintf(&d, "%s/ident-dir", dir) > 0);
	CU_ASSERT_FATAL(asprintf(&l, "%s/ident-link", dir) > 0);
	CU_ASSERT_FATAL(asprintf(&h, "%s/ident-hard", dir) > 0);
	CU_ASSERT_FATAL(asprintf(&m, "%s/ident-missing", dir) > 0);
	unlink(f);
	unlink(l);
	unlink(h);
	rmdir(d);
	CU_ASSERT_EQUAL_FATAL(pt_write(f, "x\n"), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(d, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(symlink(f, l), 0);
	CU_ASSERT_EQUAL_FATAL(link(f, h), 0);
	same_identity(dir, true, fast);
	same_identity(f, true, fast);
	same_identity(d, true, fast);
	same_identity(l, true, fast);	/* the file */
	same_identity(l, false, fast);	/* the symlink itself */
	same_identity(h, true, fast);
	same_identity(m, true, false);
	/* a hard link is the same object by either way and either name */
	{
		uint32_t a = 0, b = 0;
		uint64_t ia = 0, ib = 0;

		CU_ASSERT_EQUAL(sbx_kident(f, true, &a, &ia), 0);
		CU_ASSERT_EQUAL(sbx_kident(h, true, &b, &ib), 0);
		CU_ASSERT(a == b && ia == ib);
	}
	unlink(f);
	unlink(l);
	unlink(h);
	rmdir(d);
	free(f);
	free(d);
	free(l);
	free(h);
	free(m);
}

SBX_TEST(policy_identity, fast_and_slow_ways_agree)
{
	check_dir(sbx_unit_tmpdir());
	if (access("/dev/shm", W_OK) == 0 && fast_expected("/dev/shm")) {
		char dir[] = "/dev/shm/sbx-ident.XXXXXX";

		CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
		check_dir(dir);
		rmdir(dir);
	}
}

SBX_TEST(policy_identity, fast_way_declines_where_stat_is_not_the_kernels)
{
	uint32_t dev;
	uint64_t ino;

	/* procfs: not a file system the fast way knows */
	CU_ASSERT_EQUAL(sbx_kident_fast("/proc/self/status", true, &dev, &ino), 1);
	/* and the slow way still names it */
	CU_ASSERT_EQUAL(sbx_kident_slow("/proc/self/status", true, &dev, &ino), 0);
	/* the batch way sends it to the slow one (2), or declines (1) */
	{
		struct statx sx;

		CU_ASSERT_EQUAL_FATAL(statx(AT_FDCWD, "/proc/self/status", AT_STATX_SYNC_AS_STAT,
					    STATX_BASIC_STATS | STATX_MNT_ID, &sx), 0);
		CU_ASSERT(sbx_kident_statx(&sx, &dev, &ino) >= 1);
	}
}

/* a batch holds only over one reading of the mount table: a caller whose
 * reading is not the current one (another thread read it again, and took
 * the change's event) is told so */
SBX_TEST(policy_identity, a_batch_holds_over_one_reading_of_the_mount_table)
{
	unsigned long gen = 0, stale;

	(void)sbx_kident_mounts_unchanged(&gen);
	stale = gen - 1;
	CU_ASSERT(sbx_kident_mounts_unchanged(&gen));
	CU_ASSERT_FALSE(sbx_kident_mounts_unchanged(&stale));
	CU_ASSERT(sbx_kident_mounts_unchanged(&gen));
}

/* What an inode rule's entry keeps (compile_files.c add_inode): a
 * generation on ext4, nothing on tmpfs (which never gives a number twice),
 * and the kernel's count of removals where sbx_kgen can read none: a path
 * that names nothing, or another object than the one asked about. */
SBX_TEST(policy_identity, generation_kinds_by_file_system)
{
	char *f = pt_path("%s/gen-kind", sbx_unit_tmpdir());
	struct statfs sf;
	uint32_t dev, g;
	uint64_t ino;

	pt_write(f, "x\n");
	CU_ASSERT_EQUAL_FATAL(sbx_kident(f, true, &dev, &ino), 0);
	if (statfs(f, &sf) == 0 && sf.f_type == 0xEF53)
		CU_ASSERT_EQUAL(sbx_kgen(f, true, dev, ino, &g), 0);
	CU_ASSERT_EQUAL(sbx_kgen(f, true, dev, ino + 1, &g), SBX_KGEN_NONE);
	unlink(f);
	CU_ASSERT_EQUAL(sbx_kgen(f, true, dev, ino, &g), SBX_KGEN_NONE);
	free(f);
	if (access("/dev/shm", W_OK) == 0) {
		char dir[] = "/dev/shm/sbx-gen.XXXXXX";

		CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
		CU_ASSERT_EQUAL_FATAL(sbx_kident(dir, true, &dev, &ino), 0);
		CU_ASSERT_EQUAL(sbx_kgen(dir, true, dev, ino, &g), SBX_KGEN_UNIQUE);
		rmdir(dir);
	}
	/* the kernel's own objects */
	CU_ASSERT_EQUAL_FATAL(sbx_kident("/proc/self", true, &dev, &ino), 0);
	CU_ASSERT_EQUAL(sbx_kgen("/proc/self", true, dev, ino, &g), SBX_KGEN_UNIQUE);
}
