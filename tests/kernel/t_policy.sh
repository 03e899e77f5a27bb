# The shipped agent-default policy: each listed threat is blocked, and a
# real developer workflow works untouched. Also live reload.

AD=$ROOT/policy/shipped/agent-default.yaml

threat_fixture() {
	rm -rf $PROJ/.sandbox $THOME/.aws $THOME/.config $THOME/.azure $THOME/.kube \
		$THOME/.docker $THOME/.gnupg $THOME/.local $THOME/bin
	mkdir -p $THOME/.aws $THOME/.config/gcloud $THOME/.azure $THOME/.kube $THOME/.docker \
		$THOME/.gnupg/private-keys-v1.d $PROJ/.git/hooks $PROJ/.github $PROJ/.claude $PROJ/sub \
		$THOME/.local/bin $THOME/bin
	for f in .aws/credentials .config/gcloud/credentials.db .azure/accessTokens.json \
		.kube/config .docker/config.json .gnupg/private-keys-v1.d/k.key .netrc \
		.git-credentials; do echo "secret $f" >$THOME/$f; done
	for f in .env .env.local server.pem id.key credentials.json; do echo "secret" >$PROJ/$f; done
	echo "[core]" >$PROJ/.git/config
	echo "# rules" >$PROJ/CLAUDE.md
	chown -R $TUSER:$TUSER $THOME
	for b in sudo doas pkexec; do [ -e /usr/bin/$b ] || cp /bin/true /usr/bin/$b; done
}

test_credential_reads_blocked() {
	local f creds=($THOME/.ssh/id_rsa $THOME/.aws/credentials $THOME/.config/gcloud/credentials.db
		$THOME/.azure/accessTokens.json $THOME/.kube/config $THOME/.docker/config.json
		$THOME/.gnupg/private-keys-v1.d/k.key $THOME/.netrc $THOME/.git-credentials
		$PROJ/.env $PROJ/.env.local $PROJ/server.pem $PROJ/id.key $PROJ/credentials.json)
	threat_fixture
	for f in "${creds[@]}"; do [ -s $f ] || fail "fixture: no $f, the test would prove nothing"; done
	expect_each "ERR EPERM" $AD $SBXT open {} -- "${creds[@]}"
	event object=$PROJ/.env verdict=ask
	event object=$THOME/.ssh/id_rsa verdict=deny
	# the rest of the project and of the system stays readable; known_hosts
	# is the one file of ~/.ssh the policy lets an agent read
	echo "host key" >$THOME/.ssh/known_hosts && chown $TUSER $THOME/.ssh/known_hosts
	expect_each "OK" $AD $SBXT open {} -- $PROJ/readme.txt /etc/passwd $THOME/.ssh/known_hosts
}

test_paths_that_appear_later_are_covered() {
	rm -rf $THOME/.aws $PROJ/.sandbox
	rm -f /tmp/later.go /tmp/later.out
	in_session $AD sh -c "while [ ! -e /tmp/later.go ]; do sleep 0.05; done; $SBXT open $THOME/.aws/credentials >/tmp/later.out" &
	bg=$!
	sleep 1
	# ~/.aws did not exist when the session's policy was compiled
	mkdir -p $THOME/.aws && echo x >$THOME/.aws/credentials && chown -R $TUSER:$TUSER $THOME/.aws
	touch /tmp/later.go
	wait $bg || true
	grep -q "ERR EPERM" /tmp/later.out || fail "file created after the policy: $(cat /tmp/later.out)"
}

