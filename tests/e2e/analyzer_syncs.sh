#!/bin/sh
# analyzer_syncs.sh — a sync every step that happens inside a library call
# (a stand-in of torch.amp.GradScaler.step, which reads its inf check on the
# host): the sync_per_step chain names the user's line and, inside it, the
# library function that syncs, and puts the GradScaler fix (a fused
# optimizer) first; and a sync inside PyTorch's own boolean-mask indexing
# (a stand-in of its two native entries): the operation named, the
# static-shape fix first; and that sync in the backward pass, made by the
# engine's own thread (pt_autograd_0, no Python frame) while the main
# thread waits in loss.backward(): the user's backward line's.
# tests/run: after-build (a live loop judged by explain: the build's writeback takes its CPUs)
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
PY=$PWD/tests/helpers/python_scaler.py
STEP=$(marker_line "$PY" STEP)
GS=$PWD/tests/helpers/fake_torch/torch/amp/grad_scaler.py
ITEM=$(marker_line "$GS" ITEM)

explain_run scaler 2000 99 "$PY" 40
grep -A8 "a sync every step" "$T/scaler.txt" | sed 's/^/# /'
check "a sync-every-step chain at the user's line" grep -q "\] a sync every step at $PY:$STEP:" "$T/scaler.txt"
check "root cause: inside GradScaler's _maybe_opt_step" \
	grep -q "here inside [A-Za-z_.]*_maybe_opt_step ($GS:$ITEM)" "$T/scaler.txt"
check "first fix: a fused optimizer" grep -q "1\. torch.amp.GradScaler reads its inf check on the host" "$T/scaler.txt"
check "--json: the chain says where inside" python3 - "$T/scaler.json" "_maybe_opt_step ($GS:$ITEM)" <<'PYEOF'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["chains"] if c["kind"] == "sync_per_step"][0]["evidence"]
assert c["inside"].endswith(sys.argv[2]), c
PYEOF

# A sync inside PyTorch's own operation, named from the call's native frames: boolean-mask
# indexing's nonzero (tests/helpers/so/fake_aten.c: the two entries by their mangled names)
MPY=$PWD/tests/helpers/python_mask.py
MASK=$(marker_line "$MPY" MASK)
explain_run mask 2000 99 "$MPY" "$PWD/$B/tests/libfake_aten.so" 40
grep -A10 "a sync every step" "$T/mask.txt" | sed 's/^/# /'
check "mask: a sync-every-step chain at the user's line" grep -q "\] a sync every step at $MPY:$MASK:" "$T/mask.txt"
check "mask: the operation named" grep -q "the sync is PyTorch's, inside boolean-mask indexing (x\[mask\]): aten::nonzero inside aten::index_Tensor" "$T/mask.txt"
check "mask: a result sized by the data, and the static-shape fix first" python3 - "$T/mask.json" <<'PYEOF'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["chains"] if c["kind"] == "sync_per_step"][0]
assert c["evidence"]["aten_op"] == "nonzero" and c["evidence"]["aten_called"] == "index_Tensor", c["evidence"]
assert "result sized by the data" in c["root_cause"], c["root_cause"]
assert c["fixes"][0].startswith("Keep shapes static"), c["fixes"]
PYEOF

# The same sync in the backward pass: PyTorch's autograd thread has no Python frame; the line is
# the one the main thread waits at (its sampled stacks under torch/autograd: the stand-in graph.py)
BPY=$PWD/tests/helpers/python_backward.py
BACK=$(marker_line "$BPY" BACKWARD)
BMASK=$(marker_line "$BPY" MASK)
explain_run backward 2000 99 "$BPY" "$PWD/$B/tests/libfake_aten.so" 40
grep -A12 "a sync every step" "$T/backward.txt" | sed 's/^/# /'
check "backward: the autograd thread's sync is the user's backward line's" \
	grep -q "\] a sync every step at $BPY:$BACK:" "$T/backward.txt" ||
	# (a clean-clone run once found none: what explain said instead)
	sed -n '1,40p' "$T/backward.txt" | sed 's/^/# /'
check "backward: on the autograd thread, in indexing's backward, fixed at the forward's line" \
	python3 - "$T/backward.json" "$BPY:$BACK" "$BPY:$BMASK" <<'PYEOF'
import json, sys
c = [c for c in json.load(open(sys.argv[1]))["chains"] if c["kind"] == "sync_per_step" and c["source"] == sys.argv[2]][0]
assert c["fixes"][0].startswith("Keep shapes static at %s (the forward's x[mask]" % sys.argv[3]), c["fixes"]
assert c["evidence"]["inside"] == "the backward pass, on PyTorch's autograd thread (pt_autograd_0)", c["evidence"]
assert c["evidence"]["aten_op"] == "nonzero" and c["evidence"]["aten_called"] == "_index_put_impl_", c["evidence"]
assert "(no Python frame)" not in json.dumps(c), c
PYEOF
finish
