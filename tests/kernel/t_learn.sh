# Learning (run --learn, policy/learn.c): a session whose policy's denies
# and asks are recorded instead of enforced (the test's policy asks; what
# a policy denies by a rule of its own, suggest lists apart), while agent-default's
# credentials and persistence paths stay refused; then policy suggest
# turns what it recorded into a patch, and the same work runs under the
# patch, enforced, with nothing refused. Judged by effect: the files read
# and written, the program run, the key not read, the events.

LP=/tmp/learn-policy.yaml
LPATCH=/tmp/learn-patch.yaml

learn_fixture() {
	rm -rf $PROJ/.sandbox /srv/sbx/denied/new /tmp/learn-*.out
	printf '%s\n' 'version: 1' 'extends: agent-default' 'files:' '  rules:' \
		'    - path: /srv/sbx/denied/' '      access: [read, write]' '      verdict: ask' \
		'      reason: the test'"'"'s asked tree' \
		'    - path: /opt/sbxbin/' '      access: exec' '      verdict: ask' \
		'      reason: the test'"'"'s asked programs' \
		'    - path: ~/.ssh/id_rsa' '      access: read' '      verdict: ask' \
		'      reason: closer than agent-default'"'"'s ~/.ssh/ rule, so it stays' >$LP
	chmod 644 $LP
}

# the work: reads and writes the denied tree, runs the forbidden program
# (a copy of true: OK once it ran), tries the key and a shell startup
# file; one line each
LEARN_WORK='$SBXT open /srv/sbx/denied/file
$SBXT open /srv/sbx/denied/new creat
$SBXT exec /opt/sbxbin/forbidden && echo OK
$SBXT open $HOME/.ssh/id_rsa
$SBXT open $HOME/.bashrc creat'

# run the work in a session (run's extra options first); its lines to OUT
learn_work() {
	local out=$1
	shift
	as_user env SBXT=$SBXT "$SBX" run "$@" --project $PROJ -- sh -c "$LEARN_WORK" >$out 2>$out.err ||
		true	# the last line's refusal is its status
}

