# Containers as sessions (issue 35): real runc and crun run a container
# on a root filesystem built here (static busybox, sbxtest, and the
# host's libraries read-only), with `bpfsbx oci-hook` as its createRuntime
# hook and its cgroup directly below <cgroup2>/bpfsbx. The container is a
# session from its first exec: judged by what its own processes get.

CTR=/tmp/ctr		# the guest's /tmp is its own tmpfs
# /share inside: the test's go-files and the container's output, in the
# project, where the session may write
SHARE=$PROJ/ctr-share

# bundle DIR ID [JQ-FILTER]: a bundle of id ID whose process runs
# /share/DIR.sh, with the hook, the project annotation, the test user's
# ~/.ssh and ~/.aws mounted at root's in the container, and the host's
# network (a container of its own network has no route out here)
bundle() {
	local d=$CTR/$1 id=$2 extra=${3:-.}
	rm -rf "$d"
	mkdir -p "$d"/rootfs/{bin,proc,dev,sys,tmp,etc,root,share,lib,lib64,usr,sbx} $SHARE
	cp /bin/busybox "$d/rootfs/bin/"
	for a in sh cat echo sleep ls test; do ln -s busybox "$d/rootfs/bin/$a"; done
	cp "$SBXT" "$d/rootfs/bin/sbxtest"
	cp "$ROOT/build/dnsq" "$d/rootfs/bin/dnsq"
	(cd "$d" && runc spec)
	jq --arg id "$id" --arg sbx "$SBX" --arg proj "$PROJ" --arg share $SHARE \
	   --arg home $THOME --arg s "/share/$1.sh" '
	 .process.terminal = false | .root.readonly = true
	 | .process.args = ["/bin/sh", $s]
	 | .linux.cgroupsPath = "/bpfsbx/" + $id
	 | .linux.namespaces |= map(select(.type != "network"))
	 | .annotations = {"io.bpfsbx.project": $proj, "io.bpfsbx.name": ("agent-" + $id),
			   "io.kubernetes.pod.namespace": "team-a"}
	 | .mounts += [
	     {"destination": "/share", "type": "bind", "source": $share, "options": ["rbind", "rw"]},
	     {"destination": "/root/.ssh", "type": "bind", "source": ($home + "/.ssh"), "options": ["rbind", "ro"]},
	     {"destination": "/root/.aws", "type": "bind", "source": ($home + "/.aws"), "options": ["rbind", "ro"]},
	     {"destination": "/keys", "type": "bind", "source": ($home + "/.ssh/deploy"), "options": ["rbind", "ro"]},
	     {"destination": "/lib", "type": "bind", "source": "/lib", "options": ["rbind", "ro"]},
	     {"destination": "/lib64", "type": "bind", "source": "/lib64", "options": ["rbind", "ro"]},
	     {"destination": "/usr", "type": "bind", "source": "/usr", "options": ["rbind", "ro"]}]
	 | .hooks = {"createRuntime": [{"path": $sbx, "args": ["bpfsbx", "oci-hook", "createRuntime"],
				       "timeout": 60}]}
	 | '"$extra" "$d/config.json" >"$d/config.new"
	mv "$d/config.new" "$d/config.json"
}

# What the runtimes leave below /bpfsbx for the tests after these: podman's
# conmon cgroup, and the controllers runc, crun and podman enable in
# /bpfsbx's subtree (each later session would pay for them). Every test
# here resets them when it ends, passed or not.
ctr_reset() {
	local c cg=/sys/fs/cgroup/bpfsbx
	for _ in $(seq 30); do
		[ -d $cg/conmon ] || break
		rmdir $cg/conmon 2>/dev/null && break
		sleep 0.1
	done
	for c in $(cat $cg/cgroup.subtree_control 2>/dev/null); do
		echo "-$c" >$cg/cgroup.subtree_control 2>/dev/null || true
	done
	rm -rf /tmp/pm $CTR
}

ctr_fixtures() {
	trap ctr_reset EXIT
	rm -rf $SHARE $PROJ/.sandbox/policy.yaml
	mkdir -p $THOME/.aws $THOME/.ssh/deploy $SHARE
	echo "DEPLOY-KEY" >$THOME/.ssh/deploy/notes
	chmod 777 $SHARE	# the container's root has no CAP_DAC_OVERRIDE
	echo "AWS-SECRET" >$THOME/.aws/credentials
	chown -R $TUSER:$TUSER $THOME/.aws $THOME/.ssh
}

