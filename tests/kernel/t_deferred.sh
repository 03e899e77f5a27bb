# Deferred execution (issue 28, class 1): a session of agent-default never
# leaves behind something that the person's own tools run later, outside any
# session. Judged by effect: the session tries to plant a command through
# each route; then, as the person and outside every session, git status,
# diff and log run in every place the plant could reach, and the marker the
# planted command would create must not exist. For the files that other
# tools load (IDE tasks, devcontainers, direnv, agents' settings and
# instructions), the write must be refused with the policy's verdict and the
# file left as it was. docs/POLICY.md "Deferred execution" has the table.

AD=$ROOT/policy/shipped/agent-default.yaml
MARK=/tmp/deferred-ran
PAYLOAD=/tmp/dfr-payload

deferred_fixture() {
	rm -rf $PROJ/.sandbox $PROJ/.git $PROJ/nested $PROJ/sub $PROJ/lib $PROJ/.gitattributes \
		$PROJ/.vscode $PROJ/.devcontainer $PROJ/.envrc $PROJ/.cursor $PROJ/.claude \
		$PROJ/.github $PROJ/.mcp.json $PROJ/CLAUDE.md $PROJ/AGENTS.md $PROJ/GEMINI.md \
		$PROJ/.clinerules $PROJ/.gemini $PROJ/.husky $PROJ/.pre-commit-config.yaml \
		$THOME/.claude $THOME/.codex $THOME/.cursor $THOME/.gemini $THOME/.gitconfig \
		$THOME/.config/git $THOME/.config/Code /tmp/dfr-* $MARK*
	# the person's project is a repository with one commit, made outside
	as_user sh -c "cd $PROJ && git init -q && git add readme.txt &&
		git -c user.email=p@e -c user.name=person commit -qm init" || fail "setup: git init"
	# what a planted command would run: it leaves the marker
	printf '#!/bin/sh\ntouch %s\ncat\n' $MARK >$PAYLOAD
	chmod 755 $PAYLOAD
	chown $TUSER:$TUSER $PAYLOAD
}

# outside DIR...: the person's git in each DIR, outside any session: status,
# diff and log (fsmonitor, filters, diff drivers, include.path) and an alias
# a planted config could define
outside() {
	local d
	for d in "$@"; do
		[ -d "$d" ] || continue
		as_user sh -c "cd '$d' && echo change >>readme.txt 2>/dev/null; git status >/dev/null 2>&1;
			git diff >/dev/null 2>&1; git log -1 >/dev/null 2>&1; git st >/dev/null 2>&1;
			git -c user.email=p@e -c user.name=person commit -qam outside >/dev/null 2>&1" || true
	done
	[ ! -e $MARK ] || fail "a command planted by the session ran in the person's git"
}

# The check can fail: the same plant, made by the person, runs.
test_outside_git_runs_a_planted_fsmonitor() {
	deferred_fixture
	as_user sh -c "git init -q /tmp/dfr-ctl && cd /tmp/dfr-ctl && echo a >readme.txt &&
		git config core.fsmonitor $PAYLOAD" || fail "control setup"
	as_user sh -c "cd /tmp/dfr-ctl && git status >/dev/null 2>&1" || true
	[ -e $MARK ] || fail "the control plant did not run: this test could not see a plant"
	rm -f $MARK
}

