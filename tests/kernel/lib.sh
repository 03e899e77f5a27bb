# tests/kernel/lib.sh - helpers for the kernel suite (sourced by run-all,
# inside the VM, as root). Each test is a function test_NAME in a t_*.sh
# file; it runs in a subshell with `set -e`, and passes when it returns 0.
# `skip REASON` makes it count as skipped. Nothing here mocks the kernel:
# every check is a real syscall by a real process in a real session.

ROOT=${ROOT:?}
SBX=$ROOT/build/bpfsbx
SBXT=$ROOT/build/sbxtest
POL=$ROOT/tests/kernel/policies
EVENTS=/tmp/sbx-events.jsonl
DLOG=/tmp/sbx-daemon.log
TUSER=sbxuser
TUID=1500
THOME=/home/$TUSER
PROJ=$THOME/proj

# the tier in force in this guest (run-all refuses a guest of the other
# kind), and Landlock's ABI on the suite's two kernels: a test shared by
# both suites says where the fallback tier answers differently
if grep -qw bpf /sys/kernel/security/lsm 2>/dev/null; then TIER=bpf-lsm; else TIER=landlock; fi
ll_abi() { case ${KLINE:-} in 6.1) echo 2 ;; 6.12) echo 6 ;; *) echo 0 ;; esac; }
# what a read or exec the policy denies gives: Landlock says EACCES where
# BPF-LSM says EPERM (a write and an ask are EPERM on both: the kernel's
# programs decide them)
if [ $TIER = bpf-lsm ]; then FILE_DENIED="ERR EPERM"; else FILE_DENIED="ERR EACCES"; fi

skip() { echo "SKIP: $*"; exit 77; }

# ext4_scratch MNT IMG: a fresh 32 MB ext4 from the image file IMG, loop-
# mounted on MNT (skips where the guest kernel has no ext4)
ext4_scratch() {
	[ -e /sys/module/loop ] || modprobe loop 2>/dev/null || true
	grep -qw ext4 /proc/filesystems || skip "no ext4 in this guest kernel"
	umount "$1" 2>/dev/null || true
	mkdir -p "$1"
	truncate -s 32M "$2"
	mkfs.ext4 -q -F "$2" || fail "mkfs.ext4"
	mount -o loop "$2" "$1" || fail "no loop mount of ext4"
}

# on_61_only WHY NAME...: on 6.1 only, the file's tests not named are
# skipped, saying WHY (6.12's guests run them all)
on_61_only() {
	local t k keep why=$1
	shift
	[ "${KLINE:-}" = 6.1 ] || return 0
	for t in $(declare -F | awk '$3 ~ /^test_/ {print $3}'); do
		keep=0
		for k in "$@"; do [ "test_$k" = "$t" ] && keep=1; done
		[ $keep = 1 ] || eval "$t() { skip $(printf %q "$why"); }"
	done
}

# nobpf_61_only NAME...: in a fallback-suite file (tests/kernel/nobpf) that
# sources a full-tier file: 6.1's fallback guest runs the file's tests of
# each hook family named here, 6.12's runs them all: the same programs on
# the same security_* functions, and a CI run within its time budget.
nobpf_61_only() {
	on_61_only 'run by the 6.12 fallback guest; on 6.1 this file runs one test per hook family' "$@"
}

# flows_61_only NAME...: at the end of a file whose tests are mostly the
# daemon's and the person's flows (the queue and its approvals, the
# dashboard's API, the exports, the README, the machine floor's merging):
# on 6.1, both tiers, only the tests named run, those whose kernel step
# is their own (a refusal, a grant of each kind, a hidden listener). The
# flows are the same user-space code on every kernel, and their kernel
# steps are the programs that 6.1's other files test; 6.12's guests run
# every test, and the CI run stays within its time budget.
flows_61_only() {
	on_61_only 'a flow of the daemon and the person, the same on every kernel: run by the 6.12 guests; on 6.1 this file runs its tests with a kernel step of their own' "$@"
}
# also on stderr: a fail inside $(...) would otherwise be swallowed with
# its message, and set -e end the test without a word
fail() { echo "FAIL: $*"; echo "FAIL: $*" >&2; exit 1; }

