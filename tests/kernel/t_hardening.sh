# Issue 12's other classes, each tried by several routes and judged by
# effect: destinations the network hooks must parse, socket families
# outside the allowlist, signals by another route, protected paths swapped
# out by a parent, metadata changes, and what a session reads of the
# outside's command lines.

RT=$POL/redteam.yaml
AD=$ROOT/policy/shipped/agent-default.yaml
HP=$POL/hardening.yaml

# ---- destinations -------------------------------------------------------------------

# a UDP listener outside on an address the policy denies; it must get nothing
udp_sink() {
	# one left by a test that failed would hold the port
	[ -f /tmp/hd-sink.pid ] && kill "$(cat /tmp/hd-sink.pid)" 2>/dev/null && sleep 0.2
	ip addr add 10.66.0.1/32 dev lo 2>/dev/null || true
	rm -f /tmp/hd-got
	python3 -S -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(('10.66.0.1', 9999))
print('LISTENING', flush=True)
while True: open('/tmp/hd-got', 'ab').write(s.recv(100))" >/tmp/hd-sink.out 2>&1 &
	echo $! >/tmp/hd-sink.pid
	wait_for grep -q LISTENING /tmp/hd-sink.out || fail "sink did not start"
}
sink_got_nothing() {
	sleep 0.3
	kill "$(cat /tmp/hd-sink.pid)" 2>/dev/null || true
	[ ! -s /tmp/hd-got ] || fail "the denied address received: $(cat /tmp/hd-got)"
}

# sendto/sendmsg/sendmmsg with sin_family=AF_UNSPEC: udp_sendmsg sends to
# sin_addr anyway, so the hook must read it too
HD_UNSPEC='
import ctypes, socket, struct, sys, errno
libc = ctypes.CDLL(None, use_errno=True)
how = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sa = struct.pack("=HH4s8x", 0, socket.htons(9999), socket.inet_aton("10.66.0.1"))
buf = ctypes.create_string_buffer(b"leak")
if how == "sendto":
    r = libc.sendto(s.fileno(), buf, 4, 0, ctypes.c_char_p(sa), len(sa))
else:
    class iovec(ctypes.Structure): _fields_ = [("b", ctypes.c_void_p), ("l", ctypes.c_size_t)]
    class msghdr(ctypes.Structure): _fields_ = [("name", ctypes.c_char_p), ("namelen", ctypes.c_uint),
        ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t), ("ctl", ctypes.c_void_p),
        ("ctllen", ctypes.c_size_t), ("flags", ctypes.c_int)]
    class mmsghdr(ctypes.Structure): _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]
    iov = iovec(ctypes.cast(buf, ctypes.c_void_p), 4)
    m = msghdr(sa, len(sa), ctypes.pointer(iov), 1, None, 0, 0)
    if how == "sendmsg":
        r = libc.sendmsg(s.fileno(), ctypes.byref(m), 0)
    else:
        mm = mmsghdr(m, 0); r = libc.sendmmsg(s.fileno(), ctypes.byref(mm), 1, 0)
        r = -1 if r != 1 else r
print("OK" if r >= 0 else "ERR " + errno.errorcode[ctypes.get_errno()])'

test_af_unspec_destination_is_read_sendto_sendmsg_sendmmsg() {
	udp_sink
	for how in sendto sendmsg sendmmsg; do
		expect "ERR EPERM" in_session $RT python3 -S -c "$HD_UNSPEC" $how
	done
	sink_got_nothing
	event operation=sendmsg object=10.66.0.1:9999 verdict=deny
	# outside a session the same datagram arrives: the test can fail
	udp_sink
	expect "OK" python3 -S -c "$HD_UNSPEC" sendto
	sleep 0.3
	[ -s /tmp/hd-got ] || fail "the sink is deaf: the test proves nothing"
	kill "$(cat /tmp/hd-sink.pid)" 2>/dev/null || true
}

# ---- IP sockets made elsewhere ---------------------------------------------------------

