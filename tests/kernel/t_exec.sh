# Exec: decided on the file the kernel runs, not on the name asked for.

test_exec_denied_binary() {
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT exec /opt/sbxbin/forbidden
	event operation=exec object=/opt/sbxbin/forbidden verdict=deny
}

test_exec_allowed_binary_runs() {
	in_session $POL/core.yaml $SBXT exec /opt/sbxbin/allowed || fail "allowed binary did not run"
}

test_exec_through_symlink() {
	ln -sf /opt/sbxbin/forbidden /srv/sbx/open/via-symlink
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT exec /srv/sbx/open/via-symlink
}

test_exec_through_hard_link() {
	# made before the session: the inode is the same, whatever its name
	rm -f /opt/sbxbin/hardlink
	ln /opt/sbxbin/forbidden /opt/sbxbin/hardlink
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT exec /opt/sbxbin/hardlink
}

test_exec_through_proc_fd() {
	expect "$FILE_DENIED" in_session $POL/core.yaml sh -c "exec 3</opt/sbxbin/forbidden; $SBXT exec /proc/self/fd/3"
}

test_shell_gets_eperm() {
	out=$(in_session $POL/core.yaml sh -c '/opt/sbxbin/forbidden; echo "rc=$?"' 2>&1) || true
	echo "$out" | grep -q "rc=126" || fail "expected exit 126 from the shell: $out"
	echo "$out" | grep -qi "permission denied\|not permitted" || fail "no error message: $out"
}
