# Learning on the fallback tier: Landlock refuses or allows and records
# nothing of what it allows, so run --learn is refused before anything
# runs, with the reason (the full tier's tests/kernel/t_learn.sh).

test_learning_is_refused_on_the_fallback_tier() {
	rm -f /tmp/learn-ran
	out=$(as_user "$SBX" run --learn --project $PROJ -- touch /tmp/learn-ran 2>&1) &&
		fail "a learning session started on the landlock tier: $out"
	echo "$out" | grep -q "needs the bpf-lsm tier" || fail "run said: $out"
	[ ! -e /tmp/learn-ran ] || fail "the command ran"
	# and an enforcing session still runs
	as_user "$SBX" run --project $PROJ -- touch /tmp/learn-ran 2>/dev/null || fail "run without --learn failed"
	[ -e /tmp/learn-ran ] || fail "the command did not run"
	rm -f /tmp/learn-ran
}