test_learning_records_the_policys_refusals_and_keeps_credentials() {
	learn_fixture
	# the test can fail: enforced, the same work is refused
	learn_work /tmp/learn-enforced.out --policy $LP
	[ "$(sed -n 1p /tmp/learn-enforced.out)" = "ERR EPERM" ] ||
		fail "enforced read of the denied tree: $(cat /tmp/learn-enforced.out)"
	[ "$(sed -n 3p /tmp/learn-enforced.out)" = "ERR EPERM" ] || fail "enforced exec: $(sed -n 3p /tmp/learn-enforced.out)"
	before=$(cksum <$THOME/.bashrc 2>/dev/null || echo ABSENT)
	learn_work /tmp/learn-run.out --learn --policy $LP
	grep -q "is learning" /tmp/learn-run.out.err || fail "no first line: $(cat /tmp/learn-run.out.err)"
	sess=$(sed -n 's/^bpfsbx: session \([^ ]*\) is learning.*/\1/p' /tmp/learn-run.out.err)
	[ -n "$sess" ] || fail "no session name in: $(cat /tmp/learn-run.out.err)"
	# recorded, not enforced: the reads, the write and the exec went through
	[ "$(sed -n 1p /tmp/learn-run.out)" = "OK" ] || fail "learning read: $(sed -n 1p /tmp/learn-run.out)"
	[ "$(sed -n 2p /tmp/learn-run.out)" = "OK" ] && [ -e /srv/sbx/denied/new ] ||
		fail "learning write: $(sed -n 2p /tmp/learn-run.out)"
	[ "$(sed -n 3p /tmp/learn-run.out)" = "OK" ] || fail "learning exec: $(sed -n 3p /tmp/learn-run.out)"
	# the protected set holds: the key (agent-default's, and the project's
	# own rule closer to it) and a shell startup file
	[ "$(sed -n 4p /tmp/learn-run.out)" = "ERR EPERM" ] || fail "the key was read: $(sed -n 4p /tmp/learn-run.out)"
	[ "$(sed -n 5p /tmp/learn-run.out)" = "ERR EPERM" ] || fail ".bashrc opened for writing"
	[ "$(cksum <$THOME/.bashrc 2>/dev/null || echo ABSENT)" = "$before" ] || fail ".bashrc changed"
	# each event says what enforcing would have done, and which rule
	event session=$sess object=/srv/sbx/denied/file verdict=audit rule.would=ask
	event session=$sess operation=exec verdict=audit rule.would=ask
	event session=$sess object=$THOME/.ssh/id_rsa
	"$SBXT" event-match <(tail -n +$((EVENTS_FROM + 1)) $EVENTS) session=$sess \
		object=$THOME/.ssh/id_rsa verdict=audit >/dev/null && fail "the key's event is an audit"
	# suggest: the denied tree is in the patch, the key is listed apart
	"$SBX" policy suggest --events $EVENTS --session $sess --policy $LP >$LPATCH 2>/tmp/learn-suggest.err ||
		fail "suggest: $(cat /tmp/learn-suggest.err)"
	rules=$(grep -v '^ *#' $LPATCH)
	echo "$rules" | grep -q -- '- path: /srv/sbx/denied/' || fail "no rule for the asked tree: $(cat $LPATCH)"
	echo "$rules" | grep -q -- '- path: /opt/sbxbin/forbidden' || fail "no rule for the program: $(cat $LPATCH)"
	sed -n '/^# Not suggested/,$p' $LPATCH | grep -q 'id_rsa' || fail "the key is not listed apart: $(cat $LPATCH)"
	echo "$rules" | grep -q 'id_rsa\|bashrc' && fail "the patch opens a protected path: $(cat $LPATCH)"
	chmod 644 $LPATCH
	"$SBX" policy check $LPATCH >/dev/null 2>&1 || fail "the patch does not check: $("$SBX" policy check $LPATCH 2>&1 | head -3)"
	# the same work, enforced under the patch: nothing of it is refused
	# but what is protected
	rm -f /srv/sbx/denied/new
	EVENTS_FROM=$(wc -l <$EVENTS)
	learn_work /tmp/learn-after.out --policy $LPATCH
	[ "$(sed -n 1,3p /tmp/learn-after.out | tr '\n' ' ')" = "OK OK OK " ] ||
		fail "under the patch: $(cat /tmp/learn-after.out | tr '\n' ' ')"
	[ "$(sed -n 4p /tmp/learn-after.out)" = "ERR EPERM" ] || fail "the patch lets the key be read"
	"$SBXT" event-match <(tail -n +$((EVENTS_FROM + 1)) $EVENTS) object=/srv/sbx/denied/file >/dev/null &&
		fail "the work was refused again under the patch"
	rm -f /srv/sbx/denied/new
}

test_status_says_a_session_is_learning() {
	learn_fixture
	out=$(as_user "$SBX" run --learn --policy $LP --project $PROJ -- "$SBX" status 2>&1)
	echo "$out" | grep -q "LEARNING" || fail "status in a learning session: $out"
	out=$(as_user "$SBX" run --policy $LP --project $PROJ -- "$SBX" status 2>&1)
	echo "$out" | grep -q "LEARNING" && fail "an enforcing session shown as learning: $out"
	return 0
}

test_learning_needs_a_policy_that_extends_agent_default() {
	rm -f /tmp/learn-ran
	printf '%s\n' 'version: 1' 'files:' '  default: allow' 'network:' '  default: deny' >/tmp/learn-bare.yaml
	chmod 644 /tmp/learn-bare.yaml
	out=$(as_user "$SBX" run --learn --policy /tmp/learn-bare.yaml --project $PROJ -- touch /tmp/learn-ran 2>&1) &&
		fail "a learning session without agent-default started: $out"
	echo "$out" | grep -q "extends agent-default" || fail "run said: $out"
	[ ! -e /tmp/learn-ran ] || fail "the command ran"
}

