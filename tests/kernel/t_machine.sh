# The machine policy (/etc/bpfsbx/machine.yaml): a floor no project lowers.
# A project's own allow under it is refused by policy check and by run;
# a shipped policy's more specific allow is held to it in the kernel.

AD=$ROOT/policy/shipped/agent-default.yaml
MDIR=/etc/bpfsbx
MPOL=/tmp/sbx-machine

machine_floor() {	# the floor: ~/.ssh is denied to every session
	mkdir -p $MDIR $MPOL
	chmod 755 $MDIR
	cat >$MDIR/machine.yaml <<-'EOF'
	version: 1
	files:
	  rules:
	    - path: ~/.ssh/
	      access: [read, write]
	      verdict: deny
	      reason: keys stay on this machine
	EOF
	chown root:root $MDIR/machine.yaml
	chmod 644 $MDIR/machine.yaml
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
