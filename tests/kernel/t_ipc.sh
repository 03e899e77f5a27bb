# Accomplices without sockets (issue 28): a process outside the session
# reached through a FIFO, a POSIX or SysV message queue, a semaphore, a
# shared memory segment or a kernel keyring, and privileges gained on exec.
# The outside end is a real process of the test user; each test judges by
# effect (the outside end received nothing, the marker never leaks) and
# by the event, and shows that the session's own objects still work.

AD=$ROOT/policy/shipped/agent-default.yaml
IPCP=$POL/ipc.yaml
ipc_user() { in_session $AD "$@"; }

R_IPC=$((0xffff0013))
R_KEY=$((0xffff0014))
R_PRIV=$((0xffff0015))

# ---- SysV IPC ----------------------------------------------------------------

# ids of a message queue, a shm segment holding MARKER and a semaphore set
# made outside under KEY: `sysv_outside KEY MARKER` sets Q M S
sysv_outside() {
	local ids
	ids=$(as_user $SBXT sysv make "$1" "$2") || fail "sysv make: $ids"
	read -r Q M S <<<"$ids"
}

test_sysv_message_queue_outside_is_refused() {
	sysv_outside 0x5b500001 IPC-MARKER-Q
	# msgget of the existing key, then msgsnd, msgrcv and msgctl by id
	expect "ERR EACCES" ipc_user $SBXT sysv get msg 0x5b500001
	expect "ERR EACCES" ipc_user $SBXT sysv send $Q leak
	expect "ERR EACCES" ipc_user $SBXT sysv stat msg $Q
	expect "ERR EPERM" ipc_user $SBXT sysv rm msg $Q
	# the receiver outside got nothing, and the queue is still there
	expect "ERR ENOMSG" as_user $SBXT sysv recv $Q
	# what the outside sends is not received inside either
	expect "OK" as_user $SBXT sysv send $Q IPC-MARKER-Q
	expect "ERR EACCES" ipc_user $SBXT sysv recv $Q
	expect "GOT IPC-MARKER-Q" as_user $SBXT sysv recv $Q
	event operation=ipc verdict=deny rule.id=$R_IPC
	as_user $SBXT sysv rm msg $Q >/dev/null
}

test_sysv_shared_memory_outside_is_refused() {
	sysv_outside 0x5b500002 IPC-MARKER-M
	expect "ERR EACCES" ipc_user $SBXT sysv get shm 0x5b500002
	out=$(ipc_user $SBXT sysv shmread $M 2>&1) || true
	case $out in *IPC-MARKER-M*) fail "the segment leaked: $out" ;; esac
	[ "$out" = "ERR EACCES" ] || fail "shmat -> '$out'"
	expect "ERR EACCES" ipc_user $SBXT sysv stat shm $M
	expect "ERR EPERM" ipc_user $SBXT sysv rm shm $M
	expect "OK" as_user $SBXT sysv stat shm $M
	event operation=ipc verdict=deny rule.id=$R_IPC object="SysV IPC id $M key 0x5b500002"
	as_user $SBXT sysv rm shm $M >/dev/null
}

test_sysv_semaphore_outside_is_refused() {
	sysv_outside 0x5b500003 IPC-MARKER-S
	expect "ERR EACCES" ipc_user $SBXT sysv get sem 0x5b500003
	expect "ERR EACCES" ipc_user $SBXT sysv semop $S
	expect "ERR EACCES" ipc_user $SBXT sysv semval $S
	expect "ERR EPERM" ipc_user $SBXT sysv rm sem $S
	expect "0" as_user $SBXT sysv semval $S
	event operation=ipc verdict=deny rule.id=$R_IPC
	as_user $SBXT sysv rm sem $S >/dev/null
}

