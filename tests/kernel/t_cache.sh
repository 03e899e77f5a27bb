# The per-inode verdict cache: repeated opens skip the walk, and a rename,
# link or mount change anywhere makes every cached verdict stale.
# CACHE_POL: the policy of the tests that use core.yaml's rules (the
# fallback tier's suite gives one whose reads the program decides).
CPOL=${CACHE_POL:-$POL/core.yaml}

cache_hits() { "$SBX" status --json | "$SBXT" json-get /dev/stdin stats.cache_hits; }

test_repeated_opens_hit_the_cache() {
	h0=$(cache_hits)
	out=$(in_session $CPOL $SBXT open-loop $PROJ/readme.txt 100)
	[ "$out" = "EPERM 0 OK 100" ] || fail "loop: $out"
	h1=$(cache_hits)
	[ $((h1 - h0)) -ge 90 ] || fail "only $((h1 - h0)) cache hits for 100 opens"
}

test_moving_a_file_into_a_denied_tree_is_seen() {
	echo "movable" >/srv/sbx/open/mv && chown $TUSER /srv/sbx/open/mv
	rm -f /srv/sbx/denied/mv
	# try 1 caches "allow" for the inode; then the file moves under the
	# denied directory (outside the session); try 2 must be denied
	rm -f /tmp/go.* /tmp/try.*
	in_session $CPOL sh -c "
		$SBXT open /srv/sbx/open/mv >/tmp/try.1; $SBXT open /srv/sbx/open/mv >/dev/null
		while [ ! -e /tmp/go.2 ]; do sleep 0.05; done
		$SBXT open /srv/sbx/denied/mv >/tmp/try.2" &
	bg=$!
	wait_for test -s /tmp/try.1
	[ "$(cat /tmp/try.1)" = OK ] || fail "before: $(cat /tmp/try.1)"
	mv /srv/sbx/open/mv /srv/sbx/denied/mv
	touch /tmp/go.2
	wait $bg || true
	[ "$(cat /tmp/try.2)" = "ERR EPERM" ] || fail "stale cached verdict after the move: $(cat /tmp/try.2)"
}

test_renaming_a_directory_is_seen() {
	rm -rf /srv/sbx/open/tree /srv/sbx/denied/tree
	mkdir -p /srv/sbx/open/tree && echo t >/srv/sbx/open/tree/f && chown -R $TUSER /srv/sbx/open/tree
	rm -f /tmp/go.* /tmp/try.*
	in_session $CPOL sh -c "
		$SBXT open /srv/sbx/open/tree/f >/tmp/try.1
		while [ ! -e /tmp/go.2 ]; do sleep 0.05; done
		$SBXT open /srv/sbx/denied/tree/f >/tmp/try.2" &
	bg=$!
	wait_for test -s /tmp/try.1
	[ "$(cat /tmp/try.1)" = OK ] || fail "before: $(cat /tmp/try.1)"
	mv /srv/sbx/open/tree /srv/sbx/denied/tree	# the file's inode is unchanged
	touch /tmp/go.2
	wait $bg || true
	[ "$(cat /tmp/try.2)" = "ERR EPERM" ] || fail "stale verdict after a directory rename: $(cat /tmp/try.2)"
}

# Policy files of live sessions are protected from every session. A file
# a session has opened for writing (its "allowed" verdict cached) becomes
# another session's policy: the next write must be refused at once.
test_file_that_becomes_a_policy_is_protected_at_once() {
	rm -f /tmp/go.* /tmp/try.* /tmp/late-pol.yaml
	cp $CPOL /tmp/late-pol.yaml
	chown $TUSER /tmp/late-pol.yaml && chmod 644 /tmp/late-pol.yaml
	in_session $CPOL sh -c "
		$SBXT open /tmp/late-pol.yaml a >/tmp/try.1; $SBXT open /tmp/late-pol.yaml a >/dev/null
		while [ ! -e /tmp/go.2 ]; do sleep 0.05; done
		$SBXT open /tmp/late-pol.yaml a >/tmp/try.2" &
	bg=$!
	wait_for test -s /tmp/try.1
	[ "$(cat /tmp/try.1)" = OK ] || fail "before: $(cat /tmp/try.1)"
	# a second session starts with that file as its policy, and stays
	in_session /tmp/late-pol.yaml sh -c "while [ ! -e /tmp/go.3 ]; do sleep 0.05; done" &
	b2=$!
	wait_for sh -c "[ \"\$($SBX status | sed -n 's/^sessions: //p')\" = 2 ]" || fail "second session did not start"
	touch /tmp/go.2
	wait $bg || true
	touch /tmp/go.3
	wait $b2 || true
	[ "$(cat /tmp/try.2)" = "ERR EPERM" ] || fail "policy file still writable: $(cat /tmp/try.2)"
}

