#!/bin/sh
# The fiftieth session's device calls.  The forty-ninth's `auto` traced c74-c76 on an H100 (call
# 1, docs/gpu-runs.md section 50); what is left is the toggle on an H200.
#   pack-bundle (here): .devpack/devbin.txz for the toggle alone — the bundle's products and
#       libraries (what tests/bench/gpu_dataloader.sh runs), without the benches, the corpus's
#       workloads or the ELF files' debug sections, and without libstdc++ (the collector needs only
#       its __cxa_demangle, CXXABI_1.3, and PyTorch's machine has the system's): with c74-c76 the
#       tracked tree is 64.7 MB, and the carry limit (64 MiB with the tree) left no room for the
#       5.3 MB pack of before
#   auto (on the device): on an H200 the toggle (TURNS=full CHUNKS=1100 PROCS=9, as sessions
#       39-49 planned it); on another card nothing: the H100's toggles pooled 0.98 % (CI to 1.07,
#       section 42), a mean the CI cannot get under 1.01 without hundreds of processes, and the
#       corpus classes written before their traces are all traced.
export PATH=/opt/torch/.venv/bin:$PATH
case ${1:-} in
pack-bundle)
	rm -rf /tmp/devbin.s && cp -r build/bundle /tmp/devbin.s && rm -rf /tmp/devbin.s/bench /tmp/devbin.s/libstdc++.so.6 &&
	for f in /tmp/devbin.s/*; do
		case $f in *.bpf.o) ;; *) case $(head -c 4 "$f" | od -An -c | tr -d ' ') in 177ELF) strip --strip-debug "$f" ;; esac ;; esac
	done &&
	mkdir -p .devpack && tar -C /tmp/devbin.s -cf - . | xz -9e >.devpack/devbin.txz && ls -la .devpack ;;
auto)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"; nproc
	case $gpu in
	*H200*) TURNS=full CHUNKS=1100 PROCS=${PROCS:-9} LIMIT=${LIMIT:-520} sh docs/gpu-runs/2026-12-06-thirtyninth/calls.sh toggle ;;
	*) echo "not an H200: the toggle waits for one" ;;
	esac ;;
*) echo "usage: calls.sh pack-bundle (here) | auto (on the device)" >&2; exit 2 ;;
esac
