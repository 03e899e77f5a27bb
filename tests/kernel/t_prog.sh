# Per-program tests (tests/kernel/prog): each loads one program of the
# linked object with its maps, without the daemon, makes the real syscall
# from a session cgroup of its own, and asserts the verdict and the maps.
# A failure names the program; build/prog-tests -t NAME runs one alone.

PROGT=$ROOT/build/prog-tests

prog_test() {
	[ -x "$PROGT" ] || fail "no $PROGT (make build/prog-tests)"
	"$PROGT" -t "$1"
}

test_decision_walk() { prog_test decision_walk; }
test_dgram_cache() { prog_test dgram_cache; }
test_dgram_cache_own_listener() { prog_test dgram_cache_own_listener; }
test_listener() { prog_test listener; }
test_exec_check() { prog_test exec_check; }
test_rename_check() { prog_test rename_check; }
