# What a session of agent-default writes outside the project never runs
# later (tests/kernel/t_writes.sh) on the fallback tier: the twins refuse
# the caches, and the plan lets Landlock grant the writes a name rule
# allows (.claude.json*: Claude Code's temporary file and lock beside
# ~/.claude.json, in a home no other rule lets be written).
. "$ROOT/tests/kernel/t_writes.sh"
nobpf_61_only npx_package_cannot_be_planted user_scope_mcp_server_in_claude_json_is_put_back