test_persistence_writes_blocked() {
	local f before files=($THOME/.bashrc $THOME/.profile $THOME/.zshrc $THOME/.local/bin/evil
		$THOME/bin/x $PROJ/CLAUDE.md $PROJ/sub/AGENTS.md $PROJ/.cursorrules
		$PROJ/.github/copilot-instructions.md $PROJ/.claude/settings.json $PROJ/.mcp.json
		$PROJ/.git/hooks/pre-commit $PROJ/.git/config $THOME/.gitconfig)
	threat_fixture
	# what each file holds, or that it does not exist
	snapshot() { for f in "${files[@]}"; do cksum 2>/dev/null <$f || echo ABSENT; done; }
	before=$(snapshot)
	expect_each "ERR EPERM" $AD $SBXT open {} creat -- "${files[@]}"
	[ "$(snapshot)" = "$before" ] || fail "a file changed: $(diff <(echo "$before") <(snapshot) | tr '\n' ' ')"
	if out=$(in_session $AD sh -c "echo x >> $THOME/.bashrc" 2>&1); then
		fail "append to .bashrc: $out"
	fi
}

test_privilege_escalation_exec_blocked() {
	threat_fixture
	expect_each "ERR EPERM" $AD $SBXT exec {} -- /usr/bin/su /usr/bin/sudo /usr/bin/doas /usr/bin/pkexec
	# a copy elsewhere is caught by its name
	cp /bin/true $PROJ/sudo && chown $TUSER $PROJ/sudo
	expect "ERR EPERM" in_session $AD $SBXT exec $PROJ/sudo
	rm -f $PROJ/sudo
	# ... and so is one the session makes itself, in a directory it made
	# (the landlock tier's plan never saw the name)
	rm -rf $PROJ/tools
	expect "ERR EPERM" in_session $AD sh -c "mkdir -p $PROJ/tools && cp /bin/true $PROJ/tools/su && $SBXT exec $PROJ/tools/su"
	[ -x $PROJ/tools/su ] || fail "the session could not make the copy: the test proves nothing"
	event operation=exec object=$PROJ/tools/su verdict=deny
	rm -rf $PROJ/tools
}

test_metadata_and_private_networks() {
	rm -rf $PROJ/.sandbox
	expect "ERR EPERM" in_session $AD $SBXT connect 4 169.254.169.254 80
	expect "ERR EPERM" in_session $AD $SBXT connect 6 fd00:ec2::254 80
	expect "ERR EPERM" in_session $AD $SBXT connect 4 100.100.100.200 80
	expect "ERR EPERM" in_session $AD $SBXT connect 6 ::ffff:169.254.169.254 80
	event object=169.254.169.254:80 verdict=deny
	# RFC1918 is asked: denied now, a request for a person
	expect "ERR EPERM" in_session $AD $SBXT connect 4 10.1.2.3 22
	event object=10.1.2.3:22 verdict=ask
	one_pending >/dev/null
	# a loopback development server of the session stays reachable
	expect "OK" in_session $AD sh -c "$SBXT listen 4 127.0.0.1 7100 1 >/tmp/srv7100 2>&1 &
		for i in \$(seq 50); do grep -q LISTENING /tmp/srv7100 && break; sleep 0.1; done
		$SBXT connect 4 127.0.0.1 7100"
	# one outside the session is asked (an accomplice: t_loopback.sh)
	$SBXT listen 4 127.0.0.1 7101 1 >/tmp/srv7101 2>&1 &
	wait_for grep -q LISTENING /tmp/srv7101
	expect "ERR EPERM" in_session $AD $SBXT connect 4 127.0.0.1 7101
	event object=127.0.0.1:7101 verdict=ask
	$SBXT connect 4 127.0.0.1 7101 >/dev/null
}