# the person watching the project sees that a session of it is learning
# (nothing it does reaches the queue), and no longer once it has ended
LTMS=/tmp/tmux-$TUID/learn
learn_screen() { as_user tmux -S $LTMS capture-pane -p -t w; }
learn_screen_has() { learn_screen | grep -q -- "$1"; }
test_watch_shows_a_learning_session_of_its_project() {
	command -v tmux >/dev/null || skip "tmux is not installed (make deps)"
	learn_fixture
	rm -rf /tmp/tmux-$TUID /tmp/learn.go
	mkdir -m 700 /tmp/tmux-$TUID && chown $TUSER /tmp/tmux-$TUID
	mkdir -p $PROJ/.sandbox && chown $TUSER $PROJ/.sandbox
	as_user env TERM=xterm tmux -S $LTMS new-session -d -s w -x 160 -y 30 "$SBX watch $PROJ" ||
		fail "tmux"
	wait_for learn_screen_has 'bpfsbx watch' || fail "watch shows nothing"
	learn_screen | grep -q LEARNING && fail "LEARNING before any session: $(learn_screen)"
	as_user "$SBX" run --learn --policy $LP --project $PROJ -- \
		sh -c 'while [ ! -e /tmp/learn.go ]; do sleep 0.1; done' 2>/dev/null &
	held=$!
	for _ in $(seq 100); do learn_screen | grep -q LEARNING && break; sleep 0.2; done
	learn_screen | grep -q "LEARNING.*$PROJ" || fail "no LEARNING line: $(learn_screen)"
	touch /tmp/learn.go
	wait $held || true
	for _ in $(seq 100); do learn_screen | grep -q LEARNING || break; sleep 0.2; done
	learn_screen | grep -q LEARNING && fail "LEARNING after the session ended: $(learn_screen)"
	as_user tmux -S $LTMS kill-server || true
	return 0
}

# reload --shadow: what a candidate policy would change for a live session,
# from what it recorded, without switching it
test_shadow_shows_what_a_new_policy_changes_and_switches_nothing() {
	learn_fixture
	rm -f /tmp/learn.go /tmp/learn-held.out
	# the candidate: the same policy without its rule for the denied tree
	awk '/path: \/srv\/sbx\/denied\//{skip=4} skip{skip--; next} {print}' $LP >/tmp/learn-next.yaml
	grep -q 'sbxbin' /tmp/learn-next.yaml && ! grep -q '/srv/sbx/denied' /tmp/learn-next.yaml ||
		fail "the candidate: $(cat /tmp/learn-next.yaml)"
	chmod 644 /tmp/learn-next.yaml
	as_user env SBXT=$SBXT "$SBX" run --policy $LP --project $PROJ -- sh -c \
		'echo "$BPFSBX_SESSION"; $SBXT open /srv/sbx/denied/file
		while [ ! -e /tmp/learn.go ]; do sleep 0.1; done; $SBXT open /srv/sbx/denied/file' \
		>/tmp/learn-held.out 2>&1 &
	held=$!
	wait_for grep -q EPERM /tmp/learn-held.out || fail "the session: $(cat /tmp/learn-held.out)"
	sess=$(head -n 1 /tmp/learn-held.out)
	event session=$sess object=/srv/sbx/denied/file verdict=ask
	out=$("$SBX" reload "$sess" --shadow /tmp/learn-next.yaml --events $EVENTS 2>&1) ||
		fail "reload --shadow: $out"
	echo "$out" | grep -q "read /srv/sbx/denied/file: ask -> allow" || fail "no change shown: $out"
	echo "$out" | grep -q "nothing was switched" || fail "$out"
	# and the session still runs its own policy
	touch /tmp/learn.go
	wait $held || true
	[ "$(sed -n 3p /tmp/learn-held.out)" = "ERR EPERM" ] || fail "after --shadow: $(cat /tmp/learn-held.out)"
	# an ended session has nothing to shadow
	out=$("$SBX" reload "$sess" --shadow $LP --events $EVENTS 2>&1) && fail "the session has ended: $out"
	echo "$out" | grep -q "no session of yours is named" || fail "$out"
	return 0
}

# "always", widened (queue/propose.c): a person answers a kernel ask with
# the rule for its directory, written into the project's policy; the
# session's retry goes through, a later session reads a sibling without a
# request, and what the rule does not name still asks
widen_fixture() {
	rm -rf $PROJ/.sandbox $THOME/notes
	mkdir -p $PROJ/.sandbox $THOME/notes/proj1/deep $THOME/notes/other
	for f in proj1/a.txt proj1/deep/b.txt other/c.txt; do echo "note $f" >$THOME/notes/$f; done
	printf '%s\n' '# the project'"'"'s own policy' 'version: 1' 'extends: agent-default' 'files:' \
		'  rules:' '    - path: ~/notes/' '      access: read' '      verdict: ask' \
		'      reason: notes are asked' >$PROJ/.sandbox/policy.yaml
	chown -R $TUSER $PROJ/.sandbox $THOME/notes
}