# run as the unprivileged test user, with a clean environment (HOME,
# USER, LOGNAME and SHELL of the user's entry, PATH
# /usr/local/bin:/bin:/usr/bin), as setpriv --init-groups --reset-env
# would: sbxtest as-user does it without setpriv's NSS lookups, a tenth
# of a second per call under TCG, and in one exec where env -i would be a
# second
as_user() {
	"$SBXT" as-user $TUID $TUSER $THOME /bin/bash "$@"
}

# in_session POLICY CMD...: a new session for the test user
in_session() {
	local pol=$1; shift
	as_user "$SBX" run --policy "$pol" --project "$PROJ" -- "$@"
}

# in_root_session POLICY CMD...: root in a session (project /root/rtproj)
# with a home of its own: the guest's /root is the host's, too large for
# the fallback tier's name scan, which refuses it (fail closed)
ROOT_HOME=/tmp/sbx-roothome
in_root_session() {
	local pol=$1; shift
	mkdir -p /root/rtproj $ROOT_HOME
	HOME=$ROOT_HOME "$SBX" run --policy "$pol" --project /root/rtproj -- "$@"
}

# expect WANT CMD...: CMD's last stdout line must be WANT
expect() {
	local want=$1 got; shift
	got=$("$@" 2>/tmp/expect.err) || true
	got=${got##*$'\n'}
	[ "$got" = "$want" ] || fail "$* -> '$got', expected '$want' ($(head -c 300 /tmp/expect.err))"
}

# each_in_session POLICY CMD... -- ITEM...: one session runs CMD once per
# ITEM, with the argument {} replaced by the ITEM, and prints "ITEM<TAB>CMD's
# last stdout line" for each. Probes of one policy share a session: a
# session's start (the policy's compile, on the fallback tier its Landlock
# plan) is most of a probe's time under TCG, and a verdict does not depend
# on which session of the policy asks. EACH_SESSION=in_root_session: a
# session of root's
each_in_session() {
	local pol=$1 a i line script=
	local -a cmd=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do cmd+=("$1"); shift; done
	[ "${1:-}" = -- ] || fail "each_in_session: no -- before the items"
	shift
	for i in "$@"; do
		line=
		for a in "${cmd[@]}"; do
			[ "$a" = "{}" ] && a=$i
			line+=" $(printf %q "$a")"
		done
		script+="r=\$($line 2>/dev/null | tail -n 1); printf '%s\t%s\n' $(printf %q "$i") \"\$r\""$'\n'
	done
	"${EACH_SESSION:-in_session}" "$pol" bash -c "$script"
}

# expect_each WANT POLICY CMD... -- ITEM...: each_in_session, and every
# ITEM's last line must be WANT (all of them are named if not)
expect_each() {
	local want=$1 got bad a n=0 seen=0
	shift
	for a in "$@"; do
		[ $seen = 1 ] && n=$((n + 1))
		[ "$a" = -- ] && seen=1
	done
	got=$(each_in_session "$@") || true
	bad=$(printf '%s\n' "$got" | awk -F'\t' -v w="$want" 'NF && $2 != w')
	[ -z "$bad" ] || fail "expected '$want' from each: $(echo "$bad" | tr '\n\t' '; ')"
	[ "$(printf '%s\n' "$got" | grep -c .)" = $n ] ||
		fail "expected $n lines, one per item, got: $(echo "$got" | tr '\n\t' '; ')"
}

# event KEY=VALUE...: wait up to 3 s for a matching event line, among
# those that came after the test started (EVENTS_FROM, set by run-all):
# an event an earlier test caused proves nothing about this one
event() {
	for _ in $(seq 30); do
		tail -n +$((${EVENTS_FROM:-0} + 1)) "$EVENTS" 2>/dev/null >/tmp/sbx-events.test
		"$SBXT" event-match /tmp/sbx-events.test "$@" >/dev/null && return 0
		sleep 0.1
	done
	fail "no event matching $* in $EVENTS since line $((${EVENTS_FROM:-0} + 1)) (last: $(tail -n 2 $EVENTS))"
}

event_count() { "$SBXT" event-match "$EVENTS" "$@" || true; }

METRICS=/tmp/sbx-metrics
daemon_start() {
	mkdir -p $METRICS
	# the suite's daemon keeps its links, as tests of what runs with no
	# session expect; t_idle.sh tests links on demand (DAEMON_ARGS wins)
	"$SBX" daemon --log "$EVENTS" --metrics-dir $METRICS --idle-detach 0 ${DAEMON_ARGS:-} \
		>>"$DLOG" 2>&1 &
	echo $! >/tmp/sbx-daemon.pid
	# loading verifies the programs: a minute or more under TCG on a busy host
	for _ in $(seq 1800); do
		[ -S /run/bpfsbx/control.sock ] && "$SBX" status >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	cat "$DLOG"
	fail "daemon did not start"
}

daemon_pid() { cat /tmp/sbx-daemon.pid 2>/dev/null; }

daemon_stop() {
	local p; p=$(daemon_pid)
	[ -n "$p" ] && kill "$p" 2>/dev/null && wait_gone "$p"
	rm -f /tmp/sbx-daemon.pid
}

wait_gone() {
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done
	return 1
}

# wait_for CMD...: retry CMD for up to 5 s
wait_for() {
	for _ in $(seq 50); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}

# the number of live sessions the daemon reports
session_count() { "$SBX" status | sed -n "s/^sessions: //p"; }

# fixtures every test can rely on; reset before each test file
fixtures() {
	[ -n "${FIXTURE_USER:-}" ] || id $TUSER >/dev/null 2>&1 ||
		useradd -u $TUID -m -d $THOME -s /bin/bash $TUSER
	FIXTURE_USER=1
	rm -rf $PROJ $THOME/.ssh /srv/sbx /opt/sbxbin
	mkdir -p $PROJ $THOME/.ssh /srv/sbx/denied /srv/sbx/open /opt/sbxbin
	echo "SECRET-KEY" >$THOME/.ssh/id_rsa
	echo "not secret" >$PROJ/readme.txt
	echo "precious" >/srv/sbx/denied/file
	echo "open" >/srv/sbx/open/file
	cp /bin/true /opt/sbxbin/forbidden
	cp /bin/true /opt/sbxbin/allowed
	chown -R $TUSER:$TUSER $THOME /srv/sbx
	chmod 755 /opt/sbxbin/*
}

# session cgroups that exist (directories under <cgroup2>/bpfsbx)
session_cgroups() { find /sys/fs/cgroup/bpfsbx -mindepth 1 -maxdepth 1 -type d 2>/dev/null; }

# MAP CGID: how many keys of the pinned map MAP start with session cgroup
# id CGID (sbx_grants, sbx_learned: the cgid is the key's first field)
map_keys_of() {
	bpftool -j map dump pinned /sys/fs/bpf/bpfsbx/maps/$1 | python3 -S -c '
import json, sys
want = int(sys.argv[1])
n = 0
for e in json.load(sys.stdin):
    raw = bytes(int(b, 16) for b in e["key"][:8])
    n += int.from_bytes(raw, "little") == want
print(n)' "$2"
}

# MAP ID: how many keys of the pinned rule map MAP belong to policy ID (the
# key's first 4 bytes; in the LPM tries sbx_net4 and sbx_net6 the 4 after
# the prefix length, big-endian)
policy_keys_of() {
	bpftool -j map dump pinned /sys/fs/bpf/bpfsbx/maps/$1 | python3 -S -c '
import json, sys
want, lpm = int(sys.argv[1]), sys.argv[2].startswith("sbx_net")
n = 0
for e in json.load(sys.stdin):
    raw = bytes(int(b, 16) for b in e["key"][:8])
    n += (int.from_bytes(raw[4:8], "big") if lpm else int.from_bytes(raw[:4], "little")) == want
print(n)' "$2" "$1"
}

# NAME: the cgroup id of live session NAME
session_cgid() { stat -c %i "/sys/fs/cgroup/bpfsbx/$1"; }

# MAP CGFILE GO PID: the live session that CGFILE names (`sbxtest cgroup`'s
# output) has entries in MAP; once touching GO lets it end (PID), none of
# them is left
entries_leave_with_the_session() {
	local map=$1 name cg n
	name=$(sed -n 's|^0::/bpfsbx/\([^/]*\).*|\1|p' "$2")
	cg=$(session_cgid "$name") || fail "no cgroup for session '$name'"
	n=$(map_keys_of $map $cg)
	[ "$n" -ge 1 ] || fail "$map holds nothing of the live session"
	touch "$3"
	wait "$4" || true
	wait_for test ! -e /sys/fs/cgroup/bpfsbx/$name || fail "the session did not end"
	n=$(map_keys_of $map $cg)
	[ "$n" = 0 ] || fail "$n entries of the ended session left in $map"
}

# the pending request ids of the project queue, oldest first
pending_ids() { ls $PROJ/.sandbox/escalations/pending/ 2>/dev/null | sed -n 's/\.json$//p'; }

# wait for exactly one pending request and print its id
one_pending() {
	local ids
	for _ in $(seq 50); do
		ids=$(pending_ids)
		[ -n "$ids" ] && break
		sleep 0.1
	done
	[ "$(echo "$ids" | grep -c .)" = 1 ] || fail "expected one pending request, have: '$ids'"
	echo "$ids"
}

# JSON field of a queue file: qfield pending ID key.sub
qfield() { "$SBXT" json-get "$PROJ/.sandbox/escalations/$1/$2.json" "$3"; }

# approve/deny as the project's owner, like a person at `bpfsbx watch`
approve() { as_user "$SBX" approve "$1" --dir $PROJ --scope "${2:-once}" >/dev/null; }
deny() { as_user "$SBX" deny "$1" --dir $PROJ --note "${2:-no}" >/dev/null; }

# stepper POLICY PATH N: a session that opens PATH N times, waiting for
# /tmp/go.K before try K > 1; try K's result lands in /tmp/try.K
stepper() {
	local pol=$1 path=$2 n=$3
	rm -f /tmp/go.* /tmp/try.*
	in_session "$pol" sh -c "for k in \$(seq $n); do
		[ \$k = 1 ] || while [ ! -e /tmp/go.\$k ]; do sleep 0.05; done
		$SBXT open $path >/tmp/try.\$k 2>&1
	done" &
	STEPPER=$!
}
tried() { wait_for test -s /tmp/try.$1 || fail "try $1 did not happen"; cat /tmp/try.$1; }

# a TCP or UDP socket outside the session bound to lo (SO_BINDTODEVICE)
# on 127.0.0.1:PORT, before or after its port (python3 -S -c "$DEV_LISTEN"
# KIND PORT device_first|device_after): prints LISTENING, then GOT or,
# once /tmp/devPORT.stop exists, NOTHING
DEV_LISTEN='import os, socket, sys
kind, port, order = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if kind == "tcp" else socket.SOCK_DGRAM)
if order == "device_first": s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"lo")
s.bind(("127.0.0.1", port))
if order == "device_after": s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"lo")
if kind == "tcp": s.listen(4)
print("LISTENING", flush=True)
s.settimeout(0.3); got = None
while got is None and not os.path.exists("/tmp/dev%d.stop" % port):
    try: got = s.accept() if kind == "tcp" else s.recv(100)
    except OSError: pass
print("NOTHING" if got is None else "GOT", flush=True)'
