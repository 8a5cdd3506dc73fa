# inplace_lib.sh — the in-place measurement of the preload library on the GPU
# machine (docs/gpu-runs.md, sections 9-13), sourced by a device call's script:
#   . tests/bench/inplace_lib.sh; D=DIR_OF_THE_BUNDLE
#   [INPLACE_CHUNKS=N] inplace TAG LIB [ENV=VALUE...]
# runs examples/train_overhead.py's toggle (100 chunks, or N: a short run
# is its first seconds, when the driver's and the library's paths are still
# cold, and reads ~1.7x a long run's figure: docs/gpu-runs.md section 18) under LIB with
# INGERO_SELF_TIME=1 and prints, each line led by TAG, the library's own time
# a recorded call, its stacks, and `ingero-analyze stats`' stack and launch lines.
inplace() {
	__tag=$1; __lib=$2; shift 2
	env INGERO_PRELOAD="$__lib" INGERO_SELF_TIME=1 INGERO_CAPTURE=cudaProfilerApi "$@" "$D/ingero-run" -q \
		-o "/tmp/$__tag.db" -- python3 examples/train_overhead.py --steps 30 --chunks "${INPLACE_CHUNKS:-100}" --toggle 2>&1 |
		grep '^ingero:' | sed "s/^/$__tag /"
	"$D/ingero-analyze" stats "/tmp/$__tag.db" 2>/dev/null |
		grep -E "^Call stacks|^[0-9]+ +(__cudaLaunchKernel|cuLaunchKernel|cuLaunchKernelEx) " | sed "s/^/$__tag /"
	rm -f "/tmp/$__tag.db"*
}