test_a_rule_widened_by_the_person_answers_the_session_and_later_ones() {
	widen_fixture
	pol=$PROJ/.sandbox/policy.yaml
	stepper $pol $THOME/notes/proj1/a.txt 2
	[ "$(tried 1)" = "ERR EPERM" ] || fail "not asked: $(tried 1)"
	id=$(one_pending)
	out=$(as_user "$SBX" approve "$id" --rule --dry-run --dir $PROJ 2>&1) || fail "no rule offered: $out"
	echo "$out" | grep -q -- '- path: ~/notes/proj1/$' || fail "the proposal: $out"
	grep -q proj1 $pol && fail "a dry run wrote the policy"
	out=$(as_user "$SBX" approve "$id" --rule --yes --dir $PROJ 2>&1) || fail "approve --rule: $out"
	head -n 1 $pol | grep -q "^# the project's own policy" || fail "the person's comment was lost: $(cat $pol)"
	grep -q '^    - path: ~/notes/proj1/$' $pol || fail "the rule is not in the policy: $(cat $pol)"
	[ "$(stat -c %U $pol)" = $TUSER ] || fail "the policy changed owner: $(stat -c %U $pol)"
	[ "$(qfield done $id decision.scope)" = session ] || fail "scope $(qfield done $id decision.scope)"
	# the session's retry: the object the person answered
	touch /tmp/go.2
	wait $STEPPER || true
	[ "$(tried 2)" = "OK" ] || fail "the retry after the rule: $(tried 2)"
	# a later session starts with the rule: a sibling below it is read
	# without a request; the other directory and the key are still refused
	got=$(each_in_session $pol "$SBXT" open {} -- $THOME/notes/proj1/deep/b.txt \
		$THOME/notes/other/c.txt $THOME/.ssh/id_rsa | cut -f2 | tr '\n' ' ')
	[ "$got" = "OK ERR EPERM ERR EPERM " ] || fail "under the rule: $got"
	pending_ids | while read -r p; do qfield pending "$p" object.path; done | grep -q deep &&
		fail "the sibling was asked"
	pending_ids | while read -r p; do qfield pending "$p" object.path; done | grep -q other/c.txt ||
		fail "the other directory was not asked"
	return 0
}

# inside a learning session the connectors learn the policy as the daemon
# did: what the project's commands section asks is recorded with the verdict
# it would have had, not asked; agent-default's own command rules hold. The
# daemon says so (status' caller), never the environment: an enforcing
# session with BPFSBX_LEARN set still asks. (agent-default's su, denied,
# stands for its command rules: its sudo asks, and would file a request.)
learn_hook_fixture() {
	rm -rf $PROJ/.sandbox $PROJ/.claude $PROJ/.mcp.json
	as_user "$SBX" init $PROJ --claude >/dev/null || fail "init"
	# asked by the section's default: a patch can open what the project's
	# own rule asks only by changing that rule (suggest lists it apart)
	printf '%s\n' 'commands:' '  default: ask' >>$PROJ/.sandbox/policy.yaml
}

hook_in() {	# hook_in COMMAND FILE: a PreToolUse of Bash COMMAND
	printf '{"session_id":"s1","transcript_path":"/tmp/t.jsonl","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"%s"},"tool_use_id":"toolu_l"}' \
		"$PROJ" "$1" >"$2"
	chmod 644 "$2"
}

