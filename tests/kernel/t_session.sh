# Sessions: exit status, events, cleanup, non-root callers.

test_exit_status_passes_through() {
	in_session $POL/core.yaml sh -c 'exit 3' && fail "exit 0"
	rc=0; in_session $POL/core.yaml sh -c 'exit 3' || rc=$?
	[ $rc = 3 ] || fail "exit status $rc, want 3"
	rc=0; in_session $POL/core.yaml sh -c 'kill -9 $$' || rc=$?
	[ $rc = 137 ] || fail "exit status $rc, want 137 (128+SIGKILL)"
	rc=0; in_session $POL/core.yaml /nonexistent/cmd 2>/dev/null || rc=$?
	[ $rc = 127 ] || fail "exit status $rc, want 127"
}

# run becomes the command (it executes it in place once the session holds
# it): the pid the caller started is the command's, and a signal sent to it
# reaches the command with nothing in between to pass it on.
test_command_is_the_process_the_caller_started() {
	# the subshell execs (a function's would stay as the parent)
	(exec setpriv --reuid=$TUID --regid=$TUID --init-groups --reset-env "$SBX" run \
		--policy $POL/core.yaml --project $PROJ -- sh -c 'echo $$; exec sleep 30') \
		>/tmp/run.out 2>&1 &
	p=$!
	wait_for test -s /tmp/run.out || fail "the command did not start: $(cat /tmp/run.out)"
	[ "$(cat /tmp/run.out)" = "$p" ] || fail "the command is pid $(cat /tmp/run.out), the caller started $p"
	grep -q "^0::/bpfsbx/" /proc/$p/cgroup || fail "pid $p is not in a session: $(cat /proc/$p/cgroup)"
	kill -TERM $p
	rc=0; wait $p || rc=$?
	[ $rc = 143 ] || fail "exit status $rc after SIGTERM, want 143 (128+SIGTERM)"
}

test_event_has_pid_comm_session() {
	out=$(in_session $POL/core.yaml sh -c "$SBXT cgroup; SBXTEST_PID=1 $SBXT open $THOME/.ssh/id_rsa" || true)
	sess=$(echo "$out" | sed -n 's|^0::/bpfsbx/\([^/]*\).*|\1|p')
	pid=$(echo "$out" | sed -n 's/^PID //p')
	[ -n "$sess" ] && [ -n "$pid" ] || fail "no session or pid in: $out"
	event session=$sess pid=$pid comm=sbxtest operation=open_read object=$THOME/.ssh/id_rsa \
		verdict=deny uid=$TUID rule.reason="test: ssh keys"
	# one event per denial
	n=$(event_count session=$sess pid=$pid)
	[ "$n" = 1 ] || fail "$n events for one denial"
}

test_session_cleaned_up_when_empty() {
	in_session $POL/core.yaml true
	wait_for sh -c "[ \"\$($SBX status | sed -n 's/^sessions: //p')\" = 0 ]" || fail "session not removed: $($SBX status)"
	[ -z "$(session_cgroups)" ] || fail "cgroup left: $(session_cgroups)"
	# and its rules are gone from the kernel
	n=$(bpftool map dump pinned /sys/fs/bpf/bpfsbx/maps/sbx_sessions | grep -c '"key"' || true)
	[ "$n" = 0 ] || fail "$n session entries left in the kernel"
}

# The caller is moved into its cgroup while the daemon opens the queue
# (the move waits for a grace period); a start that fails after the move
# began puts the caller back and never runs CMD, and leaves nothing
# behind: no cgroup, no entry. A .sandbox owned by another user fails the
# queue's open, which runs beside the move.
test_a_start_that_fails_after_the_move_leaves_nothing_and_runs_nothing() {
	local p=/tmp/sbx-failproj
	rm -rf $p /tmp/failed-start-ran
	mkdir -p $p/.sandbox
	chown $TUSER:$TUSER $p
	chown 65534:65534 $p/.sandbox
	out=$(as_user "$SBX" run --policy $POL/core.yaml --project $p -- \
		sh -c 'touch /tmp/failed-start-ran' 2>&1) && fail "run started: $out"
	echo "$out" | grep -q "owned by uid 65534" || fail "run said: $out"
	[ ! -e /tmp/failed-start-ran ] || fail "CMD ran although the start failed"
	wait_for sh -c "[ \"\$($SBX status | sed -n 's/^sessions: //p')\" = 0 ]" || fail "a session is left: $($SBX status)"
	[ -z "$(session_cgroups)" ] || fail "cgroup left: $(session_cgroups)"
	n=$(bpftool map dump pinned /sys/fs/bpf/bpfsbx/maps/sbx_sessions | grep -c '"key"' || true)
	[ "$n" = 0 ] || fail "$n session entries left in the kernel"
	# the daemon starts the next one
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT open $THOME/.ssh/id_rsa
	rm -rf $p
}

