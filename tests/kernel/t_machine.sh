# The machine policy (/etc/bpfsbx/machine.yaml): a floor no project lowers.
# A project's own allow under it is refused by policy check and by run;
# a shipped policy's more specific allow is held to it in the kernel.

AD=$ROOT/policy/shipped/agent-default.yaml
MDIR=/etc/bpfsbx
MPOL=/tmp/sbx-machine

# machine_put: machine.yaml from stdin, installed whole, root's and 0644,
# as install(1) or config management does: the daemon looks each second
# and would otherwise see it half-written
machine_put() {
	mkdir -p $MDIR && chmod 755 $MDIR
	cat >$MDIR/.machine.yaml.new
	chown root:root $MDIR/.machine.yaml.new
	chmod 644 $MDIR/.machine.yaml.new
	mv -f $MDIR/.machine.yaml.new $MDIR/machine.yaml
}

machine_floor() {	# the floor: ~/.ssh is denied to every session
	machine_put <<-'EOF'
	version: 1
	files:
	  rules:
	    - path: ~/.ssh/
	      access: [read, write]
	      verdict: deny
	      reason: keys stay on this machine
	EOF
}

allow_key_policy() {	# a project that lets its agent read the deploy key
	mkdir -p $MPOL
	cat >$MPOL/allow-key.yaml <<-EOF
	version: 1
	extends: $AD
	files:
	  rules:
	    - path: ~/.ssh/id_rsa
	      access: read
	      verdict: allow
	      reason: the deploy key
	EOF
	chmod 755 $MPOL
	chmod 644 $MPOL/allow-key.yaml
}

teardown_file() {
	rm -rf $MDIR $MPOL
}

test_project_allow_of_a_key_is_refused_under_the_floor() {
	rm -rf $MDIR
	allow_key_policy
	# without a floor the project's allow opens the key
	expect "OK" in_session $MPOL/allow-key.yaml $SBXT open $THOME/.ssh/id_rsa
	machine_floor
	out=$(as_user "$SBX" policy check $MPOL/allow-key.yaml --no-resolve 2>&1) &&
		fail "policy check accepted it: $out"
	echo "$out" | grep -q "allow-key.yaml:5:13: error: .*allow read of $THOME/.ssh/id_rsa, where the machine policy says deny ($MDIR/machine.yaml:4:" ||
		fail "policy check: $out"
	out=$(in_session $MPOL/allow-key.yaml $SBXT open $THOME/.ssh/id_rsa 2>&1) &&
		fail "run accepted it: $out"
	echo "$out" | grep -q "where the machine policy says deny ($MDIR/machine.yaml:4:" ||
		fail "run: $out"
	echo "$out" | grep -q "^OK" && fail "the key was read: $out"
	rm -rf $MDIR
}

test_shipped_name_allow_is_held_to_the_floor() {
	rm -rf $MDIR
	echo "bundle" >$THOME/.ssh/cacert.pem && chown $TUSER $THOME/.ssh/cacert.pem
	# agent-default lets any cacert.pem be read, also one in ~/.ssh
	expect "OK" in_session $AD $SBXT open $THOME/.ssh/cacert.pem
	machine_floor
	expect "ERR EPERM" in_session $AD $SBXT open $THOME/.ssh/cacert.pem
	event object=$THOME/.ssh/cacert.pem verdict=deny
	expect "ERR EPERM" in_session $AD $SBXT open $THOME/.ssh/id_rsa
	# outside the floor the project still decides
	echo "bundle" >$PROJ/cacert.pem && chown $TUSER $PROJ/cacert.pem
	expect "OK" in_session $AD $SBXT open $PROJ/cacert.pem
	rm -rf $MDIR
}

test_a_floor_others_could_write_is_refused() {
	machine_floor
	chmod 666 $MDIR/machine.yaml
	out=$(in_session $AD $SBXT open $PROJ/readme.txt 2>&1) && fail "run accepted it: $out"
	echo "$out" | grep -q "$MDIR/machine.yaml[0-9:]*:* error: machine policy refused: writable by its group" ||
		fail "run: $out"
	chmod 644 $MDIR/machine.yaml
	chown $TUSER $MDIR/machine.yaml
	out=$(in_session $AD $SBXT open $PROJ/readme.txt 2>&1) && fail "run accepted a user's floor: $out"
	echo "$out" | grep -q "machine policy refused: not owned by root" || fail "owner: $out"
	rm -rf $MDIR
}