test_connectors_of_a_learning_session_record_instead_of_asking() {
	learn_hook_fixture
	hook_in "echo ask-me now" /tmp/lh-ask.in
	hook_in "su root" /tmp/lh-sudo.in
	as_user "$SBX" run --learn --project $PROJ -- sh -c "cd $PROJ &&
		BPFSBX_HOOK_WAIT_MS=3000 $SBX hook pre-tool-use </tmp/lh-ask.in >/tmp/lh-ask.out 2>/tmp/lh-ask.err;
		echo rc=\$? >>/tmp/lh-ask.out
		BPFSBX_HOOK_WAIT_MS=3000 $SBX hook pre-tool-use </tmp/lh-sudo.in >/tmp/lh-sudo.out 2>&1" 2>/tmp/lh-run.err || true
	sess=$(sed -n 's/^bpfsbx: session \([^ ]*\) is learning.*/\1/p' /tmp/lh-run.err)
	[ -n "$sess" ] || fail "no learning session: $(cat /tmp/lh-run.err)"
	grep -q 'rc=0' /tmp/lh-ask.out || fail "the hook: $(cat /tmp/lh-ask.out /tmp/lh-ask.err)"
	grep -q permissionDecision /tmp/lh-ask.out && fail "learning, the hook decided: $(cat /tmp/lh-ask.out)"
	[ -z "$(pending_ids)" ] || fail "learning, a request was filed: $(pending_ids)"
	grep -h '"decision":"audit"' $PROJ/.sandbox/audit/*.jsonl | grep '"would":"ask"' | grep -q 'ask-me' ||
		fail "no audit record with would=ask: $(cat $PROJ/.sandbox/audit/*.jsonl | tail -3)"
	# suggest reads it as it reads a command request: a rule for echo, none for su
	out=$(cd $PROJ && "$SBX" policy suggest --session "$sess" --events $EVENTS 2>/tmp/lh-sg.err) ||
		fail "suggest: $(cat /tmp/lh-sg.err)"
	rules=$(printf '%s\n' "$out" | grep -v '^ *#')
	printf '%s\n' "$rules" | grep -q -- '- command: echo$' || fail "no rule for the learned command: $out"
	printf '%s\n' "$rules" | grep -q 'su$' && fail "su suggested: $out"
	"$SBXT" json-get /tmp/lh-sudo.out hookSpecificOutput.permissionDecision | grep -qx deny ||
		fail "learning let agent-default's su through: $(cat /tmp/lh-sudo.out)"
	# enforcing, whatever the environment says: asked (and, unanswered, denied)
	as_user "$SBX" run --project $PROJ -- sh -c "cd $PROJ && BPFSBX_LEARN=1 BPFSBX_LEARNING=1 \
		BPFSBX_HOOK_WAIT_MS=2000 $SBX hook pre-tool-use </tmp/lh-ask.in >/tmp/lh-enf.out 2>/tmp/lh-enf.err" || true
	"$SBXT" json-get /tmp/lh-enf.out hookSpecificOutput.permissionDecision | grep -qx deny ||
		fail "enforcing, the ask was not asked: $(cat /tmp/lh-enf.out /tmp/lh-enf.err)"
	grep -q "waiting up to 2 s for a person to decide request" /tmp/lh-enf.err ||
		fail "enforcing, no request was filed: $(cat /tmp/lh-enf.err)"
	# nor from a socket the environment names that is not root's: a fake
	# daemon the agent runs in its own session (whose listeners the
	# session may always reach) saying "learning" is not believed
	command -v socat >/dev/null || skip "socat is not installed (make deps)"
	rm -f /tmp/lh-fake.sock
	printf '%s\n' '{"ok":true,"id":"x","project":"p","caller":{"session":"x","learning":true}}' >/tmp/lh-fake.json
	chmod 644 /tmp/lh-fake.json
	rc=0
	as_user "$SBX" run --project $PROJ -- sh -c "cd $PROJ
		socat UNIX-LISTEN:/tmp/lh-fake.sock,fork SYSTEM:'cat /tmp/lh-fake.json' & fake=\$!
		for i in \$(seq 50); do [ -S /tmp/lh-fake.sock ] && break; sleep 0.1; done
		BPFSBX_CONTROL_SOCK=/tmp/lh-fake.sock BPFSBX_HOOK_WAIT_MS=2000 $SBX hook pre-tool-use \
			</tmp/lh-ask.in >/tmp/lh-fake.out 2>/tmp/lh-fake.err; rc=\$?
		kill \$fake; exit \$rc" || rc=$?
	"$SBXT" json-get /tmp/lh-fake.out hookSpecificOutput.permissionDecision 2>/dev/null | grep -qx deny ||
		[ $rc = 2 ] || fail "a fake daemon's word let the ask through: rc $rc $(cat /tmp/lh-fake.out /tmp/lh-fake.err)"
	grep -q "not the bpfsbx daemon's socket" /tmp/lh-fake.err ||
		fail "the fake socket was not named: $(cat /tmp/lh-fake.err)"
	return 0
}

flows_61_only learning_records_the_policys_refusals_and_keeps_credentials \
	learning_needs_a_policy_that_extends_agent_default