# A session's datagrams are decided by the cgroup programs of the cgroup
# each socket was made in (dns.bpf.c), so a socket made outside, or in
# another session, must never enter one: over SCM_RIGHTS it is refused
# (file_receive), and run does not carry an inherited one in.

# fd-srv SOCK udp4|udp6|unix: hands a new socket of that kind to the
# first client
HD_FDSRV='
import os, socket, sys
fam = {"udp4": socket.AF_INET, "udp6": socket.AF_INET6, "unix": socket.AF_UNIX}[sys.argv[2]]
p = socket.socket(fam, socket.SOCK_DGRAM)
l = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try: os.unlink(sys.argv[1])
except OSError: pass
l.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); l.listen(1)
print("LISTENING", flush=True)
c, _ = l.accept()
socket.send_fds(c, [b"x"], [p.fileno()])
c.close()'

# fd-recv SOCK: takes the socket and sends a datagram to the denied sink;
# REFUSED when the kernel dropped it (MSG_CTRUNC)
HD_FDRECV='
import errno, socket, sys
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.connect(sys.argv[1])
msg, fds, flags, _ = socket.recv_fds(c, 1, 4)
if not fds:
    print("REFUSED" if flags & socket.MSG_CTRUNC else "NONE"); sys.exit(0)
s = socket.socket(fileno=fds[0])
if s.family == socket.AF_UNIX:
    print("GOT"); sys.exit(0)
dst = ("10.66.0.1", 9999) if s.family == socket.AF_INET else ("::ffff:10.66.0.1", 9999)
try: s.sendto(b"leak", dst); print("SENT")
except OSError as e: print("ERR", errno.errorcode[e.errno])'

fd_server() {	# fd_server KIND [PREFIX...]: the server, run by PREFIX (default: outside)
	local kind=$1; shift
	rm -f /tmp/hd-fd.sock /tmp/hd-fd.out
	"$@" python3 -S -c "$HD_FDSRV" /tmp/hd-fd.sock $kind >/tmp/hd-fd.out 2>&1 &
	wait_for grep -q LISTENING /tmp/hd-fd.out || fail "fd server ($kind): $(cat /tmp/hd-fd.out)"
}

test_an_ip_socket_made_outside_is_refused_when_passed_in() {
	udp_sink
	for kind in udp4 udp6; do
		fd_server $kind
		expect "REFUSED" in_session $RT python3 -S -c "$HD_FDRECV" /tmp/hd-fd.sock
		event operation=file_receive verdict=deny rule.id=$((0xffff0000 + 26))
	done
	sink_got_nothing
	# a unix socket still passes: the refusal is of IP sockets only
	fd_server unix
	expect "GOT" in_session $RT python3 -S -c "$HD_FDRECV" /tmp/hd-fd.sock
	# outside every session the same socket is received and sends: the
	# test can fail
	udp_sink
	fd_server udp4
	expect "SENT" python3 -S -c "$HD_FDRECV" /tmp/hd-fd.sock
	sleep 0.3
	[ -s /tmp/hd-got ] || fail "the sink is deaf: the test proves nothing"
	kill "$(cat /tmp/hd-sink.pid)" 2>/dev/null || true
}