# objects a session makes are its own, and no other session's
test_sysv_own_objects_work_and_stay_the_sessions() {
	expect "OK" ipc_user $SBXT sysv own
	ids=$(ipc_user $SBXT sysv make 0x5b500004 IPC-MARKER-O) || fail "make in a session: $ids"
	read -r Q M S <<<"$ids"
	# the session is gone; its objects are not the next session's
	expect "ERR EACCES" ipc_user $SBXT sysv send $Q leak
	expect "ERR EACCES" ipc_user $SBXT sysv shmread $M
	expect "ERR EACCES" ipc_user $SBXT sysv semop $S
	for k in msg:$Q shm:$M sem:$S; do as_user $SBXT sysv rm ${k%%:*} ${k#*:} >/dev/null; done
}

# ---- POSIX message queues ----------------------------------------------------------

# Under agent-default the file rules refuse writes to message queues too
# (the walk sees /NAME on the mqueue file system), so the owner check is
# shown under redteam.yaml, whose files default is allow.
test_posix_message_queue_outside_is_refused() {
	as_user $SBXT mq make /sbx-ipc-q >/dev/null || fail "mq_open outside"
	if [ $TIER = landlock ]; then
		# who made a queue is not recorded there: every one is refused,
		# the session's own too (stricter; docs/FALLBACK.md)
		expect "ERR EPERM" in_session $POL/redteam.yaml $SBXT mq send /sbx-ipc-q leak
		expect "ERR EPERM" ipc_user $SBXT mq recv /sbx-ipc-q
		expect "ERR EAGAIN" as_user $SBXT mq recv /sbx-ipc-q
		event operation=ipc verdict=deny rule.id=$R_IPC object=/sbx-ipc-q
		out=$(in_session $POL/redteam.yaml $SBXT mq own /sbx-ipc-own 2>&1) || true
		[ "$out" = "ERR EPERM" ] || fail "a queue of the session's own: '$out'"
		return 0
	fi
	expect "ERR EPERM" in_session $POL/redteam.yaml $SBXT mq send /sbx-ipc-q leak
	expect "ERR EPERM" in_session $POL/redteam.yaml $SBXT mq recv /sbx-ipc-q
	expect "ERR EPERM" ipc_user $SBXT mq send /sbx-ipc-q leak
	expect "ERR EAGAIN" as_user $SBXT mq recv /sbx-ipc-q
	expect "OK" as_user $SBXT mq send /sbx-ipc-q IPC-MARKER-P
	out=$(ipc_user $SBXT mq recv /sbx-ipc-q 2>&1) || true
	[ "$out" = "ERR EPERM" ] || fail "mq_receive inside -> '$out'"
	expect "GOT IPC-MARKER-P" as_user $SBXT mq recv /sbx-ipc-q
	event operation=ipc verdict=deny rule.id=$R_IPC object=/sbx-ipc-q
	expect "OK" in_session $POL/redteam.yaml $SBXT mq own /sbx-ipc-own
}

# ---- FIFOs -------------------------------------------------------------------------

# a reader outside on a FIFO made outside: `fifo_reader PATH` (it keeps
# what it reads in /tmp/ipc-got)
fifo_reader() {
	rm -f "$1" /tmp/ipc-got
	as_user mkfifo "$1"
	as_user sh -c "cat $1 >/tmp/ipc-got" &
	sleep 0.3
}

test_fifo_made_outside_is_refused() {
	fifo_reader /tmp/ipc.fifo
	expect "ERR EPERM" ipc_user $SBXT write /tmp/ipc.fifo leak
	# the other direction: a writer outside, a reader in the session
	expect "ERR EPERM" ipc_user $SBXT open /tmp/ipc.fifo r
	as_user sh -c 'echo outside >/tmp/ipc.fifo'
	wait
	[ "$(cat /tmp/ipc-got)" = outside ] || fail "the reader outside got: $(cat /tmp/ipc-got)"
	event operation=open_write verdict=deny object=/tmp/ipc.fifo rule.id=$R_IPC
}

test_fifo_named_by_a_connect_rule_is_allowed() {
	fifo_reader /tmp/ipc-allowed.fifo
	expect "OK" in_session $IPCP $SBXT write /tmp/ipc-allowed.fifo allowed
	wait
	[ "$(cat /tmp/ipc-got)" = allowed ] || fail "the reader got: $(cat /tmp/ipc-got)"
}

test_fifo_made_in_session_and_pipes_work() {
	rm -f /tmp/ipc-own.fifo $PROJ/own.fifo
	expect "mine" ipc_user sh -c 'mkfifo /tmp/ipc-own.fifo && { cat /tmp/ipc-own.fifo & } &&
		echo mine >/tmp/ipc-own.fifo; wait'
	# the session's stdio pipe (the caller's, made outside) and a pipe of
	# its own, reopened through /proc/self/fd
	[ "$(as_user sh -c "$SBX run --policy $AD --project $PROJ -- sh -c 'echo piped >/dev/stdout' | cat")" = piped ] ||
		fail "the stdio pipe through /dev/stdout"
	expect "piped" ipc_user sh -c '(echo piped >/dev/stdout) | cat'
	# made in one session, it is the next session's no more
	expect "ERR EPERM" ipc_user $SBXT open /tmp/ipc-own.fifo r
	# on the overlay root too (the project), reopened by a second process
	expect "mine" ipc_user sh -c "mkfifo $PROJ/own.fifo && { cat $PROJ/own.fifo & } &&
		sh -c 'echo mine >$PROJ/own.fifo'; wait"
}

# ---- kernel keyrings ------------------------------------------------------------

# a user key outside that the user may read without possessing it, so
# that the kernel's own permission check lets the session get that far
key_outside() {
	command -v keyctl >/dev/null || skip "keyutils is not installed (make deps)"
	KID=$(as_user keyctl add user sbx-ipc-secret "$1" @u) || fail "keyctl add outside"
	as_user keyctl setperm $KID 0x3f3f0000
	[ "$(as_user keyctl print $KID)" = "$1" ] || fail "the key is not readable outside"
}

test_keys_outside_are_not_readable() {
	key_outside KEY-MARKER-U
	for c in "print $KID" "read $KID" "pipe $KID" "describe $KID" \
		 "search @u user sbx-ipc-secret" "show @u"; do
		out=$(ipc_user keyctl $c 2>&1) && fail "keyctl $c succeeded: $out"
		case $out in *KEY-MARKER-U*|*sbx-ipc-secret*) fail "keyctl $c leaked: $out" ;; esac
	done
	# the session keyring is the session's own: the key is not found there
	out=$(ipc_user keyctl search @s user sbx-ipc-secret 2>&1) && fail "found through @s: $out"
	event operation=key verdict=deny rule.id=$R_KEY object="key $KID"
	as_user keyctl unlink $KID @u >/dev/null
}

