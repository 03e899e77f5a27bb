# agent-strict (issue 28, class 5): reads in the home directory outside the
# project are asked, except caches, toolchains, shell and git configuration
# and the agent's own state. How many asks does real work raise? A C build,
# git, a Python test run and a Node script run in a session of agent-strict in
# which the home rule's ask is turned into audit (so that the run finishes
# and every read it would have asked is recorded); each distinct object is
# one ask a person would see. The figure goes to the log (MEASURE).

AST=$ROOT/policy/shipped/agent-strict.yaml

homeask_fixture() {
	rm -rf $PROJ/.sandbox $PROJ/.git $PROJ/w $THOME/Documents $THOME/notes.txt $THOME/.cache \
		$THOME/.gitconfig $THOME/.bashrc $THOME/.profile $THOME/.npm
	# a developer's home: git and shell configuration, a pip cache, and the
	# person's own files, which no credential rule names
	printf '[user]\n\tname = Person\n\temail = p@example.com\n[init]\n\tdefaultBranch = main\n' \
		>$THOME/.gitconfig
	echo 'export EDITOR=vi' >$THOME/.bashrc
	echo '. ~/.bashrc' >$THOME/.profile
	mkdir -p $THOME/.cache/pip/http $THOME/Documents $PROJ/w/tests
	echo "the person's notes" >$THOME/notes.txt
	echo "tax return" >$THOME/Documents/tax.txt
	printf 'app: main.o util.o\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) -O2 -c $<\n' >$PROJ/w/Makefile
	printf 'int twice(int);\nint main(void){return twice(21) != 42;}\n' >$PROJ/w/main.c
	printf 'int twice(int x){return 2*x;}\n' >$PROJ/w/util.c
	printf 'import json, sqlite3, subprocess, unittest\nclass T(unittest.TestCase):\n    def test_db(self):\n        c = sqlite3.connect(":memory:")\n        self.assertEqual(c.execute("select 2*21").fetchone()[0], 42)\n    def test_proc(self):\n        self.assertEqual(subprocess.run(["true"]).returncode, 0)\n' \
		>$PROJ/w/tests/test_app.py
	printf 'require("assert").strictEqual(require("path").basename("/a/b"), "b"); console.log("node ok")\n' \
		>$PROJ/w/t.js
	chown -R $TUSER:$TUSER $THOME
	as_user sh -c "cd $PROJ && git init -q && git add readme.txt && git commit -qm init" ||
		fail "setup: git"
}

WORK="set -e; step() { echo \"\$(date +%T) \$*\" >>/tmp/homeask.steps; }
	step make; cd $PROJ/w; make -s; ./app; echo built
	step git; cd $PROJ; git status --short >/dev/null; git add -A; git commit -qm work
	git log -1 --oneline >/dev/null; git diff HEAD~1 --stat >/dev/null; echo git-ok
	step python; python3 -m unittest discover -q -s w/tests 2>&1 | tail -n1
	step node; node w/t.js; step done
	cat $THOME/notes.txt >/dev/null"

# under TCG a session start, gcc, git, python and node take a minute or two
timeout_test_agent_strict_asks_few_for_a_build_git_and_tests=540

test_agent_strict_asks_few_for_a_build_git_and_tests() {
	homeask_fixture
	sed '0,/verdict: ask/s//verdict: audit/' $AST >/tmp/homeask-measure.yaml
	grep -q 'verdict: audit' /tmp/homeask-measure.yaml || fail "measure policy"
	chmod 644 /tmp/homeask-measure.yaml
	local from out objs n
	from=$(wc -l <$EVENTS)
	rm -f /tmp/homeask.steps
	out=$(in_session /tmp/homeask-measure.yaml timeout 420 sh -c "$WORK" 2>&1) ||
		fail "the work failed: $out (steps: $(cat /tmp/homeask.steps 2>/dev/null | tr '\n' ' '))"
	echo "MEASURE: agent-strict work steps: $(tr '\n' ' ' </tmp/homeask.steps)"
	for w in built git-ok OK "node ok"; do
		echo "$out" | grep -q "$w" || fail "missing '$w': $out"
	done
	sleep 1
	# the reads the home rule would have asked: audit events of that rule
	objs=$(tail -n +$((from + 1)) $EVENTS | python3 -S -c '
import json, sys
seen = set()
for l in sys.stdin:
    try: e = json.loads(l)
    except ValueError: continue
    if e.get("verdict") in ("audit", "ask", "deny") and str(e.get("object", "")).startswith(sys.argv[1] + "/"):
        seen.add((e.get("verdict"), e.get("operation"), e["object"]))
for s in sorted(seen): print(*s)' $THOME)
	# the probe at the end (a read of the person's notes) shows that a read
	# the home rule decides is recorded; it is not part of the work
	echo "$objs" | grep -q "^audit .* $THOME/notes.txt$" ||
		fail "the probe read was not recorded: the measure sees nothing ($objs)"
	objs=$(echo "$objs" | grep -v " $THOME/notes.txt$" || true)
	n=$(echo "$objs" | grep -c . || true)
	echo "MEASURE: agent-strict: $n distinct home reads asked for make + git + python -m unittest + node: $(echo "$objs" | awk '{print $3}' | tr '\n' ' ')"
	# none of the person's own files was read by the work
	echo "$objs" | grep -q "notes.txt\|Documents" && fail "the work read the person's files: $objs"
	# the same policy for real: a read of the person's files is asked
	expect "ERR EPERM" in_session $AST $SBXT open $THOME/notes.txt
	event object=$THOME/notes.txt verdict=ask
	expect OK in_session $AST $SBXT open $THOME/.gitconfig
}

# a figure of the shipped policy's content (how many asks real work
# raises), decided by the same programs on every kernel: measured by the
# 6.12 guests
on_61_only "a measure of agent-strict's content, the same on every kernel: run by the 6.12 guests"