test_an_ip_socket_of_another_session_is_refused_and_ones_own_passes() {
	udp_sink
	fd_server udp4 in_session $RT
	expect "REFUSED" in_session $RT python3 -S -c "$HD_FDRECV" /tmp/hd-fd.sock
	event operation=file_receive verdict=deny rule.id=$((0xffff0000 + 26))
	# within one session the socket passes, and its datagram is decided
	# there: the denied sink is refused by the policy, not by the receive
	out=$(in_session $RT sh -c "python3 -S -c '$HD_FDSRV' /tmp/hd-fd2.sock udp4 >/tmp/hd-fd2.out &
		for i in \$(seq 50); do grep -q LISTENING /tmp/hd-fd2.out 2>/dev/null && break; sleep 0.1; done
		python3 -S -c '$HD_FDRECV' /tmp/hd-fd2.sock" 2>&1 | tail -n 1)
	[ "$out" = "ERR EPERM" ] || fail "the session's own socket, passed within it: '$out'"
	event operation=sendmsg object=10.66.0.1:9999 verdict=deny
	sink_got_nothing
}

test_run_refuses_to_carry_an_inherited_ip_socket_in() {
	out=$(as_user python3 -S -c '
import os, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); os.set_inheritable(s.fileno(), True)
os.execv(sys.argv[1], [sys.argv[1], "run", "--policy", sys.argv[2], "--project", sys.argv[3], "--", "true"])' \
		"$SBX" "$RT" "$PROJ" 2>&1) && fail "run started CMD with an inherited UDP socket: $out"
	echo "$out" | grep -q "is an IP socket made outside the session" || fail "run said: $out"
	# the same without the socket starts
	as_user "$SBX" run --policy "$RT" --project "$PROJ" -- true || fail "run without it failed"
}

# ping sockets (ICMP, SOCK_DGRAM): no hook sees where an echo goes, so
# they are a switch (sandbox.ping), on both tiers
test_ping_sockets_need_their_switch() {
	sysctl -qw net.ipv4.ping_group_range="0 2147483647"
	expect "ERR EPERM" in_session $RT $SBXT socket 2 2 1		# AF_INET, DGRAM, ICMP
	expect "ERR EPERM" in_session $RT $SBXT socket 10 2 58		# AF_INET6, DGRAM, ICMPv6
	event operation=socket_create verdict=deny object="socket inet type 2 protocol 1"
	expect "OK" in_session $HP $SBXT socket 2 2 1
	expect "OK" in_session $HP $SBXT socket 10 2 58
	# outside a session the kernel makes one: the test can fail
	expect "OK" as_user $SBXT socket 2 2 1
}

# SCTP is not on the allowlist unless sandbox.sctp allows it; with it,
# connectx and sendmsg with addresses go through sctp_bind_connect
test_sctp_needs_its_switch_and_its_destinations_are_checked() {
	expect "ERR EPERM" in_session $RT $SBXT socket 2 1 132	# AF_INET, STREAM, SCTP
	expect "ERR EPERM" in_session $RT $SBXT socket 10 5 132	# AF_INET6, SEQPACKET, SCTP
	event operation=socket_create verdict=deny
	if [ $TIER = landlock ]; then
		# no program of this tier sees an SCTP destination: SCTP is
		# refused whatever sandbox.sctp says
		expect "ERR EPERM" in_session $HP $SBXT socket 2 1 132
		return 0
	fi
	if ! modprobe -n sctp 2>/dev/null; then
		echo "note: no sctp module in this kernel's image: connectx not tried"
		return 0
	fi
	out=$(in_session $HP python3 -S -c "
import socket, errno
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132)
for dst in (('10.66.0.1', 9), ('127.0.0.1', 9)):
    try: s.connect(dst); print('OK')
    except OSError as e: print('ERR', errno.errorcode[e.errno])" 2>&1 | head -n 1)
	[ "$out" = "ERR EPERM" ] || fail "SCTP connect to a denied address: $out"
}

# families outside the allowlist: refused, and their modules stay unloaded
test_socket_families_outside_the_allowlist() {
	for fam in 29:3:can 43:1:smc 33:2:rxrpc 31:5:bluetooth 26:2:llc2; do
		IFS=: read -r af type mod <<EOF
$fam
EOF
		got=$(in_session $RT $SBXT socket $af $type | tail -n 1)
		case "$got" in
		"ERR EPERM"|"ERR EAFNOSUPPORT") ;;
		*) fail "socket($af, $type) in a session: $got" ;;
		esac
		grep -q "^$mod " /proc/modules && fail "module $mod was loaded for a session"
	done
	# on the landlock tier run's seccomp filter refuses these families,
	# and tells no one (FALLBACK.md); t_redteam's rt32 has the tier's
	# event, for an inet socket
	[ $TIER = landlock ] || event operation=socket_create verdict=deny
	# netlink: route is allowed (ip), audit is not
	expect "OK" in_session $RT $SBXT socket 16 3 0
	expect "ERR EPERM" in_session $RT $SBXT socket 16 3 9
	in_session $RT ip -o link show lo >/dev/null || fail "ip link (netlink route) failed in a session"
}

