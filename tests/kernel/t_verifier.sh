# What verifying each program costs on this kernel, as the daemon that
# loaded them recorded it (/run/bpfsbx/verifier.json). Two bounds: the
# project's budget, a quarter of the verifier's 1M-instruction limit, and
# a per-program figure in verifier-budgets, about twice what the program
# costs today, so that a change that doubles one program fails here and
# not on a user's kernel.

VJSON=/run/bpfsbx/verifier.json
VBUDGETS=$ROOT/tests/kernel/verifier-budgets

# prog_costs: "PROGRAM LOADED INSNS PEAK" lines of the daemon's record
prog_costs() {
	python3 -S - "$VJSON" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for p in d["programs"]:
    print(p["program"], int(p["loaded"]), p.get("verified_insns", -1), p.get("peak_states", -1))
EOF
}

test_every_program_verifies_within_a_quarter_of_the_limit() {
	[ -s $VJSON ] || fail "no $VJSON (the suite's daemon loads the programs)"
	local n=0 bad=
	while read -r prog loaded insns peak; do
		[ "$loaded" = 1 ] || continue
		n=$((n + 1))
		[ "$insns" -gt 0 ] || bad="$bad $prog(no count)"
		[ "$insns" -le 250000 ] || bad="$bad $prog($insns)"
		[ "$peak" -gt 0 ] || bad="$bad $prog(no peak states)"
	done < <(prog_costs)
	[ $n -ge 30 ] || fail "only $n programs loaded"
	[ -z "$bad" ] || fail "over 250000 verified instructions or unmeasured:$bad"
}

test_every_program_within_its_pinned_budget() {
	local bad= missing=
	while read -r prog loaded insns peak; do
		[ "$loaded" = 1 ] || continue
		budget=$(awk -v p="$prog" -v k="$KLINE" '$1 == p && $2 == k { print $3 }' "$VBUDGETS")
		if [ -z "$budget" ]; then
			missing="$missing $prog"
		elif [ "$insns" -gt "$budget" ]; then
			bad="$bad $prog($insns > $budget)"
		fi
		echo "$prog $KLINE $insns (budget ${budget:-none})"
	done < <(prog_costs)
	[ -z "$missing" ] || fail "no budget for$missing on $KLINE in tests/kernel/verifier-budgets"
	[ -z "$bad" ] || fail "over the pinned budget on $KLINE:$bad"
}

# One build, two kernels: perf_event_open lost its attr argument after
# 6.1, and the loader keeps the variant that matches this kernel. Both
# outcomes are right; the effect (a refused perf_event_open) is the same.
test_loader_picks_the_hook_variant_of_this_kernel() {
	local old new
	old=$(prog_costs | awk '$1 == "sbx_perf_event_open" { print $2 }')
	new=$(prog_costs | awk '$1 == "sbx_perf_event_open_type" { print $2 }')
	case $KLINE in
	6.1) [ "$old/$new" = "1/0" ] || fail "6.1 loaded sbx_perf_event_open=$old _type=$new" ;;
	*) [ "$old/$new" = "0/1" ] || fail "$KLINE loaded sbx_perf_event_open=$old _type=$new" ;;
	esac
	mkdir -p /root/vproj
	expect "ERR EPERM" "$SBX" run --policy $POL/core.yaml --project /root/vproj -- $SBXT perf-open
	event operation=kernel verdict=deny
}

test_doctor_prints_the_costs_and_the_variant() {
	"$SBX" doctor >/tmp/doctor.out 2>&1 || true
	grep -q "verifier cost on kernel $(uname -r)" /tmp/doctor.out || fail "no cost table: $(head -c 400 /tmp/doctor.out)"
	grep -Eq '^  sbx_file_open +- +[0-9]+ ' /tmp/doctor.out || fail "no sbx_file_open row"
	grep -Eq '^  sbx_perf_event_open(_type)? +perf_event_open/[12] +[0-9]+ ' /tmp/doctor.out ||
		fail "no loaded perf_event_open variant row"
	grep -q "not this kernel's" /tmp/doctor.out || fail "the other variant is not shown as skipped"
	grep -q '^ok    every program verifies within the budget' /tmp/doctor.out || fail "no budget verdict"
}
