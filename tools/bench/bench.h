/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench.h - sbxbench, the one binary behind tools/bench: the timed
 * micro-operations, the helpers the guest script drives (workers inside
 * sessions, the approval agent and approver, event generators, kernel
 * toggles), the generators (policies, a C project) and the host-side
 * report.
 *
 * Every subcommand prints exactly one JSON line on stdout (its result, or
 * {"error": ...}), made with jansson, so that a shell script can collect
 * results without writing JSON itself. Times are CLOCK_MONOTONIC ns; under
 * `vmtest/run --icount` the guest's clock counts executed instructions
 * (1 ns each), which makes them repeatable.
 */
#ifndef SBX_BENCH_H
#define SBX_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>

struct bench_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
};

uint64_t bench_now_ns(void);

/* Print o (plus the -k labels) as one compact line and flush; steals o. */
void bench_emit(json_t *o);
/* Print {"error": msg} (plus labels); returns 1 for `return bench_fail()`. */
int bench_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "123" -> integer, anything else -> string */
json_t *bench_scalar(const char *s);
bool bench_parse_u64(const char *s, uint64_t *out);
/* One JSON value from a file holding one line (or a whole document). */
json_t *bench_load(const char *path, char **err);
/* The bpfsbx binary (BENCH_SBX, else build/bpfsbx next to this binary). */
const char *bench_sbx(void);

/* Run argv, stdin and stdout /dev/null (stderr too when quiet); returns
 * the wait status, or -errno if it could not start. */
int bench_run(char *const argv[], bool quiet, uint64_t *cpu_ns);

/* subcommands, by file */
int cmd_op(int argc, char **argv);		/* sbxbench_ops.c */
int cmd_calibrate(int argc, char **argv);
int cmd_spawn(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_attach(int argc, char **argv);		/* sbxbench_kernel.c */
int cmd_detach(int argc, char **argv);
int cmd_progstats(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_drain(int argc, char **argv);
int cmd_qcount(int argc, char **argv);
int cmd_copyup(int argc, char **argv);
int cmd_agent(int argc, char **argv);		/* sbxbench_approval.c */
int cmd_approver(int argc, char **argv);
int cmd_join(int argc, char **argv);
int cmd_gen_policy(int argc, char **argv);	/* sbxbench_gen.c */
int cmd_gen_cproject(int argc, char **argv);
int cmd_report(int argc, char **argv);		/* sbxbench_report.c */

#endif
