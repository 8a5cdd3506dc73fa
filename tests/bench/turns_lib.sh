# turns_lib.sh — overhead by taking turns, shared by tests/bench/overhead.sh
# (the fake runtime, here) and tests/bench/gpu_dataloader.sh (PyTorch, H200).
#
# Whole runs of a loop, traced and untraced, differ by 8-10 % on their own on
# a shared machine (docs/gpu-runs.md section 4), far more than the 1 % asked
# of the tracer.  So an untraced reference and traced variants run at the
# same time and take turns through FIFOs, one chunk of the loop each: ref,
# v1, v2, ..., ref, v1, ...  A variant's chunk is compared with the mean of
# the reference chunks just before and after it, so the machine's drift
# cancels, and a comparison costs one chunk (~0.5 s), not a process start.
#
# The caller sets RUN (ingero-run) and defines, before calling turns:
#   workload MINE THEIRS READY   the loop's command: waits for a byte on MINE,
#                                runs a chunk, prints "chunk=I wall_s=W
#                                thread_cpu_s=C", writes a byte to THEIRS;
#                                after its warm-up, one byte to READY
#   log LINE...                  prints a key=value line
# turns OUT ROUNDS "VARIANTS" then logs, per variant, the median, mean and
# 95 % CI of the per-chunk wall and thread-CPU ratios.  Figures come from one
# variant per run: with several, the ring's order biased the comparison (a
# second untraced process read 1.04 in a ring of 7 on the H200).

# the variants: how CMD runs (DB: where a traced one writes)
variant() { # NAME DB CMD...
	_v=$1; _db=$2; shift 2
	case $_v in
	untraced) exec "$@" ;;
	full) exec "$RUN" -q --force -o "$_db" -- "$@" ;;
	cudaonly) exec "$RUN" -q --force --cuda-only -o "$_db" -- "$@" ;;            # preload + collector, no eBPF
	nopreload) exec env INGERO_DISABLE=1 "$RUN" -q --force -o "$_db" -- "$@" ;;   # eBPF + sampler, no CUDA calls
	nostacks) exec env INGERO_LAUNCH_SAMPLE=0 INGERO_STACKS=none "$RUN" -q --force -o "$_db" -- "$@" ;;
	nosampler) exec "$RUN" -q --force --sample-hz 0 -o "$_db" -- "$@" ;;
	nomarks) exec env INGERO_GPU_MARKS=0 "$RUN" -q --force -o "$_db" -- "$@" ;;   # no measured GPU time
	ring) exec env INGERO_LANES=0 "$RUN" -q --force -o "$_db" -- "$@" ;;   # every call through the shared ring, no lanes
	smallring) exec env INGERO_RING_EVENTS=16384 "$RUN" -q --force -o "$_db" -- "$@" ;;   # 2 MiB ring, not 8
	slowpoll) exec env INGERO_GPU_POLL_US=4000 "$RUN" -q --force -o "$_db" -- "$@" ;;   # the GPU watcher every 4 ms, not 1
	watchonly) exec env INGERO_GPU_MARK_US=0 "$RUN" -q --force -o "$_db" -- "$@" ;;   # marks by the watcher only, none by the program's threads
	marks16) exec env INGERO_GPU_MARK_US=250 INGERO_GPU_MARK_STEADY=0 "$RUN" -q --force -o "$_db" -- "$@" ;;   # the threads' ration 16 times the default, never stretched: a mark's cost, amplified
	nobatch) exec env INGERO_TRACER_BATCH=0 "$RUN" -q --force -o "$_db" -- "$@" ;;   # the tracer's threads under the default policy, not SCHED_BATCH
	# another build, everything on: ALT_RUN is its ingero-run (another bundle's,
	# or a worktree's scripts/ingero-run with its own INGERO_* paths exported
	# by a wrapper): two builds side by side on one host, process by process
	alt) exec "${ALT_RUN:?ALT_RUN: another build's ingero-run}" -q --force -o "$_db" -- "$@" ;;
	*) echo "turns: unknown variant $_v" >&2; exit 2 ;;
	esac
}