test_project_repo_config_cannot_plant_a_command() {
	deferred_fixture
	printf '[core]\n\tfsmonitor = %s\n' $PAYLOAD >/tmp/dfr-include
	chown $TUSER:$TUSER /tmp/dfr-include
	in_session $AD sh -c "cd $PROJ
		git config core.fsmonitor $PAYLOAD
		git config core.hooksPath /tmp/dfr-hooks
		git config alias.st '!$PAYLOAD'
		git config filter.x.clean $PAYLOAD; echo '* filter=x' >.gitattributes
		git config diff.x.command $PAYLOAD; echo '* diff=x' >>.gitattributes
		git config include.path /tmp/dfr-include
		git config core.sshCommand $PAYLOAD
		printf '[core]\n\tfsmonitor = $PAYLOAD\n' >>.git/config
		printf '[core]\n\tfsmonitor = $PAYLOAD\n' >.git/config.worktree
		mkdir -p /tmp/dfr-common; printf '[core]\n\tfsmonitor = $PAYLOAD\n' >/tmp/dfr-common/config
		echo /tmp/dfr-common >.git/commondir
		mkdir -p /tmp/dfr-hooks; cp $PAYLOAD /tmp/dfr-hooks/pre-commit
		cp $PAYLOAD .git/hooks/pre-commit; cp $PAYLOAD .git/hooks/post-commit" >/dev/null 2>&1 || true
	grep -q "$PAYLOAD\|dfr-" $PROJ/.git/config && fail "planted in .git/config: $(cat $PROJ/.git/config)"
	for f in config.worktree commondir hooks/pre-commit hooks/post-commit; do
		[ ! -e $PROJ/.git/$f ] || fail "planted .git/$f"
	done
	# git config writes config.lock (the project's .git is writable) and is
	# refused at the rename onto config; the raw append is refused at open
	event object=$PROJ/.git/config verdict=ask
	outside $PROJ
}

test_global_git_config_cannot_plant_a_command() {
	deferred_fixture
	mkdir -p $THOME/.config && chown $TUSER:$TUSER $THOME/.config
	in_session $AD sh -c "git config --global core.fsmonitor $PAYLOAD
		git config --global alias.st '!$PAYLOAD'
		mkdir -p $THOME/.config/git; printf '[core]\n\tfsmonitor = $PAYLOAD\n' >$THOME/.config/git/config
		printf '* filter=x\n' >$THOME/.config/git/attributes" >/dev/null 2>&1 || true
	[ ! -e $THOME/.gitconfig ] || fail "planted ~/.gitconfig: $(cat $THOME/.gitconfig)"
	[ ! -e $THOME/.config/git/config ] || fail "planted ~/.config/git/config"
	outside $PROJ
}

# Repositories the session makes itself, which git later reads for the
# person: nested ones in the project, and ones a .git file points to.
test_nested_and_redirected_repositories_cannot_plant_a_command() {
	deferred_fixture
	in_session $AD sh -c "cd $PROJ
		git init -q nested; cd nested && git config core.fsmonitor $PAYLOAD; cd $PROJ
		mkdir -p sub/.git; printf '[core]\n\tfsmonitor = $PAYLOAD\n' >sub/.git/config
		git init -q --bare /tmp/dfr-bare && git -C /tmp/dfr-bare config core.bare false &&
			git -C /tmp/dfr-bare config core.fsmonitor $PAYLOAD
		mkdir -p redirect && echo 'gitdir: /tmp/dfr-bare' >redirect/.git
		git init -q /tmp/dfr-tmp && git -C /tmp/dfr-tmp config core.fsmonitor $PAYLOAD" \
		>/dev/null 2>&1 || true
	[ ! -e $PROJ/nested/.git ] || fail "a nested repository was created: $(ls -a $PROJ/nested/.git)"
	[ ! -e $PROJ/sub/.git ] || fail "a nested .git was planted"
	[ ! -e $PROJ/redirect/.git ] || fail "a gitdir redirect was planted: $(cat $PROJ/redirect/.git)"
	[ ! -e /tmp/dfr-tmp/.git ] || fail "a repository under /tmp was created"
	event object=$PROJ/nested/.git verdict=ask
	# the person's git in each of those places, and in the bare repository
	# the redirect meant (nothing in the project points to it)
	mkdir -p $PROJ/redirect $PROJ/nested $PROJ/sub && chown -R $TUSER:$TUSER $PROJ
	outside $PROJ $PROJ/nested $PROJ/sub $PROJ/redirect
}