# the session of container ID in `status --json`, as "NAME CONTAINER-NAME"
ctr_session() {
	"$SBX" status --json | python3 -S -c '
import json, sys
for s in json.load(sys.stdin)["sessions"]:
    c = s.get("container") or {}
    if c.get("id") == sys.argv[1]:
        print(s["name"], c.get("name"), c.get("namespace"))' "$1"
}

test_a_runc_container_is_a_session_from_its_first_exec() {
	command -v runc >/dev/null || skip "runc is not installed (make deps)"
	[ $TIER = bpf-lsm ] || skip "container sessions need the bpf-lsm tier (the hook's refusal: a test below)"
	ctr_fixtures
	bundle c1 c1
	cat >$SHARE/c1.sh <<'EOF'
sbxtest open /root/.ssh/id_rsa >/share/key.out 2>&1
sbxtest open /keys/notes >/share/deploy.out 2>&1
echo x >/dev/null && echo ok >/share/devnull.out
echo x >/tmp/x 2>/share/rootfs.out || echo refused >>/share/rootfs.out
sbxtest open /root/.aws/credentials >/share/aws1.out 2>&1
echo asked >/share/asked
while [ ! -e /share/go ]; do sleep 0.1; done
# the daemon applies the decision once it sees it: an agent retries
for i in $(seq 50); do
	sbxtest open /root/.aws/credentials >/share/aws2.out 2>&1 && break
	sleep 0.1
done
echo done >/share/done
EOF
	(cd $CTR/c1 && runc run c1 >/tmp/ctr-c1.out 2>&1) &
	local ctr=$! watcher id sess
	wait_for test -e $SHARE/asked || { sleep 10; test -e $SHARE/asked; } ||
		fail "the container did not get to its ask: $(cat /tmp/ctr-c1.out)"
	# the person's approver, in line mode, as the project's owner (the
	# queue is there since the session started)
	rm -f /tmp/ctr-watch.in /tmp/ctr-watch.out
	mkfifo /tmp/ctr-watch.in
	chmod 666 /tmp/ctr-watch.in
	as_user sh -c "$SBX watch $PROJ </tmp/ctr-watch.in >/tmp/ctr-watch.out 2>&1" &
	watcher=$!
	exec 7>/tmp/ctr-watch.in
	grep -qx "ERR EPERM" $SHARE/key.out || fail "the key read in the container: $(cat $SHARE/key.out)"
	grep -qx "ERR EPERM" $SHARE/aws1.out || fail "the asked read before approval: $(cat $SHARE/aws1.out)"
	# a subdirectory of ~/.ssh mounted alone: the rule on ~/.ssh/ is not on
	# the way up from inside, its graft on the mount's root is
	grep -qx "ERR EPERM" $SHARE/deploy.out || fail "a mounted subdirectory of ~/.ssh: $(cat $SHARE/deploy.out)"
	# the container's own /dev/null is the host's device: writable
	grep -qx ok $SHARE/devnull.out || fail "writing /dev/null in the container"
	# its root filesystem is read-only (root.readonly), whatever the policy says
	grep -q "refused" $SHARE/rootfs.out || fail "the read-only root: $(cat $SHARE/rootfs.out)"
	# the path as the container sees it, and which container
	event verdict=deny object=/root/.ssh/id_rsa container.id=c1 container.name=agent-c1
	event verdict=deny object=/keys/notes rule.pattern="~/.ssh/" container.id=c1
	# a session like any other, that says which container it is
	sess=$(ctr_session c1)
	[ "${sess#* }" = "agent-c1 team-a" ] || fail "status: '$sess'"
	[ "$(cat /sys/fs/cgroup/bpfsbx/c1/cgroup.procs | wc -l)" -ge 1 ] || fail "no process in /bpfsbx/c1"
	# the ask reached the person's watch, with the container named
	wait_for grep -q '"container"' /tmp/ctr-watch.out || fail "watch saw no request: $(cat /tmp/ctr-watch.out)"
	id=$(one_pending)
	[ "$(qfield pending $id container.name)" = agent-c1 ] || fail "the request names no container"
	[ "$(qfield pending $id session)" = "${sess%% *}" ] || fail "the request's session"
	echo "approve $id once" >&7
	wait_for grep -q '"ok":true' /tmp/ctr-watch.out || fail "watch did not approve: $(cat /tmp/ctr-watch.out)"
	touch $SHARE/go
	wait $ctr || fail "runc run: $(cat /tmp/ctr-c1.out)"
	grep -qx "OK" $SHARE/aws2.out || fail "the approved retry: $(cat $SHARE/aws2.out)"
	echo quit >&7
	exec 7>&-
	wait $watcher || true
	# its cgroup emptied: the session ended with it
	wait_for sh -c "[ -z \"\$($(declare -f ctr_session); ctr_session c1)\" ]" ||
		fail "the container's session outlived it"
	runc delete c1 2>/dev/null || true
}