# per chunk of the variant: its wall and thread-CPU time over the mean of the
# reference's neighbouring chunks; chunk 0 (still warming) is skipped
turns_neighbours() { # ref_file variant_file
	paste "$1" "$2" | sed 's/[a-z_]*=//g' | awk '
		{ uw[NR] = $2; uc[NR] = $3; vw[NR] = $5; vc[NR] = $6 }
		END { for (i = 2; i < NR; i++)
			print vw[i] / ((uw[i] + uw[i + 1]) / 2), vc[i] / ((uc[i] + uc[i + 1]) / 2) }'
}

# one column -> "median mean ci_lo ci_hi n" (CI: mean +- 1.96 standard errors)
turns_stats() {
	sort -n | awk '{ v[NR] = $1; s += $1; ss += $1 * $1 }
		END { if (NR < 2) { print "- - - - " NR; exit }
			m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			mean = s / NR; sd = sqrt((ss - NR * mean * mean) / (NR - 1)); h = 1.96 * sd / sqrt(NR)
			printf "%.4f %.4f %.4f %.4f %d\n", m, mean, mean - h, mean + h, NR }'
}

turns() { # OUT ROUNDS VARIANTS
	_out=$1; _rounds=$2; _variants=$3
	_t=$(mktemp -d "${TMPDIR:-/tmp}/ingero-turns.XXXXXX"); _r=0
	for _v in $_variants; do : >"$_out/turns.$_v.ratios"; done
	while [ $_r -lt "$_rounds" ]; do
		set -- ref $_variants; _n=$#; _k=0
		rm -f "$_t"/f* "$_t/ready"; mkfifo "$_t/ready"
		while [ $_k -lt $_n ]; do mkfifo "$_t/f$_k"; _k=$((_k + 1)); done
		_k=0
		for _v in "$@"; do
			[ $_v = ref ] && _v=untraced
			( variant $_v "$_out/turns.$_k.db" \
				$(workload "$_t/f$_k" "$_t/f$(((_k + 1) % _n))" "$_t/ready") ) \
				>"$_out/turns.$_r.$_k.out" 2>"$_out/turns.$_r.$_k.err" &
			_k=$((_k + 1))
		done
		# every process warmed up before the reference takes the first turn
		timeout 300 dd if="$_t/ready" bs=1 count=$_n of=/dev/null 2>/dev/null
		printf t >"$_t/f0"
		wait
		_k=1
		for _v in $_variants; do
			turns_neighbours "$_out/turns.$_r.0.out" "$_out/turns.$_r.$_k.out" >>"$_out/turns.$_v.ratios"
			rm -f "$_out/turns.$_k.db" "$_out/turns.$_k.db-wal" "$_out/turns.$_k.db-shm"
			_k=$((_k + 1))
		done
		log "turns_round=$_r processes=$_n chunks=$(wc -l <"$_out/turns.$_r.0.out")"
		_r=$((_r + 1))
	done
	rm -rf "$_t"
	for _v in $_variants; do
		set -- $(cut -d' ' -f1 "$_out/turns.$_v.ratios" | turns_stats)
		log "turns_variant=$_v median_ratio=$1 mean_ratio=$2 ci95=$3-$4 n=$5"
		set -- $(cut -d' ' -f2 "$_out/turns.$_v.ratios" | turns_stats)
		log "turns_variant=$_v median_cpu_ratio=$1 mean_cpu_ratio=$2 ci95=$3-$4"
	done
}

# awk: t95(n), the two-sided 95 % quantile of Student's t with n - 1
# degrees of freedom (1.96 past 20), for the CIs over pairs or processes
TURNS_T95='function t95(n,  t) {
	split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086", t, " ")
	return n - 1 <= 20 ? t[n - 1] : 1.96
}
'

