// SPDX-License-Identifier: GPL-2.0
/*
 * verifier.c - program variants by kernel, and the verifier's cost of
 * each program (see verifier.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "lib/alloc.h"
#include "lib/clock.h"
#include "lib/fileio.h"
#include "lib/log.h"
#include "lib/text.h"
#include "user/daemon/verifier.h"
#include "lib/json.h"

/*
 * Programs written for one signature of a hook that changed, for a hook
 * that only some kernels have, or for a kfunc that only some kernels
 * have. A program of this table is loaded only where bpf_lsm_<hook> (or the
 * security_* function named) in the kernel's BTF takes nargs arguments and, if kfunc is named, where the
 * kernel has that kfunc (kfunc_wanted) or has not (!kfunc_wanted). A hook
 * marked optional may have no variant on a kernel: there, the operation
 * reaches another hook that covers it (6.1 sets POSIX ACLs through
 * inode_setxattr, 6.2 added inode_set_acl; 6.1 sends 32-bit ioctls to
 * file_ioctl, 6.7 added file_ioctl_compat; 6.12 has no key_free, and keys
 * are written down so that a freed key's entry cannot outlive it, see
 * sbx_key_owner).
 */
static const struct prog_variant {
	const char *prog;
	const char *hook;
	int nargs;
	bool optional;
	const char *kfunc;
	bool kfunc_wanted;
} prog_variants[] = {
	{ "sbx_perf_event_open", "perf_event_open", 2, false, NULL, false },
	{ "sbx_perf_event_open_type", "perf_event_open", 1, false, NULL, false },
	{ "sbx_inode_setattr", "inode_setattr", 2, false, NULL, false },
	{ "sbx_inode_setattr_idmap", "inode_setattr", 3, false, NULL, false },
	{ "sbx_inode_set_acl", "inode_set_acl", 4, true, NULL, false },
	{ "sbx_inode_remove_acl", "inode_remove_acl", 3, true, NULL, false },
	{ "sbx_file_ioctl_compat", "file_ioctl_compat", 3, true, NULL, false },
	{ "sbx_file_ioctl_compat_flags", "file_ioctl_compat", 3, true, NULL, false },
	{ "sbx_file_fcntl", "file_fcntl", 3, false, "bpf_task_from_pid", false },
	{ "sbx_file_fcntl_lookup", "file_fcntl", 3, false, "bpf_task_from_pid", true },
	{ "sbx_key_free", "key_free", 1, true, NULL, false },
	/* the landlock tier's twins of the same hooks (bpf/sbx_file.h), by
	 * the security_* function's own arguments: 6.1's security_inode_setattr
	 * already takes the idmap's forerunner, which its hook does not */
	{ "sbx_ll_inode_setattr_idmap", "security_inode_setattr", 3, false, NULL, false },
	{ "sbx_ll_inode_set_acl", "security_inode_set_acl", 4, true, NULL, false },
	{ "sbx_ll_inode_remove_acl", "security_inode_remove_acl", 3, true, NULL, false },
	{ "sbx_ll_file_ioctl_compat_flags", "security_file_ioctl_compat", 3, true, NULL, false },
};

#define N_VARIANTS (sizeof(prog_variants) / sizeof(prog_variants[0]))

static const struct prog_variant *variant_of(const char *prog)
{
	for (size_t i = 0; i < N_VARIANTS; i++)
		if (!strcmp(prog_variants[i].prog, prog))
			return &prog_variants[i];
	return NULL;
}

/* Arguments of bpf_lsm_<hook> (of the function itself, for a security_*
 * function) in the BTF, or -1 if the kernel has no such hook. */
static int hook_nargs(const struct btf *btf, const char *hook)
{
	char *fn = strncmp(hook, "security_", 9) ? sbx_asprintf("bpf_lsm_%s", hook) :
						  sbx_strdup(hook);
	int id = btf__find_by_name_kind(btf, fn, BTF_KIND_FUNC);
	const struct btf_type *t;

	free(fn);
	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) : -1;
}

static bool variant_fits(const struct btf *btf, const struct prog_variant *v)
{
	if (hook_nargs(btf, v->hook) != v->nargs)
		return false;
	if (!v->kfunc)
		return true;
	return (btf__find_by_name_kind(btf, v->kfunc, BTF_KIND_FUNC) >= 0) == v->kfunc_wanted;
}

int sbx_select_variants(struct bpf_object *obj, char **err)
{
	struct btf *btf = btf__load_vmlinux_btf();
	struct bpf_program *p;
	int rc = 0;

	if (!btf) {
		*err = sbx_asprintf("reading the kernel's BTF (/sys/kernel/btf/vmlinux): %s",
				    strerror(errno));
		return -errno;
	}
	bpf_object__for_each_program(p, obj) {
		const struct prog_variant *v = variant_of(bpf_program__name(p));

		if (v)
			bpf_program__set_autoload(p, variant_fits(btf, v));
	}
	for (size_t i = 0; i < N_VARIANTS && !rc; i++) {
		bool any = false;

		if (prog_variants[i].optional)
			continue;
		for (size_t j = 0; j < N_VARIANTS; j++) {
			if (strcmp(prog_variants[j].hook, prog_variants[i].hook))
				continue;
			p = bpf_object__find_program_by_name(obj, prog_variants[j].prog);
			any |= p && bpf_program__autoload(p);
		}
		if (!any) {
			*err = sbx_asprintf("no program variant fits this kernel's %s hook "
					    "(%d arguments)", prog_variants[i].hook,
					    hook_nargs(btf, prog_variants[i].hook));
			rc = -ENOTSUP;
		}
	}
	btf__free(btf);
	return rc;
}

