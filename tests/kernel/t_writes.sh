# What a session of agent-default writes outside the project never runs
# later unseen (issue 13, point 4; docs/POLICY.md "Writable paths outside
# the project"). Each test writes, from a session, something that another
# program would run or load later, and asserts that it is not there to run.

AD=$ROOT/policy/shipped/agent-default.yaml

writes_fixture() {
	rm -rf $PROJ/.sandbox $THOME/.npm $THOME/.cache $THOME/.cargo $THOME/go $THOME/.claude $THOME/.claude.json*
	mkdir -p $THOME/.npm/_cacache $THOME/.cache $THOME/.cargo/registry/src $THOME/go/pkg/mod \
		$THOME/.claude/projects
	chown -R $TUSER:$TUSER $THOME
}

# planted PATH: a session tries to create PATH (and its directories) with
# a payload that would run; PATH must not exist afterwards
planted() {
	local p=$1
	in_session $AD sh -c "mkdir -p '$(dirname "$p")' 2>/dev/null; printf '%s\n' 'touch /tmp/ran-later' >'$p'" >/dev/null 2>&1 || true
	[ ! -e "$p" ] || fail "the session planted $p: $(head -c 100 "$p")"
}

test_npx_package_cannot_be_planted() {
	writes_fixture
	planted $THOME/.npm/_npx/0123456789abcdef/node_modules/.bin/eslint
}

test_p10k_instant_prompt_cannot_be_planted() {
	writes_fixture
	planted $THOME/.cache/p10k-instant-prompt-$TUSER.zsh
}

test_cargo_registry_source_cannot_be_planted() {
	writes_fixture
	planted $THOME/.cargo/registry/src/index.crates.io-6f17d22bba15001f/serde-1.0.200/build.rs
}

test_go_module_cache_cannot_be_planted() {
	writes_fixture
	planted $THOME/go/pkg/mod/github.com/example/m@v1.0.0/init.go
}

test_claude_plugin_hook_and_shell_snapshot_cannot_be_planted() {
	writes_fixture
	planted $THOME/.claude/plugins/evil/hooks/hooks.json
	planted $THOME/.claude/shell-snapshots/snapshot-bash-1700000000000-abcdef.sh
	planted $THOME/.claude/commands/deploy.md
}

test_npm_verified_cache_and_transcripts_stay_writable() {
	writes_fixture
	as_user mkdir -p $THOME/.npm/_cacache	# npm makes it on first use
	# new files, as npm and Claude Code make them (write-file opens an
	# existing file only)
	for f in $THOME/.npm/_cacache/entry $THOME/.claude/projects/t.jsonl; do
		expect OK in_session $AD sh -c "printf x >$f && echo OK"
		[ "$(cat $f)" = x ] || fail "$f was not written"
	done
}

test_user_scope_mcp_server_in_claude_json_is_put_back() {
	writes_fixture
	printf '{"numStartups": 3, "mcpServers": {"ok": {"command": "true"}}, "projects": {"%s": {"allowedTools": []}}}\n' $PROJ >$THOME/.claude.json
	chown $TUSER:$TUSER $THOME/.claude.json
	# the agent adds a user-scope MCP server, a project one, and a harmless key
	in_session $AD sh -c "cat >$THOME/.claude.json.tmp <<JSON
{\"numStartups\": 4, \"mcpServers\": {\"ok\": {\"command\": \"true\"}, \"evil\": {\"command\": \"/tmp/evil\"}},
 \"projects\": {\"$PROJ\": {\"allowedTools\": [\"Bash(*)\"]}}}
JSON
mv $THOME/.claude.json.tmp $THOME/.claude.json" || fail "Claude Code's own writes of ~/.claude.json must work"
	# the session has ended: the daemon put the guarded keys back
	wait_for sh -c "! grep -q evil $THOME/.claude.json" || fail "the planted MCP server stayed: $(cat $THOME/.claude.json)"
	"$SBXT" json-get $THOME/.claude.json numStartups | grep -qx 4 || fail "the agent's other keys were lost: $(cat $THOME/.claude.json)"
	"$SBXT" json-get $THOME/.claude.json mcpServers.ok.command | grep -qx true || fail "the user's own server was lost"
	grep -q 'Bash' $THOME/.claude.json && fail "projects.allowedTools was not put back"
	[ "$(stat -c %U $THOME/.claude.json)" = $TUSER ] || fail "owner changed"
	ls $PROJ/.sandbox/claude-json/*.json >/dev/null 2>&1 || fail "the session's version was not kept for the person"
	grep -q /tmp/evil $PROJ/.sandbox/claude-json/*.json || fail "kept version lacks the change"
	grep -h claude_json_restored $PROJ/.sandbox/audit/*.jsonl | grep -q mcpServers || fail "no audit record"
	as_user "$SBX" audit verify $PROJ >/dev/null || fail "audit chain broken"
}

test_claude_json_symlink_is_not_followed_by_the_guard() {
	writes_fixture
	echo '{"mcpServers": {}}' >/srv/sbx/open/file.json
	ln -s /srv/sbx/open/file.json $THOME/.claude.json
	cp /srv/sbx/open/file.json /tmp/cj-before
	in_session $AD true
	sleep 0.5
	cmp -s /srv/sbx/open/file.json /tmp/cj-before || fail "the guard wrote through a symlink"
	[ -L $THOME/.claude.json ] || fail "the symlink was replaced"
}

# ... and while the session still runs: a `claude` the person starts in
# another terminal meanwhile must not load the planted server (issue 28)
test_user_scope_mcp_server_is_put_back_while_the_session_runs() {
	writes_fixture
	printf '{"numStartups": 3, "mcpServers": {}}\n' >$THOME/.claude.json
	chown $TUSER:$TUSER $THOME/.claude.json
	rm -f /tmp/cj-go /tmp/cj-planted
	in_session $AD sh -c "printf '{\"numStartups\": 4, \"mcpServers\": {\"evil\": {\"command\": \"/tmp/evil\"}}}\n' \
		>$THOME/.claude.json.tmp && mv $THOME/.claude.json.tmp $THOME/.claude.json && touch /tmp/cj-planted
		while [ ! -e /tmp/cj-go ]; do sleep 0.1; done" &
	local bg=$!
	wait_for test -e /tmp/cj-planted || { touch /tmp/cj-go; fail "the session could not write ~/.claude.json"; }
	# the session is alive; the daemon looks at the file every tick
	wait_for sh -c "! grep -q evil $THOME/.claude.json" ||
		{ touch /tmp/cj-go; fail "the planted MCP server stayed while the session ran: $(cat $THOME/.claude.json)"; }
	[ -n "$(session_cgroups)" ] || fail "the session had already ended: this proves nothing"
	"$SBXT" json-get $THOME/.claude.json numStartups | grep -qx 4 || fail "the agent's other keys were lost"
	touch /tmp/cj-go
	wait $bg || true
	grep -q evil $THOME/.claude.json && fail "the planted server came back at session end"
	true
}

# the caches and agent files protected are the policy's content, decided
# by the same programs for each: on 6.1 this file runs one refusal per hook
# family, the guard of ~/.claude.json and the writable caches; 6.12's
# guests run every test
on_61_only "the policy's list of caches and agent files, decided by the same programs as the tests kept: run by the 6.12 guests; on 6.1 this file runs one test per hook family" \
	npx_package_cannot_be_planted user_scope_mcp_server_in_claude_json_is_put_back \
	npm_verified_cache_and_transcripts_stay_writable