# turns_paired OUT PAIRS VARIANTS — PAIRS times: an A/A round (a second
# untraced copy against the reference), then one round of each variant, each
# round its own pair of processes.  Every pair of processes carries an offset
# of its own that chunk-by-chunk turns do not cancel (an untraced copy read
# 0.94-1.06 against the reference on the H200, docs/gpu-runs.md section 7),
# so each variant's round is read against the A/A round of the same pair:
# logs per pair the rounds' mean ratios, then per variant the mean of the
# paired differences in percent and its 95 % CI (Student's t), e.g.
#   paired_variant=full overhead_pct=3.14 ci95_low=0.90 ci95_high=5.38 pairs=11
turns_paired() { # OUT PAIRS VARIANTS
	__po=$1; __pn=$2; __pvs=$3; __pi=0
	: >"$__po/paired.txt"
	while [ $__pi -lt "$__pn" ]; do
		__line="paired_round=$__pi"
		for __pv in untraced $__pvs; do
			mkdir -p "$__po/p$__pi.$__pv"
			turns "$__po/p$__pi.$__pv" 1 "$__pv" >/dev/null
			__m=$(cut -d' ' -f1 "$__po/p$__pi.$__pv/turns.$__pv.ratios" |
				awk '{ s += $1 } END { if (NR) printf "%.5f", s / NR; else print "-" }')
			echo "$__pi $__pv $__m" >>"$__po/paired.txt"
			__line="$__line $__pv=$__m"
			rm -rf "$__po/p$__pi.$__pv"
		done
		log "$__line"
		__pi=$((__pi + 1))
	done
	for __pv in $__pvs; do
		log "$(awk -v v="$__pv" "$TURNS_T95"'
			$3 == "-" { next }
			$2 == "untraced" { aa[$1] = $3 }
			$2 == v { x[$1] = $3 }
			END {
				n = 0
				for (p in x) if (p in aa) { d[++n] = 100 * (x[p] - aa[p]); s += d[n] }
				if (n < 2) { printf "paired_variant=%s overhead_pct=- ci95_low=- ci95_high=- pairs=%d\n", v, n; exit }
				m = s / n; for (i = 1; i <= n; i++) ss += (d[i] - m) ^ 2
				h = t95(n) * sqrt(ss / (n - 1)) / sqrt(n)
				printf "paired_variant=%s overhead_pct=%.2f ci95_low=%.2f ci95_high=%.2f pairs=%d\n", v, m, m - h, m + h, n
			}' "$__po/paired.txt")"
	done
}

