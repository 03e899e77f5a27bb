// SPDX-License-Identifier: GPL-2.0
/*
 * landlock-exec - apply a Landlock ruleset, then exec a command (the
 * in-kernel anchor of tools/bench).
 *
 *   landlock-exec [--ro PATH]... [--rw PATH]... -- CMD ARGS...
 *   landlock-exec --abi          print the kernel's Landlock ABI version
 *
 * The ruleset handles every filesystem right the kernel's ABI knows
 * (ABI 1: 13 rights; 2: + REFER; 3: + TRUNCATE; later ABIs' IOCTL_DEV and
 * network rights are not handled). --ro PATH allows reading and executing
 * beneath PATH, --rw PATH allows everything beneath PATH. Anything not
 * beneath a rule is denied. Landlock can only allow: a rule cannot carve
 * a denied file out of an allowed tree, and rules name existing objects.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER	(1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE	(1ULL << 14)
#endif

#define FS_V1	((1ULL << 13) - 1)	/* EXECUTE .. MAKE_SYM */
#define FS_FILE	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
		 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)
#define FS_RO	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | \
		 LANDLOCK_ACCESS_FS_READ_DIR)

/* The struct of the kernel's first ABI: newer headers add fields that a
 * 6.1 kernel would not know. */
struct ruleset_attr_v1 {
	uint64_t handled_access_fs;
};

static int ll_abi(void)
{
	return (int)syscall(__NR_landlock_create_ruleset, NULL, 0,
			    LANDLOCK_CREATE_RULESET_VERSION);
}

static uint64_t handled_for(int abi)
{
	uint64_t h = FS_V1;

	if (abi >= 2)
		h |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		h |= LANDLOCK_ACCESS_FS_TRUNCATE;
	return h;
}

static int add_rule(int rfd, const char *path, uint64_t allowed, uint64_t handled)
{
	struct landlock_path_beneath_attr pb = {};
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC), rc;

	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "landlock-exec: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	pb.parent_fd = fd;
	pb.allowed_access = allowed & handled;
	if (!S_ISDIR(st.st_mode))
		pb.allowed_access &= FS_FILE;	/* the kernel refuses directory rights on files */
	rc = (int)syscall(__NR_landlock_add_rule, rfd, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	if (rc)
		fprintf(stderr, "landlock-exec: rule for %s: %s\n", path, strerror(errno));
	close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	struct ruleset_attr_v1 attr;
	int abi = ll_abi(), rfd, i, rules = 0;

	if (argc == 2 && !strcmp(argv[1], "--abi")) {
		printf("%d\n", abi < 0 ? 0 : abi);
		return abi < 0;
	}
	if (abi < 1) {
		fprintf(stderr, "landlock-exec: Landlock is not available: %s\n", strerror(errno));
		return 125;
	}
	attr.handled_access_fs = handled_for(abi);
	rfd = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rfd < 0) {
		fprintf(stderr, "landlock-exec: create_ruleset: %s\n", strerror(errno));
		return 125;
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (i + 1 >= argc || (strcmp(argv[i], "--ro") && strcmp(argv[i], "--rw"))) {
			fprintf(stderr, "usage: landlock-exec [--ro PATH]... [--rw PATH]... -- CMD...\n");
			return 125;
		}
		if (add_rule(rfd, argv[i + 1], !strcmp(argv[i], "--ro") ? FS_RO : ~0ULL,
			     attr.handled_access_fs))
			return 125;
		rules++;
		i++;
	}
	if (i >= argc) {
		fprintf(stderr, "landlock-exec: no command\n");
		return 125;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_landlock_restrict_self, rfd, 0)) {
		fprintf(stderr, "landlock-exec: restrict_self: %s\n", strerror(errno));
		return 125;
	}
	close(rfd);
	if (getenv("LANDLOCK_EXEC_VERBOSE"))
		fprintf(stderr, "landlock-exec: ABI %d, %d rules, handled 0x%llx\n", abi, rules,
			(unsigned long long)attr.handled_access_fs);
	execvp(argv[i], argv + i);
	fprintf(stderr, "landlock-exec: %s: %s\n", argv[i], strerror(errno));
	return 127;
}