# Submodules and linked worktrees keep their repositories under the
# project's .git: modules/NAME and worktrees/NAME have their own config,
# hooks and commondir.
test_submodule_and_worktree_repositories_cannot_plant_a_command() {
	deferred_fixture
	as_user sh -c "mkdir -p $PROJ/.git/modules && cd $PROJ && git init -q --separate-git-dir $PROJ/.git/modules/lib lib &&
		cd lib && echo l >readme.txt && git add readme.txt &&
		git -c user.email=p@e -c user.name=person commit -qm lib &&
		cd $PROJ && git worktree add -q /tmp/dfr-wt 2>/dev/null" || fail "setup: submodule, worktree"
	cp $PROJ/.git/modules/lib/config /tmp/dfr-lib-config
	in_session $AD sh -c "git -C $PROJ/lib config core.fsmonitor $PAYLOAD
		cp $PAYLOAD $PROJ/.git/modules/lib/hooks/post-commit
		echo /tmp/dfr-common >$PROJ/.git/worktrees/dfr-wt/commondir
		printf '[core]\n\tfsmonitor = $PAYLOAD\n' >$PROJ/.git/worktrees/dfr-wt/config.worktree
		echo 'gitdir: /tmp/dfr-bare' >$PROJ/lib/.git" >/dev/null 2>&1 || true
	cmp -s $PROJ/.git/modules/lib/config /tmp/dfr-lib-config || fail "submodule config changed"
	[ ! -e $PROJ/.git/modules/lib/hooks/post-commit ] || fail "submodule hook planted"
	[ ! -e $PROJ/.git/worktrees/dfr-wt/config.worktree ] || fail "worktree config planted"
	grep -q dfr-common $PROJ/.git/worktrees/dfr-wt/commondir 2>/dev/null && fail "worktree commondir redirected"
	grep -q dfr-bare $PROJ/lib/.git && fail "submodule gitdir redirected"
	outside $PROJ $PROJ/lib /tmp/dfr-wt
}

