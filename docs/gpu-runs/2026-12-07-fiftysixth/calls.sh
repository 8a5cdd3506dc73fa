#!/bin/sh
# The fifty-sixth session's device call (the bundle: `make bundle && sh
# docs/gpu-runs/2026-12-07-fiftieth/calls.sh pack-bundle`, carried as .devpack):
#   nvtx: does torch carry NVTX's loader (NVTX_INJECTION64_PATH in its libraries), then
#         nvtx_check.py under ingero-run: the rows of nvtx_ranges and explain's section; the
#         trace to $OUT/nvtx.db.xz
#   then the fifty-fifth session's `b` (ROUNDS=1): on an H200 the toggle, else the GPU clock's
#         fit against the library before it, c77's CUPTI count, the corpus collections
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
*) echo "usage: calls.sh nvtx (on the device)" >&2; exit 2 ;;
esac