# ---- signals by another route --------------------------------------------------------

HD_OWNER='
import ctypes, fcntl, os, socket, struct, sys, errno
libc = ctypes.CDLL(None, use_errno=True)
how, target = sys.argv[1], int(sys.argv[2])
r, w = os.pipe()
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
def res(rc): return "OK" if rc >= 0 else "ERR " + errno.errorcode[ctypes.get_errno()]
if how == "setown":
    print(res(libc.fcntl(r, 8, target)))                      # F_SETOWN
elif how == "setown_ex":
    own = struct.pack("ii", 1, target)                         # F_OWNER_PID
    print(res(libc.fcntl(r, 15, ctypes.c_char_p(own))))        # F_SETOWN_EX
elif how == "fiosetown":
    v = ctypes.c_int(target); print(res(libc.ioctl(s.fileno(), 0x8901, ctypes.byref(v))))
elif how == "siocspgrp":
    v = ctypes.c_int(target); print(res(libc.ioctl(s.fileno(), 0x8902, ctypes.byref(v))))
elif how == "pidfd":
    fd = libc.syscall(434, target, 0)
    print(res(libc.syscall(424, fd, 15, None, 0)) if fd >= 0 else res(fd))'

test_signal_owner_and_pidfd_refused_for_outside_processes() {
	as_user sleep 120 &
	victim=$!
	sleep 0.2
	expect_each "ERR EPERM" $RT python3 -S -c "$HD_OWNER" {} $victim -- setown setown_ex fiosetown siocspgrp pidfd
	# O_ASYNC with the owner set would have delivered SIGIO: the victim lives
	kill -0 $victim || fail "the process outside was signalled"
	if [ $TIER = landlock ]; then
		# run's seccomp filter refuses every owner, the session's own
		# too, without an event (docs/FALLBACK.md)
		kill $victim
		return 0
	fi
	event operation=signal_owner verdict=deny
	# one's own process is a fine owner
	expect "OK" in_session $RT sh -c "python3 -S -c '$HD_OWNER' setown \$\$ >/dev/null; python3 -S -c \"
import os, fcntl; r, w = os.pipe(); fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid()); print('OK')\""
	kill $victim
}

# ---- a protected path swapped out by its parent ---------------------------------------

pin_fixture() {
	rm -rf $PROJ/.git $PROJ/.git.orig $PROJ/guarded
	as_user git -C $PROJ init -q
	mkdir -p $PROJ/guarded && chown $TUSER $PROJ/guarded
}

