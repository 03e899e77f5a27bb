# t_readme.sh - the README's quick start, run as written in the guest: the
# block marked "runnable in the test VM" goes from an install to a
# confined agent and a request a person approves with `bpfsbx watch`.
#
# Every line of the block is matched here, and a line this file does not
# know fails the test, so the README cannot drift from what runs. Three
# lines need what a guest has not, and each is replaced by the nearest
# real thing (printed as the test goes):
#   systemctl enable --now bpfsbx  the installed unit's ExecStart, run
#                                  until the daemon answers (no systemd
#                                  as PID 1 here)
#   bpfsbx run -- claude           bpfsbx run -- an "agent" that reads
#                                  ~/.aws/credentials (asked by
#                                  agent-default) until it is let through
#   bpfsbx watch                   bpfsbx watch in a tmux pane, where the
#                                  test presses o (approve once)

RM_TMS=/tmp/tmux-$TUID/readme
rm_screen() { as_user tmux -S $RM_TMS capture-pane -p -t w; }
rm_screen_has() { rm_screen | grep -q -- "$1"; }
# rm_wait SECS CMD...: as wait_for, for the steps that load or draw
rm_wait() {
	local n=$(($1 * 10)); shift
	for _ in $(seq $n); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}
readme_block() {
	awk '/<!-- runnable in the test VM/ { m = 1; next }
	     m && /^```sh/ { i = 1; next }
	     i && /^```/ { exit }
	     i' "$ROOT/README.md"
}

readme_cleanup() {
	as_user tmux -S $RM_TMS kill-server 2>/dev/null || true
	[ -n "${rm_daemon:-}" ] && kill "$rm_daemon" 2>/dev/null && wait_gone "$rm_daemon"
	[ -n "${rm_agent:-}" ] && kill "$rm_agent" 2>/dev/null
	(cd "$ROOT" && make -s uninstall >/dev/null 2>&1) || true
	rm -rf $THOME/src
	daemon_start
}

# make install, the daemon adopting the pins and two sessions under TCG
timeout_test_readme_quick_start_from_zero_to_an_approved_request=420
test_readme_quick_start_from_zero_to_an_approved_request() {
	# The block is the same on both kernels, and every step's kernel side
	# is tested on both by the other files: it runs once, on Debian 12's
	# own kernel, which is what a reader of the README boots (a minute of
	# CI time saved, shown as a skip on 6.12, not counted as passed)
	[ "$KLINE" = 6.1 ] || skip "the README block runs on 6.1 (Debian 12's kernel) only"
	command -v tmux >/dev/null || skip "tmux is not installed (make deps)"
	local block line cmd proj=$THOME/src/myproject unit exe
	block=$(readme_block)
	[ -n "$block" ] || fail "README.md has no block marked runnable in the test VM"
	daemon_stop	# the README's daemon (the installed one) adopts the pins
	trap readme_cleanup EXIT
	rm -rf $THOME/src /tmp/tmux-$TUID/readme /tmp/readme-*.log
	as_user mkdir -p $proj $THOME/.aws
	as_user sh -c "printf 'aws_secret_access_key = README-SECRET\n' >$THOME/.aws/credentials"
	mkdir -p /tmp/tmux-$TUID && chown $TUSER /tmp/tmux-$TUID && chmod 700 /tmp/tmux-$TUID
	while IFS= read -r line; do
		cmd=$(printf '%s' "${line%%#*}" | sed 's/[[:space:]]*$//')
		[ -n "$cmd" ] || continue
		echo "README (${SECONDS}s): $cmd"
		case "$cmd" in
		"sudo make install")
			(cd "$ROOT" && make install >/tmp/readme-install.log 2>&1) ||
				fail "make install: $(tail -n 5 /tmp/readme-install.log)"
			[ -x /usr/local/bin/bpfsbx ] || fail "make install put no bpfsbx on PATH" ;;
		"sudo bpfsbx doctor")
			bpfsbx doctor >/tmp/readme-doctor.log 2>&1 ||
				fail "doctor: $(grep '^FAIL' /tmp/readme-doctor.log | head -n 5)" ;;
		"sudo systemctl enable --now bpfsbx")
			unit=/usr/local/lib/systemd/system/bpfsbx.service
			exe=$(sed -n 's/^ExecStart=//p' $unit | sed 's/ *\$BPFSBX_DAEMON_ARGS//')
			[ "$exe" = "/usr/local/bin/bpfsbx daemon" ] || fail "the unit runs '$exe'"
			echo "README:   (no systemd here: $exe, as the unit does)"
			$exe >/tmp/readme-daemon.log 2>&1 &
			rm_daemon=$!
			rm_wait 180 bpfsbx status ||
				fail "the unit's daemon: $(tail -n 5 /tmp/readme-daemon.log)" ;;
		"cd ~/src/myproject") ;;	# each step below runs there
		"bpfsbx init --claude --mcp")
			as_user sh -c "cd $proj && bpfsbx init --claude --mcp" >/tmp/readme-init.log 2>&1 ||
				fail "init: $(cat /tmp/readme-init.log)"
			grep -q "extends: agent-default" $proj/.sandbox/policy.yaml || fail "init's policy" ;;
		"bpfsbx run -- claude")
			echo "README:   (the agent: reads ~/.aws/credentials until it is let through)"
			as_user sh -c "cd $proj && exec bpfsbx run -- sh -c '
				for i in \$(seq 300); do
					cat ~/.aws/credentials 2>/dev/null && exit 0
					sleep 0.2
				done; exit 1'" >/tmp/readme-agent.log 2>&1 &
			rm_agent=$! ;;
		"bpfsbx watch")
			echo "README:   (in a tmux pane; the test presses o to approve once)"
			as_user env TERM=xterm tmux -S $RM_TMS new-session -d -s w -x 120 -y 40 \
				"cd $proj && bpfsbx watch" || fail "tmux"
			rm_wait 60 rm_screen_has credentials ||
				fail "watch never showed the agent's request: $(rm_screen)"
			# watch arms its keys after a full draw of the request
			sleep 1
			as_user tmux -S $RM_TMS send-keys -t w o ;;
		*)
			fail "README line not known to tests/kernel/t_readme.sh: '$cmd'" ;;
		esac
	done <<<"$block"
	echo "README (${SECONDS}s): approved; waiting for the agent"
	[ -n "${rm_agent:-}" ] || fail "the README's block never started the agent"
	rm_wait 30 sh -c "! kill -0 $rm_agent" ||
		fail "the agent is still refused after the approval: $(rm_screen | grep -v '^$' | tail -n 12; tail -n 3 /tmp/readme-agent.log)"
	wait "$rm_agent" || fail "the agent was not let through: $(tail -n 5 /tmp/readme-agent.log)"
	rm_agent=
	grep -q README-SECRET /tmp/readme-agent.log || fail "the agent read nothing: $(cat /tmp/readme-agent.log)"
	# before the approval, the same read was refused and filed as a request
	ls $proj/.sandbox/escalations/done/ | grep -q . || fail "no decided request in the queue"
}

flows_61_only