# turns_toggle OUT PROCS VARIANTS — one process against itself: the caller's
# toggle_workload prints a command whose chunks alternate paused / recording
# (cudaProfilerStop / Start; every variant runs with
# INGERO_CAPTURE=cudaProfilerApi, so traced ones pause and resume; an
# untraced one changes nothing: the method's A/A).  A process's offset (where
# its threads and memory landed, ±3 points between processes on the H200)
# is in both halves, so it cancels; what is left is what recording costs:
# per call, stacks, marks, the sender and collector at work — the eBPF
# programs and the sampler follow the process all along, so they are in
# both halves and not in the figure (the nopreload variant of turns shows
# them).  Each recording chunk is read against the mean of the paused chunks
# before and after it (the first 5 % of the chunks, at least two, are
# warm-up): its difference d.  The overhead is the sum of the d over the sum
# of the paused means (a ratio of means: the mean of per-chunk ratios is
# biased upwards by about half the chunks' squared spread, ~0.25 points at
# the H200's ~7 % per 30-step chunk, which the A/A read as 0.07-0.53).
# PROCS processes per variant, interleaved (TOGGLE_AA=N: the untraced A/A in
# the first N only, so that a device call's time goes to the traced variant's
# chunks); logs per process its ratio, then
# per variant
#   toggle_variant=V overhead_pct=… ci95_low=… ci95_high=… procs=N chunks=M
#   chunk_mean_pct=… chunk_ci95=…-… ratio_mean_pct=…
# with the 95 % CI over the processes' ratios (Student's t), the same pooled
# over all chunks (the d's mean ± 1.96 standard errors, over the paused
# mean), and the old mean of per-chunk ratios; then per traced variant
#   toggle_vs_aa=V pct=… ci95=…-…
# its chunk figure less the A/A's.  Each process's chunk lines are kept as
# toggle.V.P.out.  With ANALYZE (ingero-analyze) set,
# each traced process's line also says how many calls it recorded
# (V_calls=N): those of its recording chunks only, if pausing works; and
# its BPF programs' run time in the loop in % of one CPU (V_bpf_pct_cpu:
# the run's total less that of a traced run of the start-up alone), an
# upper bound on what they take from the loop's thread, whose figure does
# not include them.
# (V_bpf_modes: the same programs' time while recording and while paused,
# each in % of one CPU over that mode's time, then the sched_switch
# program's and the sampler's while recording less while paused: what
# recording adds, and so what the toggle's figure holds of them.)
# toggle_bpf_modes DB: "rec paused switch_extra sample_extra" (% of one CPU), "-" unknown
toggle_bpf_modes() {
	python3 -c '
import sqlite3, sys
s = dict(sqlite3.connect(sys.argv[1]).execute("SELECT key, value FROM session"))
g = lambda k: int(s.get(k, 0))
r, p = g("bpf_mode_ns.recording"), g("bpf_mode_ns.paused")
if not r or not p:
    print("-"); sys.exit()
pct = lambda k, m, t: 100.0 * g("bpf_run_ns.%s%s" % (k, m)) / t
extra = lambda k: pct(k, ".recording", r) - pct(k, ".paused", p)
print("%.3f/%.3f/%.3f/%.3f" % (pct("recording", "", r), pct("paused", "", p), extra("on_switch"), extra("on_sample")))
' "$1" 2>/dev/null || echo "-"
}
# toggle_marks DB: "by_threads/by_watcher", the GPU marks a trace holds
toggle_marks() {
	python3 -c '
import sqlite3, sys
r = sqlite3.connect(sys.argv[1]).execute("SELECT sum((flags & 1) = 0), sum(flags & 1) FROM gpu_marks").fetchone()
print("%d/%d" % (r[0] or 0, r[1] or 0))
' "$1" 2>/dev/null || echo "-"
}
# toggle_bpf DB: "bpf_run_ns run_ns" of a trace (collector/bpf_cost.c), "- -" unknown
toggle_bpf() {
	python3 -c '
import sqlite3, sys
s = dict(sqlite3.connect(sys.argv[1]).execute("SELECT key, value FROM session"))
print(s["bpf_run_ns"], int(s["end_mono_ns"]) - int(s["start_mono_ns"])) if "bpf_run_ns" in s else print("- -")
' "$1" 2>/dev/null || echo "- -"
}

# toggle_rows VARIANT PROC CHUNKFILE [split]: per recording chunk of one
# process's chunk lines ("chunk=I on=0|1 wall_s=W ..."), "VARIANT PROC wall
# neighbours' mean", the first 5 % of the chunks (at least two) left out.
# split: the process's collector ran with INGERO_SPLIT_BPF (collector/tracer.h),
# so its second, fourth, ... recording chunks (capture windows), the named
# eBPF part held paused, are "VARIANT-held" (untraced has no collector: never)
toggle_rows() {
	sed 's/[a-z_]*=//g' "$3" | awk -v p="$2" -v v="$1" -v sp="${4:-}" '
		{ on[$1] = $2; w[$1] = $3; n = $1; if ($2 == 1) win[$1] = ++k }
		END { for (i = (n > 60 ? int(n / 20) : 2) + 1; i < n; i++) if (on[i] == 1 && on[i - 1] == 0 && on[i + 1] == 0)
			print (sp != "" && v != "untraced" && win[i] % 2 == 0 ? v "-held" : v), p, w[i], (w[i - 1] + w[i + 1]) / 2 }'
}

