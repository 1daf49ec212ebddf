#!/usr/bin/env python3
"""Every candidate discovery finds, applied: the all-candidates sweep.

For each architecture's dump (by default tests/data/export_*_2l/001_*.txt:
one flavour each, the Llama-3-width copies apart) `fusescan discover
--format json` lists the candidates, and each one is applied as a user would
check it:

    fusescan --apply ID --tokens T --buckets T --reps 10 --no-render --out DIR DUMP

on the GPU (the GPUs dealt round-robin, --jobs processes at once), or with
--cpu-only on the CPU. Each outcome falls in one class:

    pass                      verdict pass, exit 0
    correct, not profitable   verdict so, exit 0 (the fused plan is slower)
    fail                      verdict fail, exit 1: a plan fails its check
    refused                   exit 2 with an error that names the limit (a
                              region too large, an op without semantics, a
                              shape the generator does not take, ...)
    crash                     a signal, a CUDA fault (an illegal address, a
                              launch failure), an exit code outside 0-2, or
                              no answer within --timeout seconds
    contradiction             the exit code, the verdict and the report
                              disagree (a pass beside a failing check or
                              bucket, exit 1 without a failing verdict, ...)

It prints the tally per class, the refusals by reason (names and numbers
masked, so one limit is one line), each fail, crash and contradiction, and
per architecture; writes sweep.json into --out (if given), each fail, crash and
contradiction with its run's last 40 lines. Exit 1 on any fail, crash or
contradiction.

    python3 scripts/sweep_candidates.py --fusescan build/fusescan [--tokens 2048] [--gpus 0,1] [--jobs 8]
        [--cpu-only] [--only ARCH,...] [--out DIR] [DUMP ...]
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")
FAULT = re.compile(r"CUDA_ERROR_(?!OUT_OF_MEMORY)[A-Z_]+|illegal (memory )?address|misaligned address")


def default_dumps():
    """one dump per architecture: the plain export of each 2-layer fixture"""
    out = []
    for d in sorted(glob.glob(os.path.join(DATA, "export_*_2l"))):
        if "_l3w_" in os.path.basename(d):
            continue
        first = sorted(glob.glob(os.path.join(d, "001_*.txt")))
        if first:
            out.append(first[0])
    return out


def arch_of(dump):
    base = os.path.basename(os.path.dirname(dump))
    return re.sub(r"^export_|_2l$", "", base) or os.path.basename(dump)


def candidates(exe, dump):
    """the ids discovery ranks in the dump, in its order"""
    r = subprocess.run([exe, "discover", "--format", "json", dump], capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"sweep: fusescan discover {dump}: exit {r.returncode}\n{r.stderr[-2000:]}")
    ids = []

    def walk(o):
        if isinstance(o, dict):
            if "id" in o and "name" in o and "sites" in o and o["id"] not in ids:
                ids.append(o["id"])
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(json.loads(r.stdout))
    return ids


def reason(text):
    """an error's reason with its names and numbers masked: one limit, one key"""
    lines = [l for l in text.splitlines() if "error:" in l]
    line = lines[0].split("error:", 1)[1] if lines else (text.strip().splitlines() or ["(no message)"])[-1]
    line = re.sub(r"%[\w.]+", "%X", line)
    line = re.sub(r"\([a-z_]+\.[\w.]+\)", "(OP)", line)
    line = re.sub(r"\d+(\.\d+)?(e[+-]?\d+)?", "N", line)
    return line.strip()[:200]


def classify(rc, text, report):
    """the outcome's class and a detail"""
    verdict = report.get("verdict") if report else None
    if rc is None:
        return "crash", "no answer within the timeout"
    if rc < 0:
        return "crash", f"signal {signal.Signals(-rc).name}"
    if rc not in (0, 1, 2):
        return "crash", f"exit {rc}"
    fault = FAULT.search(text)
    if fault:
        return "crash", f"a CUDA fault: {fault.group(0)}"
    failing = re.search(r"(CPU|GPU) check: fail|FAILS", text)
    if rc == 0 and verdict not in ("pass", "correct, not profitable"):
        return "contradiction", f"exit 0, verdict {verdict!r}"
    if rc == 1 and verdict != "fail":
        return "contradiction", f"exit 1, verdict {verdict!r}"
    if verdict in ("pass", "correct, not profitable") and failing:
        return "contradiction", f"verdict {verdict} beside '{failing.group(0)}'"
    if verdict == "fail" and rc != 1:
        return "contradiction", f"verdict fail, exit {rc}"
    if rc == 2:
        return "refused", reason(text)
    if verdict == "fail":
        return "fail", (report.get("reason") or "")[:300]
    return verdict, ""


