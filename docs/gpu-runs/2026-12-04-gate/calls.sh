#!/bin/sh
# calls.sh — issue 41 on the H200: a CI gate users can trust.  ONE device call of about 6-7
# minutes traces three real workloads ten times each, back to back (the A/A), and the four
# real regressions once each; the gate's judging runs afterwards on the dev machine, from
# what comes back (judge.sh beside this file).
#
# Before the call, on the dev machine, from the repository root of the build to measure
# (branch i41, or main after its merge):
#   make bundle && mkdir -p .devpack && tar cJf .devpack/devbin.txz -C build/bundle --exclude=./bench \
#     --exclude=./event_cost --exclude=./preload_uprobe_count --exclude=./preload_count.bpf.o .
# (3.6 MB: the tracked tree was 62.0 MB of the 64 MiB that travel; the bench programs are not needed)
# The device call (carry [".devpack"]; timeout_s 600):
#   mkdir -p .devbin && tar xJf .devpack/devbin.txz -C .devbin && sh docs/gpu-runs/2026-12-04-gate/calls.sh
# After it, on the dev machine, with the files back in DIR (the call's files_at, read-only), the
# same build made (make):
#   sh docs/gpu-runs/2026-12-04-gate/judge.sh DIR /tmp/gate-judged
# (every ordered A/A pair per workload, a baseline of runs 1-5 against runs 6-10, each regression
# with the cause it names; report.txt and the Markdown of each regression in /tmp/gate-judged)
#
# The workloads (workloads/, their docstrings say more; each a few seconds after the
# imports):
#   gate_launches.py   host-bound launches: a small MLP trained with Adam, no sync in the loop
#   gate_loader.py     a DataLoader job: 4 workers, per-item CPU work, pin_memory, 7.5-10 ms GPU steps
#   gate_healthy.py    a short healthy loop: ~3 ms of host work hidden behind 6-8 ms GPU steps
# (the GPU part of a step is a small model plus torch.cuda._sleep: a known stretch of GPU time,
# so the regressions' margins do not hang on how fast the H200 runs a guessed model)
# and the regressions: gate_loader.py --workers 0 (num_workers 4 -> 0), --no-pin (pin_memory
# removed), --heavy (a CPU-heavy transform); gate_healthy.py --item (a per-step .item()).
#
# Each trace is summarised at once by the bundle's own gate (`ingero-gate --save-baseline
# RUN.db -o RUN.json`, max_samples 5000): the JSON judges exactly like its report.db, and 34 of
# them are a few MB where the traces would be hundreds.  Order: the launches' ten, the healthy
# loop's ten (NH) and its regression, then the loader's ten and its three regressions (PARTS
# picks workloads); a run is not started after LIMIT seconds (default 470), so what ran always
# comes back.
#
# What it leaves under $OUT (4 files):
#   log.txt            one line per run (exit status, the program's own last line: steps, wall
#                      time) and the first finding of explain for each workload's first run and
#                      each regression
#   summaries.tar.xz   gate/NAME.json for every run (NAME: loader_1..10, loader_workers0,
#                      loader_nopin, loader_heavy, healthy_1..10, healthy_item, launches_1..10),
#                      gate/NAME.out (each run's output), gate/explain/*.txt
#   aa-dbs.tar         the first A/A run of each workload as NAME.db.xz (for a second look)
#   reg-dbs.tar        the four regressions' traces as NAME.db.xz
set -u
export PATH=/opt/torch/.venv/bin:$PATH PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
D=${D:-$PWD/.devbin}
W=${W:-$PWD/docs/gpu-runs/2026-12-04-gate/workloads}
N=${N:-10}
LIMIT=${LIMIT:-470}
OUT=${OUT:-/tmp/gate-out}
R=/tmp/gate
rm -rf "$R" && mkdir -p "$R/gate/explain" "$OUT"
LOG=$OUT/log.txt
START=$(date +%s)
say() { echo "$*" | tee -a "$LOG"; }
elapsed() { echo $(($(date +%s) - START)); }
broken=""   # workloads whose first run failed: their other runs are skipped

