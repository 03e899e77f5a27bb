# A grant is for the object the person saw (issue 13, point 1). Each test
# plants a symlink (or a hard link) so that approving "read
# proj/asked/fixture.txt" would, if the grant followed names, hand out
# ~/vault/secret.txt instead; each is judged by whether the secret's
# content ever reached the session.

SECRET_TEXT="TOPSECRET-4711"
FIX=$PROJ/asked/fixture.txt
SECRET=$THOME/vault/secret.txt

grants_fixture() {
	rm -rf $PROJ/.sandbox $PROJ/asked $THOME/vault
	mkdir -p $PROJ/asked $THOME/vault $PROJ/.sandbox
	echo "$SECRET_TEXT" >$SECRET
	echo "fixture-content" >$FIX
	cp $POL/grants.yaml $PROJ/.sandbox/policy.yaml
	chown -R $TUSER:$TUSER $PROJ $THOME/vault
}

# what the person would approve: only what was shown as the fixture
approve_if_fixture() {
	local id=$1 scope=${2:-once}
	[ "$(qfield pending $id object.path)" = "$FIX" ] || return 1
	as_user "$SBX" approve "$id" --dir $PROJ --scope "$scope" --yes >/tmp/approve.out 2>&1
}

# the session's reads, for the leak check
leaked() { grep -q "$SECRET_TEXT" "$@" 2>/dev/null; }

# mcp_access PATH: request_access through the MCP server inside a session
mcp_access() {
	printf '%s\n' \
		'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"request_access\",\"arguments\":{\"path\":\"$1\",\"access\":\"read\",\"reason\":\"test\"}}}" \
		>/tmp/mcp.in
	chmod 644 /tmp/mcp.in
	in_session $PROJ/.sandbox/policy.yaml sh -c \
		"cd $PROJ && BPFSBX_MCP_WAIT_MS=0 $SBX mcp --project $PROJ </tmp/mcp.in" >/tmp/mcp.out 2>&1 || true
}

test_symlink_planted_before_the_request_shows_and_grants_the_target() {
	grants_fixture
	rm $FIX && as_user ln -s $SECRET $FIX
	out=$(in_session $PROJ/.sandbox/policy.yaml cat $FIX 2>&1 || true)
	leaked <<<"$out" && fail "leaked before any approval"
	id=$(one_pending)
	# the kernel asked for the object the open reached, and says so
	[ "$(qfield pending $id object.path)" = $SECRET ] || fail "shown as $(qfield pending $id object.path)"
	[ "$(qfield pending $id object.type)" = file ] || fail "type $(qfield pending $id object.type)"
	approve_if_fixture $id && fail "the request was shown as the fixture"
	out=$(in_session $PROJ/.sandbox/policy.yaml cat $FIX 2>&1 || true)
	leaked <<<"$out" && fail "the secret leaked: $out"
	return 0
}

test_request_access_for_a_symlink_is_refused_with_its_target() {
	grants_fixture
	rm $FIX && as_user ln -s $SECRET $FIX
	mcp_access $FIX
	grep -q "symbolic link to $SECRET" /tmp/mcp.out || fail "no refusal naming the target: $(cat /tmp/mcp.out)"
	[ -z "$(pending_ids)" ] || fail "a request was filed for the symlink"
	out=$(in_session $PROJ/.sandbox/policy.yaml cat $FIX 2>&1 || true)
	leaked <<<"$out" && fail "the secret leaked: $out"
	return 0
}

test_request_access_through_a_symlinked_directory_shows_the_resolved_path() {
	grants_fixture
	as_user ln -s $THOME/vault $PROJ/asked/dirlink
	mcp_access $PROJ/asked/dirlink/secret.txt
	id=$(one_pending)
	[ "$(qfield pending $id object.path)" = $SECRET ] ||
		fail "shown as $(qfield pending $id object.path), not resolved"
	approve_if_fixture $id && fail "shown as the fixture"
	return 0
}

test_symlink_swapped_in_between_request_and_approval_is_not_granted() {
	grants_fixture
	stepper $PROJ/.sandbox/policy.yaml $FIX 2
	[ "$(tried 1)" = "ERR EPERM" ] || fail "first try: $(tried 1)"
	id=$(one_pending)
	[ "$(qfield pending $id object.path)" = $FIX ] || fail "path"
	# the agent swaps the file for a symlink to the secret
	rm $FIX && as_user ln -s $SECRET $FIX
	approve_if_fixture $id && fail "approve accepted a stale request: $(cat /tmp/approve.out)"
	grep -q "symbolic link" /tmp/approve.out || fail "no reason for the person: $(cat /tmp/approve.out)"
	[ "$(qfield done $id decision.verdict)" = deny ] || fail "not denied"
	touch /tmp/go.2
	[ "$(tried 2)" = "ERR EPERM" ] || fail "retry through the swapped name: $(tried 2)"
	wait $STEPPER || true
	out=$(in_session $PROJ/.sandbox/policy.yaml cat $FIX 2>&1 || true)
	leaked <<<"$out" && fail "the secret leaked: $out"
	return 0
}

