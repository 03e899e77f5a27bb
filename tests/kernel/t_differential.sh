# t_differential.sh - `bpfsbx policy explain` (policy/decide.c) against the
# kernel (bpf/walk.bpf.c) on a generated tree and policy: several hundred
# probes, each compared with explain's verdict for its path and access class.
# tests/kernel/gen-differential says what is generated, and why.
#
# explain is asked first, with the tree as the session will compile it. One
# session then runs every probe (a process start costs 0.1-0.5 s under TCG);
# it reports READY, and only then are the files and directories made that
# did not exist when the policy was compiled, which is what rules on missing
# paths are for.

GEN=$ROOT/tests/kernel/gen-differential
# several hundred probes and explains: minutes on a one-CPU TCG guest
timeout_test_explain_agrees_with_the_kernel_on_generated_paths=600

# diff_run SEED: generate and explain, probe in one session, compare
diff_run() {
	local seed=$1 w=/tmp/sbxdiff-$1 pid from n t1 t2 t0=$SECONDS
	python3 -S "$GEN" make --seed "$seed" --work $w --infra "$ROOT" --sbx "$SBX" ||
		fail "seed $seed: generating or explaining failed (see above)"
	t1=$((SECONDS - t0))
	from=$(cat $EVENTS 2>/dev/null | wc -l)
	in_session $w/policy.yaml python3 -I -S "$GEN" probe --work $w \
		<$w/probes.tsv >$w/kernel.out 2>$w/kernel.err &
	pid=$!
	for _ in $(seq 600); do
		grep -qx READY $w/kernel.out && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	grep -qx READY $w/kernel.out || fail "the session did not start: $(head -c 300 $w/kernel.err)"
	python3 -S "$GEN" later --work $w
	touch $w/go
	wait $pid || true
	grep -qx DONE $w/kernel.out || fail "the session did not finish: $(tail -c 300 $w/kernel.err)"
	t2=$((SECONDS - t0 - t1))
	# the daemon writes the session's last events after it has ended
	n=-1
	while [ "$n" != "$(cat $EVENTS 2>/dev/null | wc -l)" ]; do
		n=$(cat $EVENTS 2>/dev/null | wc -l)
		sleep 1
	done
	python3 -S "$GEN" compare --work $w --events $EVENTS --events-from "$from" >$w/compare.out || {
		cat $w/compare.out
		echo "generated and explained in $t1 s, probed in $t2 s"
		# every difference in the one FAIL line that run-all shows
		fail "seed $seed: $(tail -n 1 $w/compare.out): $(sed -n 's/^DIFF //p;
			s/^RULE /rule: /p; s/^BROKEN /broken: /p' $w/compare.out | tr '\n' '|')"
	}
	cat $w/compare.out
	echo "generated and explained in $t1 s, probed in $t2 s"
}

# the trees go; the work directory (policy, probes, results) stays for a look
teardown_file() {
	rm -rf /srv/sbxdiff $THOME/.sbxdiff-aws
}

test_explain_agrees_with_the_kernel_on_generated_paths() {
	diff_run 1
}
