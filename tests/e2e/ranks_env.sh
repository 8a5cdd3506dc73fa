#!/bin/sh
# ranks_env.sh — a job's ranks as roles (process_env, schema version 7 on):
# the collector keeps each traced process's launcher variables (RANK,
# LOCAL_RANK, WORLD_SIZE, TORCHELASTIC_RUN_ID, ...) read from
# /proc/PID/environ at its exec and nothing else of its environment; the
# analyzer's per-process names the agent, each rank's process and its
# children.  The "job" here is shells, as torchrun would start them.
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh

# the agent (sh) starts two ranks; each rank runs a child (sleep, exec'd:
# it carries the rank's variables itself) and forks a subshell (no exec:
# it has none of its own, and inherits its parent's) that runs a sleep
cat >"$T/agent.sh" <<'SH'
for r in 0 1; do
	env RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 GROUP_RANK=0 MASTER_ADDR=127.0.0.1 \
		MASTER_PORT=29500 TORCHELASTIC_RUN_ID=job42 INGERO_TEST_SECRET=hunter2 \
		sh -c 'sleep 0.3 & (sleep 0.2; true) ; wait' &
done
wait
SH
"$B/ingero-collector" -o "$DB" -- sh "$T/agent.sh" >"$T/out.txt" 2>"$T/err.txt"
check_eq "collector exits 0" 0 $?
check_eq "schema version $SCHEMA_VERSION" "$SCHEMA_VERSION" "$(q 'PRAGMA user_version')"
# (a sleep of 0.2 s can be gone before its exec record is read on a loaded
# machine: then it is counted lost, process_env_unread, never silently missing)
unread=$(q "SELECT coalesce(sum(count), 0) FROM losses WHERE source = 'process_env_unread'")
check_eq "three processes carry RANK=1, and three RANK=0 (the rank's shell and its sleeps; not the subshell), or counted unread" \
	6 "$(($(q "SELECT count(*) FROM process_env WHERE key='RANK' AND value IN ('0','1')") + unread))"
check "RANK=1's shell itself read (it lives for the whole rank)" test "$(q "SELECT count(*) FROM process_env e
	JOIN processes p ON p.pid = e.pid WHERE e.key='RANK' AND e.value='1' AND p.comm = 'sh'")" -ge 1
check_eq "every launcher variable kept" 8 \
	"$(q "SELECT count(DISTINCT key) FROM process_env")"
check_eq "nothing else of the environment kept" 0 \
	"$(q "SELECT count(*) FROM process_env WHERE key NOT IN ('RANK','LOCAL_RANK','WORLD_SIZE',
		'LOCAL_WORLD_SIZE','GROUP_RANK','MASTER_ADDR','MASTER_PORT','TORCHELASTIC_RUN_ID')
		OR value LIKE '%hunter2%'")"
check_eq "the agent has no variables" 0 \
	"$(q "SELECT count(*) FROM process_env e JOIN processes p ON p.pid = e.pid
		WHERE p.cmdline LIKE '%agent.sh%'")"

"$B/ingero-analyze" per-process --json "$DB" >"$T/pp.json" 2>"$T/pp.err"
check_eq "per-process --json exits 0" 0 $?
if [ -n "$PY_SQLITE" ]; then
	$PY_SQLITE - "$T/pp.json" >"$T/roles.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
job = d["job"]
print("world", job["world_size"], "run", job["run_id"], "master", job["master"], "ranks", len(job["ranks"]))
by = {p["pid"]: p for p in d["processes"]}
agent = by[job["agent_pid"]]
print("agent", agent["rank_role"], "cmd" if agent["comm"] == "sh" else agent["comm"])
for r in job["ranks"]:
    p = by[r["pid"]]
    kids = sorted(q.get("rank_role") for q in d["processes"] if q.get("rank") == r["rank"] and q["pid"] != r["pid"])
    print("rank", r["rank"], p["comm"], p["rank_role"], "local", r["local_rank"], "children", r["children"], kids)
PY
	check_eq "job: world size, run id, master, two ranks" "world 2 run job42 master 127.0.0.1:29500 ranks 2" \
		"$(sed -n 1p "$T/roles.txt")"
	check_eq "agent: the shell above the ranks" "agent agent cmd" "$(sed -n 2p "$T/roles.txt")"
	check_eq "rank 0: its shell; two sleeps and a subshell below it" \
		"rank 0 sh rank local 0 children 3 ['rank child', 'rank child', 'rank child']" "$(sed -n 3p "$T/roles.txt")"
	check_eq "rank 1: the same" \
		"rank 1 sh rank local 1 children 3 ['rank child', 'rank child', 'rank child']" "$(sed -n 4p "$T/roles.txt")"
else
	skip "no python3 with sqlite3: per-process roles"
fi
"$B/ingero-analyze" per-process --width 1000 "$DB" >"$T/pp.txt"
check_eq "per-process text: a ranks section" 1 "$(grep -c '^ranks: 2 of world size 2, run id job42, master 127.0.0.1:29500; agent pid' "$T/pp.txt")"
check_eq "per-process text: a line per rank" 2 "$(grep -c '^  rank [01]: pid [0-9]* (sh), local rank [01]; its children: ' "$T/pp.txt")"
finish
