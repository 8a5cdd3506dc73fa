#!/bin/sh
# collector_metrics.sh — ingero-collector --metrics scraped by a real Prometheus (Debian's
# `prometheus`, started here on 127.0.0.1 with a scrape config for the collector, queried through
# its HTTP API): the figures it stores equal explain's.  The job: two ranks on the fake CUDA and
# NCCL libraries (tests/ranks/ranks.c), rank 1 the straggler; per rank, GPU idle, step, the
# input-bound share and the top cause equal `explain --json -p RANK_PID` of the final file, and the
# collective waits equal `explain --json`'s ranks.  Also: only GET /metrics is answered, and a port
# taken is one clear line and exit 4.  A missing prometheus fails (scripts/install-deps installs it).
. tests/lib.sh
if ! is_root; then skip "collector eBPF tests need root"; finish; fi
. tests/helpers/collector_e2e.sh
PROM=$(command -v prometheus || true)
[ -n "$PROM" ] || { nok "prometheus missing (apt-get install prometheus; scripts/install-deps)"; finish; }
A=$B/ingero-analyze
PROM_PID=
trap '[ -n "$PROM_PID" ] && kill $PROM_PID 2>/dev/null; rm -rf "$T"' EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

INGERO_METRICS_REFRESH_MS=1000 FAKECUDA_KERNEL_US=5000 nice -n -20 "$B/ingero-collector" -o "$DB" \
	--metrics 127.0.0.1:0 --metrics-linger 300 -- "$B/tests/ranks" --nproc 2 --slow-rank 1 --workers 1 \
	--rows 2048 --batches 40 --truth "$T/truth" >"$T/out.txt" 2>"$T/err.txt" &
CPID=$!
i=0
while ! grep -q 'metrics on port' "$T/err.txt" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
MPORT=$(sed -n 's/.*metrics on port \([0-9]*\):.*/\1/p' "$T/err.txt")
check "the collector says its metrics port" test -n "$MPORT"
PPORT=$(free_port)
cat >"$T/prom.yml" <<EOF2
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: ingero
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
EOF2
"$PROM" --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" --web.listen-address="127.0.0.1:$PPORT" \
	--log.level=warn >"$T/prom.log" 2>&1 &
PROM_PID=$!

# api QUERY: the instant vector as "labels value" lines (python: no curl needed)
api() {
	python3 - "$PPORT" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
u = "http://127.0.0.1:%s/api/v1/query?query=%s" % (sys.argv[1], urllib.parse.quote(sys.argv[2]))
try:
    d = json.load(urllib.request.urlopen(u, timeout=5))
except Exception as e:
    sys.exit(0)
for r in d.get("data", {}).get("result", []):
    m = {k: v for k, v in r["metric"].items() if k not in ("instance", "job", "__name__")}
    print(json.dumps(m, sort_keys=True), r["value"][1])
PY
}
# the final page scraped (the trace ended, the collector lingers until told to stop)
i=0
while [ "$(api 'ingero_trace_final' | awk '{ print $NF }')" != 1 ] && [ $i -lt 150 ]; do sleep 0.5; i=$((i + 1)); done
check_eq "Prometheus scraped the final figures" 1 "$(api 'ingero_trace_final' | awk '{ print $NF }')"
sleep 2   # one more scrape of the final page
for m in ingero_gpu_idle_ratio ingero_gpu_idle_measured ingero_step_seconds ingero_input_bound_ratio ingero_top_cause \
	ingero_collective_wait_ratio ingero_collective_last_ratio ingero_straggler ingero_losses ingero_up; do
	api "$m" | sed "s/^/$m /"
done >"$T/scraped.txt"
check_ge "series scraped" "$(wc -l <"$T/scraped.txt")" 14
# a request that is not GET /metrics
python3 - "$MPORT" "$T/page.txt" >"$T/http.txt" <<'PY'
import http.client, sys
for method, path in (("GET", "/metrics"), ("GET", "/"), ("POST", "/metrics"), ("HEAD", "/metrics")):
    c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=5)
    c.request(method, path); r = c.getresponse(); body = r.read()
    print(method, path, r.status, r.getheader("Content-Type"), len(body) > 0)
    if method == "GET" and path == "/metrics":
        open(sys.argv[2], "wb").write(body)
