# The red team: public escape techniques against sandboxes, containers
# and BPF-LSM enforcers, each tried for real from inside a session. Every
# attempt must fail and leave an event. Root sessions are used where the
# technique needs privileges an agent running as root would have.

# redteam.yaml has a name rule (*.secret), so on the landlock tier too the
# daemon's programs decide its sessions' reads and execs: a refusal is
# EPERM on both tiers (SBX_PF_DECIDE_OPENS, bpf/files.bpf.c)
RT=$POL/redteam.yaml
rt_user() { in_session $RT "$@"; }
rt_root() { in_root_session $RT "$@"; }

rt_fixture() {
	cp /bin/true /opt/sbxbin/forbidden
	cp /lib/x86_64-linux-gnu/libc.so.6 /opt/sbxbin/evil.so
	chmod 755 /opt/sbxbin/*
	echo "precious" >/srv/sbx/denied/file
	echo "allowed" >/srv/sbx/open/file
	chown -R $TUSER:$TUSER /srv/sbx
}

# ---- links and renames --------------------------------------------------

# KubeArmor#988: a hard link is a second name that path rules do not see
test_rt01_hardlink_made_in_session() {
	rt_fixture
	expect "ERR EPERM" rt_user $SBXT link /srv/sbx/denied/file /srv/sbx/open/alias
	event operation=link_from object=/srv/sbx/denied/file verdict=deny
}

# renaming a secret to an innocent name to escape a name rule ("laundering")
test_rt02_rename_launders_name_rule() {
	echo "s" >$PROJ/key.secret && chown $TUSER $PROJ/key.secret
	expect "ERR EPERM" rt_user $SBXT rename $PROJ/key.secret $PROJ/key.txt
	[ -e $PROJ/key.secret ] || fail "renamed"
	event operation=rename_from object=$PROJ/key.secret
}

# moving the protected directory itself out from under its rule
test_rt03_rename_protected_dir() {
	expect "ERR EPERM" rt_user $SBXT rename $THOME/.ssh $THOME/ssh
	event operation=rename_from object=$THOME/.ssh
}

# a dangling symlink planted before the denied file exists
test_rt04_dangling_symlink_before_file() {
	rm -f /srv/sbx/denied/later /srv/sbx/open/dangling
	ln -s /srv/sbx/denied/later /srv/sbx/open/dangling
	echo "late secret" >/srv/sbx/denied/later
	expect "ERR EPERM" rt_user $SBXT open /srv/sbx/open/dangling
	event operation=open_read object=/srv/sbx/denied/later
}

# TOCTOU: swap a symlink between an allowed and a denied file while
# opening it; the decision is on what open() resolved, so nothing leaks
test_rt05_rename_race_during_open() {
	rt_fixture
	out=$(rt_user $SBXT race-symlink /tmp/racelink /srv/sbx/open/file /srv/sbx/denied/file 3 precious)
	echo "$out"
	echo "$out" | grep -q " LEAKS 0$" || fail "denied content leaked: $out"
	echo "$out" | grep -qv "REFUSED 0 " || fail "the race never hit the denied file: $out"
}

# ---- ld.so, memfd, interpreters ---------------------------------------------

# fapolicyd#386 and others: ld.so maps the binary itself, exec is never called
test_rt06_ldso_runs_denied_binary() {
	rt_fixture
	if out=$(rt_user /lib64/ld-linux-x86-64.so.2 /opt/sbxbin/forbidden 2>&1); then
		fail "ld.so ran it: $out"
	fi
	echo "$out" | grep -q "failed to map segment" || fail "unexpected: $out"
	event operation=mmap_exec object=/opt/sbxbin/forbidden
}

# LD_PRELOAD of a denied library: mapped executable by ld.so
test_rt07_ld_preload_denied_library() {
	rt_fixture
	out=$(rt_user env LD_PRELOAD=/opt/sbxbin/evil.so /bin/true 2>&1 || true)
	echo "$out" | grep -q "evil.so" || fail "preload not refused: $out"
	event operation=mmap_exec object=/opt/sbxbin/evil.so
}

# map a denied file readable, then make it executable with mprotect
test_rt08_mprotect_exec_denied_file() {
	rt_fixture
	expect "ERR EPERM" rt_user $SBXT mprotect-exec /opt/sbxbin/forbidden
	expect "ERR EPERM" rt_user $SBXT mmap-exec /opt/sbxbin/forbidden
	expect "OK" rt_user $SBXT mmap-exec /bin/true
}

# a readable mapping that the kernel makes executable: personality(2)'s
# READ_IMPLIES_EXEC adds PROT_EXEC in mmap_prot(), after the prot that
# was asked for (the landlock tier's twin on security_mmap_file sees only
# that one, and counts the personality)
test_rt08b_read_implies_exec_maps_denied_file() {
	rt_fixture
	expect "ERR EPERM" rt_user $SBXT rie-mmap /opt/sbxbin/forbidden
	expect "OK" rt_user $SBXT rie-mmap /bin/true
	# without the personality, a readable mapping is only a read
	expect "OK" rt_user $SBXT mmap-read /opt/sbxbin/forbidden
	event operation=mmap_exec object=/opt/sbxbin/forbidden
}

# dlopen(3) of a denied library from a running program: ld.so maps it
# executable, no exec and no LD_PRELOAD involved
test_rt08c_dlopen_denied_library() {
	rt_fixture
	out=$(rt_user python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1]); print("LOADED")' \
		/opt/sbxbin/evil.so 2>&1 || true)
	case $out in *LOADED*) fail "dlopen loaded it: $out" ;; esac
	echo "$out" | grep -q "failed to map segment" || fail "unexpected: $out"
	out=$(rt_user python3 -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1]); print("LOADED")' \
		/lib/x86_64-linux-gnu/libutil.so.1 2>&1 || true)
	[ "$out" = LOADED ] || fail "an allowed library did not load: $out"
	event operation=mmap_exec object=/opt/sbxbin/evil.so comm=python3
}

# fileless execution: memfd_create + execveat (bpflock filelesslock, KubeArmor)
test_rt09_memfd_exec() {
	expect "ERR EPERM" rt_user $SBXT memfd-exec /bin/true
	# (the landlock tier refuses it in run's seccomp filter: no event)
	[ $TIER = landlock ] || event operation=exec verdict=deny rule.id=$((0xffff000a))
	# ... and through execve(/proc/self/fd/N), which seccomp cannot tell
	# from any other execve: the landlock tier's sbx_ll_file_open refuses
	# it where memfd_create itself is not (6.1: no MFD_NOEXEC_SEAL)
	local n
	n=$(event_count operation=exec verdict=deny rule.id=$((0xffff000a)))
	expect "ERR EPERM" rt_user $SBXT memfd-exec /bin/true proc
	# (where seccomp refused memfd_create, the landlock tier on 6.12, no
	# exec happened to report)
	[ $TIER = landlock ] && [ "${KLINE:-}" != 6.1 ] && return 0
	for _ in $(seq 30); do
		[ "$(event_count operation=exec verdict=deny rule.id=$((0xffff000a)))" -gt "$n" ] && return 0
		sleep 0.1
	done
	fail "no exec-kind event for execve(/proc/self/fd/N) of a memfd"
}

# run a binary after deleting it, through its open descriptor: by
# execveat (seccomp's on the landlock tier) and by execve(/proc/self/fd/N)
# in a directory the policy lets run (the program's), with a policy whose
# reads and execs the landlock tier otherwise leaves to Landlock (core.yaml)
test_rt10_exec_deleted_file() {
	rt_fixture
	expect "ERR EPERM" rt_user $SBXT exec-deleted /bin/true /srv/sbx/open
	expect "ERR EPERM" rt_user $SBXT exec-deleted /bin/true /srv/sbx/open proc
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT exec-deleted /bin/true $PROJ proc
	event operation=exec verdict=deny rule.id=$((0xffff000a)) object~="$PROJ/sbx-deleted-*"
	ls $PROJ/sbx-deleted-* /srv/sbx/open/sbx-deleted-* 2>/dev/null && fail "left a file" || true
}

# a copy of a setuid program (here made setuid by root beforehand)
test_rt11_setuid_exec() {
	cp /bin/true /srv/sbx/open/suid && chmod 4755 /srv/sbx/open/suid
	if [ $TIER = landlock ]; then
		# no_new_privs: it runs, as the caller (a copy of id shows it)
		cp /usr/bin/id /srv/sbx/open/suid && chmod 4755 /srv/sbx/open/suid
		[ "$(rt_user /srv/sbx/open/suid -u)" = $TUID ] || fail "the setuid copy gained its owner"
	else
		expect "ERR EPERM" rt_user $SBXT exec /srv/sbx/open/suid
	fi
	rm -f /srv/sbx/open/suid
}

# ---- /proc ---------------------------------------------------------------------

# a process of the test user, outside every session
outside_sleep() {
	setpriv --reuid=$TUID --regid=$TUID --clear-groups sh -c 'sleep 60 >/dev/null 2>&1 & echo $!'
}

# /proc/PID/environ of an outside process: secrets in its environment.
# procfs turns any refusal of its ptrace check into EACCES; the same open
# works outside the session, and the event shows who refused.
test_rt12_proc_environ_of_outside_process() {
	p=$(outside_sleep)
	expect "OK" as_user $SBXT open /proc/$p/environ
	expect "ERR EACCES" rt_user $SBXT open /proc/$p/environ
	expect "ERR EACCES" rt_user $SBXT open /proc/$p/mem
	kill $p
	event operation=ptrace verdict=deny object="pid $p"
}

# the daemon's environment and memory, from a root session
test_rt13_proc_of_daemon() {
	d=$(daemon_pid)
	expect "ERR EACCES" rt_root $SBXT open /proc/$d/environ
	expect "ERR EACCES" rt_root $SBXT open /proc/$d/mem
	event operation=ptrace verdict=deny object="pid $d"
}

# /proc/PID/fd/N: reopen another process's open file
test_rt14_proc_fd_of_outside_process() {
	exec 7</srv/sbx/denied/file
	expect "ERR EACCES" rt_root $SBXT open /proc/$BASHPID/fd/7
	exec 7<&-
	event operation=ptrace verdict=deny object="pid $BASHPID"
}

# /proc/PID/root: walk into another process's root
test_rt15_proc_root_of_outside_process() {
	p=$(outside_sleep)
	expect "OK" as_user $SBXT open /proc/$p/root/srv/sbx/denied/file
	expect "ERR EACCES" rt_user $SBXT open /proc/$p/root/srv/sbx/denied/file
	kill $p
	event operation=ptrace verdict=deny object="pid $p"
}

# process_vm_readv and pidfd_getfd on an outside process
test_rt16_vm_read_and_pidfd_getfd() {
	p=$(outside_sleep)
	expect "ERR EPERM" rt_user $SBXT vm-read $p
	expect "ERR EPERM" rt_user $SBXT pidfd-getfd $p 0
	kill $p
}

# core_pattern: the container escape that runs a program as root on crash
test_rt17_sysctl_core_pattern() {
	before=$(cat /proc/sys/kernel/core_pattern)
	expect "ERR EPERM" rt_root $SBXT write-file /proc/sys/kernel/core_pattern "|/tmp/pwn"
	[ "$(cat /proc/sys/kernel/core_pattern)" = "$before" ] || fail "core_pattern changed"
}

# sysrq and sysfs: machine-wide switches
test_rt18_sysrq_and_sysfs() {
	expect "ERR EPERM" rt_root $SBXT write-file /proc/sysrq-trigger h
	expect "ERR EPERM" rt_root $SBXT write-file /sys/kernel/mm/transparent_hugepage/enabled never
	# its own /proc files stay writable
	expect "OK" rt_root sh -c "$SBXT write-file /proc/self/oom_score_adj 100"
}

# ---- leaving the session -------------------------------------------------------

# clone3(CLONE_INTO_CGROUP): a child born in another cgroup
test_rt19_clone_into_cgroup() {
	if [ $TIER = landlock ]; then
		# run's seccomp filter refuses clone3 altogether (glibc falls back to clone)
		expect "ERR ENOSYS" rt_root $SBXT clone-into-cgroup /sys/fs/cgroup
		return 0
	fi
	expect "ERR EPERM" rt_root $SBXT clone-into-cgroup /sys/fs/cgroup
	event operation=cgroup_escape
}

# freezing the session's own or another cgroup, or killing it
test_rt20_cgroup_freeze_and_kill() {
	expect "ERR EPERM" rt_root sh -c "$SBXT write-file /sys/fs/cgroup/bpfsbx/cgroup.freeze 1"
	expect "ERR EPERM" rt_root sh -c "$SBXT write-file /sys/fs/cgroup/cgroup.subtree_control +pids"
}

# ---- the daemon ---------------------------------------------------------------------

test_rt21_kill_daemon() {
	d=$(daemon_pid)
	expect "ERR EPERM" rt_root $SBXT kill $d 9
	expect "ERR EPERM" rt_root $SBXT kill $d 19	# SIGSTOP
	kill -0 $d || fail "daemon died"
	event operation=signal verdict=deny
}

test_rt22_ptrace_daemon() {
	expect "ERR EPERM" rt_root $SBXT ptrace $(daemon_pid)
}

# bpf(): the maps that confine the session are one syscall away
test_rt23_bpf_syscall() {
	expect "ERR EPERM" rt_root $SBXT bpf
	out=$(rt_root bpftool map list 2>&1) && fail "bpftool listed maps: $out"
	[ $TIER = landlock ] || event operation=bpf verdict=deny	# seccomp: no event
}

# the pinned maps through bpffs
test_rt24_bpffs_pins() {
	local l=/sys/fs/bpf/bpfsbx/links/sbx_file_open
	[ $TIER = landlock ] && l=/sys/fs/bpf/bpfsbx/links/sbx_ll_file_open
	[ -e $l ] || fail "no link $l to try"
	expect "ERR EPERM" rt_root $SBXT unlink $l
	[ -e $l ] || fail "link unpinned"
	expect "ERR EPERM" rt_root $SBXT open /sys/fs/bpf/bpfsbx/maps/sbx_sessions w
}

# signals to the user's own processes outside the session
test_rt25_signal_outside_process() {
	p=$(outside_sleep)
	expect "ERR EPERM" rt_user $SBXT kill $p 15
	kill -0 $p || fail "killed"
	kill $p
	# inside the session, signals work as usual
	expect "OK" rt_user sh -c "sleep 30 & $SBXT kill \$! 15"
}

# ---- namespaces and mounts ----------------------------------------------------------

test_rt26_user_namespace() {
	expect "ERR EPERM" rt_user $SBXT unshare-user
	if out=$(rt_user unshare -U true 2>&1); then fail "unshare -U: $out"; fi
	[ $TIER = landlock ] || event operation=userns verdict=deny	# seccomp: no event
	# a policy can switch it back on for tools that need it, on the full
	# tier; run's seccomp filter refuses every new user namespace
	if [ $TIER = landlock ]; then
		expect "ERR EPERM" in_session $POL/userns.yaml $SBXT unshare-user
	else
		expect "OK" in_session $POL/userns.yaml $SBXT unshare-user
	fi
}

# a bind mount gives a denied tree a second path (elastic/ebpf#93)
test_rt27_bind_mount() {
	mkdir -p /srv/sbx/open/mnt
	expect "ERR EPERM" rt_root $SBXT mount-bind /srv/sbx/denied /srv/sbx/open/mnt
	[ $TIER = landlock ] || event operation=mount verdict=deny	# seccomp: no event
}

test_rt28_mount_over_and_umount() {
	expect "ERR EPERM" rt_root $SBXT mount-tmpfs /srv/sbx/denied
	expect "ERR EPERM" rt_root $SBXT umount /tmp
	# a new mount namespace does not help either: even making its mounts
	# private is a mount
	if out=$(rt_root unshare -m mount --bind /srv/sbx/denied /mnt 2>&1); then
		fail "unshare -m + bind: $out"
	fi
	echo "$out" | grep -q "Operation not permitted" || fail "unexpected: $out"
}

# ---- network --------------------------------------------------------------------------

# landlock-lsm/linux#41: TCP Fast Open connects without connect()
test_rt29_tcp_fast_open() {
	expect "ERR EPERM" rt_user $SBXT fastopen 4 10.66.0.1 443
}

# unconnected UDP: no connect() at all
test_rt30_udp_sendto() {
	expect "ERR EPERM" rt_user $SBXT sendto 4 10.66.0.1 54	# (53 is DNS: the daemon answers, t_dns.sh)
}

# cilium/tetragon#4618: the IPv4-mapped IPv6 form of a denied address
test_rt31_v4_mapped_ipv6() {
	expect "ERR EPERM" rt_user $SBXT connect 6 ::ffff:10.66.0.1 443
	expect "ERR EPERM" rt_user $SBXT sendto 6 ::ffff:10.66.0.1 54
}

# raw packet sockets sniff and forge; AF_ALG and friends are attack surface
test_rt32_risky_socket_families() {
	expect "ERR EPERM" rt_root $SBXT socket 17 3	# AF_PACKET, SOCK_RAW
	expect "ERR EPERM" rt_user $SBXT socket 38 5	# AF_ALG, SOCK_SEQPACKET
	expect "ERR EPERM" rt_user $SBXT socket 40 1	# AF_VSOCK
	expect "ERR EPERM" rt_user $SBXT socket 21 5	# AF_RDS
	expect "ERR EPERM" rt_user $SBXT socket 30 2	# AF_TIPC
	# an inet raw socket: lsm/socket_create, or cgroup/sock_create on the
	# landlock tier, where run's seccomp filter refuses the families
	# above and no event tells of those
	expect "ERR EPERM" rt_root $SBXT socket 2 3 1	# AF_INET, SOCK_RAW, ICMP
	event operation=socket_create verdict=deny
}

# the docker socket hands out root on the host
test_rt33_docker_socket() {
	rm -f /run/docker.sock
	python3 -S -c "import socket,os; s=socket.socket(socket.AF_UNIX); s.bind('/run/docker.sock'); os.chmod('/run/docker.sock',0o777); s.listen(1); import time; time.sleep(30)" &
	srv=$!
	wait_for test -S /run/docker.sock || fail "no socket"
	expect "ERR EPERM" rt_user python3 -S -c "
import socket,errno
s=socket.socket(socket.AF_UNIX)
try:
    s.connect('/run/docker.sock'); print('OK')
except OSError as e: print('ERR', errno.errorcode[e.errno])"
	event operation=unix_connect object=/run/docker.sock
	kill $srv
}

# ---- io_uring -----------------------------------------------------------------------

# ARMO "curing": io_uring bypasses syscall hooks; LSM hooks still fire
test_rt34_io_uring_open() {
	if [ $TIER = landlock ]; then
		# seccomp sees no io_uring operation: the tier refuses io_uring
		# itself where the policy does not allow it
		expect "ERR EPERM" rt_user $SBXT uring-open /srv/sbx/open/file
		return 0
	fi
	expect "ERR EPERM" rt_user $SBXT uring-open /srv/sbx/denied/file
	expect "OK" rt_user $SBXT uring-open /srv/sbx/open/file
	# the open may run in an io-wq worker thread: same session, same verdict
	event operation=open_read object=/srv/sbx/denied/file
}

test_rt35_io_uring_connect() {
	expect "ERR EPERM" rt_user $SBXT uring-connect 4 10.66.0.1 80
}

# ---- descriptors from outside -------------------------------------------------------

# SCM_RIGHTS: a helper outside the session passes in an open descriptor
test_rt36_fd_passed_over_unix_socket() {
	rm -f /tmp/fdsrv.sock
	$SBXT fd-server /tmp/fdsrv.sock /srv/sbx/denied/file >/tmp/fdsrv.out 2>&1 &
	wait_for grep -q LISTENING /tmp/fdsrv.out || fail "server"
	expect "ERR EPERM" rt_user $SBXT recv-fd /tmp/fdsrv.sock
	event operation=file_receive object=/srv/sbx/denied/file
}

# ---- long paths, deep trees ---------------------------------------------------------

# a path of about 4,000 bytes into the denied tree
test_rt37_4000_byte_path() {
	d=/srv/sbx/denied
	n=$(printf 'd%.0s' $(seq 200))
	for i in $(seq 19); do d=$d/$n; done
	mkdir -p $d && echo deep >$d/f && chown -R $TUSER /srv/sbx/denied
	[ ${#d} -gt 3800 ] || fail "path only ${#d} bytes"
	expect "ERR EPERM" rt_user sh -c "cd $d && $SBXT open f"
	# the event keeps the path's tail (it is longer than an event holds)
	event operation=open_read verdict=deny comm=sbxtest
	tail -n 20 $EVENTS | grep -q "dddd/f\"" || fail "path tail missing from the event"
}

# 100 levels deep: the walk goes all the way up
test_rt38_100_level_tree() {
	d=/srv/sbx/denied
	for i in $(seq 100); do d=$d/l; done
	mkdir -p $d && echo deep >$d/f && chown -R $TUSER /srv/sbx/denied
	expect "ERR EPERM" rt_user $SBXT open $d/f
	expect "ERR EPERM" rt_user sh -c "cd $d && $SBXT open f"
}

# ---- other classics ---------------------------------------------------------------------

# TIOCSTI: type commands into the terminal the session shares with its
# user's shell (CVE-2023-28339 class; Linux 6.2 made it optional)
test_rt39_tiocsti() {
	expect "ERR EPERM" rt_user $SBXT tiocsti
	[ $TIER = landlock ] || event operation=ioctl verdict=deny	# seccomp: no event
}

# open_by_handle_at: the 2014 "shocker" Docker escape (CAP_DAC_READ_SEARCH)
test_rt40_open_by_handle() {
	# on tmpfs (the overlay root exports no file handles)
	# (the mount's descriptor from a directory beside the denied one: the
	# landlock tier's plan keeps /tmp itself from being listed)
	mkdir -p /tmp/rt-denied /tmp/rt-open && echo secret >/tmp/rt-denied/f
	expect "ERR EPERM" rt_root $SBXT open-by-handle /tmp/rt-denied/f /tmp/rt-open
	expect "OK" $SBXT open-by-handle /tmp/rt-denied/f /tmp/rt-open
	event operation=open_read object=/tmp/rt-denied/f verdict=deny
}

# perf events and kernel modules from a root session
test_rt41_perf_and_modules() {
	expect "ERR EPERM" rt_root $SBXT perf-open
	expect "ERR EPERM" rt_root $SBXT init-module
	[ $TIER = landlock ] || event operation=kernel verdict=deny	# seccomp: no event
}

# ptrace of the user's own process outside the session (steal its tokens)
test_rt42_ptrace_outside_process() {
	p=$(outside_sleep)
	expect "ERR EPERM" rt_user $SBXT ptrace $p
	kill $p
	# tracing its own children still works (debuggers, strace); not on the
	# landlock tier, whose seccomp filter refuses ptrace(2) for every target
	[ $TIER = landlock ] && return 0
	out=$(rt_user strace -f -o /dev/null true 2>&1) || fail "strace of a child: $out"
}

# a nested session with a weaker policy
test_rt43_nested_session() {
	out=$(rt_user "$SBX" run --policy $ROOT/policy/shipped/audit-only.yaml -- true 2>&1) &&
		fail "nested: $out"
	echo "$out" | grep -q "already in session" || fail "$out"
}

# writing the queue to approve its own request (forging a decision)
test_rt44_forge_own_approval() {
	mkdir -p $PROJ/.sandbox/escalations/done && chown -R $TUSER $PROJ/.sandbox
	expect "ERR EPERM" rt_user $SBXT open $PROJ/.sandbox/escalations/done/x.json creat
	expect "ERR EPERM" rt_user $SBXT open $PROJ/.sandbox/remembered.yaml creat
}

# editing the policy file the session runs under
test_rt45_edit_own_policy() {
	# as root, so that file permissions are not what stops it
	expect "ERR EPERM" rt_root $SBXT open $RT w
	expect "ERR EPERM" rt_root $SBXT rename $RT $RT.old
	event operation=open_write object=$RT verdict=deny
}
