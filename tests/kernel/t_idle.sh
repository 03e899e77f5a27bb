# Links on demand (user/daemon/attach.c): a daemon with no session drops
# its programs' links after --idle-detach seconds and makes them again at
# the next run. While no link existed no hook saw anything, so what the
# hooks learn from everyone (links, ports bound to a device) must be
# learned again before the next session is reported started. Each test
# does its outside step while the links are gone, then checks the effect
# from a new session.

IDLE_S=2
# making and dropping some 90 links takes tens of seconds under TCG on a
# loaded host (each trampoline's unlink waits for RCU tasks)
timeout_test_links_go_after_the_idle_time_and_come_back_at_the_next_run=600
timeout_test_what_was_done_while_detached_is_seen_by_the_next_session=600

# prog ids of bpfsbx's programs with a link in the kernel (bpftool, not
# the pins: a pin removed with its link still attached would hide it)
kernel_links() {
	python3 -I -S -c 'import json, subprocess
def j(*a): return json.loads(subprocess.run(["bpftool", "-j"] + list(a), capture_output=True, text=True, check=True).stdout or "[]")
ours = {p["id"] for p in j("prog", "show") if p.get("name", "").startswith("sbx_")}
print(sum(1 for l in j("link", "show") if l.get("prog_id") in ours))'
}
pinned_progs() { ls /sys/fs/bpf/bpfsbx/progs | wc -l; }
pinned_links() { ls /sys/fs/bpf/bpfsbx/links | wc -l; }

# the suite's daemon keeps its links: this file's drops them after IDLE_S
idle_daemon() {
	[ "$("$SBX" status --json 2>/dev/null | "$SBXT" json-get /dev/stdin idle_detach_s)" = $IDLE_S ] &&
		return 0
	daemon_stop
	DAEMON_ARGS="--idle-detach $IDLE_S" daemon_start
}

# wait until no link of bpfsbx exists in the kernel (the TTL, then the
# thread's unpinning, which waits for RCU tasks)
wait_detached() {
	# the pins first, with ls: kernel_links is a second of python under TCG
	for _ in $(seq 600); do
		[ "$(pinned_links)" = 0 ] && break
		sleep 0.1
	done
	for _ in $(seq 30); do
		[ "$(kernel_links)" = 0 ] && [ "$(pinned_links)" = 0 ] && return 0
		sleep 0.2
	done
	fail "links still attached after the idle time: $(kernel_links) in the kernel, $(pinned_links) pinned"
}

teardown_file() {
	daemon_stop
	daemon_start
}

# a session that runs CMD, writes its last line to /tmp/idle.out and
# waits for /tmp/idle.go: the links are counted while it holds them (once
# it ends, the idle time is shorter than a count takes under TCG)
held_session() {
	rm -f /tmp/idle.out /tmp/idle.go /tmp/idle.tmp
	in_session $POL/core.yaml sh -c "$* >/tmp/idle.tmp 2>&1; tail -n 1 /tmp/idle.tmp >/tmp/idle.out
		while [ ! -e /tmp/idle.go ]; do sleep 0.1; done" &
	HELD=$!
	# making 90 links takes seconds under TCG
	for _ in $(seq 600); do [ -s /tmp/idle.out ] && return 0; sleep 0.1; done
	fail "the session did not start"
}
release_session() { touch /tmp/idle.go; wait $HELD || true; }