# toggle_diff ROWS NAME A B: variant A's chunk figure less B's, its CI from
# both chunk CIs: "NAME=A pct=D ci95=LO-HI"
toggle_diff() {
	awk -v a="$3" -v b="$4" -v name="$2" '
		$1 != a && $1 != b { next }
		{ k = $1 == a; dd = $3 - $4; ds[k] += dd; dss[k] += dd * dd; os[k] += $4; cn[k]++ }
		END {
			if (cn[0] < 2 || cn[1] < 2) { printf "%s=%s pct=- ci95=-\n", name, a; exit }
			for (k = 0; k <= 1; k++) {
				dm = ds[k] / cn[k]; om = os[k] / cn[k]
				p[k] = 100 * dm / om; h[k] = 196 * sqrt((dss[k] - cn[k] * dm * dm) / (cn[k] - 1)) / sqrt(cn[k]) / om
			}
			d = p[1] - p[0]; hh = sqrt(h[0] ^ 2 + h[1] ^ 2)
			printf "%s=%s pct=%.2f ci95=%.2f-%.2f\n", name, a, d, d - hh, d + hh
		}' "$1"
}

# toggle_summary ROWS "VARIANTS": from toggle_rows' lines, per variant the
# toggle_variant= line and, per traced one, toggle_vs_aa= (turns_toggle's
# figures; tests/bench/toggle_pool.sh pools runs' chunk files with it); a
# variant whose rows hold split chunks is followed by VARIANT-held
toggle_summary() {
	set -- "$1" "$(for __sv in $2; do printf '%s ' "$__sv"
		grep -q "^$__sv-held " "$1" && printf '%s-held ' "$__sv"; done)"
	for __sv in $2; do
		log "$(awk -v v="$__sv" "$TURNS_T95"'
			$1 != v { next }
			{ on[$2] += $3; off[$2] += $4; dd = $3 - $4; ds += dd; dss += dd * dd; os += $4; rs += $3 / $4; cn++ }
			END {
				n = 0; for (p in on) { d[++n] = 100 * (on[p] / off[p] - 1); m += d[n] }
				if (cn < 2) { printf "toggle_variant=%s overhead_pct=- ci95_low=- ci95_high=- procs=%d chunks=%d\n", v, n, cn; exit }
				m /= n; for (i = 1; i <= n; i++) ss += (d[i] - m) ^ 2
				# (the CI over the processes needs two; one process still has its chunks)
				pf = n < 2 ? sprintf("overhead_pct=%.2f ci95_low=- ci95_high=-", m) : \
					sprintf("overhead_pct=%.2f ci95_low=%.2f ci95_high=%.2f", m, m - t95(n) * sqrt(ss / (n - 1)) / sqrt(n), m + t95(n) * sqrt(ss / (n - 1)) / sqrt(n))
				dm = ds / cn; om = os / cn; dh = 1.96 * sqrt((dss - cn * dm * dm) / (cn - 1)) / sqrt(cn)
				printf "toggle_variant=%s %s procs=%d chunks=%d chunk_mean_pct=%.2f chunk_ci95=%.2f-%.2f ratio_mean_pct=%.2f\n",
					v, pf, n, cn, 100 * dm / om, 100 * (dm - dh) / om, 100 * (dm + dh) / om, 100 * (rs / cn - 1)
			}' "$1")"
	done
	# each traced variant less the A/A (the untraced processes' own on/off
	# difference, whatever its cause: chunk parity, the profiler calls),
	# its CI from both variants' chunk CIs; a split one's held part: the
	# variant less its held chunks (toggle_rows)
	# two builds side by side (TURNS="full alt"): this one's figure less the
	# other's, their processes interleaved on one host
	case " $2 " in *" full "*) case " $2 " in *" alt "*) log "$(toggle_diff "$1" toggle_full_vs_alt full alt)" ;; esac ;; esac
	for __sv in $2; do
		[ "$__sv" = untraced ] && continue
		log "$(toggle_diff "$1" toggle_vs_aa "$__sv" untraced)"
		case " $2 " in *" $__sv-held "*) log "$(toggle_diff "$1" toggle_split "$__sv" "$__sv-held")" ;; esac
	done
}

