# tests/corpus/expect.py — a corpus trace's explain --json held against its
# NAME.expect (tests/corpus/README.md: the keys).  Imported by the check that
# tests/e2e/analyzer_corpus.sh runs once a trace (its views' agreement in
# the same process): the checks read the one document already loaded, where
# the shell's version started jq and a grep a check (~13 CPU-s a make check).
# The expectations were written from each workload's class, not from what
# explain printed, so a failure is the analyzer disagreeing with an expert,
# not a golden diff.  Values are extended regular expressions as grep -E
# reads them; Python's re reads that syntax alike (README: no backslash
# letters, no POSIX classes).
import math
import re

# the kinds that are phases of a run, not its steady state (docs/chains.md):
# one-time, or once per epoch (epoch_boundaries)
PHASES = {"startup", "compilation", "recompilation", "autotuning", "epoch_boundaries", "after_gpu_work"}
SEVERITY = {"HIGH": 3, "MEDIUM": 2, "LOW": 1}
LIBRARY_FILE = re.compile(r"site-packages/|dist-packages/|/lib/python3[.0-9]*/|/torchinductor_|<frozen")


def text(v):
    """A value as jq's tostring writes it (null, numbers without a trailing .0)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def lines(values):
    """Each value's lines, as grep reads a file of them."""
    return [ln for v in values for ln in text(v).split("\n")]


def sentences(c):
    return [c.get("kind"), c.get("summary"), c.get("root_cause")] + list(c.get("timeline") or []) + \
        list(c.get("fixes") or []) + [c.get("source") or ""]


def order(v):
    """jq's order for the comparisons below: null below every number."""
    return -math.inf if v is None else v


class Facts:
    """What the checks read of one explain --json document."""

    def __init__(self, r):
        c = r.get("chains") or []
        first = c[0] if c else {}
        steady = next((x for x in c if x.get("kind") not in PHASES), {})
        v = r.get("verdict") or {}
        self.first = lines(sentences(first)) if c else []
        self.all = lines(s for x in c for s in sentences(x))
        self.fixes = lines(first.get("fixes") or [])
        self.lead_fix = lines([(first.get("fixes") or [""])[0]])
        self.source = lines([first.get("source") or ""])
        self.verdict = lines([v.get("text") or ""])
        self.kinds = [x.get("kind") for x in c]
        self.kernels = [(k.get("short_name"), k.get("gpu_share_pct") or 0, k.get("stream"))
                        for k in v.get("kernels") or []]
        self.first_kind = text(first.get("kind") or "none")
        self.first_sev = text(first.get("severity") or "NONE")
        self.steady_sev = text(steady.get("severity") or "NONE")
        self.steady_what = text(steady.get("kind") or "none")
        self.verdict_state = text(v.get("state") or "none")
        k0 = (v.get("kernels") or [{}])[0]
        self.top_kernel = text(k0.get("short_name") or "")
        self.top_share = math.floor(k0.get("gpu_share_pct") or 0)
        t = k0.get("timed_alone")
        self.top_timed_alone = "none" if t is None or t is False else text(t)
        self.work_list = ", ".join(text(k.get("short_name")) + " " + text(k.get("gpu_share_pct")) + "%"
                                   for k in v.get("kernels") or [])
        ranks = r.get("ranks") or {}
        st = ranks.get("straggler") or {}
        self.straggler = text(st.get("rank")) if st.get("rank") is not None else "none"
        self.straggler_cause = text((st.get("cause") or {}).get("kind") or "none")
        self.collectives_source = text(ranks.get("collectives_source") or "none")
        self.step_class = text((r.get("step_breakdown") or {}).get("class") or "none")
        # (issue 13) a phase that outranks a steady-state cause costing the run at least as much
        self.phase_first = next((f"{c[i].get('kind')} before {c[j].get('kind')}" for i in range(len(c))
                                 for j in range(i + 1, len(c)) if c[i].get("phase") != "steady" and
                                 c[j].get("phase") == "steady" and
                                 order(c[j].get("cost_ns")) >= order(c[i].get("cost_ns"))), "")
        # (issue 39) a Source in a library file
        self.lib_source = next((f"{x.get('kind')}: {x['source']}" for x in c
                                if x.get("source") is not None and LIBRARY_FILE.search(x["source"])), "")
        # a part larger than its whole: the time of the host-bound stretches inside
        # CUDA calls past their end (c24: the wait of a closing sync, 114 %)
        self.part_over = next((x.get("kind") for x in c if (x.get("evidence") or {}).get("in_cuda_calls_ns")
                               is not None and order(x["evidence"]["in_cuda_calls_ns"]) >
                               order(x["evidence"].get("stretch_ns"))), "")
        # a gaps chain whose timeline does not end with its [CUDA] line lost
        # lines to the cap (chains.h: ten traces did at 8)
        self.cut_timeline = next((x.get("kind") for x in c if (x.get("kind") or "").startswith("gaps_") and
                                  not ((x.get("timeline") or [""])[-1] or "").startswith("[CUDA]")), "")
        # the narrowest width of the steady state GPU idle: measured bounds or the estimate inside them
        g = r.get("gpu_idle_pct") or {}
        self.idle_width = None
        if g.get("measured") not in (None, False) and g.get("steady_low") is not None:
            w = [g["steady_high"] - g["steady_low"]]
            e = g.get("estimate_from_timed_work") or {}
            if e.get("steady_low") is not None:
                w.append(e["steady_high"] - e["steady_low"])
            self.idle_width = math.floor(min(w) * 10 + 0.5) / 10


