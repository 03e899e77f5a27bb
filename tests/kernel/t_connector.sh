# The agent connectors inside a kernel session: the hook and the MCP
# server run confined, cannot write .sandbox/, and reach the person
# through the daemon's control socket instead.

connector_fixture() {
	rm -rf $PROJ/.sandbox $PROJ/.claude $PROJ/.mcp.json
	echo "API_KEY=top-secret" >$PROJ/.env
	chown $TUSER $PROJ/.env
	as_user "$SBX" init $PROJ --claude --mcp >/dev/null || fail "init"
}

hook_input() {
	printf '{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":"%s","hook_event_name":"%s","tool_name":"Bash","tool_input":{"command":"%s"},"tool_use_id":"toolu_1"%s}' \
		"$PROJ" "$1" "$2" "${3:-}"
}

test_hook_in_session_escalates_through_the_daemon() {
	connector_fixture
	hook_input PreToolUse "cat $PROJ/.env" >/tmp/hook.in
	chmod 644 /tmp/hook.in
	in_session $PROJ/.sandbox/policy.yaml sh -c \
		"cd $PROJ && BPFSBX_HOOK_WAIT_MS=30000 $SBX hook pre-tool-use </tmp/hook.in >/tmp/hook.out 2>/tmp/hook.err" &
	bg=$!
	id=$(one_pending)
	# the request came from inside the session, written by the daemon
	[ "$(qfield pending $id kind)" = command ] || fail "kind $(qfield pending $id kind)"
	qfield pending $id session | grep -q . || fail "no session on the request"
	qfield pending $id object.command | grep -q ".env" || fail "command"
	approve $id once	# the approver runs the command, outside the session
	wait $bg || fail "hook failed: $(cat /tmp/hook.err)"
	"$SBXT" json-get /tmp/hook.out hookSpecificOutput.permissionDecision | grep -qx deny ||
		fail "decision: $(cat /tmp/hook.out)"
	"$SBXT" json-get /tmp/hook.out hookSpecificOutput.permissionDecisionReason | grep -q "top-secret" ||
		fail "the approved command's output did not reach the agent: $(cat /tmp/hook.out)"
}

test_hook_in_session_cannot_write_the_queue_itself() {
	connector_fixture
	# no daemon socket reachable: the hook must fail closed, not write
	hook_input PreToolUse "cat $PROJ/.env" >/tmp/hook.in
	rc=0
	in_session $PROJ/.sandbox/policy.yaml sh -c \
		"cd $PROJ && BPFSBX_CONTROL_SOCK=/nonexistent BPFSBX_HOOK_WAIT_MS=2000 $SBX hook pre-tool-use </tmp/hook.in >/tmp/hook.out 2>/tmp/hook.err" || rc=$?
	[ $rc = 2 ] || fail "hook exit $rc (want 2, fail closed): $(cat /tmp/hook.out /tmp/hook.err)"
	[ -z "$(pending_ids)" ] || fail "a request was written from inside the session"
}

test_post_tool_use_audit_from_session() {
	connector_fixture
	hook_input PostToolUse "ls" ',"tool_response":{"stdout":"x","stderr":""}' >/tmp/post.in
	in_session $PROJ/.sandbox/policy.yaml sh -c "cd $PROJ && $SBX hook post-tool-use </tmp/post.in" >/dev/null ||
		fail "post-tool-use failed"
	as_user "$SBX" audit verify $PROJ >/dev/null || fail "audit chain broken"
	grep -h '"event":"connector"' $PROJ/.sandbox/audit/*.jsonl | grep -q toolu_1 ||
		fail "no connector record in the audit log"
}

# The hook compiles the project's policy in the session. Reading an
# object's inode generation (ext4 gives one) is an open for reading, which
# the kernel decides there: a denied directory would be a denial and an
# asked one a request to the person, for reads the agent never made. On an
# ext4 mount, as a home on ext4 is.
test_a_hook_in_session_reads_nothing_its_policy_refuses() {
	local m=/mnt/sbx-hookgen
	ext4_scratch $m /tmp/sbx-hookgen.img
	mkdir -p $m/keys $m/asked
	echo KEY >$m/keys/id
	echo X >$m/asked/f
	chown -R $TUSER: $m
	connector_fixture
	printf '%s\n' 'version: 1' 'extends: agent-default' 'files:' '  rules:' \
		"    - {path: $m/keys/, access: read, verdict: deny, reason: keys}" \
		"    - {path: $m/keys/pub, access: read, verdict: allow, reason: pub}" \
		"    - {path: $m/asked/, access: read, verdict: ask, reason: asked}" \
		>$PROJ/.sandbox/policy.yaml
	hook_input PreToolUse "ls" >/tmp/hook.in
	chmod 644 /tmp/hook.in
	from=$(wc -l <$EVENTS)
	in_session $PROJ/.sandbox/policy.yaml sh -c \
		"cd $PROJ && BPFSBX_HOOK_WAIT_MS=5000 $SBX hook pre-tool-use </tmp/hook.in >/tmp/hook.out 2>/tmp/hook.err" ||
		fail "hook failed: $(cat /tmp/hook.err)"
	sleep 0.5
	refused=$(tail -n +$((from + 1)) $EVENTS | grep "$m" | grep -c '"verdict":"\(deny\|ask\)"' || true)
	pend=$(pending_ids)
	umount $m
	rm -f /tmp/sbx-hookgen.img
	[ "$refused" = 0 ] || fail "the hook's own compile was refused $refused times: $(tail -n +$((from + 1)) $EVENTS | grep "$m" | head -2)"
	[ -z "$pend" ] || fail "the hook's own compile asked the person: $pend"
}

flows_61_only hook_in_session_cannot_write_the_queue_itself a_hook_in_session_reads_nothing_its_policy_refuses
