# tests/corpus/expect.sh — a corpus trace's explain --json held against its
# NAME.expect (tests/corpus/README.md: the keys).  Sourced after tests/lib.sh
# (ok, nok, check_eq, check_ge) by tests/e2e/analyzer_corpus.sh, which
# analyses each trace once for these checks and for its views' agreement.
# The expectations were written from each workload's class, not from what
# explain printed, so a failure is the analyzer disagreeing with an expert,
# not a golden diff.

# facts JSON DIR: what the checks read of explain --json, in one jq (a jq
# costs ~30 ms of CPU to start and parse; twenty a trace were half of this
# test's time): DIR/vars.sh (shell variables) and one text file a kind of
# line — first.txt (every sentence of the first chain, one per line),
# all.txt (every chain's), fixes.txt, lead_fix.txt (its first) and source.txt (the first chain's),
# verdict.txt, kinds.txt (each chain's kind), kernels.tsv (the verdict's
# work, most GPU time first: name, share %, stream)
facts() {
	jq -r '
	# the kinds that are phases of a run, not its steady state (docs/chains.md):
	# one-time, or once per epoch (epoch_boundaries)
	def phase: . as $k | ["startup", "compilation", "recompilation", "autotuning", "epoch_boundaries", "after_gpu_work"]
		| index($k) != null;
	def lines(tag): tostring | split("\n")[] | tag + "\t" + .;
	def sentences: [.kind, .summary, .root_cause, (.timeline // [])[], (.fixes // [])[], (.source // "")] | .[];
	def var(name; v): "sh\t" + name + "=" + (v | tostring | @sh);
	. as $r | ($r.chains // []) as $c | ([$c[] | select(.kind | phase | not)][0] // {}) as $steady
	| (($c[0] // empty) | sentences | lines("first")),
	  ($c[] | sentences | lines("all")),
	  (($c[0].fixes // [])[] | lines("fixes")),
	  (($c[0].fixes // [])[0] // "" | lines("lead_fix")),
	  (($c[0].source // "") | lines("source")),
	  (($r.verdict.text // "") | lines("verdict")),
	  ($c[].kind | lines("kinds")),
	  ($r.verdict.kernels[]? | "kernels\t\(.short_name)\t\(.gpu_share_pct // 0)\t\(.stream)"),
	  var("first_kind"; $c[0].kind // "none"),
	  var("first_sev"; $c[0].severity // "NONE"),
	  var("steady_sev"; $steady.severity // "NONE"),
	  var("steady_what"; $steady.kind // "none"),
	  var("verdict_state"; $r.verdict.state // "none"),
	  var("top_kernel"; $r.verdict.kernels[0].short_name // ""),
	  var("top_share"; $r.verdict.kernels[0].gpu_share_pct // 0 | floor),
	  var("top_timed_alone"; $r.verdict.kernels[0].timed_alone // "none"),
	  var("work_list"; [$r.verdict.kernels[]? | .short_name + " " + (.gpu_share_pct | tostring) + "%"] | join(", ")),
	  var("straggler"; $r.ranks.straggler.rank // "none"),
	  var("straggler_cause"; $r.ranks.straggler.cause.kind // "none"),
	  var("collectives_source"; $r.ranks.collectives_source // "none"),
	  var("step_class"; $r.step_breakdown.class // "none"),
	  # (issue 13) a phase that outranks a steady-state cause costing the run at least as much
	  var("phase_first"; [range(0; $c | length) as $i | range($i + 1; $c | length) as $j
		| select($c[$i].phase != "steady" and $c[$j].phase == "steady" and $c[$j].cost_ns >= $c[$i].cost_ns)
		| "\($c[$i].kind) before \($c[$j].kind)"] | first // ""),
	  # (issue 39) a Source in a library file
	  var("lib_source"; [$c[] | select(.source != null and (.source
		| test("site-packages/|dist-packages/|/lib/python3[.0-9]*/|/torchinductor_|<frozen")))
		| "\(.kind): \(.source)"] | first // ""),
	  # a part larger than its whole: the time of the host-bound stretches inside
	  # CUDA calls past their end (c24: the wait of a closing sync, 114 %)
	  var("part_over"; [$c[] | select(.evidence.in_cuda_calls_ns != null and
		.evidence.in_cuda_calls_ns > .evidence.stretch_ns) | .kind] | first // ""),
	  # a gaps chain whose timeline does not end with its [CUDA] line lost
	  # lines to the cap (chains.h: ten traces did at 8)
	  var("cut_timeline"; [$c[] | select((.kind | startswith("gaps_")) and ((.timeline | last // "")
		| startswith("[CUDA]") | not)) | .kind] | first // ""),
	  # the narrowest width of the steady state GPU idle: measured bounds or the estimate inside them
	  var("idle_width"; $r.gpu_idle_pct | if .measured and .steady_low != null then
		([.steady_high - .steady_low] + (if .estimate_from_timed_work.steady_low != null then
		[.estimate_from_timed_work.steady_high - .estimate_from_timed_work.steady_low] else [] end)) | min
		| . * 10 | round / 10 else "-" end)
	' "$1" | awk -F '\t' -v d="$2" '
	BEGIN { n = split("first all fixes lead_fix source verdict kinds", k, " ")
		for (i = 1; i <= n; i++) printf "" >(d "/" k[i] ".txt")
		printf "" >(d "/kernels.tsv") }
	$1 == "sh" { print substr($0, 4) >(d "/vars.sh"); next }
	$1 == "kernels" { print substr($0, 9) >(d "/kernels.tsv"); next }
	{ print substr($0, length($1) + 2) >(d "/" $1 ".txt") }'
}
sev_rank() { case $1 in HIGH) echo 3 ;; MEDIUM) echo 2 ;; LOW) echo 1 ;; *) echo 0 ;; esac; }
# matches STRING ERE: the whole of STRING matches ERE
matches() { grep -Eqx -- "$2" <<EOF
$1
EOF
}
# kernels AWK: the verdict's work (kernels.tsv: name, share %, stream) through
# the awk program AWK, p the key's pattern
kernels() { awk -F '\t' -v p="$v" "$1" "$T/kernels.tsv"; }

# miss MESSAGE: a failed check — unless the expectation names it a known gap
# (known_gap=ERE :: why), which is then printed as "ok - ... # TODO" with why:
# said, not hidden, and not failing the suite (tests/corpus/README.md)
miss() {
	while IFS= read -r kg; do
		pat=${kg%% :: *}; why=${kg#* :: }
		if echo "$1" | grep -Eq -- "$pat"; then ok "$1 # TODO known gap: $why"; return; fi
	done <"$T/known.txt"
	nok "$1"
}
check_k() { d=$1; shift; if "$@"; then ok "$d"; else miss "$d"; fi; }

check_one() { # NAME EXPECT (facts read)
	n=$1; e=$2
	sed -n 's/^known_gap=//p' "$e" >"$T/known.txt"
	grep -v '^[[:space:]]*#' "$e" | grep '=' | while IFS= read -r kv; do
		k=${kv%%=*}; v=${kv#*=}
		case $k in
		first_kind)
			if matches "$first_kind" "$v"; then ok "$n: first chain is $first_kind"
			else miss "$n: first chain is $first_kind, expected $v"; fi ;;
		first_severity)
			if matches "$first_sev" "$v"; then ok "$n: first chain's severity $first_sev"
			else miss "$n: first chain's severity $first_sev, expected $v"; fi ;;
		first_mentions)
			check_k "$n: first chain mentions /$v/" grep -Eqi -- "$v" "$T/first.txt" ;;
		first_fix_mentions)
			check_k "$n: first chain's fixes mention /$v/" grep -Eqi -- "$v" "$T/fixes.txt" ;;
		lead_fix_mentions)
			check_k "$n: first chain's first fix mentions /$v/ (is '$(cut -c1-80 "$T/lead_fix.txt")')" \
				grep -Eqi -- "$v" "$T/lead_fix.txt" ;;
		first_source)
			check_k "$n: first chain's source /$v/ (is '$(cat "$T/source.txt")')" grep -Eq -- "$v" "$T/source.txt" ;;
		must_mention)
			check_k "$n: some chain mentions /$v/" grep -Eqi -- "$v" "$T/all.txt" ;;
		must_not_mention)
			hit=$(grep -Eoi -- "$v" "$T/all.txt" | head -n 1)
			if [ -z "$hit" ]; then ok "$n: no chain mentions /$v/"
			else miss "$n: a chain mentions '$hit' (must not: /$v/)"; fi ;;
		kind_present)
			check_ge "$n: a $v chain" "$(grep -Fxc -- "$v" "$T/kinds.txt")" 1 ;;
		kind_absent)
			check_eq "$n: no $v chain" 0 "$(grep -Fxc -- "$v" "$T/kinds.txt")" ;;
		max_steady_severity)
			if [ "$(sev_rank "$steady_sev")" -le "$(sev_rank "$v")" ]; then ok "$n: steady state at most $v (is $steady_sev)"
			else miss "$n: steady state at most $v, but $steady_what is $steady_sev"; fi ;;
		verdict)
			if matches "$verdict_state" "$v"; then ok "$n: verdict $verdict_state"
			else miss "$n: verdict $verdict_state, expected $v"; fi ;;
		busy_top_kernel)
			# a busy verdict names the kernels the GPU's time went to, most first
			st=$verdict_state top=$top_kernel share=$top_share
			if [ "$st" = busy ]; then
				check_k "$n: busy: the most GPU time is /$v/'s (is '$top', $share %)" \
					sh -c 'echo "$1" | grep -Eq -- "$2" && [ "$3" -ge 20 ]' _ "$top" "$v" "$share"
				check_k "$n: busy: the verdict's line names it" grep -Fq -- "$(printf %.40s "$top")" "$T/verdict.txt"
			elif [ "$st" != partly_idle ]; then
				# (a partly idle GPU's list: top_kernel=)
				check_eq "$n: not busy ($st): no kernels listed" "" "$top"
			fi ;;
		top_kernel)
			# a GPU that is busy or partly idle: the verdict says where the
			# time it has goes, by kernel, most first
			st=$verdict_state top=$top_kernel
			# (the kind of kernel: a GEMM's time may go to several of
			# cuBLAS's tile shapes, each its own kernel)
			share=$(kernels '$1 ~ p { s += $2 } END { print int(s) }')
			check_k "$n: $st: the most GPU time is /$v/'s (is '$top'; all /$v/ $share %)" \
				sh -c 'echo "$1" | grep -Eq -- "$2" && [ "$3" -ge 20 ]' _ "$top" "$v" "$share"
			check_k "$n: $st: the verdict's line names it" grep -Fq -- "$(printf %.40s "$top")" "$T/verdict.txt"
			check_k "$n: $st: with how many of its launches were timed alone" \
				test "$top_timed_alone" != none ;;
		lists_work)
			# the verdict's list of where the GPU's time went has an entry
			# (a kernel, a kind of copy, the memsets) matching
			check_k "$n: $verdict_state: its GPU work lists /$v/ ($work_list)" \
				test -n "$(kernels '$1 ~ p { print; exit }')" ;;
		work_stream)
			# REGEX:WHERE — the verdict's entry matching REGEX ran on the
			# stream with the most work ("main"), another ("other"), "several"
			pat=${v%:*}; want=${v##*:}
			got=$(v=$pat kernels '$1 ~ p { print $3; f = 1; exit } END { if (!f) print "none" }')
			check_k "$n: /$pat/ ran on the $want stream (is $got)" test "$got" = "$want" ;;
		verdict_mentions)
			check_k "$n: the verdict mentions /$v/" grep -Eqi -- "$v" "$T/verdict.txt" ;;
		straggler|straggler_cause|collectives_source)
			# a job of several ranks (explain --json's "ranks"): the straggler's rank
			# (none: balanced, or no job), its own cause's kind, where the collectives
			# were timed from (nccl, gloo, none)
			case $k in
			straggler) got=$straggler ;;
			straggler_cause) got=$straggler_cause ;;
			*) got=$collectives_source ;;
			esac
			if matches "$got" "$v"; then ok "$n: $k $got"
			else miss "$n: $k $got, expected $v"; fi ;;
		step_class)
			# the per-step breakdown's class (explain --json step_breakdown.class)
			if matches "$step_class" "$v"; then ok "$n: step class $step_class"
			else miss "$n: step class $step_class, expected $v"; fi ;;
		known_gap) ;;
		*) nok "$n: unknown key '$k' in $e" ;;
		esac
	done
}

# expect_trace NAME EXPECT JSON: the checks of every trace, then EXPECT's,
# on explain --json of NAME (JSON); the facts are written in the caller's $T
expect_trace() {
	n=$1; e=$2
	rm -f "$T/vars.sh"
	facts "$3" "$T" && [ -s "$T/vars.sh" ] || { nok "$n: explain --json read"; return; }
	. "$T/vars.sh"
	# every trace: a phase (one-time or per epoch) never outranks a steady-state
	# cause that costs the run at least as much (issue 13)
	check_eq "$n: no phase outranks a steady cause it does not exceed" "" "$phase_first"
	# every trace: a finding's Source is the user's own line, never a
	# library's file (issue 39: torch/nn/modules/*.py on ten traces)
	check_eq "$n: every Source is the user's own line" "" "$lib_source"
	check_eq "$n: every gaps chain's timeline whole (its [CUDA] line last)" "" "$cut_timeline"
	check_eq "$n: no host-bound stretch more inside CUDA calls than its length" "" "$part_over"
	check_one "$n" "$e"
	# every measured trace: GPU idle over the steady state within 5 points —
	# the measured bounds, or the estimate from work timed alone inside them
	w=$idle_width
	if [ "$w" != - ]; then
		check_k "$n: steady-state GPU idle measured within 5 points (is $w)" \
			awk -v w="$w" 'BEGIN { exit !(w <= 5) }'
	fi
}