test_parent_of_a_protected_path_cannot_be_renamed_exchanged_or_removed() {
	pin_fixture
	ino=$(stat -c %i $PROJ/.git)
	# compiled now that .git exists (a policy of its own, so that no
	# compilation cached before git init is used): .git/hooks is an inode
	# rule, its parent .git is pinned
	printf 'version: 1\nextends: agent-default\n# %s\n' "$(date +%s%N)" >/tmp/hd-pin.yaml
	AD=/tmp/hd-pin.yaml
	expect "ERR EPERM" in_session $AD $SBXT rename $PROJ/.git $PROJ/.git.orig
	event operation=rename_from object=$PROJ/.git verdict=deny
	# RENAME_EXCHANGE with a fresh copy
	as_user mkdir -p $PROJ/fresh/hooks
	expect "ERR EPERM" in_session $AD python3 -S -c "
import ctypes, os, errno
libc = ctypes.CDLL(None, use_errno=True)
r = libc.renameat2(-100, b'$PROJ/fresh', -100, b'$PROJ/.git', 2)   # RENAME_EXCHANGE
print('OK' if r == 0 else 'ERR ' + errno.errorcode[ctypes.get_errno()])"
	# the project directory above it is pinned too
	expect "ERR EPERM" in_session $AD $SBXT rename $PROJ $THOME/proj.moved
	[ "$(stat -c %i $PROJ/.git)" = "$ino" ] || fail ".git was replaced"
	# a directory whose protected child does not exist yet: rmdir and
	# recreate (compiled now that guarded exists: it is the rule's anchor)
	{ cat $HP; printf '# %s\n' "$(date +%s%N)"; } >/tmp/hd-guard.yaml
	expect "ERR EPERM" in_session /tmp/hd-guard.yaml $SBXT rmdir $PROJ/guarded
	[ -d $PROJ/guarded ] || fail "guarded was removed"
	# a symlink in its place needs the directory gone first
	expect "ERR EPERM" in_session $AD sh -c "mv $PROJ/.git $PROJ/g2 2>/dev/null && ln -s /tmp $PROJ/.git; $SBXT open $PROJ/.git/HEAD >/dev/null; [ -L $PROJ/.git ] && echo SWAPPED || echo ERR EPERM"
	# judged by effect: the review's attack leaves no hook that runs later
	in_session $AD sh -c "mv $PROJ/.git $PROJ/.git.orig; cp -a $PROJ/.git.orig $PROJ/.git.new;
		mv $PROJ/.git.new $PROJ/.git; echo 'touch /tmp/hd-hook-ran' >$PROJ/.git/hooks/pre-commit" \
		2>/dev/null || true
	[ ! -e $PROJ/.git/hooks/pre-commit ] || fail "a hook was planted: $(cat $PROJ/.git/hooks/pre-commit)"
	[ "$(stat -c %i $PROJ/.git)" = "$ino" ] || fail ".git was swapped"
	# a policy compiled before .git existed covers it by name all the same
	rm -rf $PROJ/.git $PROJ/.git.orig $PROJ/.git.new
	printf 'version: 1\nextends: agent-default\n# %s\n' "$(date +%s%N)" >/tmp/hd-pin2.yaml
	in_session /tmp/hd-pin2.yaml sh -c "git -C $PROJ init -q 2>/dev/null; mv $PROJ/.git $PROJ/.git.orig;
		mkdir -p $PROJ/.git/hooks; echo x >$PROJ/.git/hooks/pre-commit" 2>/dev/null || true
	[ ! -e $PROJ/.git/hooks/pre-commit ] || fail "a hook was planted after a swap"
	rm -rf $PROJ/fresh $PROJ/.git $PROJ/.git.orig
}

# ---- what a session reads of the outside -----------------------------------------------

test_cmdline_of_outside_processes_is_hidden() {
	as_user python3 -S -c "import time; time.sleep(121)" --token-s3cr3t &
	# $! is the subshell that runs as_user; the python is the one with the token
	wait_for pgrep -f -- --token-s3cr3t || fail "no victim"
	victim=$(pgrep -f -- --token-s3cr3t | head -n 1)
	got=$(in_session $AD python3 -S -c "
import sys, errno
try: print(open('/proc/$victim/cmdline','rb').read().replace(b'\0', b' ').decode())
except OSError as e: print('ERR', errno.errorcode[e.errno])" | tail -n 1)
	case "$got" in *s3cr3t*) fail "a session read an outside command line: $got" ;; esac
	[ "$got" = "ERR EPERM" ] || fail "cmdline read: $got"
	event operation=open_read object=/proc/$victim/cmdline verdict=deny
	# its own processes in full, and ps still works
	expect "sleep 7" in_session $AD sh -c "sleep 7 & sleep 0.5; tr '\\0' ' ' </proc/\$!/cmdline | sed 's/ \$//'; kill \$!"
	in_session $AD ps -ef >/tmp/hd-ps.out 2>&1 || fail "ps failed: $(head -3 /tmp/hd-ps.out)"
	grep -q "s3cr3t" /tmp/hd-ps.out && fail "ps in a session shows the outside command line"
	# the switch gives them back
	got=$(in_session $HP cat /proc/$victim/cmdline | tr '\0' ' ')
	case "$got" in *s3cr3t*) ;; *) fail "sandbox.proc_cmdline: allow did not allow: $got" ;; esac
	kill $victim
}