turns_toggle() { # OUT PROCS VARIANTS
	__to=$1; __tn=$2; __tvs=$3; __ti=0
	: >"$__to/toggle.txt"
	# start-up alone, traced: what the BPF programs cost before the loop
	( INGERO_BPF_STATS=1 INGERO_CAPTURE=cudaProfilerApi CHUNKS=0 variant full "$__to/toggle.db" $(CHUNKS=0 toggle_workload) ) \
		>/dev/null 2>"$__to/toggle.startup.err"
	__bpf0=$(toggle_bpf "$__to/toggle.db")
	rm -f "$__to/toggle.db" "$__to/toggle.db-wal" "$__to/toggle.db-shm"
	log "toggle_startup bpf_run_ns=${__bpf0% *} run_ns=${__bpf0#* }"
	while [ $__ti -lt "$__tn" ]; do
		__line="toggle_proc=$__ti"
		for __tv in $__tvs; do
			# (TOGGLE_AA=N: the A/A's untraced process only in the first N)
			[ "$__tv" = untraced ] && [ $__ti -ge "${TOGGLE_AA:-$__tn}" ] && continue
			( INGERO_BPF_STATS=1 INGERO_CAPTURE=cudaProfilerApi variant "$__tv" "$__to/toggle.db" $(toggle_workload) ) \
				>"$__to/toggle.out" 2>"$__to/toggle.$__tv.err"
			cp "$__to/toggle.out" "$__to/toggle.$__tv.$__ti.out"
			toggle_rows "$__tv" "$__ti" "$__to/toggle.out" ${INGERO_SPLIT_BPF:+split} >>"$__to/toggle.txt"
			__m=$(awk -v p=$__ti -v v="$__tv" '$1 == v && $2 == p { a += $3; b += $4 } END { if (b) printf "%.5f", a / b; else print "-" }' "$__to/toggle.txt")
			__line="$__line $__tv=$__m"
			# what a traced one recorded: only its recording chunks' calls
			# (pausing reached the program's profiler calls)
			[ "$__tv" != untraced ] && [ -n "${ANALYZE:-}" ] && __line="$__line ${__tv}_calls=$("$ANALYZE" \
				stats --json "$__to/toggle.db" 2>/dev/null | tr -d ' \t' | grep -o '"cuda_calls":[0-9]*' |
				tail -n 1 | sed 's/.*://')"   # the last is the trace's total
			# the tracer's BPF programs' run time in the loop, in % of one
			# CPU: over the whole run, less a run of the start-up alone
			[ "$__tv" != untraced ] && __line="$__line ${__tv}_bpf_modes=$(toggle_bpf_modes "$__to/toggle.db")"
			[ "$__tv" != untraced ] && __line="$__line ${__tv}_marks=$(toggle_marks "$__to/toggle.db")"
			[ "$__tv" != untraced ] && __line="$__line ${__tv}_bpf_pct_cpu=$(set -- $(toggle_bpf "$__to/toggle.db");
				echo "$1 $2 $__bpf0" | awk '$1 == "-" || $3 == "-" { print "-"; next }
					{ printf "%.3f", 100 * ($1 - $3) / ($2 - $4) }')"
			rm -f "$__to/toggle.db" "$__to/toggle.db-wal" "$__to/toggle.db-shm"
		done
		log "$__line"
		__ti=$((__ti + 1))
	done
	toggle_summary "$__to/toggle.txt" "$__tvs"
}

# turns_by_method OUT — the method the environment picks, for the variants
# in TURNS: TOGGLE=N, each variant's process against itself, paused and
# recording (turns_toggle, an untraced one as the A/A); else PAIRS=N, each
# variant's round against an A/A round of its own pair (turns_paired); else
# ROUNDS rounds of turns with an untraced reference (turns).
turns_by_method() { # OUT
	if [ -n "${TOGGLE:-}" ]; then
		turns_toggle "$1" "$TOGGLE" "untraced $TURNS"
	elif [ -n "${PAIRS:-}" ]; then
		turns_paired "$1" "$PAIRS" "$TURNS"
	else
		turns "$1" "$ROUNDS" "$TURNS"
	fi
}
