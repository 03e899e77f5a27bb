/* SPDX-License-Identifier: GPL-2.0 */
/*
 * prog_tests.h - per-program kernel tests, in the manner of the kernel's
 * selftests/bpf prog_tests: each test loads one program of the linked
 * object (with the maps it uses; every other program stays unloaded),
 * fills the maps the way the daemon would, makes the real syscall from a
 * process in a session cgroup of its own, and asserts the verdict and
 * what the program left in its maps. No daemon is involved: a failure
 * names the program that broke. Run inside the VM (tests/kernel/t_prog.sh):
 * the host refuses LSM programs.
 */
#ifndef SBX_PROG_TESTS_H
#define SBX_PROG_TESTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>
#include "bpf/bpfsbx.h"
#include "bpfsbx.skel.h"

/* One loaded program and a session cgroup to call it from. */
struct pt {
	const char *prog;		/* the program under test, for messages */
	struct sbx_bpf *skel;
	struct bpf_link *link;
	struct ring_buffer *rb;
	char cg[128];			/* the session's cgroup directory */
	uint64_t cgid;
	struct sbx_session sess;	/* what pt_session() stored */
	struct sbx_event ev[16];	/* events read by pt_events() */
	int nev;
	int failed;
};

/* Loads prog alone and makes a session cgroup (level 2, as the daemon's)
 * with the policy header pol. 0, or -1 with a FAIL line printed. */
int pt_setup(struct pt *t, const char *prog, const struct sbx_policy_hdr *pol);
void pt_teardown(struct pt *t);

/* fn(arg) in a child process inside the session: what it returned
 * (0, or an errno value), or -1 if it could not run there. */
int pt_in_session(struct pt *t, int (*fn)(void *), void *arg);

/* A socket made by this process from inside the session's cgroup (a
 * socket's cgroup is its maker's, and the cgroup programs run for it),
 * this process back where it was: the fd, or -1. */
int pt_socket_in_session(struct pt *t, int domain, int type);

/* The events the program sent since the last call, into t->ev. */
int pt_events(struct pt *t);
uint64_t pt_stat(struct pt *t, uint32_t idx);
/* The daemon's compiled rule on path's inode, in the session's policy:
 * verdict (0: none) under rule id for access acc, and the pin. 0 or -1. */
int pt_inode_rule(struct pt *t, const char *path, int acc, uint8_t verdict, uint32_t id,
		  bool pinned);
uint64_t pt_epoch(struct pt *t, uint32_t idx);	/* ~0: unreadable */
void pt_epoch_bump(struct pt *t, uint32_t idx);
uint32_t pt_kdev(uint64_t st_dev);

/* the first failure is the FAIL: line (the suite shows the last one);
 * later ones, often its consequences, follow as "also:" */
#define PT_CHECK(t, cond, ...) do {					\
	if (!(cond)) {							\
		printf("%s%s: ", (t)->failed ? "also: " : "FAIL: ", (t)->prog); \
		printf(__VA_ARGS__);					\
		printf(" (%s:%d)\n", __FILE__, __LINE__);		\
		(t)->failed++;						\
	}								\
} while (0)

struct pt_test {
	const char *name;
	int (*fn)(void);		/* 0: passed */
};

#define PT_TEST(ident) \
	static const struct pt_test pt_test_##ident \
	__attribute__((used, section("pt_tests"), aligned(sizeof(void *)))) = { #ident, ident }

#endif /* SBX_PROG_TESTS_H */