PY
check_eq "GET /metrics: 200, the exposition format" "GET /metrics 200 text/plain; version=0.0.4; charset=utf-8 True" "$(sed -n 1p "$T/http.txt")"
check_eq "other paths: 404" "GET / 404" "$(sed -n 2p "$T/http.txt" | cut -d' ' -f1-3)"
check_eq "other methods: 405" "POST /metrics 405" "$(sed -n 3p "$T/http.txt" | cut -d' ' -f1-3)"
check_eq "HEAD: headers only" "HEAD /metrics 200 text/plain; version=0.0.4; charset=utf-8 False" "$(sed -n 4p "$T/http.txt")"
# the Grafana dashboard (dist/) asks only for series the page has
missing=$(python3 - "$T/page.txt" <<'PY'
import json, re, sys
page = open(sys.argv[1]).read()
names = set(re.findall(r"^(?:# TYPE )?(ingero_[a-z_]+)", page, re.M))   # (losses: declared, a series only when one)
exprs = [t["expr"] for p in json.load(open("dist/ingero-grafana.json"))["panels"] for t in p["targets"]]
print(" ".join(sorted({n for e in exprs for n in re.findall(r"ingero_[a-z_]+", e)} - names)))
PY
)
check_eq "dist/ingero-grafana.json: every series it queries is on the page" "" "$missing"
# a second collector on the same port: one clear line, exit 4
"$B/ingero-collector" -q -o "$T/second.db" --metrics "127.0.0.1:$MPORT" -- true 2>"$T/second.err"
check_eq "port taken: exit 4" 4 $?
check_eq "port taken: one line naming it" 1 "$(grep -c "metrics 127.0.0.1:$MPORT: cannot listen: Address already in use" "$T/second.err")"
kill -TERM $CPID   # (ends the linger: the trace itself has ended)
wait $CPID
check_eq "collector exits with the job's code" 0 $?

# explain of the final file, the whole job and each rank alone
"$A" explain --json "$DB" >"$T/job.json"
for r in 0 1; do
	pid=$(sed -n "s/^pid=\([0-9]*\) .*role=rank$r .*/\1/p" "$T/truth")
	"$A" explain --json -p "$pid" "$DB" >"$T/rank$r.json"
done
python3 - "$T" >"$T/compare.txt" <<'PY'
import json, sys
T = sys.argv[1]
scraped = {}
for line in open(T + "/scraped.txt"):
    name, labels, value = line.split(" ", 1)[0], json.loads(line.split(" ", 1)[1].rsplit(" ", 1)[0]), float(line.rsplit(" ", 1)[1])
    scraped[(name, tuple(sorted(labels.items())))] = value
def get(name, **lab):
    return scraped.get((name, tuple(sorted(lab.items()))))
def same(a, b, tol=1e-6):
    return a is not None and b is not None and abs(a - b) <= tol * max(1.0, abs(b))
job = json.load(open(T + "/job.json"))
run = job["ranks"]["run_id"]
for r in (0, 1):
    d = json.load(open(T + "/rank%d.json" % r)); rk = str(r)
    g = d["gpu_idle_pct"]
    ok = all(same(get("ingero_gpu_idle_ratio", run=run, rank=rk, part=p, bound=b) * 100, g[k])
             for p, b, k in (("window", "low", "low"), ("window", "high", "high"), ("steady", "low", "steady_low"),
                             ("steady", "high", "steady_high")) if g[k] is not None)
    print("rank", r, "gpu idle", ok, get("ingero_gpu_idle_measured", run=run, rank=rk) == (1.0 if g["measured"] else 0.0))
    st = d["phases"]["step"]["ns"]
    print("rank", r, "step", same(get("ingero_step_seconds", run=run, rank=rk), st / 1e9) if st else get("ingero_step_seconds", run=run, rank=rk) is None)
    w = d["where_time_went"]
    print("rank", r, "input bound", same(get("ingero_input_bound_ratio", run=run, rank=rk),
                                          w.get("host_waiting_on_workers_ns", 0) / w["window_ns"], 1e-5))
    c0 = d["chains"][0] if d["chains"] else {"kind": "none", "severity": "NONE"}
    print("rank", r, "top cause", get("ingero_top_cause", run=run, rank=rk, kind=c0["kind"], severity=c0["severity"]) == 1.0, c0["kind"])
for a in job["ranks"]["arrivals"]:
    rk = str(a["rank"])
    print("rank", rk, "collective wait", same(get("ingero_collective_wait_ratio", run=run, rank=rk), a["wait_share"]),
          same(get("ingero_collective_last_ratio", run=run, rank=rk), a["last_share"]),
          get("ingero_straggler", run=run, rank=rk) == (1.0 if job["ranks"]["straggler"] and job["ranks"]["straggler"]["rank"] == a["rank"] else 0.0))
PY
for r in 0 1; do
	check_eq "rank $r: GPU idle bounds and measured equal explain -p's" "rank $r gpu idle True True" "$(grep "^rank $r gpu idle" "$T/compare.txt")"
	check_eq "rank $r: step equals explain -p's" "rank $r step True" "$(grep "^rank $r step" "$T/compare.txt")"
	check_eq "rank $r: input-bound share equals explain -p's" "rank $r input bound True" "$(grep "^rank $r input bound" "$T/compare.txt")"
	check_eq "rank $r: top cause equals explain -p's first finding" "rank $r top cause True" "$(grep "^rank $r top cause" "$T/compare.txt" | cut -d' ' -f1-5)"
	check_eq "rank $r: collective wait, last share, straggler equal explain's ranks" "rank $r collective wait True True True" \
		"$(grep "^rank $r collective wait" "$T/compare.txt")"
done
check_eq "rank 1 the straggler on the page" 1 "$(grep -c 'ingero_straggler {"rank": "1", "run": "ranks-test"} 1' "$T/scraped.txt")"
rm -f /dev/shm/fakenccl-* 2>/dev/null
finish
