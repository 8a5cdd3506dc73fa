#!/bin/sh
# The fifty-sixth session's device call (the bundle: `make bundle && sh
# docs/gpu-runs/2026-12-07-fiftieth/calls.sh pack-bundle`, carried as .devpack):
#   nvtx: does torch carry NVTX's loader (NVTX_INJECTION64_PATH in its libraries), then
#         nvtx_check.py under ingero-run: the rows of nvtx_ranges and explain's section; the
#         trace to $OUT/nvtx.db.xz
#   then the fifty-fifth session's `b` (ROUNDS=1): on an H200 the toggle, else the GPU clock's
#         fit against the library before it, c77's CUPTI count, the corpus collections
#   next: what that call could not do (see `next)` below)
case ${1:-} in
nvtx)
	export PATH=/opt/torch/.venv/bin:$PATH
	D=$PWD/.devbin; mkdir -p $D && tar xJf .devpack/devbin.txz -C $D || exit 1
	TL=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
	for l in libtorch_cuda.so libtorch_python.so libnccl.so.2; do
		f=$(ls $TL/$l 2>/dev/null || python3 -c "import nvidia.nccl, os; print(os.path.join(os.path.dirname(nvidia.nccl.__file__), 'lib', '$l'))" 2>/dev/null)
		echo "$l: $(grep -c NVTX_INJECTION64_PATH $f 2>/dev/null) ($f)"
	done
	rm -f /tmp/nv.db*
	INGERO_DEBUG=1 timeout 120 $D/ingero-run -q -o /tmp/nv.db -- python3 docs/gpu-runs/2026-12-07-fiftysixth/nvtx_check.py 2>&1 | tail -3
	python3 - <<'PY'
import sqlite3
c = sqlite3.connect("/tmp/nv.db")
print(c.execute("select kind, count(*), count(distinct name) from nvtx_ranges group by kind").fetchall())
print(c.execute("select name, count(*), min(depth), round(avg(end_ns-start_ns)/1e6, 2) from nvtx_ranges where name not like 'aten::%' group by name order by 2 desc limit 8").fetchall())
print(c.execute("select name from nvtx_ranges where name like 'aten::%' limit 3").fetchall())
print(c.execute("select * from losses where count > 0").fetchall())
PY
	$D/ingero-analyze explain --width 120 /tmp/nv.db | sed -n '/^NVTX/,/^Processes/p' | head -16
	xz -T0 -6 -c /tmp/nv.db >$OUT/nvtx.db.xz ;;
next)
	# the next session's call: on an H200 the toggle (issues 42, 44); else CUPTI's count of c77's
	# kernels and c77 traced on the same host (the pieces' offset against CUPTI, truth.py's output
	# to a file this time), then the corpus: c57 and c48 shorter, c51 with its DataLoader deleted
	# before exit (section 56; c82 and c83 were collected at its end)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"
	case $gpu in *H200*) LIMIT=${LIMIT:-470} sh docs/gpu-runs/2026-12-07-fiftieth/calls.sh auto; exit ;; esac
	NAMES="${TRUTH:-c77_optimizer_foreach_off}" timeout ${TRUTH_LIMIT:-120} sh docs/gpu-runs/2026-12-07-fiftyfourth/calls.sh truth2
	[ -f $OUT/truth2.tar.xz ] || (cd /tmp/t2 && rm -f *.db-wal *.db-shm && tar -cf - * | xz -T0 -6 >$OUT/truth2.tar.xz)
	NAMES="${CORPUS:-c57_loader_slow_sample c48_ddp_gloo_4ranks_transform c51_workers_oversubscribed}" \
		LIMIT=${LIMIT:-330} sh docs/gpu-runs/2026-12-07-fiftysecond/calls.sh corpus ;;
*) echo "usage: calls.sh nvtx | next (on the device)" >&2; exit 2 ;;
esac
