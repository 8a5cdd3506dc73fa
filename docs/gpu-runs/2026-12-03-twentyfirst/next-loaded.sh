#!/bin/sh
# For a next turn (written in the twenty-first session, not run: its device time was spent).
# SCHED_BATCH for the tracer's threads on real PyTorch with no idle CPU: every CPU but the
# first runs two busy loops, and examples/train_overhead.py (3,000 steps) runs untraced, traced,
# and traced with INGERO_TRACER_BATCH=0, six times in turn (tests/bench/loaded.sh; ~4 min).
# On the dev VM the fake-CUDA loop's tracer cost fell from 4.6-4.8 % to 2.8-3.1 % (docs/benchmarks.md).
export PATH=/opt/torch/.venv/bin:$PATH
INGERO_COLLECTOR=$PWD/.devbin/ingero-collector LOADED_PAIRS=6 \
	LOADED_CMD="python3 examples/train_overhead.py --steps 3000" \
	timeout 400 sh tests/bench/loaded.sh - | tee "$OUT/loaded.txt"
