# two_nodes.sh — shared by tests/e2e/analyzer_nodes.sh and perfetto_viewer.sh
# (sourced after tests/lib.sh; root: the collectors' eBPF): several nodes'
# traces of one job, made on this machine.  Two collectors, each tracing
# one "node" of a job of 4 ranks (tests/ranks/ranks.c --nnodes 2: two agents
# of 2 ranks, one NCCL communicator, on the fake CUDA and NCCL libraries),
# the second collector's clock anchor skewed by +5 s
# (INGERO_TEST_CLOCK_OFFSET_NS, tests only); rank 3, on the second node, is
# slow for a known cause (its one DataLoader worker's CPU-heavy transform).
#
# two_nodes DIR: writes DIR/n0.db and DIR/n1.db (node 0's and node 1's
# traces), DIR/truth (tests/ranks' pid and role lines), DIR/nK.out (each
# job's output); TWO_NODES_RC is "R0 R1", the two collectors' exit
# statuses.  The fake NCCL's shared id (/dev/shm) is removed after.
two_nodes() {
	_tn_dir=$1
	_tn_id=/fakenccl-nodes-$$
	_tn_node() { # K [ENV...]: node K's agent under its own collector, in the background
		_k=$1; shift
		env FAKECUDA_KERNEL_US=5000 FAKENCCL_UNIQUE_ID="$_tn_id" INGERO_ENDPOINT="ipc://$_tn_dir/n$_k.sock" "$@" \
			nice -n -20 "$B/ingero-collector" -q -o "$_tn_dir/n$_k.db" -- \
			"$B/tests/ranks" --nnodes 2 --node-rank "$_k" --nproc 2 --workers 1 --rows 2048 --batches 16 \
			--slow-rank 3 --slow-transform-ms 60 --truth "$_tn_dir/truth" >"$_tn_dir/n$_k.out" 2>&1 &
	}
	_tn_node 0
	_tn_p0=$!
	_tn_node 1 INGERO_TEST_CLOCK_OFFSET_NS=5000000000
	_tn_p1=$!
	wait $_tn_p0; _tn_r0=$?
	wait $_tn_p1; _tn_r1=$?
	rm -f "/dev/shm$_tn_id"
	TWO_NODES_RC="$_tn_r0 $_tn_r1"
}