machine_gen() { "$SBX" status --json >/tmp/mstatus.json && "$SBXT" json-get /tmp/mstatus.json machine.generation; }
machine_error() { "$SBX" status --json >/tmp/mstatus.json && "$SBXT" json-get /tmp/mstatus.json machine.error; }
gen_is() { [ "$(machine_gen)" = "$1" ]; }
gen_ge() { [ "$(machine_gen)" -ge "$1" ]; }
now_ms() { date -u +%Y-%m-%dT%H:%M:%S.%3NZ; }
# the files in force were read after $1 (status's machine.read_at), a
# time taken once they were written: then they hold in every session
read_after() {
	local at
	"$SBX" status --json >/tmp/mstatus.json &&
		at=$("$SBXT" json-get /tmp/mstatus.json machine.read_at) && [[ $at > $1 ]]
}

test_a_floor_that_arrives_holds_in_a_running_session() {
	rm -rf $MDIR
	allow_key_policy
	g0=$(machine_gen) || fail "status has no machine part: $(cat /tmp/mstatus.json)"
	stepper $MPOL/allow-key.yaml $THOME/.ssh/id_rsa 4
	[ "$(tried 1)" = OK ] || fail "before the floor the key was not read: $(cat /tmp/try.1)"
	machine_floor
	t=$(now_ms)
	# config management's reload: at once; without it, within a second
	kill -HUP "$(daemon_pid)"
	wait_for read_after $t || fail "the floor was not applied: $(cat /tmp/mstatus.json)"
	g1=$(machine_gen)
	[ "$g1" -gt "$g0" ] || fail "no apply was counted: $g0 then $g1"
	event operation=apply verdict=applied
	touch /tmp/go.2
	[ "$(tried 2)" = "ERR EPERM" ] || fail "the running session read the key: $(cat /tmp/try.2)"
	event object=$THOME/.ssh/id_rsa verdict=deny
	"$SBX" status | grep -q "machine policy: $MDIR, applied live [0-9]* time(s), as read at 20" ||
		fail "status: $("$SBX" status | grep machine)"

	# a machine file that does not load leaves that floor in force
	g1=$(machine_gen)
	printf 'version: 1\nfiles:\n  rules: [\n' >$MDIR/machine.yaml
	wait_for machine_error || fail "a bad floor was not reported: $(cat /tmp/mstatus.json)"
	machine_error | grep -q "machine.yaml" || fail "the error names no file: $(machine_error)"
	gen_is $g1 || fail "a bad floor was counted as applied"
	event operation=apply verdict=refused
	touch /tmp/go.3
	[ "$(tried 3)" = "ERR EPERM" ] || fail "the key was read under a bad floor: $(cat /tmp/try.3)"

	# the floor lifted: the project's own allow holds again, live
	rm -f $MDIR/machine.yaml
	t=$(now_ms)
	wait_for read_after $t || fail "the floor's removal was not applied: $(cat /tmp/mstatus.json)"
	gen_ge $((g1 + 1)) || fail "the floor's removal was not counted"
	touch /tmp/go.4
	[ "$(tried 4)" = OK ] || fail "the project's allow did not come back: $(cat /tmp/try.4)"
	wait $STEPPER || true
	rm -rf $MDIR
}

test_a_network_floor_holds_over_a_running_sessions_allow() {
	rm -rf $MDIR
	mkdir -p $MPOL && chmod 755 $MPOL
	# no route to 10.66.0.0/16 here: an allowed connect gets ENETUNREACH
	# from the stack, a refused one EPERM from bpfsbx
	cat >$MPOL/net.yaml <<-EOF
	version: 1
	extends: $AD
	network:
	  rules:
	    - {cidr: 10.66.2.1/32, port: 80, verdict: allow, reason: a service}
	EOF
	chmod 644 $MPOL/net.yaml
	rm -f /tmp/go.* /tmp/try.*
	in_session $MPOL/net.yaml sh -c "$SBXT connect 4 10.66.2.1 80 >/tmp/try.1 2>&1
		while [ ! -e /tmp/go.2 ]; do sleep 0.05; done
		$SBXT connect 4 10.66.2.1 80 >/tmp/try.2 2>&1" &
	STEPPER=$!
	[ "$(tried 1)" = "ERR ENETUNREACH" ] || fail "before the floor: $(cat /tmp/try.1)"
	# broader than the project's rule: refused at the next start, held
	# over the project's allow in the running session
	machine_put <<-'EOF'
	version: 1
	network:
	  rules:
	    - {cidr: 10.66.0.0/16, verdict: deny, reason: the lab network}
	EOF
	t=$(now_ms)
	wait_for read_after $t || fail "the network floor was not applied: $(cat /tmp/mstatus.json)"
	touch /tmp/go.2
	out=$(tried 2)
	wait $STEPPER || true
	[ "$out" = "ERR EPERM" ] || fail "the running session connected under the floor: $out"
	event object=10.66.2.1:80 verdict=deny
	out2=$(in_session $MPOL/net.yaml true 2>&1) && fail "a new session was accepted: $out2"
	echo "$out2" | grep -q "is looser than the machine policy's rule" || fail "refusal: $out2"
	rm -rf $MDIR
}