test_runc_exec_into_a_container_is_confined_and_an_unhooked_one_is_not() {
	command -v runc >/dev/null || skip "runc is not installed (make deps)"
	[ $TIER = bpf-lsm ] || skip "container sessions need the bpf-lsm tier"
	ctr_fixtures
	bundle c2 c2
	echo 'echo up >/share/up; while [ ! -e /share/stop ]; do sleep 0.1; done' >$SHARE/c2.sh
	(cd $CTR/c2 && runc run -d c2 >/tmp/ctr-c2.out 2>&1 </dev/null) ||
		fail "runc run -d: $(cat /tmp/ctr-c2.out)"
	wait_for test -e $SHARE/up || fail "the container did not start"
	expect "ERR EPERM" runc exec c2 sbxtest open /root/.ssh/id_rsa
	event verdict=deny object=/root/.ssh/id_rsa container.id=c2
	touch $SHARE/stop
	wait_for sh -c '! runc state c2 | grep -q running' || true
	runc delete -f c2 2>/dev/null || true
	# without the hook, a container under /bpfsbx is no session: the kernel
	# leaves it alone (what every process outside a session gets)
	bundle c3 c3 'del(.hooks)'
	echo 'sbxtest open /root/.ssh/id_rsa' >$SHARE/c3.sh
	(cd $CTR/c3 && runc run c3 >/tmp/ctr-c3.out 2>&1) || fail "runc run c3: $(cat /tmp/ctr-c3.out)"
	grep -qx "OK" /tmp/ctr-c3.out || fail "an unhooked container: $(cat /tmp/ctr-c3.out)"
	runc delete c3 2>/dev/null || true
}

test_crun_container_network_follows_host_rules_by_name() {
	command -v crun >/dev/null || skip "crun is not installed (make deps)"
	[ $TIER = bpf-lsm ] || skip "container sessions need the bpf-lsm tier"
	. "$ROOT/tests/kernel/t_dns.sh"
	dns_up
	serve 10.99.0.1
	serve 10.99.0.2
	ctr_fixtures
	mkdir -p $PROJ/.sandbox
	cp $POL/dns.yaml $PROJ/.sandbox/policy.yaml
	chown -R $TUSER:$TUSER $PROJ/.sandbox
	bundle c4 c4
	cat >$SHARE/c4.sh <<'EOF'
sbxtest connect 4 10.99.0.2 8080 >/share/before.out 2>&1
dnsq ok.test A 10.0.0.1 >/share/q.out 2>&1
sbxtest connect 4 10.99.0.1 8080 >/share/after.out 2>&1
dnsq denied.test A 10.0.0.1 >/share/denied.out 2>&1
EOF
	(cd $CTR/c4 && crun run c4 >/tmp/ctr-c4.out 2>&1) || fail "crun run: $(cat /tmp/ctr-c4.out)"
	# an address no name gave is the policy's default (ask): refused
	grep -qx "ERR EPERM" $SHARE/before.out || fail "connect before a lookup: $(cat $SHARE/before.out)"
	grep -q "^NOERROR 10.99.0.1$" $SHARE/q.out || fail "the lookup: $(cat $SHARE/q.out)"
	grep -qx "OK" $SHARE/after.out || fail "connect to the looked-up name: $(cat $SHARE/after.out)"
	grep -q "^NXDOMAIN" $SHARE/denied.out || fail "a denied name: $(cat $SHARE/denied.out)"
	event operation=dns name=denied.test verdict=deny container.id=c4
	crun delete c4 2>/dev/null || true
	# a network of its own: the resolver listens in it, and the policy
	# decides before the route (nothing leads out of it here)
	bundle c7 c7 '.linux.namespaces += [{"type": "network"}]'
	printf '%s\n' 'sbxtest connect 4 10.99.0.2 8080 >/share/before7.out 2>&1' \
		'dnsq ok.test A 10.0.0.1 >/share/q7.out 2>&1' \
		'sbxtest connect 4 10.99.0.1 8080 >/share/after7.out 2>&1' 'exit 0' >$SHARE/c7.sh
	(cd $CTR/c7 && crun run c7 >/tmp/ctr-c7.out 2>&1) || fail "crun run c7: $(cat /tmp/ctr-c7.out)"
	grep -qx "ERR EPERM" $SHARE/before7.out || fail "own network, before a lookup: $(cat $SHARE/before7.out)"
	grep -q "^NOERROR 10.99.0.1$" $SHARE/q7.out || fail "own network, the lookup: $(cat $SHARE/q7.out)"
	grep -qx "ERR ENETUNREACH" $SHARE/after7.out ||
		fail "own network, connect to the looked-up name: $(cat $SHARE/after7.out)"
	crun delete c7 2>/dev/null || true
}

