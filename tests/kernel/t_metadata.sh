# Metadata that acts like a write (bpf/metadata.bpf.c): extended attributes,
# POSIX ACLs, times and inode flags of a file the session may not write
# are refused, and the project's own files keep them. The fallback tier
# runs this file too (tests/kernel/nobpf/t_metadata.sh): there the twins on
# security_inode_* and security_file_ioctl decide, as Landlock does not.

AD=$ROOT/policy/shipped/agent-default.yaml
HD_META='
import os, sys, errno
how, path = sys.argv[1], sys.argv[2]
try:
    if how == "setxattr": os.setxattr(path, "user.sbx", b"1")
    elif how == "removexattr": os.removexattr(path, "user.keep")
    elif how == "acl":
        # system.posix_acl_access: user::rw- group::r-- other::rw-
        import struct
        acl = struct.pack("<I", 2) + struct.pack("<HHI", 1, 6, 0xffffffff) + \
              struct.pack("<HHI", 4, 4, 0xffffffff) + struct.pack("<HHI", 0x20, 6, 0xffffffff)
        os.setxattr(path, "system.posix_acl_access", acl)
    elif how == "utime": os.utime(path, (946684800, 946684800))
    elif how == "chattr":
        import fcntl, struct
        fd = os.open(path, os.O_RDONLY)
        fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0x40))   # FS_IOC_SETFLAGS: noatime
    print("OK")
except OSError as e: print("ERR", errno.errorcode[e.errno])'

test_metadata_of_a_file_the_session_may_not_write() {
	f=$THOME/.bashrc
	echo "# rc" >$f && chown $TUSER $f && chmod 644 $f
	as_user python3 -S -c "import os; os.setxattr('$f', 'user.keep', b'1')" 2>/dev/null || true
	before=$(stat -c '%a %Y' $f)
	local hows=()
	for how in setxattr removexattr acl utime chattr; do
		outside=$(as_user python3 -S -c "$HD_META" $how $PROJ/readme.txt | tail -n 1)
		case "$outside" in
		"ERR EOPNOTSUPP"|"ERR ENOTTY"|"ERR ENOTSUP"|"ERR ENODATA")
			echo "note: $how is not supported by this file system ($outside)" ;;
		*) hows+=($how) ;;
		esac
	done
	[ ${#hows[@]} -ge 3 ] || fail "only ${hows[*]} work on this file system: the test proves little"
	expect_each "ERR EPERM" $AD python3 -S -c "$HD_META" {} $f -- "${hows[@]}"
	[ "$(stat -c '%a %Y' $f)" = "$before" ] || fail "metadata changed: $before -> $(stat -c '%a %Y' $f)"
	event operation=setxattr object=$f verdict=deny
	event operation=setattr object=$f verdict=deny
	# the project's own files keep their metadata calls
	expect "OK" in_session $AD python3 -S -c "$HD_META" utime $PROJ/readme.txt
	if command -v setfacl >/dev/null; then
		in_session $AD setfacl -m o::rw $f 2>/dev/null && fail "setfacl succeeded"
	fi
	if command -v touch >/dev/null; then
		in_session $AD touch -d 2000-01-01 $f 2>/dev/null && fail "touch -d succeeded"
	fi
	[ "$(stat -c '%a %Y' $f)" = "$before" ] || fail "metadata changed by the tools"
}