cached_policies() { "$SBX" status --json | "$SBXT" json-get /dev/stdin cached_policies; }
# inotify marks the daemon holds: each is a file system whose every open
# goes through fsnotify
daemon_marks() { cat /proc/$(daemon_pid)/fdinfo/* 2>/dev/null | grep -c '^inotify wd:'; }

links_all_there() {
	[ "$(kernel_links)" -ge "$(pinned_progs)" ] ||
		fail "$1: $(kernel_links) links in the kernel for $(pinned_progs) programs"
	[ "$(pinned_links)" = "$(pinned_progs)" ] || fail "$1: $(pinned_links) link pins for $(pinned_progs) programs"
	"$SBX" status | grep -q "pinned under .*, attached" || fail "$1: status: $("$SBX" status | grep kernel:)"
}

test_links_go_after_the_idle_time_and_come_back_at_the_next_run() {
	idle_daemon
	held_session echo up
	links_all_there "a session"
	[ "$(cached_policies)" -ge 1 ] || fail "a session's policy is not cached: $(cached_policies)"
	[ "$(daemon_marks)" -ge 1 ] || fail "no inotify mark on the cached policy's ways"
	release_session
	wait_detached
	"$SBX" status | grep -q "detached" || fail "status: $("$SBX" status | grep kernel:)"
	grep -q "links dropped" $DLOG || fail "no log line for the detach"
	# and with them the compiled policies and their inotify marks (the
	# loop drops them at its next tick)
	wait_for test "$(cached_policies)" = 0 ||
		fail "cached policies kept after the links went: $(cached_policies)"
	[ "$(daemon_marks)" = 0 ] || fail "$(daemon_marks) inotify marks kept after the links went"
	# the next run makes them again before its command runs: enforced
	held_session $SBXT open $THOME/.ssh/id_rsa
	[ "$(cat /tmp/idle.out)" = "ERR EPERM" ] || fail "first session after idle: $(cat /tmp/idle.out)"
	links_all_there "the first session after idle"
	release_session
	# and they go again
	wait_detached
	# detached, with core.yaml compiled and cached by a session that read
	# ~/.ssh: where the next test starts (each window is tens of seconds)
	daemon_pid >/tmp/idle.primed
}

# While the links were gone no hook saw anything: three things done then,
# in one detached window (each window is a detach and an attach of some
# 90 trampolines, tens of seconds under TCG), each checked by its effect
# from the first session after it:
# - ports.bpf.c writes down every port a socket bound to a device takes
#   (the loopback lookup cannot see such a socket); while detached it did
#   not: the ports are read from sock_diag at the attach;
# - the compiled policy is kept for the next session while no link, rename
#   or mount happened (SBX_EPOCH_LINK); the loop drops it a tick after the
#   links go, and the attach moves the epoch besides: a hard link made
#   while no hook counted must still be seen by the next session;
# - a socket made before the first session (no hook ran at its creation)
#   never enters one: run refuses an inherited IP socket (the cgroup
#   programs that decide datagrams are its maker's), whichever kind.
HOLD_SOCKET='import os, socket, sys
fd, t = int(sys.argv[1]), {"tcp": socket.SOCK_STREAM, "udp": socket.SOCK_DGRAM}[sys.argv[2]]
s = socket.socket(socket.AF_INET, t); os.dup2(s.fileno(), fd); s.detach()
os.execv(sys.argv[3], sys.argv[3:])'

test_what_was_done_while_detached_is_seen_by_the_next_session() {
	idle_daemon
	rm -f /srv/sbx/open/idle-hl
	# compiled and cached: ~/.ssh is scanned, id_rsa has one link (the test
	# before left the daemon so; run alone, this one does it)
	if [ "$(cat /tmp/idle.primed 2>/dev/null)" != "$(daemon_pid)" ] || [ "$(kernel_links)" != 0 ]; then
		expect "ERR EPERM" in_session $POL/core.yaml $SBXT open $THOME/.ssh/id_rsa
		wait_detached
	fi
	rm -f /tmp/idle.primed
	# outside listeners: two bound to lo (device first), a plain one
	# (found by the lookup, no mark: outside)
	local port kind pids=()
	for kind in udp:7361 tcp:7362; do
		port=${kind#*:}
		rm -f /tmp/dev$port.stop
		as_user /usr/bin/python3 -I -S -c "$DEV_LISTEN" ${kind%:*} $port device_first >/tmp/dev$port 2>&1 &
		pids+=($!)
		wait_for grep -q LISTENING /tmp/dev$port || fail "listener on $port: $(cat /tmp/dev$port)"
	done
	rm -f /tmp/idle7363.stop
	as_user /usr/bin/python3 -I -S -c 'import os, socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 7363)); s.listen(4); print("LISTENING", flush=True)
while not os.path.exists("/tmp/idle7363.stop"): time.sleep(0.3)' >/tmp/idle7363 2>&1 &
	pids+=($!)
	wait_for grep -q LISTENING /tmp/idle7363 || fail "plain listener: $(cat /tmp/idle7363)"
	# a hard link to the key
	as_user ln $THOME/.ssh/id_rsa /srv/sbx/open/idle-hl
	[ "$(kernel_links)" = 0 ] || fail "the outside steps attached something"
	# and, from here on, sockets made before the first session
	for k in 5:tcp 6:udp; do
		out=$(as_user /usr/bin/python3 -I -S -c "$HOLD_SOCKET" ${k%:*} ${k#*:} "$SBX" run \
			--policy $POL/core.yaml --project $PROJ -- true 2>&1) &&
			fail "run carried an inherited ${k#*:} socket in: $out"
		echo "$out" | grep -q "descriptor ${k%:*} is an IP socket made outside" ||
			fail "run said: $out"
	done
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT open /srv/sbx/open/idle-hl
	event operation=open_read verdict=deny comm=sbxtest
	expect "ERR EPERM" in_session $POL/loopback.yaml $SBXT sendto 4 127.0.0.1 7361
	expect "ERR EPERM" in_session $POL/loopback.yaml $SBXT connect 4 127.0.0.1 7362
	expect "ERR EPERM" in_session $POL/loopback.yaml $SBXT connect 4 127.0.0.1 7363
	event object=127.0.0.1:7361 verdict=ask
	event object=127.0.0.1:7362 verdict=ask
	touch /tmp/dev7361.stop /tmp/dev7362.stop /tmp/idle7363.stop
	wait ${pids[0]} ${pids[1]} ${pids[2]} || true
	grep -q NOTHING /tmp/dev7361 || fail "the outside UDP socket bound to lo received"
	grep -q NOTHING /tmp/dev7362 || fail "the outside TCP socket bound to lo accepted"
	rm -f /srv/sbx/open/idle-hl
}
