# Issue 30's acceptance: `make demo`'s steps give on the landlock tier the
# refusals they give on the full tier. tools/demo --here in this guest, as
# root, against the suite's daemon: the project builds and runs (names in
# the project root beside .sandbox), the SSH key, ~/.bashrc, su and the
# metadata address are refused, the AWS credentials are asked, approved
# once through the queue and read, and the audit chain verifies. Landlock
# refuses the read and the exec with EACCES where the full tier says
# EPERM; the demo accepts either on this tier only.

timeout_test_make_demo_steps_refuse_as_on_the_full_tier=400

test_make_demo_steps_refuse_as_on_the_full_tier() {
	[ "$KLINE" = 6.12 ] || skip "run on 6.12 (Landlock ABI 6), the acceptance's kernel; 6.1's fallback suite tests each of its refusals on its own (t_fallback.sh)"
	"$ROOT/tools/demo" --here >/tmp/nb-demo.log 2>&1 || true
	grep -q "NOT AS SHOWN" /tmp/nb-demo.log &&
		fail "$(grep "NOT AS SHOWN" /tmp/nb-demo.log | sed 's/\x1b\[[0-9;]*m//g' | tr '\n' ';')"
	grep -q "every step did what it shows" /tmp/nb-demo.log ||
		fail "the demo did not finish: $(tail -n 5 /tmp/nb-demo.log | tr '\n' ';')"
	grep -q "^tier: landlock" /tmp/nb-demo.log 2>/dev/null || grep -q "tier: landlock" /tmp/nb-demo.log ||
		fail "the demo did not run on the landlock tier"
}