test_an_always_answer_lasts_the_machines_max_always_ttl() {
	rm -rf $MDIR $THOME/.aws $PROJ/.sandbox
	mkdir -p $THOME/.aws
	echo "AKIA-TEST" >$THOME/.aws/credentials
	chown -R $TUSER:$TUSER $THOME/.aws
	expect "ERR EPERM" in_session $POL/ask.yaml $SBXT open $THOME/.aws/credentials
	approve "$(one_pending)" always
	expect "OK" in_session $POL/ask.yaml $SBXT open $THOME/.aws/credentials
	# the floor: an "always" answer lasts a day; this one is made two days old
	printf 'version: 1\nprojects:\n  max_always_ttl: 1d\n' | machine_put
	old=$(date -u -d '2 days ago' +%Y-%m-%dT%H:%M:%SZ)
	sed -i -E "s/^( *at: ).*/\\1'$old'/" $PROJ/.sandbox/remembered.yaml
	grep -q "$old" $PROJ/.sandbox/remembered.yaml || fail "no time to age: $(cat $PROJ/.sandbox/remembered.yaml)"
	expect "ERR EPERM" in_session $POL/ask.yaml $SBXT open $THOME/.aws/credentials
	grep -q "is older than the machine policy's max_always_ttl (86400s): not applied" "$DLOG" ||
		fail "no word of the expired answer: $(tail -n 5 "$DLOG")"
	# an answer given an hour ago still holds under it
	new=$(date -u -d '1 hour ago' +%Y-%m-%dT%H:%M:%SZ)
	sed -i -E "s/^( *at: ).*/\\1'$new'/" $PROJ/.sandbox/remembered.yaml
	expect "OK" in_session $POL/ask.yaml $SBXT open $THOME/.aws/credentials
	rm -rf $MDIR $THOME/.aws $PROJ/.sandbox
}