test_daemon_refuses_a_grant_whose_path_changed_after_the_approver_checked() {
	grants_fixture
	stepper $PROJ/.sandbox/policy.yaml $FIX 2
	tried 1 >/dev/null
	id=$(one_pending)
	rm $FIX && as_user ln -s $SECRET $FIX
	# the approver's check is skipped: a decision as it would be written
	# by an approver that checked a moment before the swap
	done=$PROJ/.sandbox/escalations/done
	"$SBXT" json-approve <$PROJ/.sandbox/escalations/pending/$id.json >$done/.tmp
	rm $PROJ/.sandbox/escalations/pending/$id.json
	mv $done/.tmp $done/$id.json && chown -R $TUSER:$TUSER $done
	wait_for grep -q grant_refused $PROJ/.sandbox/audit/*.jsonl || fail "no grant_refused record: $(tail -3 $DLOG)"
	grep -h grant_refused $PROJ/.sandbox/audit/*.jsonl | grep -q "symbolic link" || fail "no reason"
	touch /tmp/go.2
	[ "$(tried 2)" = "ERR EPERM" ] || fail "retry: $(tried 2)"
	wait $STEPPER || true
	out=$(in_session $PROJ/.sandbox/policy.yaml cat $FIX 2>&1 || true)
	leaked <<<"$out" && fail "the secret leaked: $out"
	return 0
}

test_request_access_then_symlink_swap_is_not_granted() {
	grants_fixture
	mcp_access $FIX
	id=$(one_pending)
	[ "$(qfield pending $id object.type)" = file ] || fail "no identity on the request: $(cat $PROJ/.sandbox/escalations/pending/$id.json)"
	rm $FIX && as_user ln -s $SECRET $FIX
	approve_if_fixture $id && fail "approved a stale request"
	sleep 0.3
	out=$(in_session $PROJ/.sandbox/policy.yaml cat $FIX 2>&1 || true)
	leaked <<<"$out" && fail "the secret leaked: $out"
	return 0
}

test_always_approval_does_not_follow_a_symlink_planted_between_sessions() {
	grants_fixture
	out=$(in_session $PROJ/.sandbox/policy.yaml cat $FIX 2>&1 || true)
	id=$(one_pending)
	approve_if_fixture $id always || fail "approve: $(cat /tmp/approve.out)"
	grep -q "ino:" $PROJ/.sandbox/remembered.yaml || fail "no identity remembered: $(cat $PROJ/.sandbox/remembered.yaml)"
	# the next session gets the file the person approved
	expect fixture-content in_session $PROJ/.sandbox/policy.yaml cat $FIX
	# between sessions: the file is replaced by a symlink to the secret
	rm $FIX && as_user ln -s $SECRET $FIX
	out=$(in_session $PROJ/.sandbox/policy.yaml cat $FIX 2>&1 || true)
	leaked <<<"$out" && fail "the always grant followed the symlink: $out"
	# and a new file under the old name is asked again, with the reason
	rm $FIX && echo "new-content" >$FIX && chown $TUSER $FIX
	out=$(in_session $PROJ/.sandbox/policy.yaml cat $FIX 2>&1 || true)
	echo "$out" | grep -q new-content && fail "an always grant carried over to a new file"
	nid=$(pending_ids | tail -n 1)
	[ -n "$nid" ] || fail "not asked again"
	qfield pending $nid notice | grep -q "another object" || fail "no reason shown: $(qfield pending $nid notice)"
	return 0
}

test_a_hard_linked_file_is_not_granted() {
	grants_fixture
	rm $FIX && as_user ln $SECRET $FIX
	stepper $PROJ/.sandbox/policy.yaml $FIX 2
	tried 1 >/dev/null
	id=$(one_pending)
	[ "$(qfield pending $id object.nlink)" = 2 ] || fail "nlink $(qfield pending $id object.nlink)"
	approve_if_fixture $id && fail "approved a file with two names"
	grep -q "hard links" /tmp/approve.out || fail "no reason: $(cat /tmp/approve.out)"
	touch /tmp/go.2
	[ "$(tried 2)" = "ERR EPERM" ] || fail "retry: $(tried 2)"
	wait $STEPPER || true
}

# The daemon deletes a session's grants when it ends by the keys it
# recorded (no walk of the map): the remembered grant the session was
# given at its start must be among them.
test_a_sessions_grants_leave_the_kernel_when_it_ends() {
	grants_fixture
	in_session $PROJ/.sandbox/policy.yaml cat $FIX >/dev/null 2>&1 || true
	id=$(one_pending)
	approve_if_fixture $id always || fail "approve: $(cat /tmp/approve.out)"
	rm -f /tmp/g.out /tmp/g.cg /tmp/go.g
	in_session $PROJ/.sandbox/policy.yaml sh -c "$SBXT cgroup >/tmp/g.cg; cat $FIX >/tmp/g.out
		while [ ! -e /tmp/go.g ]; do sleep 0.1; done" &
	bg=$!
	wait_for test -s /tmp/g.out || fail "the session read nothing"
	grep -q fixture-content /tmp/g.out || fail "the remembered grant was not applied: $(cat /tmp/g.out)"
	entries_leave_with_the_session sbx_grants /tmp/g.cg /tmp/go.g $bg
}

# the daemon's checks of what a person approved (symlinks, swaps, hard
# links) are user-space code, the same on every kernel; on 6.1 the tests
# whose kernel step is the grant map's (the inode a grant names, the
# entries leaving with the session) run, 6.12's guests run them all
on_61_only "the daemon's checks of an approved path, user-space code the same on every kernel: run by the 6.12 guests; on 6.1 this file runs its tests of the grant map" \
	symlink_swapped_in_between_request_and_approval_is_not_granted \
	a_sessions_grants_leave_the_kernel_when_it_ends
