# Metadata that acts like a write (tests/kernel/t_metadata.sh) on the
# fallback tier: Landlock sees none of it; the daemon's fmod_ret twins on
# security_inode_setattr, _setxattr, _removexattr, _set_acl, _remove_acl
# and security_file_ioctl refuse it with EPERM and an event.
. "$ROOT/tests/kernel/t_metadata.sh"