def apply_one(exe, dump, ident, args, gpu, work, timeout):
    out = os.path.join(work, re.sub(r"[^\w.-]", "_", f"{arch_of(dump)}.{ident}"))
    cmd = [exe, "--apply", ident, "--tokens", str(args.tokens), "--buckets", str(args.tokens), "--reps", "10", "--no-render",
           "--cache", out + ".cache.json", "--out", out, dump] + (["--cpu-only"] if args.cpu_only else [])
    env = dict(os.environ)
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
        rc, text = r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        rc, text = None, (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
    except OSError as e:  # fusescan could not be started: no outcome, said as one
        return {"arch": arch_of(dump), "dump": dump, "id": ident, "exit": None, "class": "crash",
                "detail": f"fusescan could not be started: {e}"}
    try:
        with open(os.path.join(out, "numerics.json")) as f:
            report = json.load(f)
    except (OSError, ValueError):
        report = None
    cls, detail = classify(rc, text, report)
    result = {"arch": arch_of(dump), "dump": dump, "id": ident, "exit": rc, "class": cls, "detail": detail}
    if cls in ("crash", "fail", "contradiction"):  # where it stopped: the run's last lines
        result["output"] = "\n".join(text.splitlines()[-40:])
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fusescan", required=True)
    ap.add_argument("--tokens", type=int, default=2048)
    ap.add_argument("--cpu-only", action="store_true", help="run the checks on the CPU (--cpu-only)")
    ap.add_argument("--gpus", default=os.environ.get("CUDA_VISIBLE_DEVICES", "0"), help="GPUs to deal the runs to")
    ap.add_argument("--jobs", type=int, default=0, help="processes at once (default: 2 a GPU, or the CPUs)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds a run may take")
    ap.add_argument("--only", help="architectures, comma-separated (default all)")
    ap.add_argument("--out", default=None, help="where sweep.json goes (default: not written)")
    ap.add_argument("--verbose", action="store_true", help="print each outcome as it comes")
    ap.add_argument("dumps", nargs="*", help="dumps to sweep (default: one per fixture architecture)")
    a = ap.parse_args()
    if not 1 <= a.tokens <= 1 << 20:
        ap.error("--tokens wants 1 to 1048576")
    dumps = a.dumps or default_dumps()
    if a.only:
        keep = set(a.only.split(","))
        dumps = [d for d in dumps if arch_of(d) in keep]
    gpus = [None] if a.cpu_only else [g for g in a.gpus.split(",") if g != ""]
    jobs = a.jobs or (os.cpu_count() or 2 if a.cpu_only else 2 * len(gpus))
    work = tempfile.mkdtemp(prefix="fusescan-sweep-")
    todo = [(d, i) for d in dumps for i in candidates(a.fusescan, d)]
    print(f"sweep: {len(todo)} candidates of {len(dumps)} architectures at {a.tokens} tokens on "
          f"{'the CPU' if a.cpu_only else 'GPU ' + ','.join(gpus)}, {jobs} at once", flush=True)
    results = []
    stopped = []  # a SIGTERM (a time limit): the runs done so far are tallied, marked partial
    signal.signal(signal.SIGTERM, lambda *_: stopped.append(1))
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futs = [pool.submit(apply_one, a.fusescan, d, i, a, gpus[k % len(gpus)], work, a.timeout) for k, (d, i) in enumerate(todo)]
        pending = set(futs)
        while pending and not stopped:
            done, pending = concurrent.futures.wait(pending, timeout=1, return_when=concurrent.futures.FIRST_COMPLETED)
            for f in done:
                r = f.result()
                results.append(r)
                if a.verbose or r["class"] in ("fail", "crash", "contradiction"):
                    print(f"  [{len(results)}/{len(todo)}] {r['arch']} {r['id']}: {r['class']}"
                          f"{': ' + r['detail'] if r['detail'] else ''}", flush=True)
        for f in pending:
            f.cancel()
    if stopped:  # the runs the signal reached too are not outcomes
        results = [r for r in results if r["exit"] != -signal.SIGTERM]
        print(f"sweep: stopped (SIGTERM) after {len(results)} of {len(todo)} candidates: the tally below is partial", flush=True)
    results.sort(key=lambda r: (r["arch"], r["id"]))
    tally, refusals, archs = {}, {}, {}
    for r in results:
        tally[r["class"]] = tally.get(r["class"], 0) + 1
        archs.setdefault(r["arch"], {}).setdefault(r["class"], 0)
        archs[r["arch"]][r["class"]] += 1
        if r["class"] == "refused":
            refusals[r["detail"]] = refusals.get(r["detail"], 0) + 1
    order = ["pass", "correct, not profitable", "refused", "fail", "crash", "contradiction"]
    print("tally: " + ", ".join(f"{c} {tally.get(c, 0)}" for c in order) + f" (of {len(results)})")
    for why, n in sorted(refusals.items(), key=lambda x: -x[1]):
        print(f"  refused x{n}: {why}")
    for r in results:
        if r["class"] in ("fail", "crash", "contradiction"):
            print(f"  {r['class'].upper()} {r['arch']} {r['id']}: {r['detail']}")
    for arch in sorted(archs):
        print(f"  {arch:<16} " + ", ".join(f"{c} {archs[arch][c]}" for c in order if c in archs[arch]))
    shutil.rmtree(work, ignore_errors=True)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "sweep.json"), "w") as f:
            json.dump({"tokens": a.tokens, "cpu_only": a.cpu_only, "tally": tally, "refusals": refusals, "results": results}, f,
                      indent=1)
    sys.exit(1 if any(tally.get(c) for c in ("fail", "crash", "contradiction")) else 0)


if __name__ == "__main__":
    main()
