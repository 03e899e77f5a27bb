# The ways a name changes object besides rename(2), link(2) and open:
# renameat2(RENAME_EXCHANGE) swaps two names in one call, and an
# O_TMPFILE file is made unnamed and given a name later with linkat.
# Neither may reach .sandbox, the policy file or a write-denied file. The
# fallback tier runs this file too (tests/kernel/nobpf/t_names.sh): there
# the twins on security_path_rename and _link decide.

# Both sides of an exchange are writes. The control: an exchange of two
# names the session may write.
test_exchange_cannot_reach_protected_names() {
	mkdir -p $PROJ/.sandbox $PROJ/fresh
	cp $POL/core.yaml $PROJ/.sandbox/policy.yaml
	echo mine >$PROJ/mine.txt
	echo other >$PROJ/other.txt
	chown -R $TUSER:$TUSER $PROJ
	P=$PROJ/.sandbox/policy.yaml
	K=$THOME/.ssh/id_rsa
	sum=$(sha256sum <$P) ksum=$(sha256sum <$K)
	expect "OK" in_session $P $SBXT exchange $PROJ/mine.txt $PROJ/other.txt
	[ "$(cat $PROJ/mine.txt)" = other ] || fail "the allowed exchange did not happen"
	expect "ERR EPERM" in_session $P $SBXT exchange $PROJ/fresh $PROJ/.sandbox
	expect "ERR EPERM" in_session $P $SBXT exchange $PROJ/mine.txt $P
	expect "ERR EPERM" in_session $P $SBXT exchange $PROJ/mine.txt $K
	[ "$(sha256sum <$P)" = "$sum" ] && [ "$(sha256sum <$K)" = "$ksum" ] && [ -d $PROJ/fresh ] &&
		[ ! -e $PROJ/fresh/policy.yaml ] || fail "an exchange went through: $(ls -la $PROJ $PROJ/.sandbox)"
	event operation=rename_to object=$P verdict=deny tier=$TIER
}

# A tmpfile's new name is a create. On a tmpfs, where O_TMPFILE works on
# every kernel (overlayfs, the guest's root, has it from 6.6 only), with
# the protected names on the same file system, as linkat needs.
test_tmpfile_given_a_protected_name_is_refused() {
	PROJ=/tmp/sbx-names-proj
	rm -rf $PROJ
	mkdir -p $PROJ/.sandbox $PROJ/keys
	cat >$PROJ/.sandbox/policy.yaml <<YAML
version: 1
files:
  default: allow
  rules:
    - path: $PROJ/keys/
      access: write
      verdict: deny
      reason: "test: keys"
network:
  default: allow
YAML
	chown -R $TUSER:$TUSER $PROJ
	P=$PROJ/.sandbox/policy.yaml
	expect "OK" $SBXT tmpfile $PROJ	# outside a session: the file system has it
	expect "OK" in_session $P $SBXT tmpfile $PROJ $PROJ/made.txt
	[ "$(cat $PROJ/made.txt)" = planted ] || fail "the allowed tmpfile link did not happen"
	# into .sandbox: refused where the file would be made or where it is
	# named (on the landlock tier Landlock may refuse the unnamed create)
	got=$(in_session $P $SBXT tmpfile $PROJ/.sandbox 2>&1 | tail -n 1)
	case $TIER/$got in */"ERR EPERM" | landlock/"ERR EACCES") ;; *) fail "O_TMPFILE in .sandbox: $got" ;; esac
	expect "ERR EPERM" in_session $P $SBXT tmpfile $PROJ $PROJ/.sandbox/planted.yaml
	expect "ERR EPERM" in_session $P $SBXT tmpfile $PROJ $PROJ/keys/new.key
	[ ! -e $PROJ/.sandbox/planted.yaml ] && [ ! -e $PROJ/keys/new.key ] ||
		fail "a tmpfile was given a protected name: $(ls -la $PROJ/.sandbox $PROJ/keys)"
	event operation=link_to object=$PROJ/.sandbox/planted.yaml verdict=deny tier=$TIER
	event operation=link_to object=$PROJ/keys/new.key verdict=deny tier=$TIER rule.reason="test: keys"
	rm -rf $PROJ
}