# A compiled policy is kept for the next sessions (policy_cache.c). A
# directory deleted and made again between two sessions has new inodes,
# and the kept compile named the old ones: the next session must not
# inherit it. Both directions: a deny of a file in the re-made directory
# still denies (a stale compile let the secret be read: fail open), and an
# allow below it still allows (a stale compile refused npm's own cache).
# No rule names a directory to deny or ask, so no hard-link rescan of one
# hides the question: only the paths' identities can tell.
test_directories_made_again_between_sessions_are_compiled_again() {
	rm -rf $THOME/cfg $THOME/cachetest
	pol=/tmp/recreate-policy.yaml
	printf '%s\n' 'version: 1' 'files:' '  default: {read: allow, write: deny, exec: allow}' '  rules:' \
		"    - {path: ~/cfg/secret.txt, access: read, verdict: deny, reason: t}" \
		"    - {path: ~/cachetest/sub/, access: write, verdict: allow, reason: t}" \
		'network: {default: deny}' >$pol
	chmod 644 $pol
	mk() {
		rm -rf $THOME/cfg $THOME/cachetest
		mkdir -p $THOME/cfg $THOME/cachetest/sub
		echo "KEY-$1" >$THOME/cfg/secret.txt
		chown -R $TUSER:$TUSER $THOME/cfg $THOME/cachetest
	}
	mk 1
	expect "$FILE_DENIED" in_session $pol $SBXT open $THOME/cfg/secret.txt
	expect OK in_session $pol sh -c "printf x >$THOME/cachetest/sub/f && echo OK"
	# made again, outside any session, as a person would (rm -rf; mkdir)
	mk 2
	expect "$FILE_DENIED" in_session $pol $SBXT open $THOME/cfg/secret.txt
	expect OK in_session $pol sh -c "printf x >$THOME/cachetest/sub/f && echo OK"
	expect "ERR EPERM" in_session $pol $SBXT open $THOME/cachetest/g creat
	rm -rf $THOME/cfg $THOME/cachetest
}

# A cached verdict belongs to one inode. A file deleted and another made
# at once can take the freed inode's memory (and, on ext4, its number):
# the landlock tier keys its cache by the inode's address, so the entry
# must go with the inode (sbx_ll_inode_free). b.pem is read-denied by
# name; a verdict inherited from a.txt would let it be read.
test_a_deleted_files_verdicts_never_reach_a_new_file() {
	pol=/tmp/reuse-policy.yaml
	printf '%s\n' 'version: 1' 'files:' '  default: allow' '  rules:' \
		'    - {path: "*.pem", access: read, verdict: deny, reason: "test: keys by name"}' \
		'network: {default: deny}' >$pol
	chmod 644 $pol
	for d in $THOME/reuse /tmp/reuse; do
		rm -rf $d && mkdir -p $d && chown $TUSER $d
		out=$(in_session $pol $SBXT reuse-loop $d 150) || true
		echo "MEASURE: reuse-loop $d: $out"
		case $out in
		"DENIED 150 LEAKED 0 "*) ;;
		*) fail "$d: a new file read with a deleted one's verdict: $out" ;;
		esac
		rm -rf $d
	done
}

# A mount moved (outside the session) moves every path below it: a file
# read through the mount before the move, its verdict cached, is read
# through the same mount below a denied directory after it. By the
# syscalls themselves: util-linux's mount also renames /run/mount/utab,
# which would move the epoch by itself.
moved_mount_case() {
	rm -f /tmp/go.* /tmp/try.*
	for m in /srv/sbx/denied/mvt/to /srv/sbx/open/mvp/at /srv/sbx/denied/mvt /srv/sbx/open/mvp; do
		umount -l $m 2>/dev/null || true
	done
	mkdir -p /srv/sbx/open/msrc /srv/sbx/open/mvp /srv/sbx/denied/mvt
	echo m >/srv/sbx/open/msrc/f && chown -R $TUSER /srv/sbx/open/msrc
	# a mount below a shared one cannot be moved: private parents
	mount -t tmpfs mvp /srv/sbx/open/mvp && mount --make-private /srv/sbx/open/mvp
	mount -t tmpfs mvt /srv/sbx/denied/mvt && mount --make-private /srv/sbx/denied/mvt
	mkdir /srv/sbx/open/mvp/at /srv/sbx/denied/mvt/to
	mount --bind /srv/sbx/open/msrc /srv/sbx/open/mvp/at
	in_session $CPOL sh -c "
		$SBXT open /srv/sbx/open/mvp/at/f >/tmp/try.1; $SBXT open /srv/sbx/open/mvp/at/f >/dev/null
		touch /tmp/try.1b
		while [ ! -e /tmp/go.2 ]; do sleep 0.05; done
		$SBXT open /srv/sbx/denied/mvt/to/f >/tmp/try.2" &
	bg=$!
	wait_for test -e /tmp/try.1b
	moved=$("$SBXT" $1 /srv/sbx/open/mvp/at /srv/sbx/denied/mvt/to)
	touch /tmp/go.2
	wait $bg || true
	t1=$(cat /tmp/try.1) t2=$(cat /tmp/try.2)
	for m in /srv/sbx/denied/mvt/to /srv/sbx/denied/mvt /srv/sbx/open/mvp; do umount -l $m; done
	[ "$moved" = OK ] || fail "$1: $moved"
	[ "$t1" = OK ] || fail "$1: before: $t1"
	[ "$t2" = "ERR EPERM" ] || fail "$1: stale cached verdict after the mount moved: $t2"
}

test_moving_a_mount_is_seen() {
	moved_mount_case mount-move
	moved_mount_case move-mount
}
