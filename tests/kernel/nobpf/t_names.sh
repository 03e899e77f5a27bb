# Exchanged and late-named files (tests/kernel/t_names.sh) on the
# fallback tier: the twins on security_path_rename and security_path_link
# refuse them with EPERM and an event.
. "$ROOT/tests/kernel/t_names.sh"
