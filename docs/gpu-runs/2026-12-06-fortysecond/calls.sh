#!/bin/sh
# The forty-second session's device calls (bbc5714's bundle carried as .devpack, the toggles of
# section 42: docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle).
#   kcache: the library's own time a recorded call in place (INGERO_SELF_TIME,
#       tests/bench/inplace_lib.sh: examples/train_overhead.py's toggle of CHUNKS chunks), the
#       bundle's library (main's per-call path) against .devpack/ab/libingero_preload_kcache.so
#       (the same with each thread's list of kernels found named, record.h kernels_seen),
#       interleaved run by run until LIMIT seconds have passed.  The candidate was built from
#       main at b4a1e0e with the list added (preload/record.h, kernel.h, record.c; reverted after
#       this call: docs/gpu-runs.md section 42, call 3).
export PATH=/opt/torch/.venv/bin:$PATH
D=$PWD/.devbin
case ${1:-} in
kcache)
	mkdir -p .devbin && tar xJf .devpack/devbin.txz -C .devbin
	cp .devpack/ab/libingero_preload_kcache.so .devbin/
	. tests/bench/inplace_lib.sh
	end=$(($(date +%s) + ${LIMIT:-480})); i=0
	while [ "$(date +%s)" -lt "$end" ]; do
		i=$((i + 1))
		for v in main kcache; do
			lib=$D/libingero_preload.so; [ $v = kcache ] && lib=$D/libingero_preload_kcache.so
			INPLACE_CHUNKS=${CHUNKS:-200} inplace "$v.$i" "$lib" | grep -E 'self time|mode' | head -3
		done
	done ;;
*) echo "usage: calls.sh kcache (on the device)" >&2; exit 2 ;;
esac
