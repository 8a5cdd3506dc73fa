#!/bin/sh
# The fifty-fifth session's device calls (the bundle: `make bundle && sh
# docs/gpu-runs/2026-12-07-fiftieth/calls.sh pack-bundle`, carried as .devpack).
#   a (on the device): on an H200 the toggle (the fiftieth session's `auto`, LIMIT seconds); on
#       another card the corpus call — c51, c57 and c48 collected shorter (half, half and 60 of
#       100 steps: their traces were the corpus's largest, and c77 and c79 wait for the room) —
#       then CUPTI's count of c77's, c65's, c81's, c67's and c21's kernels beside their traces
#       (the fifty-fourth session's truth2, never run then).
#   b (on the device): the GPU clock's fitted rate (gpu_clock.c) against the library before it, on
#       c77 and c65 (marks clamped, the rate), c77's CUPTI count, then a's corpus call with c82 and
#       c83 (written before their traces) and truth2.
case ${1:-} in
a)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"
	case $gpu in
	*H200*) LIMIT=${LIMIT:-470} sh docs/gpu-runs/2026-12-07-fiftieth/calls.sh auto ;;
	*) NAMES="${NAMES:-c51_workers_oversubscribed c57_loader_slow_sample c48_ddp_gloo_4ranks_transform}" LIMIT=200 \
		sh docs/gpu-runs/2026-12-07-fiftysecond/calls.sh corpus
	   NAMES="${TRUTH:-c77_optimizer_foreach_off c65_detect_anomaly_left_on c81_ema_param_loop c67_per_sample_gpu_augment c21_item_every_step}" \
		timeout ${TRUTH_LIMIT:-300} sh docs/gpu-runs/2026-12-07-fiftyfourth/calls.sh truth2
	   # cut off by the limit: what it had
	   [ -f $OUT/truth2.tar.xz ] || (cd /tmp/t2 && rm -f *.db-wal *.db-shm && tar -cf - *.json *.db | xz -T0 -6 >$OUT/truth2.tar.xz) ;;
	esac ;;
b)
	# the GPU clock's rate fitted (gpu_clock.c) against the library before it (.devpack/old_preload.so.xz):
	# c77 and c65 traced with each, alternated, ROUNDS times; per trace the marks clamped and the
	# rate the new one fitted (INGERO_DEBUG); c77's kernels by CUPTI first (truth.py, JSON); then on
	# any card but an H200 the corpus call (c51, c57, c48 shorter) and truth2's others
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"
	case $gpu in *H200*) LIMIT=${LIMIT:-470} sh docs/gpu-runs/2026-12-07-fiftieth/calls.sh auto; exit ;; esac
	export PATH=/opt/torch/.venv/bin:$PATH
	D=$PWD/.devbin; mkdir -p $D /tmp/ab /tmp/t2 && tar xJf .devpack/devbin.txz -C $D &&
		xz -dc .devpack/old_preload.so.xz >$D/libingero_preload_old.so || exit 1
	cd tests/corpus/workloads
	timeout 100 python3 ../../../docs/gpu-runs/2026-12-07-fiftyfourth/truth.py c77_optimizer_foreach_off.py /tmp/t2/c77_optimizer_foreach_off.truth.json >/tmp/t2/c77.truth.txt 2>&1
	grep -m1 '^truth' /tmp/t2/c77.truth.txt
	for r in $(seq ${ROUNDS:-2}); do for n in ${NAMES:-c77_optimizer_foreach_off c65_detect_anomaly_left_on}; do for v in new old; do
		pre=""; [ $v = old ] && pre=$D/libingero_preload_old.so
		INGERO_DEBUG=1 INGERO_PRELOAD="$pre" timeout 100 $D/ingero-run -q -o /tmp/ab/$n.$v.$r.db -- python3 $n.py >/tmp/ab/$n.$v.$r.txt 2>&1
		python3 - /tmp/ab/$n.$v.$r.db /tmp/ab/$n.$v.$r.txt <<'PY'
import re, sqlite3, sys
n, c = sqlite3.connect(sys.argv[1]).execute("select count(*), sum(flags & 2 != 0) from gpu_marks where flags & 1 = 0").fetchone()
ppm = re.findall(r"GPU clock: ([-+0-9.]+) ppm", open(sys.argv[2]).read())
print(f"{sys.argv[1].split('/')[-1]}: calling-thread marks={n} clamped={c} ({100 * (c or 0) / max(n, 1):.0f} %) ppm={' '.join(ppm[:6]) or '-'}")
PY
	done; done; done
	cd ../../..
	(cd /tmp/ab && rm -f *.db-wal *.db-shm && tar -cf - $(ls *.1.db) *.txt | xz -T0 -6 >$OUT/ab.tar.xz)
	NAMES="${CORPUS:-c51_workers_oversubscribed c57_loader_slow_sample c48_ddp_gloo_4ranks_transform c82_wgan_critic_steps c83_sam_two_passes}" LIMIT=240 \
		sh docs/gpu-runs/2026-12-07-fiftysecond/calls.sh corpus
	NAMES="${TRUTH:-c65_detect_anomaly_left_on c81_ema_param_loop}" \
		timeout ${TRUTH_LIMIT:-150} sh docs/gpu-runs/2026-12-07-fiftyfourth/calls.sh truth2
	[ -f $OUT/truth2.tar.xz ] || (cd /tmp/t2 && rm -f *.db-wal *.db-shm && tar -cf - *.json *.db | xz -T0 -6 >$OUT/truth2.tar.xz) ;;
*) echo "usage: calls.sh a | b (on the device)" >&2; exit 2 ;;
esac