def any_line(pattern, ls, flags=0):
    return any(re.search(pattern, ln, flags) for ln in ls)


def whole(s, pattern):
    return re.fullmatch(pattern, s) is not None


def check_trace(n, expect_path, doc, emit):
    """The checks of every trace, then NAME.expect's, on explain --json (doc);
    emit(passed, message) for each."""
    f = Facts(doc)
    with open(expect_path) as fh:
        rows = [ln.rstrip("\n") for ln in fh if not re.match(r"[ \t]*#", ln) and "=" in ln]
    # known_gap=ERE :: why — a check it names is said as "ok - ... # TODO",
    # not failed (tests/corpus/README.md)
    known = [kv.split("=", 1)[1] for kv in rows if kv.startswith("known_gap=")]
    known = [(k.split(" :: ", 1)[0], k.split(" :: ", 1)[-1]) for k in known]

    def check(passed, msg):
        if passed:
            emit(True, msg)
            return
        why = next((w for pat, w in known if re.search(pat, msg)), None)
        if why is not None:
            emit(True, f"{msg} # TODO known gap: {why}")
        else:
            emit(False, msg)

    def check_eq(msg, want, got):
        emit(want == got, msg if want == got else f"{msg} (expected '{want}', got '{got}')")

    check_eq(f"{n}: no phase outranks a steady cause it does not exceed", "", f.phase_first)
    # a finding's Source is the user's own line, never a library's file
    # (issue 39: torch/nn/modules/*.py on ten traces)
    check_eq(f"{n}: every Source is the user's own line", "", f.lib_source)
    check_eq(f"{n}: every gaps chain's timeline whole (its [CUDA] line last)", "", f.cut_timeline)
    check_eq(f"{n}: no host-bound stretch more inside CUDA calls than its length", "", f.part_over)
    # one cause, one finding: slow copies that are the pageable copies, slow
    # frees that waited for the GPU, are lines of the pageable_copies and
    # sync_frees chains, not slow_calls chains beside them
    kinds = [c["kind"] for c in doc["chains"]]
    twice = [c["summary"] for c in doc["chains"] if c["kind"] == "slow_calls" and (
             ("pageable_copies" in kinds and c["evidence"].get("tail_cause") == "pageable_memory") or
             ("sync_frees" in kinds and c["evidence"].get("tail_cause") == "gpu_work"
              and re.fullmatch(r"cu(da)?(Mem)?Free(Host)?(_v2)?", c["api"] or "")))]
    check_eq(f"{n}: no slow_calls chain tells a pageable_copies or sync_frees chain's cause again", "", "; ".join(twice))
    # ... and the gaps finding that says the main thread waited for a CPU is
    # the CPU contention's one finding
    check_eq(f"{n}: no cpu_contention chain beside a gaps_host_preempted one", "",
             "cpu_contention" if "gaps_host_preempted" in kinds and "cpu_contention" in kinds else "")
    for kv in rows:
        k, v = kv.split("=", 1)
        if k == "first_kind":
            ok = whole(f.first_kind, v)
            check(ok, f"{n}: first chain is {f.first_kind}" + ("" if ok else f", expected {v}"))
        elif k == "first_severity":
            ok = whole(f.first_sev, v)
            check(ok, f"{n}: first chain's severity {f.first_sev}" + ("" if ok else f", expected {v}"))
        elif k == "first_mentions":
            check(any_line(v, f.first, re.I), f"{n}: first chain mentions /{v}/")
        elif k == "first_fix_mentions":
            check(any_line(v, f.fixes, re.I), f"{n}: first chain's fixes mention /{v}/")
        elif k == "lead_fix_mentions":
            check(any_line(v, f.lead_fix, re.I),
                  f"{n}: first chain's first fix mentions /{v}/ (is '{f.lead_fix[0][:80]}')")
        elif k == "first_source":
            check(any_line(v, f.source), f"{n}: first chain's source /{v}/ (is '{chr(10).join(f.source)}')")
        elif k == "must_mention":
            check(any_line(v, f.all, re.I), f"{n}: some chain mentions /{v}/")
        elif k == "must_not_mention":
            hit = next((m.group(0) for m in (re.search(v, ln, re.I) for ln in f.all) if m), None)
            check(hit is None, f"{n}: no chain mentions /{v}/" if hit is None else
                  f"{n}: a chain mentions '{hit}' (must not: /{v}/)")
        elif k == "kind_present":
            got = f.kinds.count(v)
            emit(got >= 1, f"{n}: a {v} chain" + ("" if got >= 1 else f" ({got} < 1)"))
        elif k == "kind_absent":
            check_eq(f"{n}: no {v} chain", "0", str(f.kinds.count(v)))
        elif k == "max_steady_severity":
            ok = SEVERITY.get(f.steady_sev, 0) <= SEVERITY.get(v, 0)
            check(ok, f"{n}: steady state at most {v} (is {f.steady_sev})" if ok else
                  f"{n}: steady state at most {v}, but {f.steady_what} is {f.steady_sev}")
        elif k == "verdict":
            ok = whole(f.verdict_state, v)
            check(ok, f"{n}: verdict {f.verdict_state}" + ("" if ok else f", expected {v}"))
        elif k == "busy_top_kernel":
            # a busy verdict names the kernels the GPU's time went to, most first
            st, top = f.verdict_state, f.top_kernel
            if st == "busy":
                check(re.search(v, top) is not None and f.top_share >= 20,
                      f"{n}: busy: the most GPU time is /{v}/'s (is '{top}', {f.top_share} %)")
                check(any(top[:40] in ln for ln in f.verdict), f"{n}: busy: the verdict's line names it")
            elif st != "partly_idle":
                # (a partly idle GPU's list: top_kernel=)
                check_eq(f"{n}: not busy ({st}): no kernels listed", "", top)
        elif k == "top_kernel":
            # a GPU that is busy or partly idle: the verdict says where the time
            # it has goes, by kernel, most first (the kind of kernel: a GEMM's
            # time may go to several of cuBLAS's tile shapes, each its own kernel)
            st, top = f.verdict_state, f.top_kernel
            share = int(sum(s for name, s, _ in f.kernels if re.search(v, text(name))))
            check(re.search(v, top) is not None and share >= 20,
                  f"{n}: {st}: the most GPU time is /{v}/'s (is '{top}'; all /{v}/ {share} %)")
            check(any(top[:40] in ln for ln in f.verdict), f"{n}: {st}: the verdict's line names it")
            check(f.top_timed_alone != "none", f"{n}: {st}: with how many of its launches were timed alone")
        elif k == "lists_work":
            # the verdict's list of where the GPU's time went has an entry
            # (a kernel, a kind of copy, the memsets) matching
            check(any(re.search(v, text(name)) for name, _, _ in f.kernels),
                  f"{n}: {f.verdict_state}: its GPU work lists /{v}/ ({f.work_list})")
        elif k == "work_stream":
            # REGEX:WHERE — the verdict's entry matching REGEX ran on the stream
            # with the most work ("main"), another ("other"), "several"
            pat, want = v.rsplit(":", 1) if ":" in v else (v, v)
            got = next((text(s) for name, _, s in f.kernels if re.search(pat, text(name))), "none")
            check(got == want, f"{n}: /{pat}/ ran on the {want} stream (is {got})")
        elif k == "verdict_mentions":
            check(any_line(v, f.verdict, re.I), f"{n}: the verdict mentions /{v}/")
        elif k == "verdict_not_mentions":
            check(not any_line(v, f.verdict, re.I), f"{n}: the verdict does not mention /{v}/")
        elif k in ("straggler", "straggler_cause", "collectives_source"):
            # a job of several ranks (explain --json's "ranks"): the straggler's rank
            # (none: balanced, or no job), its own cause's kind, where the
            # collectives were timed from (nccl, gloo, none)
            got = getattr(f, k)
            ok = whole(got, v)
            check(ok, f"{n}: {k} {got}" + ("" if ok else f", expected {v}"))
        elif k == "step_class":
            # the per-step breakdown's class (explain --json step_breakdown.class)
            ok = whole(f.step_class, v)
            check(ok, f"{n}: step class {f.step_class}" + ("" if ok else f", expected {v}"))
        elif k == "known_gap":
            pass
        else:
            emit(False, f"{n}: unknown key '{k}' in {expect_path}")
    # every measured trace: GPU idle over the steady state within 5 points —
    # the measured bounds, or the estimate from work timed alone inside them
    if f.idle_width is not None:
        check(f.idle_width <= 5, f"{n}: steady-state GPU idle measured within 5 points (is {text(f.idle_width)})")