# The project's own repository keeps working: commits, branches, stash and
# merges write only what runs nothing.
test_project_repo_still_commits_branches_and_stashes() {
	deferred_fixture
	out=$(in_session $AD sh -c "set -e; cd $PROJ
		echo work >>readme.txt
		git -c user.email=a@e -c user.name=agent commit -qam work
		git checkout -qb topic && echo t >t.txt && git add t.txt &&
			git -c user.email=a@e -c user.name=agent commit -qm topic
		git checkout -q - && echo s >>readme.txt && git stash -q && git stash pop -q &&
			git checkout -q readme.txt
		git -c user.email=a@e -c user.name=agent merge -q --no-edit topic
		git log --oneline | wc -l" 2>&1) || fail "git in the project: $out"
	[ "$(echo "$out" | tail -n1)" = 3 ] || fail "expected 3 commits: $out"
}

# path verdict: one row per file that another tool loads later. Written from
# one session by the shell's own redirection (no exec per path); each must be
# refused with that verdict, and the file must stay as it was.
DEFERRED_FILES=(
	# IDEs and devcontainers
	"$PROJ/.vscode/tasks.json ask"
	"$PROJ/.vscode/settings.json ask"
	"$PROJ/.vscode/extensions.json ask"
	"$PROJ/.vscode/mcp.json ask"
	"$PROJ/.devcontainer/devcontainer.json ask"
	"$PROJ/.devcontainer.json ask"
	"$PROJ/.idea/workspace.xml ask"
	"$PROJ/.zed/tasks.json ask"
	# shell tools that run on cd, git hook managers
	"$PROJ/.envrc ask"
	"$PROJ/.mise.toml ask"
	"$PROJ/.husky/pre-commit ask"
	"$PROJ/.pre-commit-config.yaml ask"
	"$PROJ/.gitmodules ask"
	# agents' instructions and settings in the project
	"$PROJ/CLAUDE.md ask"
	"$PROJ/sub/CLAUDE.md ask"
	"$PROJ/AGENTS.md ask"
	"$PROJ/GEMINI.md ask"
	"$PROJ/.github/copilot-instructions.md ask"
	"$PROJ/.github/instructions/go.instructions.md ask"
	"$PROJ/.clinerules ask"
	"$PROJ/.cursorrules ask"
	"$PROJ/.cursor/mcp.json ask"
	"$PROJ/.cursor/rules/r.mdc ask"
	"$PROJ/.mcp.json ask"
	"$PROJ/.claude/settings.json ask"
	"$PROJ/.claude/settings.local.json ask"
	"$PROJ/.claude/commands/deploy.md ask"
	"$PROJ/.claude/agents/helper.md ask"
	"$PROJ/.gemini/settings.json ask"
	"$PROJ/.windsurfrules ask"
	"$PROJ/.roo/mcp.json ask"
	"$PROJ/.continue/config.yaml ask"
	"$PROJ/opencode.json ask"
	"$PROJ/.aider.conf.yml ask"
	# the same in the home directory: persistence
	"$THOME/.claude/settings.json deny"
	"$THOME/.claude/CLAUDE.md deny"
	"$THOME/.claude/agents/helper.md deny"
	"$THOME/.codex/config.toml deny"
	"$THOME/.codex/AGENTS.md deny"
	"$THOME/.cursor/mcp.json deny"
	"$THOME/.gemini/settings.json deny"
	"$THOME/.gemini/GEMINI.md deny"
	"$THOME/.config/Code/User/tasks.json deny"
	"$THOME/.config/opencode/opencode.json deny"
	"$THOME/.config/direnv/direnvrc deny"
	"$THOME/CLAUDE.md deny"
)

test_tool_configuration_files_are_refused_and_unchanged() {
	deferred_fixture
	local row p v list=/tmp/dfr-list specs=/tmp/dfr-specs i=0 dirs=()
	: >$list
	: >$specs
	# builtins only in the loops: under TCG every exec costs a quarter
	# of a second, and these run once per file (about fifty)
	for row in "${DEFERRED_FILES[@]}"; do
		p=${row% *}
		dirs+=("${p%/*}")
	done
	mkdir -p "${dirs[@]}"
	for row in "${DEFERRED_FILES[@]}"; do
		p=${row% *}
		v=${row##* }
		# half exist with the person's content, half would be new
		if [ $((i % 2)) = 0 ]; then echo "ORIGINAL $i" >"$p"; fi
		echo "$p" >>$list
		printf 'object=%s\tverdict=%s\n' "$p" "$v" >>$specs
		i=$((i + 1))
	done
	chown -R $TUSER:$TUSER $THOME
	chmod 644 $list
	in_session $AD sh -c "while IFS= read -r p; do
		if { printf 'PLANTED $PAYLOAD\n' >>\"\$p\"; } 2>/dev/null; then echo \"WROTE \$p\"; fi
	done <$list" >/tmp/dfr-out 2>&1 || true
	grep WROTE /tmp/dfr-out && fail "written from the session: $(grep -c WROTE /tmp/dfr-out) files"
	i=0
	while IFS= read -r p; do
		if [ $((i % 2)) = 0 ]; then
			[ "$(<"$p")" = "ORIGINAL $i" ] || fail "$p changed: $(head -c 100 "$p")"
		else
			[ ! -e "$p" ] || fail "$p was created"
		fi
		i=$((i + 1))
	done <$list
	missing=$("$SBXT" events-missing "$EVENTS" $specs 5000) ||
		fail "no event with the expected verdict for: $(echo "$missing" | head -5)"
}

# package.json scripts and Makefiles stay writable: they are the project's
# own build, which the person runs knowing the agent edited the project, as
# they run every source file it wrote (docs/POLICY.md says why).
test_project_build_files_stay_writable() {
	deferred_fixture
	expect OK in_session $AD sh -c "cd $PROJ && echo '{\"scripts\":{}}' >package.json &&
		printf 'all:\n\ttrue\n' >Makefile && echo OK"
	rm -f $PROJ/package.json $PROJ/Makefile
}

# which tool files are protected is the policy's content, decided by the
# same programs on the same hooks for every file: on 6.1 this file runs one
# refusal per hook family and the tests that the project's own work goes
# on; 6.12's guests run every test
on_61_only "the policy's list of tool files, decided by the same programs as the tests kept: run by the 6.12 guests; on 6.1 this file runs one test per hook family" \
	project_repo_config_cannot_plant_a_command tool_configuration_files_are_refused_and_unchanged \
	project_repo_still_commits_branches_and_stashes project_build_files_stay_writable
