# tools/gen/limits.awk - docs/LIMITS.md -> a C string of its bullets' first
# sentences, for `bpfsbx doctor`: the page is the one source, so doctor
# cannot list a limit that is gone or miss a new one.
function flush() {
	if (b == "") return
	gsub(/`/, "", b)
	if (match(b, /[^.]\.( |$)/)) b = substr(b, 1, RSTART + 1)
	gsub(/\\/, "\\\\", b); gsub(/"/, "\\\"", b)
	printf "\t\"  - %s\\n\"\n", b
	b = ""
}
BEGIN { print "/* generated from docs/LIMITS.md by tools/gen/limits.awk: do not edit */"
	print "const char sbx_known_limits[] =" }
/^- / { flush(); b = substr($0, 3); next }
/^  [^ ]/ && b != "" { sub(/^ +/, ""); b = b " " $0; next }
{ flush() }
END { flush(); print "\t\"\";" }
