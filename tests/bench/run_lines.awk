# run_lines.awk — make bench-lines' code_lines_run: from callgrind's
# --dump-instr=yes output of one thread, collected only while it launched
# (tests/bench/lines.sh run_code), the library's 64-byte code lines a launch
# runs: each line counted as the share of launches that run it (its most-run
# instruction's count over the launches, at most 1).  No cache model: the
# count moves when the code does, not when the lines move.  -v launches=N
# -v object=/NAME.so (the library, by the end of its path).
function num(s,   v, i) {
	if (s !~ /^0x/) return s + 0
	v = 0
	for (i = 3; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
/^positions:/ { npos = NF - 1; next }
/^c?ob=/ {   # an object's name is given once, at its first use (a call's cob= too)
	id = $1; sub(/^c?ob=/, "", id)
	if (NF > 1) { nm = $0; sub(/^c?ob=\([0-9]+\) /, "", nm); obname[id] = nm }
	if ($0 ~ /^ob=/) lib = substr(obname[id], length(obname[id]) - length(object) + 1) == object
	next
}
/^calls=/ { after_call = 1; next }
/^(0x[0-9a-f]+|[+-][0-9]+|\*)( |$)/ {
	a = $1
	if (a ~ /^[+]/) pc += substr(a, 2) + 0
	else if (a ~ /^-/) pc -= substr(a, 2) + 0
	else if (a != "*") pc = num(a)
	if (after_call) { after_call = 0; next }
	if (lib && NF > npos) ran[pc] += $(npos + 1)
}
END {
	for (pc in ran) { l = int(pc / 64); if (ran[pc] > most[l]) most[l] = ran[pc] }
	for (l in most) s += most[l] >= launches ? 1 : most[l] / launches
	printf "%.1f\n", s
}
