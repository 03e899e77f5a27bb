# The per-inode verdict cache: repeated opens skip the walk, and a rename,
# link or mount change anywhere makes every cached verdict stale.

cache_hits() { "$SBX" status --json | "$SBXT" json-get /dev/stdin stats.cache_hits; }

test_repeated_opens_hit_the_cache() {
	h0=$(cache_hits)
	out=$(in_session $POL/core.yaml $SBXT open-loop $PROJ/readme.txt 100)
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
	in_session $POL/core.yaml sh -c "
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
	in_session $POL/core.yaml sh -c "
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
	cp $POL/core.yaml /tmp/late-pol.yaml
	chown $TUSER /tmp/late-pol.yaml && chmod 644 /tmp/late-pol.yaml
	in_session $POL/core.yaml sh -c "
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
	expect "ERR EPERM" in_session $pol $SBXT open $THOME/cfg/secret.txt
	expect OK in_session $pol sh -c "printf x >$THOME/cachetest/sub/f && echo OK"
	# made again, outside any session, as a person would (rm -rf; mkdir)
	mk 2
	expect "ERR EPERM" in_session $pol $SBXT open $THOME/cfg/secret.txt
	expect OK in_session $pol sh -c "printf x >$THOME/cachetest/sub/f && echo OK"
	expect "ERR EPERM" in_session $pol $SBXT open $THOME/cachetest/g creat
	rm -rf $THOME/cfg $THOME/cachetest
}
