#!/bin/sh
# analyzer.sh — `make bench-analyzer`: ingero-analyze explain on a generated
# report.db with 10M CUDA calls + 10M off-CPU intervals (tests/helpers/
# gen_reportdb.c "big"), printed as key=value lines.
#   explain_checked_s    wall time of the file's first explain: every page of
#                        the tables it reads checked (load/check.c), and CPU
#   explain_s            wall time of `ingero-analyze explain` (best of RUNS
#                        after it: the file found in the list of files found
#                        sound, load/check_cache.h)
#   explain_peak_rss_mb  its peak resident set (max over runs)
#   explain_cpu_s        user + system CPU time of the best run
#   stats_s              wall time of `stats --json` (best of RUNS)
# Targets (issue 5): explain_s <= 5 and explain_peak_rss_mb <= 1024 on the
# 2-core development machine.  The database is generated once into
# build/bench/ (about a minute) and reused while the generator is unchanged.
# Environment: BENCH_CALLS, BENCH_OFFCPU (default 10000000 each), RUNS (3).
set -u
B=${B:-build}
CALLS=${BENCH_CALLS:-10000000}
OFF=${BENCH_OFFCPU:-10000000}
RUNS=${RUNS:-3}
GEN=$B/tests/gen_reportdb
A=$B/ingero-analyze
DB=$B/bench/analyzer-$CALLS-$OFF.db
mkdir -p "$B/bench"
if [ ! -s "$DB" ] || [ "$GEN" -nt "$DB" ]; then
	echo "# generating $DB ($CALLS calls, $OFF off-CPU intervals)..." >&2
	rm -f "$DB"
	"$GEN" big "$DB.tmp" --calls "$CALLS" --offcpu "$OFF" && mv "$DB.tmp" "$DB" || exit 1
	sleep 2   # its file times settle, so that a sound check is remembered (check_cache.h)
fi
# Warm the page cache once, so runs measure the analyzer, not the disk.
cat "$DB" >/dev/null
# the file's first command checks every page; the next ones find it in the
# list of files found sound (analyzer/load/check_cache.h): both are said
case $B in /*) INGERO_CHECK_CACHE=$B/bench/check_cache ;; *) INGERO_CHECK_CACHE=$PWD/$B/bench/check_cache ;; esac
rm -f "$INGERO_CHECK_CACHE" && export INGERO_CHECK_CACHE

python3 - "$A" "$DB" "$RUNS" "$CALLS" "$OFF" <<'PY'
import os, resource, subprocess, sys, time
a, db, runs, calls, off = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
def run(args):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, err = p.communicate()
    t = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("benchmark command failed: %s: %s" % (" ".join(args), err.decode()[:300]))
    return t, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
def peak(args):
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: measure each command in its own helper
    out = subprocess.run([sys.executable, "-c",
        "import resource,subprocess,sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"] + args,
        stdout=subprocess.PIPE, check=True)
    return int(out.stdout) / 1024.0
first = run([a, "explain", db])   # every page checked
ex = [run([a, "explain", db]) for _ in range(runs)]
st = [run([a, "stats", "--json", db]) for _ in range(runs)]
rss = max(peak([a, "explain", db]) for _ in range(1))
best = min(ex)
print("calls=%s" % calls)
print("offcpu_intervals=%s" % off)
print("db_mb=%.0f" % (os.path.getsize(db) / 1048576.0))
print("cpus=%d" % os.cpu_count())
print("explain_checked_s=%.2f" % first[0])
print("explain_checked_cpu_s=%.2f" % first[1])
print("explain_s=%.2f" % best[0])
print("explain_median_s=%.2f" % sorted(t for t, _ in ex)[len(ex) // 2])
print("explain_cpu_s=%.2f" % best[1])
print("explain_peak_rss_mb=%.0f" % rss)
print("stats_s=%.2f" % min(st)[0])
print("load_avg_1m=%.2f" % os.getloadavg()[0])
print("target_explain_s_le_5=%s" % ("yes" if best[0] <= 5 else "no"))
print("target_explain_checked_s_le_5=%s" % ("yes" if first[0] <= 5 else "no"))
print("target_rss_le_1024mb=%s" % ("yes" if rss <= 1024 else "no"))
PY
