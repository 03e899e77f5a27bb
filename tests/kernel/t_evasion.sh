# Evasions: other names for a denied object reach the same decision.

test_symlink_to_denied_file() {
	ln -sf $THOME/.ssh/id_rsa /srv/sbx/open/innocent
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT open /srv/sbx/open/innocent
	event operation=open_read object=$THOME/.ssh/id_rsa
}

# (EPERM on both tiers: on the landlock tier the compile's inode entry for
# the linked key makes the daemon's program decide the session's reads; a
# copy of core.yaml, so that the compiled form cached with that entry is
# not the one the other tests' sessions share)
test_hard_link_made_before_session() {
	local hp=/tmp/hl-evasion.yaml
	cp $POL/core.yaml $hp && chmod 644 $hp
	rm -f $THOME/innocent-link
	ln $THOME/.ssh/id_rsa $THOME/innocent-link
	expect "ERR EPERM" in_session $hp $SBXT open $THOME/innocent-link
	rm -f $THOME/innocent-link
}

test_hard_link_inside_session_refused() {
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT link $THOME/.ssh/id_rsa $THOME/proj/k
	[ ! -e $THOME/proj/k ] || fail "link was made"
}

test_dotdot_and_relative_paths() {
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT open $PROJ/../.ssh/id_rsa
	expect "$FILE_DENIED" in_session $POL/core.yaml sh -c "cd $THOME/.ssh/../.ssh && $SBXT open ./id_rsa"
	expect "$FILE_DENIED" in_session $POL/core.yaml sh -c "cd $PROJ && $SBXT open ../.ssh/./id_rsa"
}

test_proc_self_root() {
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT open /proc/self/root$THOME/.ssh/id_rsa
	expect "$FILE_DENIED" in_session $POL/core.yaml sh -c "cd $THOME && $SBXT open /proc/self/cwd/.ssh/id_rsa"
}

test_openat_on_parent_fd() {
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT openat $THOME/.ssh id_rsa
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT openat $THOME .ssh/id_rsa
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT openat / ${THOME#/}/.ssh/id_rsa
}

test_directory_listing_denied() {
	expect "$FILE_DENIED" in_session $POL/core.yaml $SBXT open $THOME/.ssh dir
}

test_rename_dir_away_keeps_protection() {
	# renaming the protected directory itself is a write to it
	expect "ERR EPERM" in_session $POL/core.yaml $SBXT rename $THOME/.ssh $THOME/ssh-moved
	[ -d $THOME/.ssh ] || fail "protected dir moved"
}