# the login's session keyring (pam_keyinit makes one) holds keys too
test_login_session_keyring_is_not_inherited() {
	command -v keyctl >/dev/null || skip "keyutils is not installed (make deps)"
	cat >/tmp/ipc-login.sh <<EOF
id=\$(keyctl add user sbx-login KEY-MARKER-S @s)
keyctl setperm \$id 0x3f3f0000
keyctl print \$id
$SBX run --policy $AD --project $PROJ -- sh -c "keyctl print \$id; keyctl search @s user sbx-login"
EOF
	out=$(as_user keyctl session - sh /tmp/ipc-login.sh 2>&1) || true
	[ "$(printf '%s\n' "$out" | grep -c KEY-MARKER-S)" = 1 ] || fail "login keyring: $out"
}

test_keys_made_in_session_work() {
	command -v keyctl >/dev/null || skip "keyutils is not installed (make deps)"
	expect "KEY-OWN" ipc_user sh -c 'id=$(keyctl add user mine KEY-OWN @s) &&
		keyctl search @s user mine >/dev/null && keyctl print $id'
	# a keyring of its own, and a key in it
	expect "KEY-OWN2" ipc_user sh -c 'r=$(keyctl newring mine @s) &&
		id=$(keyctl add user k KEY-OWN2 $r) && keyctl print $id'
}

