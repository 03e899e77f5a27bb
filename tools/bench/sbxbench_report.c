// SPDX-License-Identifier: GPL-2.0
/*
 * sbxbench_report.c - raw results in, docs/benchmarks.json and
 * docs/BENCHMARKS.md out (host side), or one ok/FAIL line per section
 * (--check, for the smoke run).
 *
 *   report --raw RAW.jsonl --meta META.json [--template T.md]
 *          [--md OUT.md] [--json OUT.json] [--check]
 *
 * Statistics: repetition 0 of every interleaved cell is the warm-up and
 * is dropped (unless it is the only one: the smoke run). Ratios are
 * paired within a repetition (condition X of repetition r over the
 * baseline of the same r), then summarised as median and min..max over
 * the repetitions. Percentiles are nearest-rank.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/bench/bench.h"

/* ---- small statistics ------------------------------------------------ */

struct vec {
	double *v;
	size_t n, cap;
};

static void vpush(struct vec *a, double x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 16;
		a->v = realloc(a->v, a->cap * sizeof(double));
		if (!a->v)
			abort();
	}
	a->v[a->n++] = x;
}

static int dcmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

static void vsort(struct vec *a)
{
	qsort(a->v, a->n, sizeof(double), dcmp);
}

static double vmedian(struct vec *a)
{
	if (!a->n)
		return NAN;
	vsort(a);
	return a->n % 2 ? a->v[a->n / 2] : (a->v[a->n / 2 - 1] + a->v[a->n / 2]) / 2;
}

static double vmin(struct vec *a)
{
	vsort(a);
	return a->n ? a->v[0] : NAN;
}

static double vmax(struct vec *a)
{
	vsort(a);
	return a->n ? a->v[a->n - 1] : NAN;
}

/* nearest rank: the smallest value with at least q of the samples <= it */
static double vpct(struct vec *a, double q)
{
	size_t k;

	if (!a->n)
		return NAN;
	vsort(a);
	k = (size_t)ceil(q * (double)a->n);
	return a->v[k ? k - 1 : 0];
}

static json_t *vjson(const struct vec *a)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < a->n; i++)
		json_array_append_new(arr, json_real(a->v[i]));
	return arr;
}

static void vfree(struct vec *a)
{
	free(a->v);
	*a = (struct vec){};
}

/* ---- records ------------------------------------------------------------ */

static json_t *raw;	/* array of every record */

/* a field as text: `combine -k n=4` stores numbers as JSON numbers */
static const char *sget(json_t *o, const char *k)
{
	static char ring[8][32];
	static unsigned next;
	json_t *v = json_object_get(o, k);
	char *b;

	if (json_is_string(v))
		return json_string_value(v);
	if (!json_is_number(v))
		return "";
	b = ring[next++ % 8];
	if (json_is_integer(v))
		snprintf(b, sizeof(ring[0]), "%lld", (long long)json_integer_value(v));
	else
		snprintf(b, sizeof(ring[0]), "%g", json_real_value(v));
	return b;
}