test_developer_workflow_untouched() {
	rm -rf $PROJ/.sandbox $PROJ/app $PROJ/f /srv/sbx/upstream.git
	# an upstream repository outside the project
	as_user sh -c "git -c init.defaultBranch=main init -q --bare /srv/sbx/upstream.git" || fail "setup"
	as_user sh -c "cd /tmp && rm -rf seed && git init -q seed && cd seed && echo hi >f &&
		git add f && git -c user.email=t@e -c user.name=t commit -qm seed &&
		git push -q /srv/sbx/upstream.git HEAD:main" || fail "seed"
	# the person clones (a new repository is asked inside a session: its
	# .git is read by the person's git later; t_deferred.sh); the project
	# is that repository, and the agent commits and fetches in it
	rm -rf $PROJ/.git
	as_user sh -c "cd $PROJ && git init -q && git remote add origin /srv/sbx/upstream.git &&
		git fetch -q origin && git checkout -q -b main origin/main" || fail "clone"
	mkdir -p $PROJ/app && chown -R $TUSER:$TUSER $PROJ
	cat >$PROJ/app/Makefile <<'MK'
app: main.o util.o
	$(CC) -o $@ $^
%.o: %.c util.h
	$(CC) -O2 -c $<
MK
	printf '#include "util.h"\nint main(void){return twice(21) != 42;}\n' >$PROJ/app/main.c
	printf 'int twice(int x);\n' >$PROJ/app/util.h
	printf '#include "util.h"\nint twice(int x){return 2*x;}\n' >$PROJ/app/util.c
	chown -R $TUSER:$TUSER $PROJ/app
	out=$(in_session $AD sh -c "
		set -e
		cd $PROJ
		echo more >>f && git add f
		git -c user.email=a@e -c user.name=agent commit -qm work && git log --oneline | wc -l
		git fetch -q origin
		make -s -C $PROJ/app && $PROJ/app/app && echo built
		t=\$(mktemp) && echo scratch >\$t && cat \$t >/dev/null && rm \$t && echo tmp-ok
		python3 -S -c 'open(\"$PROJ/py.txt\",\"w\").write(\"from python\")' && cat $PROJ/py.txt
		echo
		node -e 'require(\"fs\").writeFileSync(\"$PROJ/node.txt\",\"from node\")' && cat $PROJ/node.txt
		echo
	" 2>&1) || fail "workflow failed: $out"
	echo "$out" | grep -qx 2 || fail "clone+commit: $out"
	echo "$out" | grep -q built || fail "build: $out"
	echo "$out" | grep -q tmp-ok || fail "tmp: $out"
	echo "$out" | grep -q "from python" || fail "python: $out"
	echo "$out" | grep -q "from node" || fail "node: $out"
}

test_live_reload_swaps_policy() {
	rm -rf $PROJ/.sandbox
	cat >/tmp/strict-readme.yaml <<YAML
version: 1
extends: $POL/core.yaml
files:
  rules:
    - path: $PROJ/readme.txt
      access: read
      verdict: deny
      reason: "test: reloaded"
YAML
	printf 'version: 1\nfiles: {default: maybe}\n' >/tmp/broken.yaml
	chmod 644 /tmp/strict-readme.yaml /tmp/broken.yaml
	stepper $POL/core.yaml $PROJ/readme.txt 3
	[ "$(tried 1)" = OK ] || fail "before reload: $(tried 1)"
	out=$(as_user "$SBX" reload --project $PROJ --policy /tmp/strict-readme.yaml 2>&1) || fail "reload: $out"
	touch /tmp/go.2
	[ "$(tried 2)" = "ERR EPERM" ] || fail "after reload: $(tried 2)"
	rc=0; out=$(as_user "$SBX" reload --project $PROJ --policy /tmp/broken.yaml 2>&1) || rc=$?
	[ $rc = 1 ] || fail "broken policy accepted: $out"
	echo "$out" | grep -q "broken.yaml:2:" || fail "no file:line: $out"
	echo "$out" | grep -q "previous policy stays in force" || fail "unclear: $out"
	touch /tmp/go.3
	[ "$(tried 3)" = "ERR EPERM" ] || fail "old policy lost after a failed reload: $(tried 3)"
	wait $STEPPER || true
	# and an agent cannot reload its own session
	if out=$(in_session $POL/core.yaml "$SBX" reload --project $PROJ --policy $ROOT/policy/shipped/audit-only.yaml 2>&1); then
		fail "reload from inside a session: $out"
	fi
	echo "$out" | grep -q "inside a session cannot reload" || fail "unexpected: $out"
}