test_only_the_machines_approvers_decide() {
	rm -rf $MDIR $THOME/.aws $PROJ/.sandbox
	mkdir -p $THOME/.aws
	echo "AKIA-TEST" >$THOME/.aws/credentials
	chown -R $TUSER:$TUSER $THOME/.aws
	printf 'version: 1\nprojects:\n  approvers: [root]\n' | machine_put
	stepper $POL/ask.yaml $THOME/.aws/credentials 3
	[ "$(tried 1)" = "ERR EPERM" ] || fail "not asked: $(cat /tmp/try.1)"
	id=$(one_pending)
	# the project's owner is not an approver here
	approve $id once
	wait_for grep -q "decision $id refused: decided by uid $TUID, who is not an approver" "$DLOG" ||
		fail "the owner's approval was taken: $(tail -n 5 "$DLOG")"
	# asked again at once, for one who may decide, saying why
	id2=$(one_pending)
	[ "$id2" != "$id" ] || fail "the refused request is pending as it was"
	qfield pending $id2 notice | grep -q "asked again: uid $TUID answered $id" ||
		fail "the request asked again does not say why: $(qfield pending $id2 notice)"
	touch /tmp/go.2
	[ "$(tried 2)" = "ERR EPERM" ] || fail "the owner's approval opened it: $(cat /tmp/try.2)"
	sleep 0.5
	[ "$(pending_ids)" = "$id2" ] || fail "the retry was not folded into the request asked again: $(pending_ids)"
	# root is; its decision is recorded as root's, not the owner's
	"$SBX" approve "$id2" --dir $PROJ --scope once >/dev/null || fail "root's approve failed"
	wait_for test -e $PROJ/.sandbox/escalations/applied/$id2 || fail "root's approval not applied"
	[ "$(stat -c %u $PROJ/.sandbox/escalations/done/$id2.json)" = 0 ] ||
		fail "root's decision passes for uid $(stat -c %u $PROJ/.sandbox/escalations/done/$id2.json)"
	touch /tmp/go.3
	[ "$(tried 3)" = OK ] || fail "root's approval did not open it: $(cat /tmp/try.3)"
	wait $STEPPER || true
	as_user cat $PROJ/.sandbox/escalations/done/$id2.json >/dev/null ||
		fail "the owner cannot read root's decision"
	wait_for sh -c "grep -h '\"event\":\"decision\"' $PROJ/.sandbox/audit/*.jsonl | grep -q '\"approver_uid\":0'" ||
		fail "the audit chain does not name root: $(grep -h decision $PROJ/.sandbox/audit/*.jsonl | tail -n 2)"
	grep -h decision_refused $PROJ/.sandbox/audit/*.jsonl | grep -q "\"approver_uid\":$TUID" ||
		fail "the audit chain does not name the refused approver"
	rm -rf $MDIR $THOME/.aws $PROJ/.sandbox
}

test_a_floor_changed_while_no_daemon_ran_holds_in_the_adopted_session() {
	rm -rf $MDIR
	allow_key_policy
	stepper $MPOL/allow-key.yaml $THOME/.ssh/id_rsa 2
	[ "$(tried 1)" = OK ] || fail "before the floor the key was not read: $(cat /tmp/try.1)"
	daemon_stop	# the session stays confined, and the floor changes meanwhile
	machine_floor
	daemon_start
	gen_ge 1 || fail "the new daemon did not apply the floor: $(cat /tmp/mstatus.json)"
	touch /tmp/go.2
	[ "$(tried 2)" = "ERR EPERM" ] || fail "the adopted session read the key: $(cat /tmp/try.2)"
	wait $STEPPER || true
	rm -rf $MDIR
}

# a fleet that pulls its floor signs it: with keys/ only signed files are
# taken, live as at a start (test keys: tests/unit/data/sign)
test_with_keys_only_a_signed_floor_is_taken() {
	local keys=$ROOT/tests/unit/data/sign
	rm -rf $MDIR
	allow_key_policy
	stepper $MPOL/allow-key.yaml $THOME/.ssh/id_rsa 3
	[ "$(tried 1)" = OK ] || fail "before the floor the key was not read: $(cat /tmp/try.1)"
	# keys/ arrives whole (an empty keys/ takes nothing, until its key comes)
	rm -rf /etc/bpfsbx-keys.new && mkdir -p $MDIR /etc/bpfsbx-keys.new
	chmod 755 $MDIR /etc/bpfsbx-keys.new
	install -o root -g root -m 0644 $keys/fleet.pub /etc/bpfsbx-keys.new/
	mv /etc/bpfsbx-keys.new $MDIR/keys
	machine_floor
	wait_for sh -c "\"$SBX\" status --json | grep -q 'not signed: there is no machine.yaml.sig'" ||
		fail "an unsigned floor was not refused: $(machine_error)"
	event operation=apply verdict=refused
	out=$(in_session $AD true 2>&1) && fail "a session started under an unsigned floor: $out"
	echo "$out" | grep -q "not signed" || fail "refusal: $out"
	touch /tmp/go.2
	[ "$(tried 2)" = OK ] || fail "an unsigned floor was applied: $(cat /tmp/try.2)"

	"$SBX" policy sign --key $keys/fleet.pem $MDIR/machine.yaml >/dev/null || fail "sign failed"
	t=$(now_ms)
	wait_for read_after $t || fail "the signed floor was not applied: $(cat /tmp/mstatus.json)"
	[ -z "$(machine_error)" ] || fail "still refused: $(machine_error)"
	touch /tmp/go.3
	[ "$(tried 3)" = "ERR EPERM" ] || fail "the signed floor did not hold: $(cat /tmp/try.3)"
	wait $STEPPER || true
	"$SBX" policy verify $MDIR/machine.yaml | grep -q "signed by $MDIR/keys/fleet.pub" ||
		fail "verify: $("$SBX" policy verify $MDIR/machine.yaml 2>&1)"
	rm -rf $MDIR
}

flows_61_only project_allow_of_a_key_is_refused_under_the_floor \
	a_network_floor_holds_over_a_running_sessions_allow
