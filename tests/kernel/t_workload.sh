# A real workload learned, suggested and enforced (issue 34): the real
# git, pip, npm and cc do a project's work once in a learning session:
# git over a local remote (a push writes the remote), pip installs a local
# wheel from a shared wheelhouse, npm ci installs a local package (its
# cache and logs in ~/.npm), and a C build keeps its objects in a shared
# cache directory outside the project. The same run also reads the SSH
# key. policy suggest turns what was recorded into a patch; the work runs
# again enforced under it, and nothing of it is refused or asked but the
# key, which the suggestion lists apart. (pip without its version check
# and npm without its update notifier: offline, each waited for the
# network; 6.12 guest: 67 s in all, 29 s of it the learning run's steps.)

WL=/srv/sbx/wl
WLPATCH=/tmp/wl-patch.yaml

wl_fixture() {
	rm -rf $WL $PROJ/.sandbox $PROJ/.git $PROJ/vendor $PROJ/node_modules $PROJ/build \
		$THOME/.npm /opt/sbx-objcache
	mkdir -p $WL/wheels $WL/npm $PROJ/.sandbox /opt/sbx-objcache
	# the remote: a bare repository with one commit, the person's
	git init -q --bare $WL/remote.git
	git -C /tmp clone -q $WL/remote.git wl-seed 2>/dev/null
	git -C /tmp/wl-seed -c user.name=p -c user.email=p@x commit -q --allow-empty -m seed
	git -C /tmp/wl-seed push -q origin HEAD:main
	rm -rf /tmp/wl-seed
	git -C $WL/remote.git symbolic-ref HEAD refs/heads/main
	# the project is a clone of it, made by the person (a new .git is asked
	# inside a session: agent-default's .git rule)
	chown $TUSER $PROJ
	chown -R $TUSER $WL
	as_user git -C $PROJ init -q -b main
	as_user git -C $PROJ remote add origin $WL/remote.git
	as_user git -C $PROJ fetch -q origin
	as_user git -C $PROJ reset -q origin/main
	# a wheel, made as pip's own wheel builder would (zip, METADATA, RECORD)
	python3 -S -c 'import zipfile, hashlib, base64, sys
files = {"tinypkg/__init__.py": "VALUE = 42\n",
         "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
         "tinypkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
rec = []
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for n, c in files.items():
        z.writestr(n, c)
        h = base64.urlsafe_b64encode(hashlib.sha256(c.encode()).digest()).rstrip(b"=").decode()
        rec.append("%s,sha256=%s,%d" % (n, h, len(c)))
    rec.append("tinypkg-1.0.dist-info/RECORD,,")
    z.writestr("tinypkg-1.0.dist-info/RECORD", "\n".join(rec) + "\n")' \
		$WL/wheels/tinypkg-1.0-py3-none-any.whl
	# an npm package as a tarball, and the project's lock naming it
	mkdir -p /tmp/wl-lib
	printf '{"name":"tinylib","version":"1.0.0","main":"index.js"}\n' >/tmp/wl-lib/package.json
	echo 'module.exports = 42;' >/tmp/wl-lib/index.js
	tar -C /tmp -czf $WL/npm/tinylib-1.0.0.tgz --transform 's,^wl-lib,package,' wl-lib
	rm -rf /tmp/wl-lib
	integ=$(python3 -S -c 'import hashlib, base64, sys
print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())' \
		$WL/npm/tinylib-1.0.0.tgz)
	printf '{"name":"proj","version":"1.0.0","private":true,"dependencies":{"tinylib":"file:%s"}}\n' \
		$WL/npm/tinylib-1.0.0.tgz >$PROJ/package.json
	printf '{"name":"proj","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"proj","version":"1.0.0","dependencies":{"tinylib":"file:%s"}},"node_modules/tinylib":{"version":"1.0.0","resolved":"file:%s","integrity":"%s"}}}\n' \
		$WL/npm/tinylib-1.0.0.tgz $WL/npm/tinylib-1.0.0.tgz "$integ" >$PROJ/package-lock.json
	# a C program whose objects go to a shared cache directory
	mkdir -p $PROJ/src
	printf 'int main(void) { return 0; }\n' >$PROJ/src/main.c
	printf 'OBJ = /opt/sbx-objcache/main.o\nbuild/prog: $(OBJ)\n\tmkdir -p build && cc -o $@ $(OBJ)\n$(OBJ): src/main.c\n\tcc -c -o $@ src/main.c\n' \
		>$PROJ/Makefile
	printf '%s\n' '# the project' 'version: 1' 'extends: agent-default' >$PROJ/.sandbox/policy.yaml
	# the remote and the object cache are the person's, outside the project
	chown -R $TUSER $WL $PROJ /opt/sbx-objcache
}

# one line per step, OK or FAIL NAME; the key's read last
WL_WORK='cd $PROJ
step() { n=$1; shift; if "$@" >/tmp/wl-step.$n 2>&1; then echo "OK $n"; else echo "FAIL $n"; fi; }
rm -rf vendor node_modules build /opt/sbx-objcache/main.o
step fetch git fetch -q origin
step commit git -c user.name=a -c user.email=a@x commit -q --allow-empty -m work
step push git push -q origin HEAD:main
step pip python3 -m pip install -q --no-index --no-deps --no-cache-dir --no-compile --disable-pip-version-check --target vendor /srv/sbx/wl/wheels/tinypkg-1.0-py3-none-any.whl
step pyimport env PYTHONPATH=vendor python3 -S -c "import tinypkg; assert tinypkg.VALUE == 42"
step npm npm ci --offline --no-audit --no-fund --no-update-notifier --loglevel=error
step nodeimport node -e "process.exit(require(\"tinylib\") === 42 ? 0 : 1)"
step make make -s
step key cat $HOME/.ssh/id_rsa'

wl_run() {	# wl_run OUT RUN-OPTION...: the work in one session
	local out=$1
	shift
	as_user env PROJ=$PROJ "$SBX" run "$@" --project $PROJ -- sh -c "$WL_WORK" >$out 2>$out.err || true
}

test_a_real_workload_is_learned_suggested_and_then_runs_clean() {
	for t in git python3 npm node make cc; do
		command -v $t >/dev/null || skip "$t is not installed (make deps)"
	done
	python3 -m pip --version >/dev/null 2>&1 || skip "pip is not installed (make deps: python3-pip)"
	wl_fixture
	wl_run /tmp/wl-learn.out --learn
	sess=$(sed -n 's/^bpfsbx: session \([^ ]*\) is learning.*/\1/p' /tmp/wl-learn.out.err)
	[ -n "$sess" ] || fail "no learning session: $(cat /tmp/wl-learn.out.err)"
	# learning: the work went through, the key did not
	[ "$(grep -c '^OK ' /tmp/wl-learn.out)" = 8 ] && grep -qx 'FAIL key' /tmp/wl-learn.out ||
		fail "learning: $(tr '\n' ' ' </tmp/wl-learn.out); $(for f in /tmp/wl-step.*; do echo "$f: $(head -c 300 $f)"; done)"
	# and it would have been refused (what makes the test able to fail):
	# the push and the object cache at least
	event session=$sess verdict=audit rule.would=deny operation=open_write
	event session=$sess verdict=audit rule.would=deny object=/opt/sbx-objcache/main.o
	chown $TUSER /tmp/wl-learn.out
	out=$(cd $PROJ && "$SBX" policy suggest --session $sess --events $EVENTS 2>/tmp/wl-suggest.err) ||
		fail "suggest: $(cat /tmp/wl-suggest.err)"
	printf '%s\n' "$out" >$WLPATCH
	chmod 644 $WLPATCH
	rules=$(grep -v '^ *#' $WLPATCH)
	echo "$rules" | grep -q "path: $WL/remote.git/\|path: /srv/sbx/wl/" || fail "no rule for the remote: $out"
	echo "$rules" | grep -q 'path: /opt/sbx-objcache/' || fail "no rule for the object cache: $out"
	echo "$rules" | grep -q 'id_rsa\|\.ssh' && fail "the patch opens the key: $out"
	sed -n '/^# Not suggested/,$p' $WLPATCH | grep -q 'id_rsa' || fail "the key is not listed apart: $out"
	"$SBX" policy check $WLPATCH >/dev/null 2>&1 || fail "the patch does not check"
	# enforced under the patch: every step, and the key still refused
	EVENTS_FROM=$(wc -l <$EVENTS)
	wl_run /tmp/wl-after.out --policy $WLPATCH
	[ "$(grep -c '^OK ' /tmp/wl-after.out)" = 8 ] && grep -qx 'FAIL key' /tmp/wl-after.out ||
		fail "under the patch: $(tr '\n' ' ' </tmp/wl-after.out); $(for f in /tmp/wl-step.*; do echo "$f: $(head -c 300 $f)"; done)"
	refused=$(tail -n +$((EVENTS_FROM + 1)) $EVENTS | grep -v id_rsa | grep -c '"verdict":"\(deny\|ask\)"' || true)
	[ "$refused" = 0 ] || fail "$refused refusals under the patch: $(tail -n +$((EVENTS_FROM + 1)) $EVENTS | grep -v id_rsa | grep '"verdict":"\(deny\|ask\)"' | head -3)"
	[ -z "$(pending_ids)" ] || fail "asks under the patch: $(pending_ids)"
	event object=$THOME/.ssh/id_rsa verdict=deny
}

on_61_only 'real git, pip, npm and cc under TCG take minutes; run by the 6.12 guest, whose kernel steps are those the other files test on both kernels'
