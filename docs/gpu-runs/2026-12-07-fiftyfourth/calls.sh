#!/bin/sh
# The fifty-fourth session's device calls (the bundle: `make bundle && sh
# docs/gpu-runs/2026-12-07-fiftieth/calls.sh pack-bundle`, carried as .devpack).
#   auto (on the device): on an H200 the toggle (the fiftieth session's `auto`); on another card
#       the corpus call: c74 again with one epoch (its trace, 2.9 MB packed, the corpus's largest,
#       made room for the two below), c77 (3 s) and c79 (5 s) collected shorter than in session
#       53 (their packed traces did not fit the tree), and c81 (a weights EMA updated by a Python
#       loop over the parameters), written before its trace.
#   truth (on the device): c77's and c81's kernels as the GPU counts them (truth.py: CUPTI through
#       torch.profiler), then both traced: the analyzer's device compute a step against it.
case ${1:-} in
auto)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
	case $gpu in
	*H200*) sh docs/gpu-runs/2026-12-07-fiftieth/calls.sh auto ;;
	*) NAMES="${NAMES:-c74_accelerate_accumulate_gather_item c77_optimizer_foreach_off c79_nanogpt_memmap c81_ema_param_loop}" \
		sh docs/gpu-runs/2026-12-07-fiftysecond/calls.sh corpus ;;
	esac ;;
truth)
	# the GPU's own account (CUPTI through torch.profiler) of c77's and c81's kernels, then each
	# traced as the corpus collects it, on the same machine: the analyzer's per-step device
	# compute against the kernels' summed time a step
	export PATH=/opt/torch/.venv/bin:$PATH
	nvidia-smi --query-gpu=name --format=csv,noheader
	cd tests/corpus/workloads && for n in ${NAMES:-c77_optimizer_foreach_off c81_ema_param_loop}; do
		timeout 150 python3 ../../../docs/gpu-runs/2026-12-07-fiftyfourth/truth.py $n.py 2>&1 | tail -12
	done; cd ../../..
	NAMES="${NAMES:-c77_optimizer_foreach_off c81_ema_param_loop}" sh docs/gpu-runs/2026-12-07-fiftysecond/calls.sh corpus ;;
anchor)
	# the GPU-time anchor fitted from eight tries (1e6f79d) against the record call's return
	# (the pack's old libingero_preload.so, carried as .devpack/old_preload.so.xz): c77, c65 and
	# c81 traced with each, alternated, ROUNDS times; per trace the marks clamped (completed
	# before recorded: an early anchor) and the anchors' fits (INGERO_DEBUG); c77's kernels by
	# CUPTI first (truth.py); round 1's traces of the new build and c77's of the old come back
	export PATH=/opt/torch/.venv/bin:$PATH
	# (the old library beside the new one: its libraries are found through $ORIGIN — from /tmp it
	# failed to load and its runs were not traced, call 2)
	D=$PWD/.devbin; mkdir -p $D /tmp/an && tar xJf .devpack/devbin.txz -C $D &&
		xz -dc .devpack/old_preload.so.xz >$D/libingero_preload_old.so || exit 1
	nvidia-smi --query-gpu=name --format=csv,noheader; nproc
	cd tests/corpus/workloads
	[ "${TRUTH:-1}" = 1 ] && timeout 150 python3 ../../../docs/gpu-runs/2026-12-07-fiftyfourth/truth.py c77_optimizer_foreach_off.py 2>&1 | tail -12
	for r in $(seq ${ROUNDS:-2}); do for n in ${NAMES:-c77_optimizer_foreach_off c65_detect_anomaly_left_on c81_ema_param_loop}; do for v in new old; do
		pre=""; [ $v = old ] && pre=$D/libingero_preload_old.so
		INGERO_DEBUG=1 INGERO_PRELOAD="$pre" timeout 120 $D/ingero-run -q -o /tmp/an/$n.$v.$r.db -- python3 $n.py >/tmp/an/$n.$v.$r.txt 2>&1
		python3 - /tmp/an/$n.$v.$r.db /tmp/an/$n.$v.$r.txt <<'PY'
import re, sqlite3, statistics, sys
n, c = sqlite3.connect(sys.argv[1]).execute("select count(*), sum(flags & 2 != 0) from gpu_marks").fetchone()
fit = [(int(a), int(b)) for a, b in re.findall(r"GPU anchor: \d+ tries, within (\d+) ns; the record call's return read it (-?\d+) ns early", open(sys.argv[2]).read())]
w = sorted(a for a, b in fit); e = sorted(b for a, b in fit)
med = lambda v: v[len(v) // 2] if v else -1
print(f"{sys.argv[1].split('/')[-1]}: marks={n} clamped={c} anchors={len(fit)} within_ns p50={med(w)} max={w[-1] if w else -1} early_ns min={e[0] if e else -1} p50={med(e)} max={e[-1] if e else -1}")
PY
	done; done; done
	cd /tmp/an && rm -f *.db-wal *.db-shm && tar -cf - $(ls *.1.db) | xz -T0 -6 >$OUT/anchor.tar.xz ;;
truth2)
	# CUPTI's count of each workload's kernels (truth.py, JSON), then the workload traced as the
	# corpus collects it, on the same machine: the analyzer's pieces against the GPU's, per kernel
	export PATH=/opt/torch/.venv/bin:$PATH
	D=$PWD/.devbin; mkdir -p $D /tmp/t2 && tar xJf .devpack/devbin.txz -C $D || exit 1
	nvidia-smi --query-gpu=name --format=csv,noheader
	cd tests/corpus/workloads
	for n in ${NAMES:-c65_detect_anomaly_left_on c81_ema_param_loop c67_per_sample_gpu_augment c21_item_every_step}; do
		# (its output to a file: `| head -1` once took a warning as the first line and killed it by SIGPIPE before its JSON)
		timeout 150 python3 ../../../docs/gpu-runs/2026-12-07-fiftyfourth/truth.py $n.py /tmp/t2/$n.truth.json >/tmp/t2/$n.truth.txt 2>&1
		grep -m1 '^truth' /tmp/t2/$n.truth.txt
		timeout 150 $D/ingero-run -q -o /tmp/t2/$n.db -- python3 $n.py 2>&1 | grep -v '^ingero' | tail -1
	done
	cd /tmp/t2 && rm -f *.db-wal *.db-shm && tar -cf - *.json *.txt *.db | xz -T0 -6 >$OUT/truth2.tar.xz ;;
final)
	# the session's last device time: on an H200 the toggle (as the fiftieth session's auto, its
	# limit cut to what is left), on another card truth2
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=${PROCS:-9} LIMIT=${LIMIT:-400} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) sh docs/gpu-runs/2026-12-07-fiftyfourth/calls.sh truth2 ;;
	esac ;;
*) echo "usage: calls.sh auto | truth | anchor | truth2 | final (on the device)" >&2; exit 2 ;;
esac