test_a_container_that_cannot_be_adopted_does_not_start() {
	command -v runc >/dev/null || skip "runc is not installed (make deps)"
	ctr_fixtures
	echo 'echo RAN; sbxtest open /root/.ssh/id_rsa' >$SHARE/c5.sh
	if [ $TIER = bpf-lsm ]; then
		# a cgroup outside <cgroup2>/bpfsbx: refused with where it must be
		bundle c5 c5 '.linux.cgroupsPath = "/elsewhere/c5"'
		! (cd $CTR/c5 && runc run c5 >/tmp/ctr-c5.out 2>&1) || fail "a container outside /bpfsbx ran"
		grep -q "not directly below" /tmp/ctr-c5.out || fail "the reason: $(cat /tmp/ctr-c5.out)"
		runc delete -f c5 2>/dev/null || true
		# a root the kernel would let around any policy: not a session
		bundle c5 c5 '.process.capabilities.bounding += ["CAP_SYS_ADMIN"]
			      | .process.capabilities.effective += ["CAP_SYS_ADMIN"]'
		! (cd $CTR/c5 && runc run c5 >/tmp/ctr-c5.out 2>&1) || fail "a CAP_SYS_ADMIN container ran"
		grep -q "grants CAP_SYS_ADMIN" /tmp/ctr-c5.out || fail "the reason: $(cat /tmp/ctr-c5.out)"
		runc delete -f c5 2>/dev/null || true
		# a mount that could show host files no graft follows
		bundle c5 c5 '.mounts += [{"destination": "/x", "type": "overlay", "source": "overlay",
					   "options": ["lowerdir=/usr/share:/usr/lib"]}]'
		! (cd $CTR/c5 && runc run c5 >/tmp/ctr-c5.out 2>&1) || fail "an overlay-mount container ran"
		grep -q "is of type overlay" /tmp/ctr-c5.out || fail "the reason: $(cat /tmp/ctr-c5.out)"
	else
		# the landlock tier: a runtime does not confine the container
		bundle c5 c5
		! (cd $CTR/c5 && runc run c5 >/tmp/ctr-c5.out 2>&1) || fail "the container ran unconfined"
		grep -q "need the bpf-lsm tier" /tmp/ctr-c5.out || fail "the reason: $(cat /tmp/ctr-c5.out)"
	fi
	! grep -q RAN /tmp/ctr-c5.out || fail "the container's program ran"
	runc delete -f c5 2>/dev/null || true
	# no daemon: the hook fails, so does the container, and nothing is left
	daemon_stop
	bundle c6 c6
	echo 'echo RAN' >$SHARE/c6.sh
	! (cd $CTR/c6 && runc run c6 >/tmp/ctr-c6.out 2>&1) || fail "a container ran with no daemon"
	daemon_start
	grep -q "oci-hook: container c6" /tmp/ctr-c6.out || fail "the hook's word: $(cat /tmp/ctr-c6.out)"
	! grep -q RAN /tmp/ctr-c6.out || fail "the container's program ran"
	[ ! -e /sys/fs/cgroup/bpfsbx/c6 ] || fail "the refused container's cgroup is left"
	runc delete -f c6 2>/dev/null || true
}