#define COST_LOG_SIZE 4096

struct sbx_cost_logs {
	int n;
	char (*buf)[COST_LOG_SIZE];
};

struct sbx_cost_logs *sbx_costs_prepare(struct bpf_object *obj)
{
	struct sbx_cost_logs *l = sbx_calloc(1, sizeof(*l));
	struct bpf_program *p;
	int i = 0;

	bpf_object__for_each_program(p, obj)
		l->n++;
	l->buf = sbx_calloc(l->n ? l->n : 1, COST_LOG_SIZE);
	bpf_object__for_each_program(p, obj) {
		/* BPF_LOG_STATS alone: the kernel writes only the summary */
		bpf_program__set_log_level(p, 4);
		bpf_program__set_log_buf(p, l->buf[i++], COST_LOG_SIZE);
	}
	return l;
}

static void parse_stats(const char *log, json_t *o)
{
	const char *s = strstr(log, "processed ");
	unsigned insns, maxs, total, peak;
	unsigned long long usec;

	if (s && sscanf(s, "processed %u insns (limit %*u) max_states_per_insn %u "
			"total_states %u peak_states %u", &insns, &maxs, &total, &peak) == 4) {
		json_object_set_new(o, "processed_insns", json_integer(insns));
		json_object_set_new(o, "max_states_per_insn", json_integer(maxs));
		json_object_set_new(o, "total_states", json_integer(total));
		json_object_set_new(o, "peak_states", json_integer(peak));
	}
	s = strstr(log, "verification time ");
	if (s && sscanf(s, "verification time %llu usec", &usec) == 1)
		json_object_set_new(o, "verify_usec", json_integer(usec));
}

json_t *sbx_costs_collect(struct bpf_object *obj, struct sbx_cost_logs *logs)
{
	json_t *doc = json_object(), *progs = json_array();
	struct bpf_program *p;
	struct utsname u;
	int i = 0;

	uname(&u);
	json_object_set_new(doc, "kernel", json_string(u.release));
	json_object_set_new(doc, "budget", json_integer(SBX_VERIFIER_BUDGET));
	bpf_object__for_each_program(p, obj) {
		const struct prog_variant *v = variant_of(bpf_program__name(p));
		json_t *o = json_object();
		int fd = bpf_program__fd(p);

		json_object_set_new(o, "program", json_string(bpf_program__name(p)));
		json_object_set_new(o, "section", json_string(bpf_program__section_name(p)));
		if (v)
			json_object_set_new(o, "variant", json_sprintf("%s/%d", v->hook, v->nargs));
		json_object_set_new(o, "loaded", json_boolean(fd >= 0));
		/* a program the daemon left out on purpose (another tier's,
		 * another kernel's variant) is not a failure to load */
		json_object_set_new(o, "used", json_boolean(bpf_program__autoload(p)));
		if (fd >= 0) {
			struct bpf_prog_info info;
			__u32 len = sizeof(info);

			memset(&info, 0, sizeof(info));
			if (!bpf_obj_get_info_by_fd(fd, &info, &len))
				json_object_set_new(o, "verified_insns",
						    json_integer(info.verified_insns));
		}
		if (logs && i < logs->n && bpf_program__autoload(p))
			parse_stats(logs->buf[i], o);
		json_array_append_new(progs, o);
		i++;
	}
	json_object_set_new(doc, "programs", progs);
	if (logs) {
		free(logs->buf);
		free(logs);
	}
	return doc;
}

int sbx_costs_print(FILE *f, json_t *doc)
{
	json_t *o, *progs = json_object_get(doc, "programs");
	json_int_t budget = json_integer_value(json_object_get(doc, "budget"));
	size_t i;
	int over = 0;

	fprintf(f, "verifier cost on kernel %s (budget %lld instructions per program):\n",
		sbx_json_str(doc, "kernel"), (long long)budget);
	fprintf(f, "  %-28s %-20s %9s %7s %7s\n", "program", "variant", "insns", "peak",
		"states");
	json_array_foreach(progs, i, o) {
		const char *variant = sbx_json_str(o, "variant");
		json_t *vi = json_object_get(o, "verified_insns");
		json_int_t insns = vi ? json_integer_value(vi) :
			json_integer_value(json_object_get(o, "processed_insns"));
		bool loaded = json_is_true(json_object_get(o, "loaded"));

		if (!loaded && (variant || json_is_false(json_object_get(o, "used")))) {
			fprintf(f, "  %-28s %-20s %9s\n",
				sbx_json_str(o, "program"), variant ? variant : "-",
				variant ? "not this kernel's" : "not this tier's");
			continue;
		}
		fprintf(f, "  %-28s %-20s %9lld %7lld %7lld%s\n",
			sbx_json_str(o, "program"), variant ? variant : "-",
			(long long)insns,
			(long long)json_integer_value(json_object_get(o, "peak_states")),
			(long long)json_integer_value(json_object_get(o, "total_states")),
			!loaded ? "  FAILED TO LOAD" : insns > budget ? "  OVER BUDGET" : "");
		if (!loaded || insns > budget)
			over++;
	}
	return over;
}
