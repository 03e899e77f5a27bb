# Reads and every kind of write (tests/kernel/t_files.sh) on the fallback
# tier: a read core.yaml denies is Landlock's (EACCES, $FILE_DENIED, with
# the event of the fexit on security_file_open); writes are the twins'
# on security_path_* and security_file_open (EPERM).
. "$ROOT/tests/kernel/t_files.sh"
nobpf_61_only read_denied_file_eperm write_denied_file_unchanged rename_in_out_of_denied_dir