test_session_lives_while_background_process_does() {
	in_session $POL/core.yaml sh -c "(sleep 2; $SBXT open $THOME/.ssh/id_rsa >/tmp/bg-result) >/dev/null 2>&1 &"
	[ "$($SBX status | sed -n 's/^sessions: //p')" = 1 ] || fail "session ended early"
	wait_for test -s /tmp/bg-result || fail "background process wrote nothing"
	grep -q "$FILE_DENIED" /tmp/bg-result || fail "background process escaped: $(cat /tmp/bg-result)"
	wait_for sh -c "[ \"\$($SBX status | sed -n 's/^sessions: //p')\" = 0 ]" || fail "session not removed"
}

test_sessions_are_independent() {
	# two sessions with different policies at once
	in_session $POL/core.yaml sh -c "sleep 1; $SBXT open $THOME/.ssh/id_rsa" >/tmp/s1 &
	b1=$!
	in_session $ROOT/policy/shipped/audit-only.yaml sh -c "sleep 1; $SBXT open $THOME/.ssh/id_rsa" >/tmp/s2 &
	b2=$!
	wait $b1 || true
	wait $b2 || true
	grep -q "$FILE_DENIED" /tmp/s1 || fail "core session: $(cat /tmp/s1)"
	grep -q "^OK" /tmp/s2 || fail "audit-only session: $(cat /tmp/s2)"
}

test_outside_sessions_unaffected() {
	expect "OK" as_user $SBXT open $THOME/.ssh/id_rsa
	expect "OK" $SBXT open /srv/sbx/denied/file
	/opt/sbxbin/forbidden || fail "exec outside failed"
	expect "ERR ENETUNREACH" $SBXT connect 4 10.66.1.1 80
	expect "OK" $SBXT open /sys/fs/cgroup/cgroup.procs r
}

# Sessions of one user with one unchanged policy share its compiled form
# in the kernel; one ending (or reloading) must not take the rules away
# from the others.
test_shared_policy_outlives_one_session() {
	stepper $POL/core.yaml $THOME/.ssh/id_rsa 2
	[ "$(tried 1)" = "$FILE_DENIED" ] || fail "A: $(tried 1)"
	ids=$("$SBX" status --json | grep -o '"policy_id": [0-9]*' | sort -u | wc -l)
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT open $THOME/.ssh/id_rsa	# B starts and ends
	ids2=$("$SBX" status --json | grep -o '"policy_id": [0-9]*' | sort -u | wc -l)
	touch /tmp/go.2
	[ "$(tried 2)" = "$FILE_DENIED" ] || fail "A lost its rules when B ended: $(tried 2)"
	wait $STEPPER || true
}

test_changed_policy_file_is_compiled_again() {
	printf 'version: 1\nnetwork: {default: allow}\nfiles:\n  default: allow\n  rules:\n    - {path: /nonexistent, verdict: deny, reason: r}\n' >/tmp/mutable.yaml
	chmod 644 /tmp/mutable.yaml
	expect "OK" in_session /tmp/mutable.yaml $SBXT open $PROJ/readme.txt
	cat >>/tmp/mutable.yaml <<YAML
    - path: $PROJ/readme.txt
      access: read
      verdict: deny
      reason: "test: edited"
YAML
	# the edited file must not be served from the cache of compiled policies
	expect "$FILE_DENIED" in_session /tmp/mutable.yaml $SBXT open $PROJ/readme.txt
}

# Tasks outside <cgroup2>/bpfsbx skip the session lookup (sbx_config
# .sessions_root). If that directory is removed and made again, its id
# changes: a session below the new one must still be confined, never
# waved through by a stale id.
test_recreated_session_root_still_confines() {
	[ "$(session_count)" = 0 ] || fail "sessions left from earlier tests"
	old=$(stat -c %i /sys/fs/cgroup/bpfsbx)
	rmdir /sys/fs/cgroup/bpfsbx || fail "cannot remove the empty session root"
	mkdir /sys/fs/cgroup/bpfsbx	# someone else makes it again
	[ "$(stat -c %i /sys/fs/cgroup/bpfsbx)" != "$old" ] || skip "cgroupfs reused the inode number"
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT open $THOME/.ssh/id_rsa
	expect "OK" as_user $SBXT open $THOME/.ssh/id_rsa
}

# A compiled policy is reused by later sessions; a hard link made outside
# any session in between (to a key below a denied directory, from a
# directory the policy allows) must still be denied in the next one: the
# kernel's link count makes the daemon look at the directories again.
test_hard_link_made_between_sessions_is_covered() {
	# a copy of core.yaml: its compiled form, cached with the link's inode
	# entry, is not the one the other tests' sessions share
	local hp=/tmp/hl-core.yaml
	cp $POL/core.yaml $hp && chmod 644 $hp
	rm -f /srv/sbx/open/hl-key
	expect "$FILE_DENIED" in_session $hp $SBXT open $THOME/.ssh/id_rsa
	expect "$FILE_DENIED" in_session $hp $SBXT open $THOME/.ssh/id_rsa	# from the cache
	ln $THOME/.ssh/id_rsa /srv/sbx/open/hl-key || skip "cannot hard-link across these directories"
	# (EPERM on both tiers: on the landlock tier, whose plan grants the
	# link's directory by place, the compile's inode entry for the linked
	# key makes the daemon's program decide the session's reads)
	expect "ERR EPERM" in_session $hp $SBXT open /srv/sbx/open/hl-key
	rm -f /srv/sbx/open/hl-key
}