static double nget(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

static bool is(json_t *o, const char *k, const char *v)
{
	return !strcmp(sget(o, k), v);
}

static int min_rep(const char *section)
{
	json_t *r;
	size_t i;
	int maxrep = 0;

	json_array_foreach(raw, i, r)
		if (is(r, "section", section) && nget(r, "rep") > maxrep)
			maxrep = (int)nget(r, "rep");
	return maxrep >= 1 ? 1 : 0;	/* drop the warm-up when there is more */
}

/* ns per iteration of one cell */
/* one run's value of KEY (ns, or cpu_ns of a spawn cell): the total over its iterations */
static bool cell_per_iter(json_t *r, const char *key, double *out)
{
	double ns = nget(r, key), it = nget(r, "iters");

	if (json_object_get(r, "error") || isnan(ns) || isnan(it) || it <= 0)
		return false;
	*out = ns / it;
	return true;
}

static bool cell_value(json_t *r, double *out)
{
	return cell_per_iter(r, "ns", out);
}

/* FIELD per iteration (ns, or cpu_ns of a spawn cell) of (section, KEY=val, rep) */
static bool find_cell_field(const char *section, const char *key, const char *val,
			    const char *op, int rep, const char *field, double *out)
{
	json_t *r;
	size_t i;

	json_array_foreach(raw, i, r) {
		if (!is(r, "section", section) || !is(r, key, val) || (int)nget(r, "rep") != rep)
			continue;
		if (op && !is(r, "op", op))
			continue;
		return cell_per_iter(r, field, out);
	}
	return false;
}

/* value of (section, KEY=val, rep) */
static bool find_cell(const char *section, const char *key, const char *val, const char *op,
		      int rep, double *out)
{
	return find_cell_field(section, key, val, op, rep, "ns", out);
}

static int max_rep(const char *section)
{
	json_t *r;
	size_t i;
	int m = -1;

	json_array_foreach(raw, i, r)
		if (is(r, "section", section) && nget(r, "rep") > m)
			m = (int)nget(r, "rep");
	return m;
}

/* the samples of FIELD of one cell, per op, warm-up dropped */
static void cell_field_samples(const char *section, const char *key, const char *val,
			       const char *op, const char *field, struct vec *out)
{
	int lo = min_rep(section), hi = max_rep(section);
	double v;

	for (int r = lo; r <= hi; r++)
		if (find_cell_field(section, key, val, op, r, field, &v))
			vpush(out, v);
}

/* the samples of one cell (ns per op), warm-up dropped */
static void cell_samples(const char *section, const char *key, const char *val, const char *op,
			 struct vec *out)
{
	cell_field_samples(section, key, val, op, "ns", out);
}

/* paired ratios X/BASE over the repetitions */
static void cell_ratios(const char *section, const char *key, const char *x, const char *base,
			const char *op, struct vec *out)
{
	int lo = min_rep(section), hi = max_rep(section);
	double a, b;

	for (int r = lo; r <= hi; r++)
		if (find_cell(section, key, x, op, r, &a) && find_cell(section, key, base, op, r, &b) &&
		    b > 0)
			vpush(out, a / b);
}

/* ---- formatting ------------------------------------------------------------ */

static void fmt_ns(char *buf, size_t len, double ns)
{
	if (isnan(ns))
		snprintf(buf, len, "n/a");
	else if (ns < 1e4)
		snprintf(buf, len, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1f µs", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
}

/* "+1.2% (-0.3..+2.0)" from ratios */
static void fmt_ratio(char *buf, size_t len, struct vec *r)
{
	if (!r->n) {
		snprintf(buf, len, "n/a");
		return;
	}
	snprintf(buf, len, "%+.1f%% (%+.1f..%+.1f)", (vmedian(r) - 1) * 100, (vmin(r) - 1) * 100,
		 (vmax(r) - 1) * 100);
}

/* ---- the output ---------------------------------------------------------------- */

struct out {
	FILE *md;		/* tables, spliced into the template */
	json_t *cells, *targets, *meta;
	json_t *tier;		/* this run's rows for the tiers' table */
	char *sect[24];		/* generated text per template marker */
	const char *names[24];
	int nsect;
};

static FILE *begin(struct out *o, const char *name, char **buf, size_t *len)
{
	o->names[o->nsect] = name;
	return open_memstream(buf, len);
}

/* open_memstream sets the buffer on fclose: take it only then */
static void end(struct out *o, FILE *f, char **buf)
{
	fclose(f);
	o->sect[o->nsect++] = *buf ? *buf : strdup("");
}

static void target(struct out *o, const char *name, const char *measured, const char *limit,
		   int pass, const char *note)
{
	json_array_append_new(o->targets, json_pack("{s:s,s:s,s:s,s:s,s:s}", "target", name,
						     "measured", measured, "limit", limit,
						     "result", pass < 0 ? "n/a" : pass ? "PASS" : "MISS",
						     "note", note ? note : ""));
}

static const char *const op_names[] = { "open", "stat", "exec", "tcp", "udp", "getppid",
					"open_ext4", "stat_ext4", "open_tmpfs", "stat_tmpfs",
					"tcp_send", "udp_recv" };
static const char *const op_desc[] = {
	"open+close, file 10 directories deep in the project",
	"stat of that file",
	"fork + exec of /bin/true + wait",
	"TCP socket + connect + accept + close, loopback",
	"UDP sendto, unconnected, loopback",
	"getppid (control: no hook runs)",
	"open+close of the same kind of file on an ext4 image (loop device)",
	"stat of that file",
	"open+close of the same kind of file on a tmpfs",
	"stat of that file",
	"send of 64 bytes on a connected TCP socket, loopback",
	"recvfrom with the sender's address, UDP, loopback (connected sender)",
};
#define N_OPS (sizeof(op_names) / sizeof(op_names[0]))

static const char *const conds[] = { "N", "A", "B", "C", "C10", "D", "L", "B0" };
static const char *const cond_desc[] = {
	"nothing of bpfsbx loaded (measured before the daemon starts)",
	"bpfsbx's links detached (the daemon and its cgroup programs stay)",
	"loaded, process outside any session",
	"in a session, agent-default",
	"in a session, agent-default + 10 generated rules",
	"in a session, agent-default + 10,000 generated rules",
	"Landlock only (bpfsbx detached), the equivalent ruleset",
	"daemon up, no session: before the first, and after the idle time (links dropped)",
};
#define N_CONDS (sizeof(conds) / sizeof(conds[0]))

/*
 * What the overheads are taken over: N, nothing loaded, where the run has
 * it; runs before N existed have only A, the links detached.
 */
static const char *base_cond(void)
{
	json_t *r;
	size_t i;

	json_array_foreach(raw, i, r)
		if (is(r, "section", "ops") && is(r, "cond", "N"))
			return "N";
	return "A";
}

static void section_ops(struct out *o)
{
	char *buf = NULL, *b2 = NULL;
	size_t len = 0, l2 = 0;
	FILE *f = begin(o, "OPS", &buf, &len);
	const char *z = base_cond();
	char t[64], m[96];

	/* the columns, in the order of what each condition adds */
	static const char *const cols[] = { "A", "B0", "B", "C", "C10", "D" };

	fprintf(f, "| operation | %s: ns/op | A/%s links detached | B0/%s idle daemon | "
		   "B/%s outside | C/%s agent-default | C10/%s +10 rules | D/%s +10,000 rules | "
		   "D/C10 10,000 vs 10 |\n"
		   "|---|---|---|---|---|---|---|---|---|\n", z, z, z, z, z, z, z);
	for (size_t i = 0; i < N_OPS; i++) {
		struct vec a = {}, r = {};

		cell_samples("ops", "cond", z, op_names[i], &a);
		fmt_ns(t, sizeof(t), vmedian(&a));
		fprintf(f, "| %s | %s", op_names[i], t);
		for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			cell_ratios("ops", "cond", cols[c], z, op_names[i], &r);
			fmt_ratio(m, sizeof(m), &r);
			fprintf(f, " | %s", m);
			vfree(&r);
		}
		cell_ratios("ops", "cond", "D", "C10", op_names[i], &r);
		fmt_ratio(m, sizeof(m), &r);
		fprintf(f, " | %s |\n", m);
		vfree(&r);
		vfree(&a);
	}
	end(o, f, &buf);

	f = begin(o, "LANDLOCK", &b2, &l2);
	fprintf(f, "| operation | A: ns/op | L: ns/op | L/A Landlock | C/A bpfsbx agent-default |\n"
		   "|---|---|---|---|---|\n");
	for (size_t i = 0; i < N_OPS; i++) {
		struct vec a = {}, l = {}, r = {}, rc = {};
		char t2[64], m2[96];

		cell_samples("ops", "cond", "A", op_names[i], &a);
		cell_samples("ops", "cond", "L", op_names[i], &l);
		cell_ratios("ops", "cond", "L", "A", op_names[i], &r);
		cell_ratios("ops", "cond", "C", "A", op_names[i], &rc);
		fmt_ns(t, sizeof(t), vmedian(&a));
		fmt_ns(t2, sizeof(t2), vmedian(&l));
		fmt_ratio(m, sizeof(m), &r);
		fmt_ratio(m2, sizeof(m2), &rc);
		fprintf(f, "| %s | %s | %s | %s | %s |\n", op_names[i], t, t2, m, m2);
		vfree(&a);
		vfree(&l);
		vfree(&r);
		vfree(&rc);
	}
	end(o, f, &b2);

	/* cells and targets */
	for (size_t i = 0; i < N_OPS; i++) {
		for (size_t c = 0; c < N_CONDS; c++) {
			struct vec s = {}, r = {};
			json_t *raw_s = json_array(), *rr;
			size_t k;

			json_array_foreach(raw, k, rr)
				if (is(rr, "section", "ops") && is(rr, "cond", conds[c]) &&
				    is(rr, "op", op_names[i]))
					json_array_append(raw_s, rr);
			cell_samples("ops", "cond", conds[c], op_names[i], &s);
			cell_ratios("ops", "cond", conds[c], z, op_names[i], &r);
			json_array_append_new(o->cells, json_pack(
				"{s:s,s:s,s:s,s:s,s:s,s:o,s:f,s:f,s:f,s:s,s:o,s:f,s:f,s:f,s:o}",
				"section", "overhead", "op", op_names[i], "op_desc", op_desc[i],
				"cond", conds[c], "cond_desc", cond_desc[c],
				"ns_per_op", vjson(&s), "median_ns_per_op", vmedian(&s),
				"min_ns_per_op", vmin(&s), "max_ns_per_op", vmax(&s),
				"baseline", z,
				"ratio", vjson(&r), "median_ratio", vmedian(&r),
				"min_ratio", vmin(&r), "max_ratio", vmax(&r),
				"raw", raw_s));
			vfree(&s);
			vfree(&r);
		}
	}
	for (size_t i = 0; i < N_OPS; i++) {
		struct vec b = {}, c = {}, d = {}, b0 = {};
		char name[128], meas[96];

		if (!strcmp(op_names[i], "getppid"))
			continue;	/* the control */
		/* links on demand: an idle daemon runs nothing in the kernel */
		cell_ratios("ops", "cond", "B0", z, op_names[i], &b0);
		snprintf(name, sizeof(name), "daemon up, no session, %s (B0/%s)", op_names[i], z);
		fmt_ratio(meas, sizeof(meas), &b0);
		target(o, name, meas, "within +-0.2%",
		       b0.n ? fabs(vmedian(&b0) - 1.0) <= 0.002 : -1, NULL);
		vfree(&b0);
		cell_ratios("ops", "cond", "B", z, op_names[i], &b);
		snprintf(name, sizeof(name), "outside a session, %s (B/%s)", op_names[i], z);
		fmt_ratio(meas, sizeof(meas), &b);
		target(o, name, meas, "<= +1%", b.n ? vmedian(&b) <= 1.01 : -1, NULL);
		cell_ratios("ops", "cond", "C", z, op_names[i], &c);
		snprintf(name, sizeof(name), "confined %s, agent-default (C/%s)", op_names[i], z);
		fmt_ratio(meas, sizeof(meas), &c);
		target(o, name, meas, "<= +5%", c.n ? vmedian(&c) <= 1.05 : -1, NULL);
		if (i < 5) {
			cell_ratios("ops", "cond", "D", "C10", op_names[i], &d);
			snprintf(name, sizeof(name), "10,000 rules vs 10, %s (D/C10)", op_names[i]);
			fmt_ratio(meas, sizeof(meas), &d);
			target(o, name, meas, "<= +2%", d.n ? vmedian(&d) <= 1.02 : -1, NULL);
		}
		vfree(&b);
		vfree(&c);
		vfree(&d);
	}
}

/*
 * Outside every session, per operation: what bpfsbx adds (B - A), the
 * programs' own share of it (their run time per op in B, from the
 * profile), and the rest: the BPF trampoline around each program and the
 * hooks' dispatch, which no program code can remove.
 */
static void section_outside(struct out *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = begin(o, "OUTSIDE", &buf, &len);
	const char *z = base_cond();
	double floor_ns = NAN;
	json_t *c;
	size_t k;

	/* the cheapest program run in B: a hook that returns at its gate */
	json_array_foreach(o->cells, k, c)
		if (is(c, "section", "profile") && is(c, "cond", "B") &&
		    (isnan(floor_ns) || nget(c, "ns_per_run") < floor_ns))
			floor_ns = nget(c, "ns_per_run");
	fprintf(f, "| operation | %s: ns/op | B - %s: ns/op | programs: runs per op | programs: "
		   "ns per op | trampoline, dispatch and the rest: ns per op |\n"
		   "|---|---|---|---|---|---|\n", z, z);
	for (size_t i = 0; i < N_OPS; i++) {
		struct vec a = {}, b = {};
		double runs = 0, prog = 0, d;
		char ta[64], td[64], tp[64], tr[64];

		if (!strcmp(op_names[i], "getppid") || !strncmp(op_names[i], "stat", 4))
			continue;
		cell_samples("ops", "cond", z, op_names[i], &a);
		cell_samples("ops", "cond", "B", op_names[i], &b);
		json_array_foreach(o->cells, k, c)
			if (is(c, "section", "profile") && is(c, "cond", "B") && is(c, "op", op_names[i])) {
				runs += nget(c, "runs_per_op");
				prog += nget(c, "ns_per_run") * nget(c, "runs_per_op");
			}
		d = vmedian(&b) - vmedian(&a);
		fmt_ns(ta, sizeof(ta), vmedian(&a));
		fmt_ns(td, sizeof(td), d);
		fmt_ns(tp, sizeof(tp), runs > 0 ? prog : NAN);
		fmt_ns(tr, sizeof(tr), runs > 0 ? d - prog : NAN);
		fprintf(f, "| %s | %s | %s | %.2f | %s | %s |\n", op_names[i], ta, td, runs, tp, tr);
		json_array_append_new(o->cells, json_pack("{s:s,s:s,s:s,s:f,s:f,s:f,s:f}", "section",
			"outside", "op", op_names[i], "baseline", z, "b_minus_base_ns", d, "program_runs_per_op", runs,
			"program_ns_per_op", prog, "rest_ns_per_op", d - prog));
		vfree(&a);
		vfree(&b);
	}
	fprintf(f, "\nThe cheapest program run outside a session (a hook that returns at its "
		   "gate) measured %.0f ns here.\n", floor_ns);
	end(o, f, &buf);
}

static void section_profile(struct out *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = begin(o, "PROFILE", &buf, &len);
	json_t *r;
	size_t i;
	int rows = 0;

	fprintf(f, "| condition | operation | program | runs per op | ns per run | ns per op |\n"
		   "|---|---|---|---|---|---|\n");
	json_array_foreach(raw, i, r) {
		json_t *before, *after, *pv;
		const char *prog;
		double iters;

		if (!is(r, "section", "profile") || json_object_get(r, "error"))
			continue;
		before = json_object_get(json_object_get(r, "before"), "progs");
		after = json_object_get(json_object_get(r, "after"), "progs");
		iters = nget(json_object_get(r, "run"), "iters");
		json_object_foreach(after, prog, pv) {
			json_t *bv = json_object_get(before, prog);
			double dc = nget(pv, "run_cnt") - nget(bv, "run_cnt");
			double dt = nget(pv, "run_time_ns") - nget(bv, "run_time_ns");

			/* a program that runs for less than one op in 20 is
			 * another process's, not this operation's */
			if (!(dc > 0) || !(iters > 0) || dc / iters < 0.05)
				continue;
			fprintf(f, "| %s | %s | %s | %.2f | %.0f | %.0f |\n", sget(r, "cond"),
				sget(r, "op"), prog, dc / iters, dt / dc, dt / iters);
			json_array_append_new(o->cells, json_pack(
				"{s:s,s:s,s:s,s:s,s:f,s:f,s:f,s:f,s:f}", "section", "profile",
				"cond", sget(r, "cond"), "op", sget(r, "op"), "program", prog,
				"iters", iters, "run_cnt", dc, "run_time_ns", dt,
				"ns_per_run", dt / dc, "runs_per_op", dc / iters));
			rows++;
		}
	}
	if (!rows)
		fprintf(f, "| (no profile recorded) | | | | | |\n");
	end(o, f, &buf);
}

static void section_startup(struct out *o)
{
	static const char *const var[] = { "true", "client", "status", "bpfsbx", "bpfsbx10k",
					   "bpfsbx_fdm", "bpfsbx10k_fdm", "bwrap",
					   "bpfsbx_after_idle" };
	static const char *const desc[] = {
		"`true`", "`bpfsbx --version` (the client's own start)",
		"`bpfsbx status` (start and a round trip to the daemon)",
		"`bpfsbx run --policy agent-default -- true`",
		"`bpfsbx run` with agent-default + 10,000 rules (compiled-policy cache warm)",
		"`bpfsbx run -- true`, cgroup2 mounted with `favordynmods`",
		"`bpfsbx run` with 10,000 rules, `favordynmods`",
		"`bwrap --ro-bind / / true`",
		"`bpfsbx run -- true`, the first after the idle time (its links made again)",
	};
	enum { NV = sizeof(var) / sizeof(var[0]) };
	double med[NV];
	char *buf = NULL, t[64], m[96], meas[256];
	size_t len = 0;
	FILE *f = begin(o, "STARTUP", &buf, &len);

	fprintf(f, "| command | per command (median) | min..max | vs `true` |\n|---|---|---|---|\n");
	for (int v = 0; v < NV; v++) {
		struct vec s = {}, r = {};
		char lo[64], hi[64];

		cell_samples("startup", "variant", var[v], NULL, &s);
		cell_ratios("startup", "variant", var[v], "true", NULL, &r);
		med[v] = vmedian(&s);
		if (!s.n) {
			vfree(&s);
			vfree(&r);
			continue;
		}
		fmt_ns(t, sizeof(t), med[v]);
		fmt_ns(lo, sizeof(lo), vmin(&s));
		fmt_ns(hi, sizeof(hi), vmax(&s));
		snprintf(m, sizeof(m), "%.2fx", vmedian(&r));
		fprintf(f, "| %s | %s | %s..%s | %s |\n", desc[v], t, lo, hi, m);
		json_array_append_new(o->cells, json_pack("{s:s,s:s,s:o,s:f,s:o,s:f}", "section",
			"startup", "variant", var[v], "ns_per_command", vjson(&s), "median_ns", med[v],
			"ratio_to_true", vjson(&r), "median_ratio_to_true", vmedian(&r)));
		vfree(&s);
		vfree(&r);
	}
	end(o, f, &buf);
	fmt_ns(t, sizeof(t), med[3]);
	fmt_ns(m, sizeof(m), med[7]);
	snprintf(meas, sizeof(meas), "%s vs bwrap %s (%.1fx)", t, m, med[3] / med[7]);
	target(o, "`bpfsbx run -- true` faster than `bwrap --ro-bind / / true`", meas,
	       "bpfsbx < bwrap", isnan(med[3]) || isnan(med[7]) ? -1 : med[3] < med[7], NULL);
	fmt_ns(t, sizeof(t), med[5]);
	snprintf(meas, sizeof(meas), "%s vs bwrap %s (%.1fx)", t, m, med[5] / med[7]);
	target(o, "`bpfsbx run -- true` faster than bwrap, cgroup2 with `favordynmods`", meas,
	       "bpfsbx < bwrap", isnan(med[5]) || isnan(med[7]) ? -1 : med[5] < med[7], NULL);
	fmt_ns(t, sizeof(t), med[4]);
	fmt_ns(m, sizeof(m), med[3]);
	snprintf(meas, sizeof(meas), "%s vs %s (%+.1f%%)", t, m, (med[4] / med[3] - 1) * 100);
	target(o, "`bpfsbx run` with 10,000 rules no slower than with agent-default (cache warm)",
	       meas, "<= +2%", isnan(med[4]) || isnan(med[3]) ? -1 : med[4] <= med[3] * 1.02, NULL);
}

/* the daemon's phases of a session start (status: last_session_start_ns) */
static void section_phases(struct out *o)
{
	static const char *const var[] = { "bpfsbx_aftermount", "bpfsbx10k_aftermount", "bpfsbx",
					   "bpfsbx10k", "bpfsbx_fdm", "bpfsbx10k_fdm" };
	static const char *const ph[] = { "checks", "policy", "cgroup", "queue", "kernel",
					  "resolver", "migrate", "records", "state" };
	char *buf = NULL, t[64];
	size_t len = 0;
	FILE *f = begin(o, "PHASES", &buf, &len);
	json_t *r;
	size_t i;

	fprintf(f, "| session start | checks | policy | cgroup | queue | kernel | resolver | "
		   "migrate | records | state | total | the cgroup.procs write |\n"
		   "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t v = 0; v < sizeof(var) / sizeof(var[0]); v++)
		json_array_foreach(raw, i, r) {
			json_t *p = json_object_get(json_object_get(r, "status"), "last_session_start_ns");
			double total = 0;

			if (!is(r, "section", "startup_phases") || !is(r, "variant", var[v]) || !p)
				continue;
			fprintf(f, "| %s", var[v]);
			for (size_t k = 0; k < sizeof(ph) / sizeof(ph[0]); k++) {
				double ns = nget(p, ph[k]);

				fmt_ns(t, sizeof(t), ns);
				fprintf(f, " | %s", t);
				total += isnan(ns) ? 0 : ns;
			}
			fmt_ns(t, sizeof(t), total);
			fprintf(f, " | %s", t);
			/* in its own thread beside queue..resolver: not in the sum;
			 * migrate is what the caller waited for beyond them */
			fmt_ns(t, sizeof(t), nget(p, "migrate_write"));
			fprintf(f, " | %s |\n", t);
			json_array_append_new(o->cells, json_pack("{s:s,s:s,s:O}", "section", "phases",
								  "variant", var[v], "ns", p));
			break;
		}
	end(o, f, &buf);
}

/* names: resolution through the daemon, the answer into the kernel, connects */
static void section_dns(struct out *o)
{
	char *buf = NULL, t[64], t2[64], m[96], meas[256];
	size_t len = 0, i;
	FILE *f = begin(o, "DNS", &buf, &len);
	struct vec d = {}, v = {}, r = {}, l = {}, c = {}, lr = {};
	double p50 = NAN, p99 = NAN, n = NAN;
	json_t *rec;

	cell_samples("dns", "cond", "direct", NULL, &d);
	cell_samples("dns", "cond", "daemon", NULL, &v);
	cell_ratios("dns", "cond", "daemon", "direct", NULL, &r);
	cell_samples("dns", "cond", "learned", NULL, &l);
	cell_samples("dns", "cond", "cidr", NULL, &c);
	cell_ratios("dns", "cond", "learned", "cidr", NULL, &lr);
	json_array_foreach(raw, i, rec)
		if (is(rec, "section", "dns_map")) {
			json_t *m2 = json_object_get(json_object_get(rec, "status"), "dns_answer_to_map");

			p50 = nget(m2, "p50_ns");
			p99 = nget(m2, "p99_ns");
			n = nget(m2, "samples");
		}
	fprintf(f, "| measurement | median | min..max | ratio |\n|---|---|---|---|\n");
	fmt_ns(t, sizeof(t), vmedian(&d));
	fmt_ns(t2, sizeof(t2), vmin(&d));
	fmt_ns(m, sizeof(m), vmax(&d));
	fprintf(f, "| a query to the upstream directly, from outside a session | %s | %s..%s | |\n",
		t, t2, m);
	fmt_ns(t, sizeof(t), vmedian(&v));
	fmt_ns(t2, sizeof(t2), vmin(&v));
	fmt_ns(m, sizeof(m), vmax(&v));
	fprintf(f, "| the same query from a session (to any address: the daemon answers) | %s | "
		   "%s..%s | %.2fx |\n", t, t2, m, vmedian(&r));
	fmt_ns(t, sizeof(t), vmedian(&c));
	fprintf(f, "| TCP connect+accept+close to an address a CIDR rule allows | %s | | |\n", t);
	fmt_ns(t, sizeof(t), vmedian(&l));
	fmt_ratio(m, sizeof(m), &lr);
	fprintf(f, "| the same to an address the session learned from a lookup | %s | | %s |\n", t, m);
	fmt_ns(t, sizeof(t), p50);
	fmt_ns(t2, sizeof(t2), p99);
	fprintf(f, "| upstream answer to the session's kernel entries (the daemon's clock) | p50 %s, "
		   "p99 %s | %.0f answers | |\n", t, t2, n);
	json_array_append_new(o->cells, json_pack("{s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:f,s:f,s:f}",
		"section", "dns", "direct_ns", vjson(&d), "daemon_ns", vjson(&v), "ratio", vjson(&r),
		"learned_connect_ns", vjson(&l), "cidr_connect_ns", vjson(&c), "learned_vs_cidr",
		vjson(&lr), "answer_to_map_p50_ns", p50, "answer_to_map_p99_ns", p99,
		"answer_to_map_samples", n));
	end(o, f, &buf);
	snprintf(meas, sizeof(meas), "p50 %s, p99 %s", t, t2);
	target(o, "DNS answer in the kernel's entries, p99", meas, "< 1 ms",
	       isnan(p99) ? -1 : p99 < 1e6, NULL);
	fmt_ratio(meas, sizeof(meas), &lr);
	target(o, "connect to a learned address vs to a CIDR rule's", meas, "<= +2%",
	       lr.n ? vmedian(&lr) <= 1.02 : -1, NULL);
	snprintf(meas, sizeof(meas), "%.2fx", vmedian(&r));
	target(o, "resolution through the daemon vs directly (ratio, informational)", meas, "-", -1,
	       NULL);
	vfree(&d);
	vfree(&v);
	vfree(&r);
	vfree(&l);
	vfree(&c);
	vfree(&lr);
}

static void section_approval(struct out *o)
{
	struct vec lat = {}, esc = {}, wr = {}, wake = {};
	char *buf = NULL, a[64], b[64], c[64], d[64], meas[160];
	size_t len = 0, i;
	FILE *f = begin(o, "APPROVAL", &buf, &len);
	json_t *r, *s, *rec = NULL;
	int first_ok = 0, after_applied = 0, timeouts = 0;

	json_array_foreach(raw, i, r)
		if (is(r, "section", "approval") && json_object_get(r, "samples"))
			rec = r;
	if (rec) {
		json_array_foreach(json_object_get(rec, "samples"), i, s) {
			vpush(&lat, nget(s, "latency_ns"));
			vpush(&esc, nget(s, "escalation_ns"));
			vpush(&wr, nget(s, "decision_write_ns"));
			vpush(&wake, nget(s, "agent_wake_ns"));
			if (nget(s, "failed_retries") == 0)
				first_ok++;
			if (is(s, "allowed_after", "applied"))
				after_applied++;
			if (is(s, "allowed_after", "timeout"))
				timeouts++;
		}
	}
	fprintf(f, "| interval | p50 | p99 | max |\n|---|---|---|---|\n");
	{
		struct { const char *name; struct vec *v; } rows[] = {
			{ "**decision written -> agent's retry allowed** (the target)", &lat },
			{ "ask denied -> request visible in pending/ (daemon escalation)", &esc },
			{ "approver's claim + decision write (sbx_queue_resolve)", &wr },
			{ "decision written -> agent woken by inotify", &wake },
		};

		for (size_t k = 0; k < 4; k++) {
			fmt_ns(a, sizeof(a), vpct(rows[k].v, 0.5));
			fmt_ns(b, sizeof(b), vpct(rows[k].v, 0.99));
			fmt_ns(c, sizeof(c), vmax(rows[k].v));
			fprintf(f, "| %s | %s | %s | %s |\n", rows[k].name, a, b, c);
		}
	}
	fprintf(f, "\n%zu approvals; the first retry after the decision succeeded in %d, "
		   "%d needed the daemon's applied/ marker, %d fell back to a 100 ms poll.\n",
		lat.n, first_ok, after_applied, timeouts);
	end(o, f, &buf);
	fmt_ns(a, sizeof(a), vpct(&lat, 0.5));
	fmt_ns(d, sizeof(d), vpct(&lat, 0.99));
	snprintf(meas, sizeof(meas), "p50 %s, p99 %s (n=%zu)", a, d, lat.n);
	target(o, "approval: decision written -> retry allowed, p99", meas, "< 50 ms",
	       lat.n ? vpct(&lat, 0.99) < 50e6 : -1, NULL);
	json_array_append_new(o->cells, json_pack("{s:s,s:o,s:f,s:f,s:o,s:o,s:o,s:I}", "section",
		"approval", "latency_ns", vjson(&lat), "p50_ns", vpct(&lat, 0.5), "p99_ns",
		vpct(&lat, 0.99), "escalation_ns", vjson(&esc), "decision_write_ns", vjson(&wr),
		"agent_wake_ns", vjson(&wake), "n", (json_int_t)lat.n));
	vfree(&lat);
	vfree(&esc);
	vfree(&wr);
	vfree(&wake);
}

static double dstat(json_t *r, const char *k)
{
	json_t *b = json_object_get(json_object_get(r, "before"), "stats");
	json_t *a = json_object_get(json_object_get(r, "after"), "stats");

	return nget(a, k) - nget(b, k);
}

static void section_events(struct out *o)
{
	char *buf = NULL, t[64];
	size_t len = 0, i;
	FILE *f = begin(o, "EVENTS", &buf, &len);
	json_t *r;
	double best_rate = 0, ring_events = NAN, daemon_rate = NAN;
	int checked_10k = 0, ok_10k = 1;
	char note[1024] = "", burst[256] = "";

	fprintf(f, "| run | offered /s | achieved /s | refused | kernel events | drops | "
		   "received by daemon | uncounted | drained in | daemon throughput /s |\n"
		   "|---|---|---|---|---|---|---|---|---|---|\n");
	json_array_foreach(raw, i, r) {
		json_t *gen = json_object_get(r, "gen"), *after = json_object_get(r, "after");
		double denied, ev, drops, recv, verdicts, gen_ns, drain_ns, unc, thr;
		bool paused = is(r, "kind", "paused");
		char offered[32];

		if (!is(r, "section", "events") || json_object_get(r, "error") || !gen)
			continue;
		denied = nget(gen, "denied");
		ev = dstat(r, "events");
		drops = dstat(r, "event_drops");
		recv = dstat(r, "events_received");
		verdicts = dstat(r, "deny") + dstat(r, "ask");
		gen_ns = nget(gen, "ns");
		drain_ns = nget(after, "drain_ns");
		/* a refusal without an event and without a drop, or an event
		 * the daemon never got, is uncounted loss */
		unc = (denied - (ev + drops)) + (ev - recv);
		if (!json_is_true(json_object_get(after, "drained")))
			unc = NAN;
		/* paced runs: what went through while the generator ran; paused:
		 * the daemon alone, draining a full ring buffer */
		thr = paused ? recv * 1e9 / drain_ns : recv * 1e9 / (gen_ns + drain_ns);
		fmt_ns(t, sizeof(t), drain_ns);
		if (nget(gen, "rate_offered") >= 1e8)
			snprintf(offered, sizeof(offered), "unpaced");
		else
			snprintf(offered, sizeof(offered), "%.0f", nget(gen, "rate_offered"));
		fprintf(f, "| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %s | %.0f |\n",
			sget(r, "name"), offered, nget(gen, "rate_achieved"), denied, ev, drops, recv,
			unc, t, thr);
		if (!isnan(unc) && unc == 0 && drops == 0 && nget(gen, "rate_achieved") > best_rate &&
		    is(r, "kind", "rate"))
			best_rate = nget(gen, "rate_achieved");
		if (paused) {
			ring_events = ev;
			daemon_rate = thr;
		}
		if (is(r, "kind", "burst")) {
			json_t *q = json_object_get(json_object_get(r, "queue"), "pending");

			snprintf(burst, sizeof(burst), "The ask burst left %.0f pending request(s) "
				 "whose folded counts add up to %.0f, for %.0f ask events received.",
				 nget(q, "requests"), nget(q, "count_sum"), recv);
		}
		if (nget(gen, "rate_achieved") >= 9900 || paused) {
			checked_10k++;
			if (isnan(unc) || unc != 0 || verdicts != denied)
				ok_10k = 0;
			snprintf(note + strlen(note), sizeof(note) - strlen(note), "%s%s: %.0f dropped "
				 "and counted, %.0f uncounted", note[0] ? "; " : "", sget(r, "name"),
				 drops, unc);
		}
		json_array_append_new(o->cells, json_pack(
			"{s:s,s:s,s:s,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:O}", "section", "events",
			"name", sget(r, "name"), "kind", sget(r, "kind"),
			"rate_offered", nget(gen, "rate_offered"),
			"rate_achieved", nget(gen, "rate_achieved"), "refused", denied,
			"kernel_verdicts", verdicts, "kernel_events", ev, "event_drops", drops,
			"events_received", recv, "uncounted", unc, "drain_ns", drain_ns,
			"daemon_throughput_per_s", thr, "raw", r));
	}
	fprintf(f, "\nHighest rate with no drop at all: %.0f denials/s of guest time. With the "
		   "daemon stopped, the ring buffer held %.0f events; the daemon alone then drained "
		   "them at %.0f events/s. %s\n", best_rate, ring_events, daemon_rate, burst);
	end(o, f, &buf);
	target(o, "no uncounted loss at 10,000 denials/s", note[0] ? note : "not measured",
	       "0 uncounted", checked_10k ? ok_10k : -1,
	       "drops are allowed if counted: refused = events + event_drops, events = received");
}

/*
 * The compile's target is on its CPU time: under sleep=off the guest clock
 * also jumps while the vCPU idles, as it does on each 9p round trip (the
 * compile lists the directories it scans for hard links on the rig's 9p
 * root), and how far it jumps depends on how busy the host is.
 */
static void section_policy(struct out *o)
{
	static const char *const sizes[] = { "10", "1000", "10000" };
	char *buf = NULL, a[64], b[64], c[64], d[64], meas[320];
	size_t len = 0;
	FILE *f = begin(o, "POLICY", &buf, &len);
	double compile10k = NAN, wall10k = NAN, host10k = NAN;

	fprintf(f, "| extra rules | total rules | compile, CPU time (instructions) | min..max | "
		   "compile, guest time | min..max | "
		   "session start (`bpfsbx run -- true`) | min..max | learning session start "
		   "(`run --learn -- true`) | compile natively on the host "
		   "(wall time) |\n|---|---|---|---|---|---|---|---|---|---|\n");
	for (int s = 0; s < 3; s++) {
		struct vec cv = {}, ccv = {}, sv = {}, lv = {}, hv = {};
		json_t *r, *total = NULL;
		size_t i;

		json_array_foreach(raw, i, r) {
			double v;

			if (nget(r, "rules") != atof(sizes[s]))
				continue;
			if (is(r, "section", "policy_host") && (int)nget(r, "rep") >= min_rep("policy") &&
			    cell_value(r, &v))
				vpush(&hv, v);
			if (!is(r, "section", "policy"))
				continue;
			if (json_object_get(r, "total_rules"))
				total = json_object_get(r, "total_rules");
			if ((int)nget(r, "rep") < min_rep("policy") || !cell_value(r, &v))
				continue;
			vpush(is(r, "phase", "compile") ? &cv : is(r, "phase", "session_learn") ? &lv : &sv,
			      v);
			if (is(r, "phase", "compile") && cell_per_iter(r, "cpu_ns", &v))
				vpush(&ccv, v);
		}
		fprintf(f, "| %s | ", sizes[s]);
		if (json_is_integer(total))
			fprintf(f, "%lld", (long long)json_integer_value(total));
		else
			fprintf(f, "?");
		fmt_ns(a, sizeof(a), vmedian(&ccv));
		fmt_ns(b, sizeof(b), vmin(&ccv));
		fmt_ns(c, sizeof(c), vmax(&ccv));
		fprintf(f, " | %s | %s..%s", a, b, c);
		fmt_ns(a, sizeof(a), vmedian(&cv));
		fmt_ns(b, sizeof(b), vmin(&cv));
		fmt_ns(c, sizeof(c), vmax(&cv));
		fmt_ns(d, sizeof(d), vmedian(&sv));
		fprintf(f, " | %s | %s..%s | %s", a, b, c, d);
		fmt_ns(b, sizeof(b), vmin(&sv));
		fmt_ns(c, sizeof(c), vmax(&sv));
		fmt_ns(d, sizeof(d), vmedian(&lv));
		fmt_ns(a, sizeof(a), vmedian(&hv));
		fprintf(f, " | %s..%s | %s", b, c, d);
		if (!isnan(vmedian(&lv)) && vmedian(&sv) > 0)
			fprintf(f, " (%+.0f%%)", (vmedian(&lv) / vmedian(&sv) - 1) * 100);
		fprintf(f, " | %s |\n", a);
		json_array_append_new(o->cells, json_pack("{s:s,s:s,s:O?,s:o,s:f,s:o,s:f,s:o,s:f,s:o,s:f,"
							  "s:o,s:f}",
			"section", "policy", "extra_rules", sizes[s], "total_rules", total,
			"compile_cpu_ns", vjson(&ccv), "median_compile_cpu_ns", vmedian(&ccv),
			"compile_ns", vjson(&cv), "median_compile_ns", vmedian(&cv),
			"session_start_ns", vjson(&sv), "median_session_start_ns", vmedian(&sv),
			"learn_session_start_ns", vjson(&lv), "median_learn_session_start_ns",
			vmedian(&lv),
			"host_compile_wall_ns", vjson(&hv), "median_host_compile_wall_ns", vmedian(&hv)));
		if (s == 2) {
			compile10k = vmedian(&ccv);
			wall10k = vmedian(&cv);
			host10k = vmedian(&hv);
		}
		vfree(&hv);
		vfree(&cv);
		vfree(&ccv);
		vfree(&sv);
		vfree(&lv);
	}
	{
		struct vec gv = {};
		json_t *r, *events = NULL;
		size_t i;

		json_array_foreach(raw, i, r) {
			double v;

			if (!is(r, "section", "policy_suggest") || !cell_value(r, &v))
				continue;
			events = json_object_get(r, "events");
			vpush(&gv, v);
		}
		fmt_ns(a, sizeof(a), vmedian(&gv));
		fmt_ns(b, sizeof(b), vmin(&gv));
		fmt_ns(c, sizeof(c), vmax(&gv));
		fprintf(f, "\n`bpfsbx policy suggest` over an event log of %lld lines "
			   "(tools/bench/gen-events: a pip, npm, cargo and git workload refused under a "
			   "policy that asks home reads, with credential reads): %s (%s..%s) of guest "
			   "time.\n", (long long)json_integer_value(events), a, b, c);
		json_array_append_new(o->cells, json_pack("{s:s,s:O?,s:o,s:f}", "section",
			"policy_suggest", "events", events, "suggest_ns", vjson(&gv),
			"median_suggest_ns", vmedian(&gv)));
		vfree(&gv);
	}
	end(o, f, &buf);
	fmt_ns(a, sizeof(a), compile10k);
	fmt_ns(b, sizeof(b), wall10k);
	fmt_ns(c, sizeof(c), host10k);
	snprintf(meas, sizeof(meas), "%s of the compile's instructions (guest time with the rig's "
		 "9p waits: %s; natively on the host: %s)", a, b, c);
	target(o, "compile of 10,000 rules", meas, "< 1 s", isnan(compile10k) ? -1 :
	       compile10k < 1e9, NULL);
}

static void section_build(struct out *o)
{
	static const char *const bc[] = { "A", "B", "C" };
	static const char *const bdesc[] = { "bpfsbx not loaded", "outside a session",
					     "inside a session (agent-default)" };
	char *buf = NULL, a[64], lo[64], hi[64], m[96];
	size_t len = 0;
	FILE *f = begin(o, "BUILD", &buf, &len);
	struct vec cb = {};

	fprintf(f, "| condition | build time (median) | min..max | vs outside a session |\n"
		   "|---|---|---|---|\n");
	for (int c = 0; c < 3; c++) {
		struct vec s = {}, r = {};

		cell_samples("build", "cond", bc[c], NULL, &s);
		if (!s.n)
			continue;
		cell_ratios("build", "cond", bc[c], "B", NULL, &r);
		fmt_ns(a, sizeof(a), vmedian(&s));
		fmt_ns(lo, sizeof(lo), vmin(&s));
		fmt_ns(hi, sizeof(hi), vmax(&s));
		fmt_ratio(m, sizeof(m), &r);
		fprintf(f, "| %s: %s | %s | %s..%s | %s |\n", bc[c], bdesc[c], a, lo, hi, m);
		json_array_append_new(o->cells, json_pack("{s:s,s:s,s:o,s:f,s:o,s:f}", "section",
			"build", "cond", bc[c], "ns", vjson(&s), "median_ns", vmedian(&s),
			"ratio_to_B", vjson(&r), "median_ratio_to_B", vmedian(&r)));
		if (c == 2)
			cb = r;
		else
			vfree(&r);
		vfree(&s);
	}
	end(o, f, &buf);
	fmt_ratio(m, sizeof(m), &cb);
	target(o, "build of the C project, inside vs outside a session (C/B)", m, "<= +3%",
	       cb.n ? vmedian(&cb) <= 1.03 : -1, NULL);
	vfree(&cb);
}

static void section_targets(struct out *o)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = begin(o, "TARGETS", &buf, &len);
	json_t *t;

	fprintf(f, "| target | measured: median (min..max) | limit | result |\n|---|---|---|---|\n");
	json_array_foreach(o->targets, i, t)
		fprintf(f, "| %s | %s | %s | **%s** |\n", sget(t, "target"), sget(t, "measured"),
			sget(t, "limit"), sget(t, "result"));
	end(o, f, &buf);
}

static void section_meta(struct out *o)
{
	char *buf = NULL, t[64];
	size_t len = 0;
	FILE *f = begin(o, "MACHINE", &buf, &len);
	json_t *m = o->meta;

	fmt_ns(t, sizeof(t), nget(m, "daemon_load_ns"));
	fprintf(f, "| | |\n|---|---|\n");
	fprintf(f, "| date | %s |\n", sget(m, "date"));
	fprintf(f, "| command | `%s` |\n", sget(m, "command"));
	fprintf(f, "| commit | %s |\n", sget(m, "commit"));
	fprintf(f, "| host CPU | %s (%s cores) |\n", sget(m, "host_cpu"), sget(m, "host_cores"));
	fprintf(f, "| QEMU | %s, TCG, `%s` |\n", sget(m, "qemu"), sget(m, "accel"));
	fprintf(f, "| guest | kernel %s, %s vCPU, %s MB; LSMs %s; Landlock ABI %s |\n",
		sget(m, "kernel"), sget(m, "guest_cpus"), sget(m, "guest_mem_mb"), sget(m, "lsm"),
		sget(m, "landlock_abi"));
	fprintf(f, "| guest clock | %s |\n", sget(m, "clock"));
	fprintf(f, "| repetitions | %s per cell (the first is a warm-up and dropped); "
		   "%s guest-ns per micro-benchmark cell |\n", sget(m, "reps"),
		sget(m, "cell_target_ns"));
	fprintf(f, "| daemon start (load + verify + pin) | %s guest time |\n", t);
	fprintf(f, "| wall time of this run | %s s |\n", sget(m, "wall_s"));
	end(o, f, &buf);
}

/* copy the template, replacing lines "@@NAME@@" with the generated text */
static int write_md(struct out *o, const char *tmpl, const char *path)
{
	FILE *in = fopen(tmpl, "re"), *out;
	char *line = NULL;
	size_t cap = 0;
	ssize_t l;

	if (!in)
		return -errno;
	out = fopen(path, "we");
	if (!out) {
		fclose(in);
		return -errno;
	}
	while ((l = getline(&line, &cap, in)) > 0) {
		bool done = false;

		if (!strncmp(line, "@@", 2)) {
			for (int s = 0; s < o->nsect; s++) {
				size_t n = strlen(o->names[s]);

				if (!strncmp(line + 2, o->names[s], n) && !strncmp(line + 2 + n, "@@", 2)) {
					fputs(o->sect[s], out);
					done = true;
				}
			}
			if (!done && !strncmp(line, "@@META:", 7)) {
				char *end = strstr(line + 7, "@@");

				if (end) {
					*end = 0;
					fputs(sget(o->meta, line + 7), out);
					fputs(end + 2, out);
					done = true;
				}
			}
		}
		if (!done)
			fputs(line, out);
	}
	free(line);
	fclose(in);
	return fclose(out) ? -errno : 0;
}

/* ---- --check: one line per section for tests/run ---------------------------- */

static const char *section_error(const char *section, const char *key, const char *val)
{
	json_t *r;
	size_t i;

	json_array_foreach(raw, i, r)
		if (is(r, "section", section) && (!key || is(r, key, val)) &&
		    json_object_get(r, "error"))
			return sget(r, "error");
	return NULL;
}

static int count(const char *section, const char *key, const char *val)
{
	json_t *r;
	size_t i;
	int n = 0;
	double v;

	json_array_foreach(raw, i, r)
		if (is(r, "section", section) && (!key || is(r, key, val)) &&
		    (cell_value(r, &v) || json_object_get(r, "samples") || json_object_get(r, "gen") ||
		     json_object_get(r, "after") || json_object_get(r, "status")))
			n++;
	return n;
}

/* a section the guest left out on purpose (tools/bench/guest
 * --kernel-only records which) */
static bool left_out(const char *name)
{
	json_t *r;
	size_t i;

	json_array_foreach(raw, i, r)
		if (is(r, "section", "meta") && is(r, "what", "left_out") && is(r, "name", name))
			return true;
	return false;
}

static int check(void)
{
	/* full: checked in the bpf-lsm guest's smoke only (the landlock
	 * tier's smoke leaves out the 10,000-rule session, tools/bench/guest) */
	struct { const char *name, *section, *key, *val; int want; bool full; } s[] = {
		{ "overhead", "ops", "cond", "N", 5, false },
		{ "overhead", "ops", "cond", "A", 5, true },
		{ "overhead", "ops", "cond", "B", 5, false },
		{ "overhead", "ops", "cond", "C", 5, false },
		{ "overhead", "ops", "cond", "D", 5, true },
		{ "idle", "ops", "cond", "B0", 5, false },
		{ "idle", "startup", "variant", "bpfsbx_after_idle", 1, false },
		{ "landlock", "ops", "cond", "L", 5, false },
		{ "filesystems", "ops", "op", "open_ext4", 5, false },
		{ "filesystems", "ops", "op", "open_tmpfs", 5, false },
		{ "profile", "profile", NULL, NULL, 1, true },
		{ "startup", "startup", "variant", "true", 1, false },
		{ "startup", "startup", "variant", "client", 1, false },
		{ "startup", "startup", "variant", "status", 1, false },
		{ "startup", "startup", "variant", "bpfsbx", 1, false },
		{ "startup", "startup", "variant", "bpfsbx10k", 1, true },
		{ "startup", "startup", "variant", "bwrap", 1, false },
		{ "startup", "startup", "variant", "bpfsbx_fdm", 1, true },
		{ "startup", "startup_phases", NULL, NULL, 2, false },
		{ "startup", "startup_phases", NULL, NULL, 6, true },
		{ "approval", "approval", NULL, NULL, 1, false },
		{ "events", "events", "kind", "rate", 1, true },
		{ "events", "events", "kind", "burst", 1, true },
		{ "policy", "policy", "phase", "compile", 3, true },
		{ "policy", "policy", "phase", "session", 3, true },
		{ "policy", "policy", "phase", "session_learn", 1, true },
		{ "policy", "policy_suggest", NULL, NULL, 1, true },
		{ "build", "build", "cond", "B", 1, true },
		{ "build", "build", "cond", "C", 1, true },
		{ "names", "dns", "cond", "direct", 1, true },
		{ "names", "dns", "cond", "daemon", 1, true },
		{ "names", "dns", "cond", "learned", 1, true },
		{ "names", "dns", "cond", "cidr", 1, true },
		{ "names", "dns_map", NULL, NULL, 1, true },
	};
	const char *last = NULL;
	char why[512] = "";
	int fails = 0;
	bool full = true;
	json_t *r;
	size_t k;

	json_array_foreach(raw, k, r)
		if (is(r, "section", "meta") && is(r, "tier", "landlock"))
			full = false;
	for (size_t i = 0; i <= sizeof(s) / sizeof(s[0]); i++) {
		if (i < sizeof(s) / sizeof(s[0]) && s[i].full && !full)
			continue;
		if (last && (i == sizeof(s) / sizeof(s[0]) || strcmp(last, s[i].name))) {
			if (left_out(last)) {
				printf("skip bench.%s: left to the other kernel's smoke run "
				       "(--kernel-only: the same harness and daemon code)\n", last);
			} else if (why[0]) {
				printf("FAIL bench.%s: %s\n", last, why);
				fails++;
			} else {
				printf("ok bench.%s\n", last);
			}
			why[0] = 0;
		}
		if (i == sizeof(s) / sizeof(s[0]))
			break;
		last = s[i].name;
		if (!why[0]) {
			const char *e = section_error(s[i].section, s[i].key, s[i].val);
			int n = count(s[i].section, s[i].key, s[i].val);

			if (e)
				snprintf(why, sizeof(why), "%s", e);
			else if (n < s[i].want)
				snprintf(why, sizeof(why), "%d result(s) for %s%s%s, %d expected",
					 n, s[i].section, s[i].key ? " " : "", s[i].val ? s[i].val : "",
					 s[i].want);
		}
	}
	return fails ? 1 : 0;
}

/* the lines of a raw.jsonl, or NULL */
static json_t *load_raw(const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t l;
	int lineno = 0;
	FILE *f = fopen(path, "re");
	json_t *arr;

	if (!f) {
		fprintf(stderr, "report: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	arr = json_array();
	while ((l = getline(&line, &cap, f)) > 0) {
		json_error_t je;
		json_t *v;

		lineno++;
		if (l <= 1)
			continue;
		v = json_loads(line, 0, &je);
		if (!json_is_object(v)) {
			fprintf(stderr, "report: %s:%d: %s\n", path, lineno, v ? "not an object" : je.text);
			json_decref(v);
			continue;
		}
		json_array_append_new(arr, v);
	}
	free(line);
	fclose(f);
	return arr;
}

/* the guest's facts (kernel, LSMs, load time) join the host's */
static void meta_from_raw(json_t *meta)
{
	json_t *r;
	size_t i;

	json_array_foreach(raw, i, r)
		if (is(r, "section", "meta")) {
			const char *k;
			json_t *v;

			json_object_foreach(r, k, v)
				if (strcmp(k, "section") && strcmp(k, "what"))
					json_object_set(meta, k, v);
			if (is(r, "what", "daemon_load"))
				json_object_set(meta, "daemon_load_ns", json_object_get(r, "ns"));
		}
}

/* the tier of the run in `raw`: its guest says (runs before tiers: bpf-lsm) */
static const char *run_tier(json_t *meta)
{
	return *sget(meta, "tier") ? sget(meta, "tier") : "bpf-lsm";
}

/*
 * What the tiers' table needs of one run, kept as text because `raw` is
 * this run's only while it is computed: per operation N's ns/op and the
 * ratios over N of B, C, D and L; `run -- true` and bwrap per command.
 */
static void tier_rows(struct out *o)
{
	static const char *const cols[] = { "B", "C", "D", "L" };
	static const char *const var[] = { "bpfsbx", "bwrap" };
	json_t *ops = json_object(), *start = json_object();
	char t[96];

	for (size_t i = 0; i < N_OPS; i++) {
		struct vec a = {};
		json_t *row = json_object();

		cell_samples("ops", "cond", "N", op_names[i], &a);
		fmt_ns(t, sizeof(t), vmedian(&a));
		json_object_set_new(row, "N", json_string(t));
		vfree(&a);
		for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
			struct vec r = {};

			cell_ratios("ops", "cond", cols[c], "N", op_names[i], &r);
			fmt_ratio(t, sizeof(t), &r);
			json_object_set_new(row, cols[c], json_string(t));
			vfree(&r);
		}
		json_object_set_new(ops, op_names[i], row);
	}
	for (size_t v = 0; v < sizeof(var) / sizeof(var[0]); v++) {
		struct vec s = {}, c = {};

		cell_samples("startup", "variant", var[v], NULL, &s);
		json_object_set_new(start, var[v], json_real(s.n ? vmedian(&s) : -1));
		/* and the CPU of the command and all it waited for: under
		 * -icount a guest that waits for the host (the 9p root's
		 * round trips) idles, and its clock jumps to the next timer */
		cell_field_samples("startup", "variant", var[v], NULL, "cpu_ns", &c);
		snprintf(t, sizeof(t), "%s_cpu", var[v]);
		json_object_set_new(start, t, json_real(c.n ? vmedian(&c) : -1));
		vfree(&s);
		vfree(&c);
	}
	o->tier = json_pack("{s:o,s:o}", "ops", ops, "startup", start);
}

/* every section of the run in `raw` */
static void compute(struct out *o)
{
	o->cells = json_array();
	o->targets = json_array();
	section_ops(o);
	section_profile(o);
	section_outside(o);
	section_startup(o);
	section_phases(o);
	section_approval(o);
	section_events(o);
	section_policy(o);
	section_build(o);
	section_dns(o);
	tier_rows(o);
}

static void out_free(struct out *o)
{
	json_decref(o->tier);
	for (int s = 0; s < o->nsect; s++)
		free(o->sect[s]);
	json_decref(o->meta);
	json_decref(o->cells);
	json_decref(o->targets);
}

/* other runs (another kernel, the tree before a change): their targets */
struct also {
	const char *label;
	struct out o;
};

/* every target of this run beside the same target of the others */
static void section_compare(struct out *o, const char *label, struct also *al, int n)
{
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = begin(o, "COMPARE", &buf, &len);
	json_t *t;

	if (!n) {
		fprintf(f, "(one run: nothing to compare)\n");
		end(o, f, &buf);
		return;
	}
	fprintf(f, "| target | %s", label);
	for (int k = 0; k < n; k++)
		fprintf(f, " | %s", al[k].label);
	fprintf(f, " |\n|---|---");
	for (int k = 0; k < n; k++)
		fprintf(f, "|---");
	fprintf(f, "|\n| kernel, commit | %s, %s", sget(o->meta, "kernel"), sget(o->meta, "commit"));
	for (int k = 0; k < n; k++)
		fprintf(f, " | %s, %s", sget(al[k].o.meta, "kernel"), sget(al[k].o.meta, "commit"));
	fprintf(f, " |\n");
	json_array_foreach(o->targets, i, t) {
		fprintf(f, "| %s | %s **%s**", sget(t, "target"), sget(t, "measured"), sget(t, "result"));
		for (int k = 0; k < n; k++) {
			json_t *u;
			size_t j;
			bool found = false;

			json_array_foreach(al[k].o.targets, j, u)
				if (!strcmp(sget(u, "target"), sget(t, "target"))) {
					fprintf(f, " | %s **%s**", sget(u, "measured"), sget(u, "result"));
					found = true;
					break;
				}
			if (!found)
				fprintf(f, " | (not measured)");
		}
		fprintf(f, " |\n");
	}
	end(o, f, &buf);
}

/* one start-up row of the tiers' table: `run -- true` against bwrap */
static void startup_row(FILE *f, const char *what, struct out *o)
{
	json_t *st = json_object_get(o->tier, "startup");
	double run = nget(st, "bpfsbx"), bw = nget(st, "bwrap");
	double rc = nget(st, "bpfsbx_cpu"), bc = nget(st, "bwrap_cpu");
	char t[64], b[64], tc[64], bcs[64];

	fmt_ns(t, sizeof(t), run > 0 ? run : NAN);
	fmt_ns(b, sizeof(b), bw > 0 ? bw : NAN);
	fmt_ns(tc, sizeof(tc), rc > 0 ? rc : NAN);
	fmt_ns(bcs, sizeof(bcs), bc > 0 ? bc : NAN);
	fprintf(f, "| %s | %s | %s | ", what, t, tc);
	if (run > 0 && bw > 0)
		fprintf(f, "%.2fx (bwrap %s) | ", run / bw, b);
	else
		fprintf(f, "n/a | ");
	if (rc > 0 && bc > 0)
		fprintf(f, "%.2fx (bwrap %s) |\n", rc / bc, bcs);
	else
		fprintf(f, "n/a |\n");
}

/*
 * The landlock tier beside the full tier: each landlock run with the
 * bpf-lsm run of the same kernel and commit, over each run's own N (a
 * guest booted without bpf in lsm= has its own baseline).
 */
static void section_tier(struct out *o, const char *label, struct also *al, int n)
{
	struct { const char *label; struct out *o; } run[9];
	char *buf = NULL;
	size_t len = 0;
	int nrun = 0, shown = 0;
	FILE *f = begin(o, "TIER", &buf, &len);

	run[nrun].label = label;
	run[nrun++].o = o;
	for (int k = 0; k < n && nrun < 9; k++) {
		run[nrun].label = al[k].label;
		run[nrun++].o = &al[k].o;
	}
	for (int i = 0; i < nrun; i++) {
		struct out *ll = run[i].o, *full = NULL;
		json_t *lo, *fo = NULL;

		if (strcmp(run_tier(ll->meta), "landlock"))
			continue;
		for (int j = 0; j < nrun; j++)
			if (!strcmp(run_tier(run[j].o->meta), "bpf-lsm") &&
			    !strcmp(sget(run[j].o->meta, "kernel"), sget(ll->meta, "kernel")) &&
			    !strcmp(sget(run[j].o->meta, "commit"), sget(ll->meta, "commit")))
				full = run[j].o;
		lo = json_object_get(ll->tier, "ops");
		if (full)
			fo = json_object_get(full->tier, "ops");
		fprintf(f, "%s### %s (kernel %s, Landlock ABI %s, LSMs %s)\n\n",
			shown++ ? "\n" : "", run[i].label, sget(ll->meta, "kernel"),
			sget(ll->meta, "landlock_abi"), sget(ll->meta, "lsm"));
		fprintf(f, "| operation | N: ns/op | B/N outside | C/N confined, landlock tier | "
			   "D/N +10,000 rules | L/N raw Landlock | C/N confined, bpf-lsm tier |\n"
			   "|---|---|---|---|---|---|---|\n");
		for (size_t op = 0; op < N_OPS; op++) {
			json_t *r = json_object_get(lo, op_names[op]);
			json_t *fr = fo ? json_object_get(fo, op_names[op]) : NULL;

			fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n", op_names[op],
				sget(r, "N"), sget(r, "B"), sget(r, "C"), sget(r, "D"), sget(r, "L"),
				fr ? sget(fr, "C") : "(no bpf-lsm run)");
		}
		fprintf(f, "\n| command | per command (median) | its CPU (median) | vs bwrap in the "
			   "same boot | CPU vs bwrap's |\n|---|---|---|---|---|\n");
		startup_row(f, "`bpfsbx run -- true`, landlock tier", ll);
		if (full)
			startup_row(f, "`bpfsbx run -- true`, bpf-lsm tier (its own boot)", full);
	}
	if (!shown)
		fprintf(f, "(no landlock-tier run: `tools/bench/run --tiers \"bpf-lsm landlock\"`)\n");
	end(o, f, &buf);
}

int cmd_report(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "raw", required_argument, NULL, 'r' },
		{ "meta", required_argument, NULL, 'm' },
		{ "template", required_argument, NULL, 't' },
		{ "md", required_argument, NULL, 'o' },
		{ "json", required_argument, NULL, 'j' },
		{ "check", no_argument, NULL, 'c' },
		{ "label", required_argument, NULL, 'l' },
		{ "also", required_argument, NULL, 'a' },
		{}
	};
	const char *rawp = NULL, *metap = NULL, *tmpl = NULL, *mdp = NULL, *jsonp = NULL;
	const char *label = NULL;
	struct also al[8];
	struct out o = {};
	bool do_check = false;
	char *err = NULL;
	int c, rc = 0, nal = 0;

	while ((c = getopt_long(argc, argv, "r:m:t:o:j:cl:a:", lo, NULL)) != -1) {
		switch (c) {
		case 'r': rawp = optarg; break;
		case 'm': metap = optarg; break;
		case 't': tmpl = optarg; break;
		case 'o': mdp = optarg; break;
		case 'j': jsonp = optarg; break;
		case 'c': do_check = true; break;
		case 'l': label = optarg; break;
		case 'a': {
			char *eq = strchr(optarg, '=');
			json_t *r;

			if (!eq || nal == 8) {
				fprintf(stderr, "report: --also LABEL=RAW.jsonl (at most 8)\n");
				return 2;
			}
			*eq = 0;
			r = load_raw(eq + 1);
			if (!r)
				return 1;
			memset(&al[nal], 0, sizeof(al[nal]));
			al[nal].label = optarg;
			{
				/* the host's facts of that run, beside its results */
				char *dir = strdup(eq + 1), *slash = dir ? strrchr(dir, '/') : NULL;
				char *mp = NULL;

				if (slash) {
					*slash = 0;
					if (asprintf(&mp, "%s/meta.json", dir) < 0)
						mp = NULL;
				}
				al[nal].o.meta = mp ? bench_load(mp, NULL) : NULL;
				if (!al[nal].o.meta)
					al[nal].o.meta = json_object();
				free(mp);
				free(dir);
			}
			raw = r;
			meta_from_raw(al[nal].o.meta);
			compute(&al[nal].o);
			json_decref(raw);
			raw = NULL;
			nal++;
			break;
		}
		default:
			fprintf(stderr, "usage: report --raw RAW.jsonl [--meta META.json] [--template T] "
				"[--md OUT] [--json OUT] [--check] [--label L] [--also LABEL=RAW]...\n");
			return 2;
		}
	}
	if (!rawp) {
		fprintf(stderr, "report: --raw is required\n");
		return 2;
	}
	raw = load_raw(rawp);
	if (!raw) {
		if (do_check)
			printf("FAIL bench.results: no results file %s\n", rawp);
		return 1;
	}
	if (do_check)
		return check();

	o.meta = metap ? bench_load(metap, &err) : json_object();
	if (!o.meta) {
		fprintf(stderr, "report: %s\n", err ? err : metap);
		free(err);
		o.meta = json_object();
	}
	meta_from_raw(o.meta);
	compute(&o);
	section_targets(&o);
	section_meta(&o);
	section_compare(&o, label ? label : sget(o.meta, "kernel"), al, nal);
	section_tier(&o, label ? label : sget(o.meta, "kernel"), al, nal);
	if (jsonp) {
		json_t *doc = json_pack("{s:O,s:O,s:O}", "meta", o.meta, "targets", o.targets,
					"cells", o.cells), *others = json_object();

		for (int k = 0; k < nal; k++)
			json_object_set_new(others, al[k].label, json_pack("{s:O,s:O,s:O}", "meta",
					    al[k].o.meta, "targets", al[k].o.targets, "cells",
					    al[k].o.cells));
		json_object_set_new(doc, "also", others);
		if (json_dump_file(doc, jsonp, JSON_INDENT(1) | JSON_SORT_KEYS)) {
			fprintf(stderr, "report: writing %s failed\n", jsonp);
			rc = 1;
		}
		json_decref(doc);
	}
	if (mdp && tmpl) {
		int e = write_md(&o, tmpl, mdp);

		if (e) {
			fprintf(stderr, "report: writing %s: %s\n", mdp, strerror(-e));
			rc = 1;
		}
	}
	{
		json_t *t;
		size_t i;

		json_array_foreach(o.targets, i, t)
			printf("%-4s %s: %s (limit %s)\n", sget(t, "result"), sget(t, "target"),
			       sget(t, "measured"), sget(t, "limit"));
	}
	out_free(&o);
	for (int k = 0; k < nal; k++)
		out_free(&al[k].o);
	json_decref(raw);
	return rc;
}
