# The fallback tier (docs/FALLBACK.md), in a guest booted with an LSM list
# without bpf (tests/kernel/boot-lsm-list runs this with run-all --nobpf):
# the daemon runs the cgroup programs only, and `run` confines itself with
# Landlock and the never-list (seccomp) before it becomes CMD. Judged by
# effect, as the full suite is. Landlock refuses a read or exec with EACCES
# where the BPF-LSM hooks say EPERM; writes (the daemon's programs on
# security_file_open and security_path_*), the never-list and the cgroup
# programs say EPERM.

test_status_and_session_state_name_the_tier() {
	"$SBX" status --json >/tmp/fb.status
	[ "$("$SBXT" json-get /tmp/fb.status tier)" = landlock ] || fail "status: $(cat /tmp/fb.status)"
	[ "$("$SBXT" json-get /tmp/fb.status landlock_abi)" = "$(ll_abi)" ] ||
		fail "Landlock ABI $("$SBXT" json-get /tmp/fb.status landlock_abi), want $(ll_abi)"
	rm -f /tmp/fb.up
	in_session $POL/core.yaml sh -c 'echo up >/tmp/fb.up; exec sleep 20' &
	wait_for test -s /tmp/fb.up || fail "the session did not start"
	"$SBX" status --json >/tmp/fb.status
	[ "$("$SBXT" json-get /tmp/fb.status sessions.0.tier)" = landlock ] ||
		fail "the session's tier: $(cat /tmp/fb.status)"
	st=$(ls /run/bpfsbx/sessions/*.json | head -n 1)
	[ "$("$SBXT" json-get "$st" tier)" = landlock ] &&
		[ "$("$SBXT" json-get "$st" landlock_abi)" = "$(ll_abi)" ] || fail "state $st: $(head -c 300 "$st")"
	pkill -P $! 2>/dev/null || true
	kill %1 2>/dev/null || true
}

test_ssh_key_refused_and_unchanged() {
	sum=$(sha256sum <$THOME/.ssh/id_rsa)
	expect "ERR EACCES" in_session $POL/core.yaml $SBXT open $THOME/.ssh/id_rsa
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT open $THOME/.ssh/id_rsa trunc
	out=$(in_session $POL/core.yaml cat $THOME/.ssh/id_rsa 2>&1) && fail "cat read it: $out"
	printf '%s' "$out" | grep -q "Permission denied" || fail "cat: $out"
	[ "$(sha256sum <$THOME/.ssh/id_rsa)" = "$sum" ] || fail "the key changed"
	# Landlock refused; the event names the policy's rule (fexit on
	# security_file_open), not the built-in landlock one
	event operation=open_read object=$THOME/.ssh/id_rsa verdict=deny tier=landlock rule.reason="test: ssh keys"
	event operation=open_write object=$THOME/.ssh/id_rsa verdict=deny tier=landlock rule.reason="test: ssh keys"
	# the same user outside a session: only the session is confined
	expect "OK" as_user $SBXT open $THOME/.ssh/id_rsa
}

# a key's second name, made before the session in the project, where
# statx(2) is refused (an older container runtime's seccomp profile): run
# compiles the policy and makes the Landlock plan itself, and its scan for
# hard links below a denied directory gave up on the error. The daemon's
# programs refuse the read whatever the plan says (EPERM: the daemon
# compiles for them, and a second name makes them decide the session's
# opens); the plan's own part is the unit test
# landlock.a_keys_hard_link_is_refused_where_statx_is_refused
test_a_keys_hard_link_refused_where_statx_is_refused() {
	# a policy of its own: the daemon keeps core.yaml's compiled form,
	# which a second name makes decide opens in the kernel (EPERM) for
	# as long as it is kept, and the file's other tests expect EACCES
	local pol=/tmp/fb-nostatx.yaml
	cp $POL/core.yaml $pol
	ln $THOME/.ssh/id_rsa $PROJ/innocent.txt
	sum=$(sha256sum <$PROJ/innocent.txt)
	plain=$(as_user $SBXT no-statx $SBX run --policy $pol --project $PROJ -- \
		$SBXT open $PROJ/readme.txt 2>&1 | tail -n 1)
	got=$(as_user $SBXT no-statx $SBX run --policy $pol --project $PROJ -- \
		$SBXT open $PROJ/innocent.txt 2>&1 | tail -n 1)
	after=$(sha256sum <$PROJ/innocent.txt)
	# the other tests of this file expect the key to have one name
	rm -f $PROJ/innocent.txt
	[ "$plain" = OK ] || fail "the project's file under no-statx: $plain"
	case $got in
	"ERR EACCES" | "ERR EPERM") ;;
	*) fail "the key's second name under no-statx: $got" ;;
	esac
	[ "$after" = "$sum" ] || fail "the key changed"
}

# a name that a name rule denies, where Landlock grants by place: one made
# after the plan (a desktop's cookie in $XDG_RUNTIME_DIR), and one outside
# the plan's scan roots (project, home, PATH). The compile marks the policy
# (SBX_PF_DECIDE_OPENS) and sbx_ll_file_open decides its reads and execs
# in the kernel: EPERM and the policy's rule, as on the full tier
test_a_name_rule_holds_for_names_made_later_and_outside_the_scan_roots() {
	local AD=$ROOT/policy/shipped/agent-default.yaml r=/run/user/$TUID
	local XAUTH_WHY="X11 and ICE authority cookies let a program read and type into the person's desktop session (keystrokes into any terminal)"
	rm -rf $PROJ/.sandbox /tmp/fb-go /tmp/fb-out /tmp/fb-started /tmp/xauth_early $r/xauth_late
	mkdir -p $r && chown $TUSER:$TUSER $r
	echo COOKIE-EARLY >/tmp/xauth_early
	chown $TUSER:$TUSER /tmp/xauth_early
	in_session $AD sh -c "touch /tmp/fb-started
		while [ ! -e /tmp/fb-go ]; do sleep 0.1; done
		$SBXT open $r/xauth_late >/tmp/fb-out 2>&1; $SBXT open /tmp/xauth_early >>/tmp/fb-out 2>&1
		cat $r/xauth_late /tmp/xauth_early >>/tmp/fb-out 2>&1" &
	wait_for test -e /tmp/fb-started || fail "the session did not start"
	echo COOKIE-LATE >$r/xauth_late
	chown $TUSER:$TUSER $r/xauth_late
	touch /tmp/fb-go
	wait $! || true
	grep -q COOKIE /tmp/fb-out && fail "a cookie was read: $(cat /tmp/fb-out)"
	[ "$(grep -c '^ERR EPERM$' /tmp/fb-out)" = 2 ] || fail "not refused with EPERM: $(cat /tmp/fb-out)"
	event operation=open_read object=$r/xauth_late verdict=deny tier=landlock rule.reason="$XAUTH_WHY"
	event operation=open_read object=/tmp/xauth_early verdict=deny tier=landlock rule.reason="$XAUTH_WHY"
	# the person's own reads are not touched
	expect "OK" as_user $SBXT open $r/xauth_late
	rm -f /tmp/xauth_early $r/xauth_late
}

# audit-only records every access on this tier too: Landlock tells no one
# what it allows, so the compile marks a policy that audits reads or execs
# (SBX_PF_DECIDE_OPENS) and sbx_ll_file_open records them
test_audit_only_records_reads_and_execs() {
	local AO=$ROOT/policy/shipped/audit-only.yaml
	rm -rf $PROJ/.sandbox
	expect "OK" in_session $AO $SBXT open $PROJ/readme.txt
	in_session $AO /usr/bin/true || fail "exec under audit-only"
	event operation=open_read object=$PROJ/readme.txt verdict=audit tier=landlock
	event operation=exec object=/usr/bin/true verdict=audit tier=landlock
}

# a name made since the session began, next to a denied one: Landlock
# grants by place, so it is refused though the policy allows it, and the
# event says which rule did (docs/FALLBACK.md, "Fail closed")
test_a_late_name_beside_a_denied_one_refused_with_the_landlock_rule() {
	rm -f /srv/sbx/late.txt /tmp/fb-go /tmp/fb-late /tmp/fb-started
	in_session $POL/core.yaml sh -c "touch /tmp/fb-started
		while [ ! -e /tmp/fb-go ]; do sleep 0.1; done
		$SBXT open /srv/sbx/late.txt >/tmp/fb-late 2>&1" &
	wait_for test -e /tmp/fb-started || fail "the session did not start"
	echo late >/srv/sbx/late.txt
	chmod 644 /srv/sbx/late.txt
	touch /tmp/fb-go
	wait $! || true
	[ "$(tail -n 1 /tmp/fb-late)" = "ERR EACCES" ] || fail "the late name: $(cat /tmp/fb-late)"
	event operation=open_read object=/srv/sbx/late.txt verdict=deny tier=landlock rule.id=$((0xffff0000 + 25))
	expect "OK" as_user $SBXT open /srv/sbx/late.txt
	rm -f /srv/sbx/late.txt
}

test_policy_file_write_refused() {
	mkdir -p $PROJ/.sandbox
	cp $POL/core.yaml $PROJ/.sandbox/policy.yaml
	chown -R $TUSER:$TUSER $PROJ/.sandbox
	sum=$(sha256sum <$PROJ/.sandbox/policy.yaml)
	expect "ERR EPERM" in_session $PROJ/.sandbox/policy.yaml $SBXT open $PROJ/.sandbox/policy.yaml a
	expect "ERR EPERM" in_session $PROJ/.sandbox/policy.yaml $SBXT open $PROJ/.sandbox/policy.yaml trunc
	expect "ERR EPERM" in_session $PROJ/.sandbox/policy.yaml $SBXT open $PROJ/.sandbox/new.yaml creat
	[ "$(sha256sum <$PROJ/.sandbox/policy.yaml)" = "$sum" ] || fail "the policy changed"
	[ ! -e $PROJ/.sandbox/new.yaml ] || fail "a file was made in .sandbox"
	event operation=open_write object=$PROJ/.sandbox/policy.yaml verdict=deny tier=landlock rule.id=$((0xffff0000 + 1))
	event operation=create object=$PROJ/.sandbox/new.yaml verdict=deny tier=landlock
}

# The project root beside .sandbox (issue 30): run's plan lets Landlock
# grant the writes the root's own verdict allows, so a build can make,
# rename and remove names there; the daemon's programs on security_path_*
# keep .sandbox and the policy files: moved away, replaced, made anew or
# linked into, each refused with EPERM and an event, and nothing changes.
test_project_root_takes_new_names_and_keeps_sandbox() {
	mkdir -p $PROJ/.sandbox
	cp $POL/core.yaml $PROJ/.sandbox/policy.yaml
	chown -R $TUSER:$TUSER $PROJ
	sum=$(sha256sum <$PROJ/.sandbox/policy.yaml)
	P=$PROJ/.sandbox/policy.yaml
	in_session $P sh -c "cd $PROJ && printf 'int main(void){return 0;}' >hello.c &&
		cp /bin/true hello && ./hello && mkdir build && mv hello build/hello &&
		ln -s build/hello hello.link && rm hello.link && rm -r build &&
		chmod 600 hello.c && mv hello.c main.c" >/tmp/fb-root.log 2>&1 ||
		fail "the build's names in the project root: $(cat /tmp/fb-root.log)"
	[ -f $PROJ/main.c ] && [ ! -e $PROJ/build ] || fail "the writes did not land"
	expect "ERR EPERM" in_session $P $SBXT rename $PROJ/.sandbox $PROJ/sandbox.old
	expect "ERR EPERM" in_session $P $SBXT rename $PROJ/main.c $PROJ/.sandbox/policy.yaml
	expect "ERR EPERM" in_session $P $SBXT link $PROJ/main.c $PROJ/.sandbox/policy2.yaml
	expect "ERR EPERM" in_session $P $SBXT unlink $PROJ/.sandbox/policy.yaml
	expect "ERR EPERM" in_session $P $SBXT chmod $PROJ/.sandbox/policy.yaml
	expect "ERR EPERM" in_session $P $SBXT symlink /tmp/x $PROJ/.sandbox/evil
	[ -d $PROJ/.sandbox ] && [ ! -e $PROJ/sandbox.old ] && [ ! -e $PROJ/.sandbox/policy2.yaml ] &&
		[ ! -L $PROJ/.sandbox/evil ] || fail ".sandbox changed: $(ls -la $PROJ/.sandbox)"
	[ "$(sha256sum <$P)" = "$sum" ] || fail "the policy changed"
	[ "$(stat -c %a $P)" = 644 ] || fail "the policy's mode changed: $(stat -c %a $P)"
	event operation=rename_from object=$PROJ/.sandbox verdict=deny tier=landlock
	event operation=unlink object=$PROJ/.sandbox/policy.yaml verdict=deny tier=landlock
	# a forged one, made in the session, cannot take its place
	expect "OK" in_session $P sh -c "mkdir $PROJ/forged && cp $POL/core.yaml $PROJ/forged/ && rm -rf $PROJ/forged/core.yaml && $SBXT open $PROJ/forged/policy.yaml creat"
	expect "ERR EPERM" in_session $P $SBXT rename $PROJ/forged $PROJ/.sandbox
	expect "ERR EPERM" in_session $P $SBXT rename $PROJ/forged/policy.yaml $PROJ/.sandbox/policy.yaml
	[ "$(sha256sum <$P)" = "$sum" ] && [ -d $PROJ/forged ] || fail "the forged .sandbox took its place"
}

# What Landlock does not see, or sees only from a later ABI: chmod, chown
# and truncate(2) of a write-denied file, and a hard link that would give
# it a second name, all by the programs on security_path_*, on ABI 2 too.
test_write_denied_file_keeps_its_mode_size_and_names() {
	K=$THOME/.ssh/id_rsa
	chmod 640 $K
	sum=$(sha256sum <$K)
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT chmod $K
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT chown $K
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT truncate $K
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT link $K $PROJ/key
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT rename $K $PROJ/key
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT unlink $K
	[ "$(stat -c %a $K)" = 640 ] && [ "$(sha256sum <$K)" = "$sum" ] && [ ! -e $PROJ/key ] ||
		fail "the key changed: $(stat -c '%a %s' $K)"
	event operation=chmod object=$K verdict=deny tier=landlock rule.reason="test: ssh keys"
	event operation=truncate object=$K verdict=deny tier=landlock
	event operation=link_from object=$K verdict=deny tier=landlock
	# the same user outside a session may
	expect "OK" as_user $SBXT chmod $K
}

test_project_files_readable_and_writable() {
	mkdir -p $PROJ/src
	chown $TUSER:$TUSER $PROJ/src
	expect "OK" in_session $POL/core.yaml $SBXT open $PROJ/readme.txt
	expect "OK" in_session $POL/core.yaml $SBXT open $PROJ/readme.txt a
	expect "OK" in_session $POL/core.yaml sh -c "echo more >>$PROJ/readme.txt && $SBXT open $PROJ/src/new.c creat"
	grep -q more $PROJ/readme.txt && [ -e $PROJ/src/new.c ] || fail "the writes did not land"
}

test_exec_denied_by_the_policy() {
	expect "ERR EACCES" in_session $POL/core.yaml $SBXT exec /opt/sbxbin/forbidden
	event operation=exec object=/opt/sbxbin/forbidden verdict=deny tier=landlock
	in_session $POL/core.yaml /opt/sbxbin/allowed || fail "the allowed binary did not run"
}

test_denied_destination_refused_with_event() {
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT connect 4 10.66.1.1 80
	event operation=connect object=10.66.1.1:80 verdict=deny tier=landlock
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT connect 6 fd66::1 80
	event operation=connect "object=[fd66::1]:80" verdict=deny
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT connect 6 ::ffff:10.66.1.1 80
	# outside the session the same connect fails only for want of a route
	expect "ERR ENETUNREACH" as_user $SBXT connect 4 10.66.1.1 80
	# an allowed destination is reached
	$SBXT listen 4 127.0.0.1 7000 1 >/tmp/fb7000 2>&1 &
	wait_for grep -q LISTENING /tmp/fb7000 || fail "server did not start"
	expect "OK" in_session $POL/core.yaml $SBXT connect 4 127.0.0.1 7000
}

test_never_list_refused_in_a_session() {
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT bpf
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT unshare-user
	out=$(in_session $POL/core.yaml unshare -U true 2>&1) && fail "unshare -U ran: $out"
	# root outside a session may: the refusal is the session's
	expect "OK" $SBXT bpf
}

test_policy_that_requires_bpf_lsm_is_refused() {
	{ cat $POL/core.yaml; printf 'sandbox:\n  require: bpf-lsm\n'; } >/tmp/fb-require.yaml
	chmod 644 /tmp/fb-require.yaml
	rm -f /tmp/fb.ran
	out=$(in_session /tmp/fb-require.yaml sh -c 'echo ran >/tmp/fb.ran' 2>&1) && fail "run went on: $out"
	[ ! -e /tmp/fb.ran ] || fail "CMD ran"
	printf '%s' "$out" | grep -q "requires the bpf-lsm tier (sandbox.require)" || fail "run said: $out"
}

test_first_line_on_a_terminal_names_the_tier() {
	command -v script >/dev/null || skip "script(1) is not installed in the guest"
	out=$(as_user script -q -e -c "$SBX run --policy $POL/core.yaml --project $PROJ -- true" /dev/null 2>&1) ||
		fail "run: $out"
	printf '%s' "$out" | head -n 1 | grep -q "tier landlock (Landlock ABI $(ll_abi)" || fail "first line: $out"
}

# doctor's row for a protection: "enforced" or "NOT enforced"
fb_row() {
	local line
	line=$("$SBX" doctor 2>&1 | grep -F -- "$1" | head -n 1)
	line=${line%%"$1"*}
	line=${line#"${line%%[! ]*}"}
	printf '%s' "${line%"${line##*[! ]}"}"
}

# Landlock's scopes (ABI 6): an abstract socket bound outside the session
# is unreachable from it, one bound inside is not; on ABI 2 the daemon's
# programs on security_unix_* refuse it by the policy's rules, with an event
test_abstract_socket_outside_refused_by_scope() {
	rm -f /tmp/fb-ul
	as_user $SBXT unix-listen @sbx-fb-outside >/tmp/fb-ul 2>&1 &
	wait_for grep -q LISTENING /tmp/fb-ul || fail "listener did not start: $(cat /tmp/fb-ul)"
	row=$(fb_row "abstract unix sockets bound outside the session")
	if [ "$(ll_abi)" -ge 6 ]; then
		[ "$row" = enforced ] || fail "doctor's row: '$row'"
		expect "ERR EPERM" in_session $POL/core.yaml $SBXT unix-connect stream @sbx-fb-outside
		! grep -q ACCEPTED /tmp/fb-ul || fail "the listener outside accepted a session's connect"
		# inside the session's own domain the name is reachable
		expect "OK" in_session $POL/core.yaml sh -c \
			"$SBXT unix-listen @sbx-fb-inside >/tmp/fb-ui & sleep 0.5; $SBXT unix-connect stream @sbx-fb-inside"
		# the same user outside a session: only the session is scoped
		expect "OK" as_user $SBXT unix-connect stream @sbx-fb-outside
		wait_for grep -q ACCEPTED /tmp/fb-ul || fail "the listener outside never accepted"
	else
		[ "$row" = enforced ] || fail "doctor's row at ABI $(ll_abi): '$row'"
		# core.yaml allows every file, so every socket: agent-default does not
		expect "OK" in_session $POL/core.yaml $SBXT unix-connect stream @sbx-fb-outside
		wait_for grep -q ACCEPTED /tmp/fb-ul || fail "the listener outside never accepted"
		as_user $SBXT unix-listen @sbx-fb-outside2 >/tmp/fb-ul 2>&1 &
		wait_for grep -q LISTENING /tmp/fb-ul || fail "listener did not start: $(cat /tmp/fb-ul)"
		expect "ERR EPERM" in_session $ROOT/policy/shipped/agent-default.yaml \
			$SBXT unix-connect stream @sbx-fb-outside2
		event operation=unix_connect object=@sbx-fb-outside2 verdict=deny tier=landlock
		! grep -q ACCEPTED /tmp/fb-ul || fail "the listener outside accepted a session's connect"
	fi
}

# the signal scope (ABI 6): a process of the same user outside the
# session cannot be signalled from it; the session's own can
test_signal_to_outside_process_refused() {
	rm -f /tmp/fb-victim
	# the user's own process: $! of a backgrounded function is a root shell
	as_user sh -c 'echo $$ >/tmp/fb-victim; exec sleep 60' &
	wait_for test -s /tmp/fb-victim || fail "the process outside did not start"
	victim=$(cat /tmp/fb-victim)
	# the same user outside a session may: the test can fail
	expect "OK" as_user $SBXT kill $victim 0
	# on every ABI: the program on security_task_kill (and from ABI 6
	# Landlock's signal scope behind it)
	row=$(fb_row "signals to processes outside the session")
	[ "$row" = enforced ] || fail "doctor's row at ABI $(ll_abi): '$row'"
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT kill $victim 15
	kill -0 $victim || fail "the process outside was killed"
	event operation=signal verdict=deny tier=landlock
	expect "OK" in_session $POL/core.yaml sh -c "sleep 30 & $SBXT kill \$! 15"
	kill $victim
	wait 2>/dev/null || true
}

# inet sockets the policy does not allow (MPTCP: one an unprivileged
# user can make, unlike raw ones) are refused by cgroup/sock_create with
# the full tier's event; the plain ones are made
test_inet_socket_outside_the_allowlist_refused_with_event() {
	got=$(as_user $SBXT socket 2 1 262 2>&1 | tail -n 1)
	[ "$got" = OK ] || skip "MPTCP sockets cannot be made here even outside a session ($got)"
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT socket 2 1 262	# AF_INET, STREAM, MPTCP
	event operation=socket_create verdict=deny tier=landlock
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT socket 10 1 262
	expect "OK" in_session $POL/core.yaml $SBXT socket 2 1 0
	expect "OK" in_session $POL/core.yaml $SBXT socket 10 2 0
}

# the families cgroup/sock_create never sees (netlink, packet, AF_ALG,
# ...): run's seccomp filter refuses those the policy does not allow, with
# no event; netlink route (ip) stays open
test_other_socket_families_refused_by_seccomp() {
	expect "OK" as_user $SBXT socket 16 3 9	# AF_NETLINK, RAW, NETLINK_AUDIT
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT socket 16 3 9
	expect "OK" in_session $POL/core.yaml $SBXT socket 16 3 0	# NETLINK_ROUTE
	in_session $POL/core.yaml ip -o link show lo >/dev/null || fail "ip link (netlink route) failed in a session"
	[ "$(fb_row "socket families (raw, packet, netlink, ...)")" = enforced ] || fail "doctor's row"
}

# SCM_RIGHTS: a helper outside the session, which the policy lets the
# session reach, hands in a descriptor it opened on a denied file. Landlock
# checks opens only, and this one was made outside the domain: the twin
# on security_file_receive refuses it as the full tier does. (A terminal
# passed in is not decided on this tier: docs/FALLBACK.md.)
test_descriptor_of_a_denied_file_passed_in_is_refused() {
	rm -f /tmp/fb-fdsrv.sock
	$SBXT fd-server /tmp/fb-fdsrv.sock /srv/sbx/denied/file >/tmp/fb-fdsrv.out 2>&1 &
	wait_for grep -q LISTENING /tmp/fb-fdsrv.out || fail "server"
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT recv-fd /tmp/fb-fdsrv.sock
	event operation=file_receive object=/srv/sbx/denied/file verdict=deny tier=landlock
	# an allowed file passes
	rm -f /tmp/fb-fdsrv.sock
	$SBXT fd-server /tmp/fb-fdsrv.sock /srv/sbx/open/file >/tmp/fb-fdsrv.out 2>&1 &
	wait_for grep -q LISTENING /tmp/fb-fdsrv.out || fail "server"
	expect "OK" in_session $POL/core.yaml $SBXT recv-fd /tmp/fb-fdsrv.sock
}