# podman with the shipped oci-hooks(5) file: it injects the hook into the
# containers whose annotation names a project, and only into those
test_podman_reads_the_hooks_file_and_its_container_is_a_session() {
	command -v podman >/dev/null || skip "podman is not installed (make deps)"
	[ $TIER = bpf-lsm ] || skip "container sessions need the bpf-lsm tier"
	ctr_fixtures
	bundle p1 p1
	rm -rf /tmp/pm
	mkdir -p /tmp/pm/hooks
	# the shipped file, with the hook where this build is
	jq --arg sbx "$SBX" '.hook.path = $sbx' $ROOT/contrib/oci/hooks.d/bpfsbx.json \
		>/tmp/pm/hooks/bpfsbx.json
	tar -C $CTR/p1/rootfs -cf /tmp/pm/rootfs.tar .
	local pm=(podman --root /tmp/pm/root --runroot /tmp/pm/run --storage-driver vfs
		  --cgroup-manager=cgroupfs --events-backend none --hooks-dir /tmp/pm/hooks)
	"${pm[@]}" import /tmp/pm/rootfs.tar localhost/sbx-bb >/dev/null 2>/tmp/pm/import.err ||
		fail "podman import: $(cat /tmp/pm/import.err)"
	expect "ERR EPERM" "${pm[@]}" run --rm --cgroup-parent=/bpfsbx --network=host \
		--annotation io.bpfsbx.project=$PROJ --annotation io.bpfsbx.name=pm-agent \
		-v $THOME/.ssh:/root/.ssh:ro localhost/sbx-bb /bin/sbxtest open /root/.ssh/id_rsa
	event verdict=deny object=/root/.ssh/id_rsa container.name=pm-agent
	grep -q "container [0-9a-f]* (pm-agent) adopted as session .*cgroup /sys/fs/cgroup/bpfsbx/libpod-" \
		$DLOG || fail "the daemon's word: $(grep pm-agent $DLOG | tail -n 2)"
	# no annotation: no hook, no session
	expect "OK" "${pm[@]}" run --rm --cgroup-parent=/bpfsbx --network=host \
		-v $THOME/.ssh:/root/.ssh:ro localhost/sbx-bb /bin/sbxtest open /root/.ssh/id_rsa
}

# A mount's source as the daemon grafts it must be what the runtime
# mounted: a source swapped in between (here by a createRuntime hook that
# runs before bpfsbx's, as another agent could) is refused; a mounted
# directory moved away on the host later is denied by its identity at the
# next compile, which does not fail (a floor's apply is all-or-none)
test_a_mount_source_swapped_or_moved_is_not_trusted() {
	command -v runc >/dev/null || skip "runc is not installed (make deps)"
	[ $TIER = bpf-lsm ] || skip "container sessions need the bpf-lsm tier"
	ctr_fixtures
	rm -rf $PROJ/swap $PROJ/mnt $THOME/.ssh/old
	# a directory no other mount of the container brings in (~/.ssh/deploy
	# is mounted at /keys: its own graft would hold it)
	mkdir -p $THOME/.ssh/old && echo OLD-KEY >$THOME/.ssh/old/notes
	chown -R $TUSER:$TUSER $THOME/.ssh/old
	ln -s $THOME/.ssh/old $PROJ/swap
	bundle c9 c9 '.hooks.createRuntime = [{"path": "/bin/sh", "args": ["sh", "-c",
			"/bin/rm -f '"$PROJ"'/swap && /bin/mkdir '"$PROJ"'/swap"]}] + .hooks.createRuntime
		      | .mounts += [{"destination": "/data", "type": "bind", "source": "'"$PROJ"'/swap",
				     "options": ["rbind", "ro"]}]'
	echo 'echo RAN; sbxtest open /data/notes; cat /data/notes' >$SHARE/c9.sh
	! (cd $CTR/c9 && runc run c9 >/tmp/ctr-c9.out 2>&1) || fail "a swapped mount ran: $(cat /tmp/ctr-c9.out)"
	grep -q "mount at [^ ]*/data (.*) is not the root of any of its sources" /tmp/ctr-c9.out ||
		fail "the reason: $(cat /tmp/ctr-c9.out)"
	! grep -q RAN /tmp/ctr-c9.out || fail "the container's program ran"
	runc delete -f c9 2>/dev/null || true
	# moved after it started
	mkdir -p $PROJ/mnt/sub
	echo DATA >$PROJ/mnt/sub/f
	chown -R $TUSER:$TUSER $PROJ/mnt
	bundle c8 c8 '.mounts += [{"destination": "/sub", "type": "bind", "source": "'"$PROJ"'/mnt/sub",
				   "options": ["rbind", "ro"]}]'
	cat >$SHARE/c8.sh <<'EOF'
