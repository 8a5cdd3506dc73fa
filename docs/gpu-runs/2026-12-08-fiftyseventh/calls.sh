#!/bin/sh
# The fifty-seventh session's device calls (the bundle: `make bundle && sh
# docs/gpu-runs/2026-12-07-fiftieth/calls.sh pack-bundle`, carried as .devpack):
#   next: on an H200 the toggle (issues 42, 44: fiftieth's auto, LIMIT 470); on another card
#         only c84 (written before its trace: a step of ~6,000 calls, past the step search's
#         first look), short, so that the budget stays for an H200
case ${1:-} in
next)
	gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $gpu"
	case $gpu in *H200*) LIMIT=${TLIMIT:-470} sh docs/gpu-runs/2026-12-07-fiftieth/calls.sh auto; exit ;; esac
	NAMES="${CORPUS:-c84_deep_narrow_steps}" LIMIT=${LIMIT:-120} sh docs/gpu-runs/2026-12-07-fiftysecond/calls.sh corpus
	grep -m3 -E '^Steps|^Verdict' /tmp/tr/*.explain.txt ;;
c84)
	# what the budget left allows (438 s after six refusals): c84 alone, on any card
	nvidia-smi --query-gpu=name --format=csv,noheader | head -1
	NAMES=c84_deep_narrow_steps LIMIT=${LIMIT:-120} sh docs/gpu-runs/2026-12-07-fiftysecond/calls.sh corpus
	grep -m3 -E '^Steps|^Verdict' /tmp/tr/*.explain.txt ;;
*) echo "usage: calls.sh next | c84 (on the device)" >&2; exit 2 ;;
esac
