// SPDX-License-Identifier: GPL-2.0
/*
 * The mountinfo reader: lines as proc_pid_mountinfo(5) writes them, with
 * optional fields of any number and escaped mount points, and this
 * process's own file, whose root mount must be there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/mountinfo.h"
#include "tests/unit/unit.h"

SBX_TEST(lib, mountinfo_lines_with_any_optional_fields_and_escaped_points)
{
	char l1[] = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue\n";
	char l2[] = "40 1 0:21 / /home/a\\040b\\134c rw shared:3 master:7 propagate_from:2 - tmpfs tmpfs rw\n";
	char l3[] = "41 1 0:22 / /x rw - overlay overlay rw\n";
	char no_sep[] = "42 1 0:23 / /y rw tmpfs tmpfs rw\n";
	char short_[] = "43 1 0:24 / - tmpfs t rw\n";
	char junk[] = "not a mount line at all\n";
	struct sbx_mount m;

	CU_ASSERT_TRUE_FATAL(sbx_mountinfo_parse(l1, &m));
	CU_ASSERT_EQUAL(m.id, 36);
	CU_ASSERT_EQUAL(m.parent, 35);
	CU_ASSERT_EQUAL(m.maj, 98);
	CU_ASSERT_EQUAL(m.min, 0);
	CU_ASSERT_STRING_EQUAL(m.point, "/mnt2");
	CU_ASSERT_STRING_EQUAL(m.fstype, "ext3");
	CU_ASSERT_TRUE_FATAL(sbx_mountinfo_parse(l2, &m));
	CU_ASSERT_STRING_EQUAL(m.point, "/home/a b\\c");
	CU_ASSERT_STRING_EQUAL(m.fstype, "tmpfs");
	CU_ASSERT_TRUE_FATAL(sbx_mountinfo_parse(l3, &m));
	CU_ASSERT_STRING_EQUAL(m.point, "/x");
	CU_ASSERT_STRING_EQUAL(m.fstype, "overlay");
	CU_ASSERT_FALSE(sbx_mountinfo_parse(no_sep, &m));
	CU_ASSERT_FALSE(sbx_mountinfo_parse(short_, &m));
	CU_ASSERT_FALSE(sbx_mountinfo_parse(junk, &m));
}

SBX_TEST(lib, mountinfo_reads_a_file_in_order_and_skips_what_is_no_mount)
{
	char path[] = "/tmp/sbx-mountinfo-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	struct sbx_mount *tab = NULL;
	size_t n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
	      "garbage\n"
	      "2 1 0:5 / /a rw - tmpfs t rw\n"
	      "3 1 0:6 / /a rw - proc proc rw", f);	/* no final newline */
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(sbx_mountinfo_read(path, &tab, &n), 0);
	unlink(path);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_EQUAL(tab[0].id, 1);
	CU_ASSERT_STRING_EQUAL(tab[1].point, "/a");
	CU_ASSERT_STRING_EQUAL(tab[2].point, "/a");
	CU_ASSERT_STRING_EQUAL(tab[2].fstype, "proc");
	sbx_mountinfo_free(tab, n);
	CU_ASSERT_EQUAL(sbx_mountinfo_read("/nonexistent/mountinfo", &tab, &n), -ENOENT);
}

SBX_TEST(lib, mountinfo_of_this_process_has_its_root)
{
	struct sbx_mount *tab = NULL;
	size_t n = 0;
	bool root = false;

	CU_ASSERT_EQUAL_FATAL(sbx_mountinfo_read("/proc/self/mountinfo", &tab, &n), 0);
	for (size_t i = 0; i < n; i++)
		root = root || !strcmp(tab[i].point, "/");
	CU_ASSERT_TRUE(root);
	sbx_mountinfo_free(tab, n);
}
