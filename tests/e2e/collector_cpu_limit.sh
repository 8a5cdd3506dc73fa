#!/bin/sh
# collector_cpu_limit.sh — a job under a CPU quota (a container's limit:
# cgroup v2 cpu.max, or v1's cpu.cfs_quota_us) is stopped by the quota with
# CPUs free, and its threads look preempted to the scheduler: the collector
# stores the tightest quota of its cgroup and ancestors and how often it
# throttled the job while traced (session cpu_limit*), and explain says the
# quota held the main thread back, not other tasks, sizes its advice by the
# CPUs the quota allows, and gives the fix of raising the limit.
# tests/run: alone (it judges who else ran on the CPUs: after the pool, on an idle machine)
. tests/lib.sh
if ! is_root; then skip "cgroups need root"; finish; fi
. tests/helpers/collector_e2e.sh
W=tests/helpers/python_gpu_idle.py
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
	CG=/sys/fs/cgroup/ingero-test-$$ V=2
	grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
elif [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
	CG=/sys/fs/cgroup/cpu/ingero-test-$$ V=1
else
	skip "no cgroup cpu controller (v1 or v2) mounted at /sys/fs/cgroup"; finish
fi
mkdir "$CG" || { skip "cannot make a cgroup under ${CG%/*}"; finish; }
trap 'rmdir "$CG" 2>/dev/null; rm -rf "$T"' EXIT
# 0.4 of a CPU for a loop that wants one (5 ms of host work a step)
if [ $V = 2 ]; then echo "40000 100000" >"$CG/cpu.max"; procs=$CG/cgroup.procs
else echo 40000 >"$CG/cpu.cfs_quota_us"; procs=$CG/tasks; fi
# the collector runs in the job's cgroup, as in a container, and its child inherits it
FAKECUDA_KERNEL_US=100 sh -c "echo \$\$ >'$procs' && exec '$B/ingero-collector' -o '$DB' -- python3 '$W' \
	'$PWD/$B/fakecuda/libcudart.so.13' 120 5 100 5" >/dev/null 2>"$T/err.txt"
check_eq "collector and workload exit 0 under the quota" 0 $?
check_eq "the quota stored: 0.40 CPUs" 0.40 "$(q "SELECT value FROM session WHERE key = 'cpu_limit'")"
check "where it came from" sh -c "q() { sqlite3 '$DB' \"\$1\"; }; q \"SELECT value FROM session WHERE key = 'cpu_limit_source'\" |
	grep -q '40000 100000 ($CG)'"
check_ge "the quota throttled the job while traced (periods)" \
	"$(q "SELECT value FROM session WHERE key = 'cpu_limit_throttled_periods'")" 5
check_ge "the periods counted" "$(q "SELECT value FROM session WHERE key = 'cpu_limit_periods'")" \
	"$(q "SELECT value FROM session WHERE key = 'cpu_limit_throttled_periods'")"
"$B/ingero-analyze" explain --verbose --width 1000 "$DB" >"$T/e.txt" 2>&1
"$B/ingero-analyze" explain --json "$DB" >"$T/e.json" 2>&1
sed -n '1p;/^\[/,/Source/p' "$T/e.txt" | head -20 | sed 's/^/# /'
check "the header says the quota" grep -q "^Trace: .* CPUs, 0.40 of them allowed by a CPU quota" "$T/e.txt"
check "the first chain: the main thread waiting for a CPU" \
	grep -Eq "^\[(HIGH|MEDIUM)\] GPU idle .*main thread waiting for a CPU" "$T/e.txt"
check "a [SYSTEM] line gives the quota and its throttling" \
	grep -q "^    \[SYSTEM\] its cgroup's CPU quota allows the job 0.40 of the [0-9]* CPUs (.*); throttled in [0-9,]* of [0-9,]* periods" "$T/e.txt"
check "the root cause names the quota, not other tasks" \
	grep -q "no GPU work queued: the job ran under a CPU quota of 0.40 CPUs (its cgroup's), which stopped its threads in [0-9,]* of [0-9,]* periods (.* held back) whether CPUs were free or not — a container's or a unit's CPU limit, not other tasks\." "$T/e.txt"
check "the first fix: raise the limit" grep -q "1\. Raise the job's CPU limit to what it uses" "$T/e.txt"
check "--json: trace.cpu_limit and its throttling" python3 - "$T/e.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["trace"]
assert t["cpu_limit"] == 0.4 and t["cpu_limit_throttled_periods"] >= 5 and t["cpu_limit_throttled_ns"] > 0, t
assert d["chains"][0]["kind"] == "gaps_host_preempted", d["chains"][0]["kind"]
assert d["chains"][0]["evidence"]["cpus"] == 1, d["chains"][0]["evidence"]["cpus"]   # sized by the quota
PYEOF

# without a quota: nothing stored, nothing said — where the test itself runs
# in the root cgroup (a CI runner's container may have a limit of its own)
ours=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}cpu\(,[^:]*\)\{0,1\}:\(.*\)/\3/p; s/^0::\(.*\)/\1/p' /proc/self/cgroup | head -n 1)
if [ "$ours" != / ]; then
	echo "# the test runs in cgroup $ours: the no-quota case is not checked here"
	finish
fi
rm -f "$DB"*
FAKECUDA_KERNEL_US=100 "$B/ingero-collector" --force -o "$DB" -- python3 "$W" "$PWD/$B/fakecuda/libcudart.so.13" 20 5 100 5 \
	>/dev/null 2>&1
check_eq "no quota: no cpu_limit stored" 0 "$(q "SELECT count(*) FROM session WHERE key LIKE 'cpu_limit%'")"
"$B/ingero-analyze" explain --verbose --width 1000 "$DB" >"$T/n.txt" 2>&1
check "no quota: not said" sh -c "! grep -q 'CPU quota' '$T/n.txt'"
finish