# ---- privileges gained on exec -----------------------------------------------------

# copies of programs outside the session that gain privileges on exec
priv_fixture() {
	command -v setcap >/dev/null || skip "setcap is not installed (make deps)"
	echo CAP-MARKER >/root/ipc-secret && chmod 600 /root/ipc-secret
	cp /bin/cat /srv/sbx/open/capcat && setcap cap_dac_read_search+ep /srv/sbx/open/capcat
	cp /usr/bin/id /srv/sbx/open/sgid && chown root:root /srv/sbx/open/sgid &&
		chmod 2755 /srv/sbx/open/sgid
	cp /usr/bin/id /srv/sbx/open/suid && chown root:root /srv/sbx/open/suid &&
		chmod 4755 /srv/sbx/open/suid
	# the copies do gain outside: what the session is refused is real
	[ "$(as_user /srv/sbx/open/capcat /root/ipc-secret)" = CAP-MARKER ] ||
		fail "file capabilities do not work here"
	as_user /srv/sbx/open/sgid | grep -q "egid=0" || fail "setgid does not work here"
	as_user /srv/sbx/open/suid | grep -q "euid=0" || fail "setuid does not work here"
}

test_exec_gaining_privileges_is_refused() {
	priv_fixture
	if [ $TIER = landlock ]; then
		# run sets no_new_privs: the programs run and gain nothing
		out=$(ipc_user /srv/sbx/open/capcat /root/ipc-secret 2>&1) && fail "capcat read it: $out"
		case $out in *CAP-MARKER*) fail "file capabilities leaked: $out" ;; esac
		ipc_user /srv/sbx/open/suid | grep -q "euid=0" && fail "setuid gained root"
		ipc_user /srv/sbx/open/sgid | grep -q "egid=0" && fail "setgid gained root's group"
		return 0
	fi
	out=$(ipc_user /srv/sbx/open/capcat /root/ipc-secret 2>&1) && fail "capcat ran: $out"
	case $out in *CAP-MARKER*) fail "file capabilities leaked: $out" ;; esac
	expect "ERR EPERM" ipc_user $SBXT exec /srv/sbx/open/capcat
	event operation=exec verdict=deny object=/srv/sbx/open/capcat rule.id=$R_PRIV
	expect "ERR EPERM" ipc_user $SBXT exec /srv/sbx/open/sgid
	event operation=exec verdict=deny object=/srv/sbx/open/sgid rule.id=$R_PRIV
	expect "ERR EPERM" ipc_user $SBXT exec /srv/sbx/open/suid
	event operation=exec verdict=deny object=/srv/sbx/open/suid rule.id=$R_PRIV
}

# what gains nothing runs: the caller's own setuid file, a gain that
# no_new_privs takes away, and everything where the policy allows it
test_exec_gaining_nothing_or_allowed_runs() {
	priv_fixture
	cp /usr/bin/id /srv/sbx/open/mysuid && chown $TUSER /srv/sbx/open/mysuid &&
		chmod 4755 /srv/sbx/open/mysuid
	ipc_user /srv/sbx/open/mysuid | grep -q "uid=$TUID" || fail "own setuid file refused"
	ipc_user setpriv --no-new-privs /srv/sbx/open/suid | grep -q "uid=$TUID" ||
		fail "setuid under no_new_privs refused"
	[ $TIER = bpf-lsm ] || skip "sandbox.setuid_exec: allow cannot be honoured on the landlock tier: run sets no_new_privs"
	[ "$(in_session $IPCP /srv/sbx/open/capcat /root/ipc-secret)" = CAP-MARKER ] ||
		fail "file capabilities refused although setuid_exec: allow"
	in_session $IPCP /srv/sbx/open/suid | grep -q "euid=0" || fail "setuid refused although allowed"
	in_session $IPCP /srv/sbx/open/sgid | grep -q "egid=0" || fail "setgid refused although allowed"
}