# trace NAME WORKLOAD ARGS...: traced by ingero-run, then summarised for the gate
trace() {
	name=$1 wl=$2
	shift 2
	case " $broken " in *" $wl "*) say "$name skipped ($wl failed before)"; return ;; esac
	if [ "$(elapsed)" -ge "$LIMIT" ]; then
		say "$name not run: ${LIMIT}s spent"
		return
	fi
	t0=$(date +%s)
	timeout 120 "$D/ingero-run" -q -o "$R/$name.db" -- python3 "$W/$wl.py" "$@" >"$R/gate/$name.out" 2>&1
	rc=$?
	"$D/ingero-gate" -s max_samples=5000 --save-baseline "$R/$name.db" -o "$R/gate/$name.json" \
		>>"$R/gate/$name.out" 2>&1
	src=$?
	say "$name rc=$rc summary_rc=$src $(($(date +%s) - t0))s | $(grep -v '^ingero' "$R/gate/$name.out" | tail -n 1 | cut -c1-160)"
	if [ "$rc" -ne 0 ] && [ "${name##*_}" = 1 ]; then
		broken="$broken $wl"
		tail -n 15 "$R/gate/$name.out" | tee -a "$LOG"
	fi
}

# explain NAME: its first findings, kept (the first run of a workload, each regression)
explain() {
	[ -f "$R/$1.db" ] || return
	"$D/ingero-analyze" explain "$R/$1.db" >"$R/gate/explain/$1.txt" 2>&1
	say "== $1: $(grep -m1 '^Verdict' "$R/gate/explain/$1.txt" | cut -c1-220)"
	grep -E '^\[(HIGH|MEDIUM|LOW)\]' "$R/gate/explain/$1.txt" | head -n 3 | cut -c1-200 | tee -a "$LOG"
}

say "issue 41 gate runs: N=$N LIMIT=$LIMIT $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tee -a "$LOG"

# PARTS: which workloads (the twenty-ninth session ran "launches healthy" with NH=3: the two
# the twenty-eighth's time did not reach)
PARTS=${PARTS:-loader healthy launches}
NH=${NH:-$N}
want() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
if want launches; then for i in $(seq 1 "$N"); do trace "launches_$i" gate_launches; done; fi
if want healthy; then
	for i in $(seq 1 "$NH"); do trace "healthy_$i" gate_healthy; done
	trace healthy_item gate_healthy --item
fi
if want loader; then
	for i in $(seq 1 "$N"); do trace "loader_$i" gate_loader; done
	trace loader_workers0 gate_loader --workers 0
	trace loader_nopin gate_loader --no-pin
	trace loader_heavy gate_loader --heavy
fi
say "traced in $(elapsed)s"

for n in loader_1 healthy_1 launches_1 loader_workers0 loader_nopin loader_heavy healthy_item; do explain "$n"; done
rm -f "$R"/*.db-wal "$R"/*.db-shm
(cd "$R" && tar cJf "$OUT/summaries.tar.xz" gate)
mkdir -p "$R/aa" "$R/reg"
for n in loader_1 healthy_1 launches_1; do [ -f "$R/$n.db" ] && xz -T0 -6 -c "$R/$n.db" >"$R/aa/$n.db.xz"; done
for n in loader_workers0 loader_nopin loader_heavy healthy_item; do
	[ -f "$R/$n.db" ] && xz -T0 -6 -c "$R/$n.db" >"$R/reg/$n.db.xz"
done
(cd "$R/aa" && tar cf "$OUT/aa-dbs.tar" .)
(cd "$R/reg" && tar cf "$OUT/reg-dbs.tar" .)
say "done in $(elapsed)s; back: $(cd "$OUT" && ls -l | awk 'NR > 1 {printf "%s %s  ", $9, $5}')"