sbxtest open /sub/f >/share/before.out 2>&1
echo up >/share/up
while [ ! -e /share/go ]; do sleep 0.1; done
sbxtest open /sub/f >/share/after.out 2>&1
exit 0
EOF
	(cd $CTR/c8 && runc run c8 >/tmp/ctr-c8.out 2>&1) &
	local ctr=$! sess out pol
	wait_for test -e $SHARE/up || fail "the container did not start: $(cat /tmp/ctr-c8.out)"
	grep -qx OK $SHARE/before.out || fail "the mount before the move: $(cat $SHARE/before.out)"
	sess=$(ctr_session c8)
	mv $PROJ/mnt/sub $PROJ/mnt/elsewhere
	pol=$("$SBX" status --json | python3 -S -c '
import json, sys
print([s["policy"] for s in json.load(sys.stdin)["sessions"] if (s.get("container") or {}).get("id") == "c8"][0])')
	out=$("$SBX" reload "${sess%% *}" --policy "$pol" 2>&1) || fail "reload with a moved mount: $out"
	touch $SHARE/go
	wait $ctr || fail "runc run c8: $(cat /tmp/ctr-c8.out)"
	grep -qx "ERR EPERM" $SHARE/after.out || fail "the moved mount: $(cat $SHARE/after.out)"
	event verdict=deny object=/sub/f rule.name=mount-moved container.id=c8
	runc delete c8 2>/dev/null || true
	rm -rf $PROJ/swap $PROJ/mnt $THOME/.ssh/old
}

# A device node is the device to whoever opens it later: a container's
# root with CAP_MKNOD (podman's default) could leave one of the host's
# disk in the project for a process outside. No session makes one; a
# FIFO is still a file like any other.
test_no_session_makes_a_device_node() {
	local pol=$ROOT/policy/shipped/agent-default.yaml
	rm -f /root/rtproj/disk /root/rtproj/null /root/rtproj/fifo
	expect "REFUSED" in_root_session $pol sh -c \
		'mknod /root/rtproj/disk b 8 0 2>/dev/null && echo MADE || echo REFUSED'
	expect "REFUSED" in_root_session $pol sh -c \
		'mknod /root/rtproj/null c 1 3 2>/dev/null && echo MADE || echo REFUSED'
	[ ! -e /root/rtproj/disk ] && [ ! -e /root/rtproj/null ] || fail "a node was made"
	[ $TIER = bpf-lsm ] && event rule.name=device-node verdict=deny
	expect "MADE" in_root_session $pol sh -c 'mknod /root/rtproj/fifo p && echo MADE'
}

# 6.1 runs the container's confinement, its refusals and the device nodes;
# the resolver in a container's network and podman are the same daemon code
# on every kernel, and their kernel steps (the cgroup programs, the hook)
# are 6.1's in the tests it runs
on_61_only 'the same daemon code on every kernel: run by the 6.12 guests; on 6.1 this file runs the confinement and the refusals' \
	a_runc_container_is_a_session_from_its_first_exec \
	runc_exec_into_a_container_is_confined_and_an_unhooked_one_is_not \
	a_container_that_cannot_be_adopted_does_not_start no_session_makes_a_device_node
