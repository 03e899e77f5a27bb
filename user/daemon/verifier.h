/* SPDX-License-Identifier: GPL-2.0 */
/*
 * verifier.h - which program variants the running kernel takes, and what
 * verifying each program cost there.
 *
 * One build runs on every kernel from 6.1 up: where a hook's arguments
 * changed between kernels, bpf/ carries one program per signature, and
 * the loader keeps the one whose arguments match the kernel's BTF. Every
 * program must verify with headroom on every kernel: the daemon records
 * each one's verified instruction count and peak states at load, and
 * `bpfsbx doctor` and the kernel suite read them back.
 */
#ifndef SBX_VERIFIER_H
#define SBX_VERIFIER_H

#include <stdbool.h>
#include <jansson.h>
#include <bpf/libbpf.h>

/* A quarter of the verifier's 1M-instruction limit (BPF_COMPLEXITY_LIMIT_INSNS). */
#define SBX_VERIFIER_BUDGET	250000
#define SBX_VERIFIER_FILE	"/run/bpfsbx/verifier.json"

/*
 * Set each variant program's autoload to whether its hook has, in this
 * kernel's BTF, the number of arguments it was written for. Fails (with
 * *err) if no variant of a required hook fits.
 */
int sbx_select_variants(struct bpf_object *obj, char **err);

/* Per-program verifier logs at BPF_LOG_STATS, for sbx_costs_collect(). */
struct sbx_cost_logs;
struct sbx_cost_logs *sbx_costs_prepare(struct bpf_object *obj);
/*
 * After bpf_object__load (successful or not): one object per program,
 * {"program","section","variant","loaded","verified_insns","peak_states",
 * "total_states","max_states_per_insn","verify_usec"}, in a document with
 * the kernel release and the budget. Frees logs.
 */
json_t *sbx_costs_collect(struct bpf_object *obj, struct sbx_cost_logs *logs);

/* Print a cost document as a table; returns the number of programs over
 * the budget. */
int sbx_costs_print(FILE *f, json_t *doc);

#endif
