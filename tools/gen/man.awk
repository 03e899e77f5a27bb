# bpfsbx(1) from docs/man/bpfsbx.1.scd and the commands' option tables:
#   bpfsbx help --gen man >GEN; awk -f tools/gen/man.awk GEN docs/man/bpfsbx.1.scd
# In the page, "@command NAME" stands for NAME's synopsis line (from its
# table); NAME's prose follows, indented, and its options are put after it.
# A command with no @command block, or a block for no command, fails the
# build: the page cannot forget a command or keep a removed one.
FNR == NR {
	if ($1 == "@head" || $1 == "@opts") { part = $1; name = $2; if (part == "@head") order[++n] = name; next }
	if (part == "@head") head[name] = head[name] $0 "\n"
	else opts[name] = opts[name] $0 "\n"
	next
}
function flush() {
	if (cur != "") { printf "\n%s", opts[cur]; cur = ""; blank = 0 }
}
cur != "" && /^$/ { blank = 1; next }
cur != "" && /^\t/ { if (blank) print ""; blank = 0; print; next }
cur != "" { flush() }
/^@command / {
	if (!($2 in head)) { print "man.awk: @command " $2 ": bpfsbx has no such command" >"/dev/stderr"; bad = 1; exit 1 }
	printf "%s", head[$2]; seen[$2] = 1; cur = $2; next
}
{ print }
END {
	if (bad) exit 1
	flush()
	for (i = 1; i <= n; i++) if (!(order[i] in seen)) {
		print "man.awk: bpfsbx(1) has no @command " order[i] " block" >"/dev/stderr"; exit 1
	}
}
