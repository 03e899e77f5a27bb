# Every descendant stays in the session, however it was started.

test_child_and_grandchild() {
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT child-open $THOME/.ssh/id_rsa
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT grandchild-open $THOME/.ssh/id_rsa
}

test_double_forked_setsid_daemon() {
	rm -f /tmp/daemon-result
	in_session $POL/core.yaml $SBXT daemon-open $THOME/.ssh/id_rsa /tmp/daemon-result
	wait_for test -s /tmp/daemon-result || fail "daemonized child wrote no result"
	grep -q "^EPERM ppid=1 " /tmp/daemon-result || fail "daemon escaped: $(cat /tmp/daemon-result)"
}

test_thread() {
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT thread-open $THOME/.ssh/id_rsa
}

test_cannot_leave_cgroup() {
	# as root, so that only bpfsbx (not file permissions) stands in the way
	out=$("$SBX" run --policy $POL/core.yaml --project $PROJ -- sh -c \
		"$SBXT write-file /sys/fs/cgroup/cgroup.procs \$\$; $SBXT mkdir /sys/fs/cgroup/escape; cat /proc/self/cgroup" 2>&1)
	echo "$out" | sed -n 1p | grep -q "ERR EPERM" || fail "write to cgroup.procs: $out"
	echo "$out" | sed -n 2p | grep -q "ERR EPERM" || fail "mkdir in cgroupfs: $out"
	echo "$out" | grep -q "^0::/bpfsbx/" || fail "process left its session: $out"
	[ ! -d /sys/fs/cgroup/escape ] || fail "cgroup created"
	event operation=open_write object=/sys/fs/cgroup/cgroup.procs verdict=deny
}

test_no_nested_session() {
	# a session may not start a new (weaker) session for itself
	out=$(in_session $POL/core.yaml "$SBX" run --policy $ROOT/policy/shipped/audit-only.yaml --project $PROJ -- true 2>&1) && fail "nested run succeeded: $out"
	echo "$out" | grep -q "already in session" || fail "unexpected: $out"
}
