#!/usr/bin/env python3
"""fusescan's emitted ops against PyTorch at every token count (GPU machine).

For each chain (scripts/torch_chains.py, Llama-3-8B widths): `fusescan --apply
--tokens MAX --buckets LIST --emit DIR` tunes the fused kernel at every bucket
and writes the PyTorch op; then at every size of LIST the op (one load, every
size), PyTorch eager (the unfused chain) and torch.compile compiled for that
exact size (dynamic=False, default mode) run on the same inputs. Each side is
captured in a CUDA graph holding many calls (20; fewer where the op's
traffic takes over 50 us at 3 TB/s: enough to fill ~1 ms), input copies rotated within it past twice the L2, and the
graphs' replays are timed interleaved, round after round (100 rounds after 5
warm-up rounds), in an order drawn afresh each round: time per call is a
replay over its calls. At decode sizes a graph's time depends on what ran
just before it and on the capture itself (two captures of the same calls
differ by up to 4%, alike round after round, and follow their place in the
capture order), so each side of 20 calls is captured 16 times where a call's
traffic takes under 10 us (4 above), round r replaying capture r mod 16 (160
rounds); the sides are captured round-robin, in a fresh order for each
capture, every side's k-th graph in one memory pool. torch.compile's side is
timed twice, as an A/A control: each side's graphs captured one after
another, two copies of it read up to 1.06 apart; round-robin, within 1.01.
Their ratio should straddle 1.00, and its interval is the noise floor the
row's own ratio is read against. It cannot see a bias a whole process
gives one side: at decode sizes one kernel's time moves up to 9% from process
to process (the same binary: Triton's kernel for SwiGLU at 8 tokens, 1.469 us
launched from its own module and 1.530 through torch.compile in one process,
1.466 through torch.compile in another), and at the copy bandwidth 0.5%
(torch.compile's GeGLU-tanh at 16384 tokens: 321.6-323.5 us over nine
processes, each process's interval +-0.05%), so every size is timed in
--processes fresh processes (6), one after another, each as above; its row
gives the medians of the processes' medians, and the ratios' intervals are
the distribution-free 95% intervals of the median from the processes'
medians (with six: the lowest to the highest, 97% coverage). Each process
draws its own capture and round orders (seeded by its index): with one
seed for all, a bias an order gives a side falls on that side in every
process, where the interval over processes cannot see it (the A/A interval
over six H100 processes missed 1.00 at 61 of 120 points, by up to 1.3%,
with one seed; with a seed each, on two H200s, at 2 of 120 points, by at
most 0.2%: consistent with the orders being why, not proof). Where the
graphs would not fit the device's memory (a softmax of 16384 tokens keeps
eager's float32 scores in its graph pool) each side is timed call by call
instead (marked `direct`; a call then takes milliseconds, the launch is
noise). The op's outputs are checked against eager's: within twice the sum of
fusescan's own errors for that bucket (fused and unfused against its float64
reference on the device). Where eager's own peak does not fit the device (a
softmax of 16384 tokens on an 80 GB card: 97 GiB) they are checked against
torch.compile's, and eager is not timed (its column reads `-`).

    python3 scripts/bench_torch.py --fusescan gpu-carry/fusescan --dumps gpu-carry/dumps \\
        [--tokens 1,2,4,...,16384] [--only rmsnorm,softmax] [--out DIR] [--processes 6]

Prints one row per chain and size: the kernel the op picked, time per call of
eager, torch.compile and the op (us), the ratio torch.compile / fusescan
(round by round: the median and its distribution-free 95% interval), the
A/A control (torch.compile / torch.compile, the same), the processes the
row was timed in, the launches of the
unfused chain (fusescan's count of eager's kernels) against
the op's one, and at the largest size the op's GB/s as a percentage of the
device's copy bandwidth (fusescan's 1 GiB cuMemcpyDtoD). Writes bench.json.
"""
import argparse
import itertools
import json
import math
import os
import random
import subprocess
import sys
import time

# a softmax at 16384 tokens holds 16 GiB inputs and outputs beside eager's 32 GiB
# float32 scores: without expandable segments the cache's fragments do not fit
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
import torch  # noqa: E402 (after the allocator's setting)

import bench_table  # noqa: E402
import torch_chains as tc  # noqa: E402

ROUNDS = 100
WARMUP = 5
DECODE_BYTES = 3e12 * 10e-6  # a call moving less is launch-bound: a decode size, captured 16 times a side


def median_ci(xs):
    """the median (of an even count, the mean of the middle two: six processes' medians have
    no middle one) and its distribution-free 95% interval (ranks n/2 -+ 0.98 sqrt(n))"""
    t, n = sorted(xs), len(xs)
    h = 0.98 * math.sqrt(n)
    lo, hi = max(0, math.floor(n / 2 - h)), min(n - 1, math.ceil(n / 2 + h))
    return (t[(n - 1) // 2] + t[n // 2]) / 2, t[lo], t[hi]


def interleaved(fns, rounds=ROUNDS, seed=0):
    """each of fns once per round, in an order drawn afresh each round (no
    side keeps one place, one predecessor), every run between two events, all
    enqueued back to back (the GPU never waits for the host); ms per run,
    round by round, after the warm-up rounds"""
    ev = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in fns]
          for _ in range(rounds + WARMUP)]
    order, rng = list(range(len(fns))), random.Random(seed)
    for round_ in ev:
        rng.shuffle(order)
        for k in order:
            round_[k][0].record()
            fns[k]()
            round_[k][1].record()
    torch.cuda.synchronize()
    return [[round_[k][0].elapsed_time(round_[k][1]) for round_ in ev[WARMUP:]] for k in range(len(fns))]


def graph_of(fn, copies, calls, pool):
    """fn on copies[0], copies[1], ... (rotating), `calls` times, in one CUDA graph allocating from pool"""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for c in copies[:2]:
            fn(c)  # warm up outside capture (compilation, module loads)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, pool=pool):
        for i in range(calls):
            fn(copies[i % len(copies)])
    return g


def replays_of(fns, copies, calls, captures, seed=1):
    """per fn, `captures` graphs (graph_of) and a function replaying the next
    of them each call; captured round-robin, every fn's k-th graph in one
    memory pool (the fns' outputs at the same addresses) in an order drawn
    afresh for each k (no fn keeps one place in the capture order; seeded
    apart from interleaved's, so capture k's order is not round k's)"""
    graphs, order, rng = [[] for _ in fns], list(range(len(fns))), random.Random(seed)
    for _ in range(captures):
        pool = torch.cuda.graph_pool_handle()
        rng.shuffle(order)
        for k in order:
            graphs[k].append(graph_of(fns[k], copies, calls, pool))
    return [lambda it=itertools.cycle(gs): next(it).replay() for gs in graphs]


def max_abs_diff(x, y, chunk=1 << 27):
    """in float32, a chunk at a time; inf where either is not finite"""
    x, y, worst = x.reshape(-1), y.reshape(-1), 0.0
    for i in range(0, x.numel(), chunk):
        d = (x[i:i + chunk].float() - y[i:i + chunk].float()).abs()
        if not torch.isfinite(d).all():
            return math.inf
        worst = max(worst, d.max().item())
    return worst


def copies_of(op, names, tokens, gen):
    """input copies past twice the L2 (8 at most): each (function's order, op's order)"""
    first = tc.draw_inputs(op, names, tokens, gen)
    nbytes = sum(t.numel() * t.element_size() for t in first[0])
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    n = max(1, min(8, -(-2 * l2 // max(1, nbytes))))
    return [first] + [tc.draw_inputs(op, names, tokens, gen) for _ in range(n - 1)]


def regime(nbytes):
    """(calls a graph, captures a side) for a call moving nbytes: graphs of 20
    calls, fewer where its traffic takes over 50 us at 3 TB/s; a capture's own
    bias (up to 4% at decode sizes) is not averaged by more rounds, by more
    captures it is: 16 a side where the traffic takes under 10 us (a decode
    size: DECODE_BYTES), 10 rounds each (replays_of captures them round-robin).
    The calls are the tuner's rule too (fs_gpu_graph_calls, fuse/gpu.c)"""
    t1 = nbytes / 3e12
    calls = 20 if t1 < 50e-6 else max(1, min(20, int(1e-3 / t1)))
    return calls, (16 if nbytes < DECODE_BYTES else 4) if calls == 20 else 1


def bench_size(name, fn, op, names, tokens, bucket_err, gen, seed):
    copies, moved = copies_of(op, names, tokens, gen), tc.traffic(op, tokens)
    o = getattr(torch.ops.fusescan, op.DESC["name"])
    with torch.no_grad():
        cfn = torch.compile(fn, dynamic=False)
        try:  # eager's temporaries first, while nothing else is held: the op's output never sits beside them
            want, ref = tc.listify(fn(*copies[0][0])), "eager"
        except torch.OutOfMemoryError:  # eager's own peak past the device (a softmax of 16384 tokens on
            torch.cuda.empty_cache()    # 80 GB: 97 GiB): checked against torch.compile, eager not timed
            want, ref = tc.listify(cfn(*copies[0][0])), "torch.compile"
        got = tc.listify(o(*copies[0][1]))
        err = max(min((max_abs_diff(g, w) for w in want if w.shape == g.shape), default=math.inf) for g in got)
        del got, want
        sides = {"compile": lambda c: cfn(*c[0]), "fusescan": lambda c: o(*c[1]), "aa": lambda c: cfn(*c[0])}
        if ref == "eager":
            sides = {"eager": lambda c: fn(*c[0]), **sides}
        calls, captures = regime(moved)
        free, total = torch.cuda.mem_get_info()
        # a graph's pool holds one call's outputs and temporaries (eager's: a few outputs; a call's are freed
        # within the capture, and the next call reuses them), twice over for slack; counted as if every side had
        # its own pools (the sides share one a capture: a bound with room to spare, kept as measured before)
        direct = 4 * captures * 2 * 3 * moved > free
        if direct:
            rounds = interleaved([lambda s=s: s(copies[0]) for s in sides.values()], seed=2 * seed)
            calls = 1
        else:
            rounds = interleaved(replays_of(list(sides.values()), copies, calls, captures, seed=2 * seed + 1),
                                 rounds=max(ROUNDS, 10 * captures), seed=2 * seed)
    del copies
    torch.cuda.empty_cache()
    per_call = {side: [t / calls for t in ts] for side, ts in zip(sides, rounds)}
    comp, fs = (median_ci(per_call[side])[0] for side in ("compile", "fusescan"))
    ratio, lo, hi = median_ci([c / f for c, f in zip(per_call["compile"], per_call["fusescan"])])
    aa = median_ci([c / a for c, a in zip(per_call["compile"], per_call["aa"])])
    k = op.pick(tc.symbols_at(op, tokens))[0].entry
    bad = not err <= 2 * bucket_err
    gbs = moved / (fs * 1e-3) / 1e9
    return {"chain": name, "tokens": tokens, "kernel": k,
            "eager_us": 1e3 * median_ci(per_call["eager"])[0] if "eager" in per_call else None, "compile_us": 1e3 * comp,
            "fusescan_us": 1e3 * fs, "compile_over_fusescan": ratio, "ci95": [lo, hi], "aa": aa[0], "aa_ci95": list(aa[1:]),
            "calls_per_graph": calls,
            "direct": direct, "checked_against": ref, "max_abs_diff": err, "bound": 2 * bucket_err, "bad": bad, "gbs": gbs}


def across(rows):
    """one point timed in several processes, as one row: each time the median
    of the processes' medians, each ratio's interval the distribution-free 95%
    interval of the median from the processes' medians (six processes: their
    lowest to their highest, 97% coverage), so the process-to-process spread
    (the A/A control, one compiled function timed twice, cannot see it) is
    part of the interval"""
    row = dict(rows[0])
    for k in ("eager_us", "compile_us", "fusescan_us", "gbs"):
        row[k] = None if any(r[k] is None for r in rows) else median_ci([r[k] for r in rows])[0]
    for k, ci in (("compile_over_fusescan", "ci95"), ("aa", "aa_ci95")):
        row[k], lo, hi = median_ci([r[k] for r in rows])
        row[ci] = [lo, hi]
    row["max_abs_diff"] = max(r["max_abs_diff"] for r in rows)
    row["checked_against"] = "eager" if all(r["checked_against"] == "eager" for r in rows) else "torch.compile"
    row["bad"] = any(r["bad"] for r in rows)
    row["per_process"] = [r["compile_over_fusescan"] for r in rows]
    row["processes"] = len(rows)
    return row


def dynamo_limits():
    """torch.compile may compile the chain once per size (dynamic=False) without falling back to eager"""
    for knob in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, knob):
            setattr(torch._dynamo.config, knob, 4096)  # one compilation per size, each for that size


def worker(plan_file, out_file, seed):
    """--worker: the plan's points (chain, numerics.json, sizes, bounds) timed in this process"""
    dynamo_limits()
    plan, fns, rows = json.load(open(plan_file)), {name: fn for name, *_, fn in tc.CHAINS}, []
    gen = torch.Generator(device="cuda").manual_seed(seed)
    for c in plan:
        j = json.load(open(c["numerics"]))
        op, names = tc.load_op(j), tc.input_names(j)
        for t, bound in zip(c["sizes"], c["bounds"]):
            rows.append(bench_size(c["chain"], fns[c["chain"]], op, names, t, bound, gen, seed))
    with open(out_file + ".tmp", "w") as f:
        json.dump(rows, f)
    os.replace(out_file + ".tmp", out_file)


def in_processes(plan, n, out):
    """the plan's points timed in n fresh processes, one after another: {(chain, tokens): [row per process]}"""
    plan_file, got = os.path.join(out, "plan.json"), {}
    with open(plan_file, "w") as f:
        json.dump(plan, f)
    points = sum(len(c["sizes"]) for c in plan)
    for k in range(n):
        t0, rows_file = time.monotonic(), os.path.join(out, f"process_{k}.json")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", plan_file, "--out", rows_file,
                            "--seed", str(k + 2)], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"process {k + 1} of {n}: exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}",
                  flush=True)
            return None
        for row in json.load(open(rows_file)):
            got.setdefault((row["chain"], row["tokens"]), []).append(row)
        print(f"process {k + 1} of {n}: {points} points in {time.monotonic() - t0:.0f} s", flush=True)
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fusescan")
    ap.add_argument("--dumps")
    ap.add_argument("--tokens", default=",".join(str(1 << i) for i in range(15)))
    ap.add_argument("--out", default="/tmp/fusescan-bench")
    ap.add_argument("--cache", help="tuning cache (default: OUT/tuning.json)")
    ap.add_argument("--only", help="comma-separated chain names")
    ap.add_argument("--processes", type=int, default=6,
                    help="fresh processes each size is timed in (default 6; 1: this one alone)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)  # internal: a plan of points, rows to --out
    ap.add_argument("--seed", type=int, default=1, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        return worker(a.worker, a.out, a.seed)
    if not a.fusescan or not a.dumps:
        ap.error("--fusescan and --dumps are required")
    sizes = [int(x) for x in a.tokens.split(",")]
    os.makedirs(a.out, exist_ok=True)
    dynamo_limits()
    dev = torch.cuda.get_device_name(0)
    print(f"device: {dev}; torch {torch.__version__}; fusescan {a.fusescan}; sizes {a.tokens}; each size in "
          f"{a.processes} processes", flush=True)
    failed, chains = False, []
    for name, cand, dump, _, fn in tc.CHAINS:
        if a.only and name not in a.only.split(","):
            continue
        out = os.path.join(a.out, name)
        t0 = time.monotonic()
        r = subprocess.run([a.fusescan, "--apply", cand, "--tokens", str(max(sizes)), "--buckets", a.tokens,
                            "--no-render", "--out", out, "--emit", os.path.join(out, "emit"),
                            "--cache", a.cache or os.path.join(a.out, "tuning.json"), os.path.join(a.dumps, dump)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name}: fusescan exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-2000:]}", flush=True)
            failed = True
            continue
        j = json.load(open(os.path.join(out, "numerics.json")))
        op = tc.load_op(j)
        buckets = {b["tokens"]: b for b in j["gpu"]["tuning"]["buckets"]}
        bucket = {t: buckets.get(t) or buckets[max(buckets)] for t in sizes}
        bound = {t: b.get("fused_max_abs", 0) + b.get("unfused_max_abs", 0) for t, b in bucket.items()}
        chains.append((name, fn, j, op, bucket, bound, os.path.join(out, "numerics.json"), time.monotonic() - t0))
    # every size in fresh processes (this one has loaded the ops, nothing else), or all here
    plan = [{"chain": c[0], "numerics": c[6], "sizes": sizes, "bounds": [c[5][t] for t in sizes]} for c in chains]
    spread = in_processes(plan, a.processes, a.out) if plan and a.processes > 1 else {}
    if spread is None:  # a timing process failed (its output above): what failed there fails here too (an
        print("no point timed: a timing process failed", flush=True)  # out-of-memory), so nothing is timed again
        failed, spread, chains = True, {}, []
    print("%-12s %6s %-8s %9s %9s %9s %7s %13s %13s %6s %5s %4s %9s  %s" % (
        "chain", "tokens", "kernel", "eager us", "cmp us", "fs us", "cmp/fs", "95% CI", "A/A 95% CI", "launch", "calls",
        "proc", "err", ""))
    gen = torch.Generator(device="cuda").manual_seed(1)
    rows = []
    for name, fn, j, op, bucket, bound, _, tuning_s in chains:
        g, names, t1 = j["gpu"], tc.input_names(j), time.monotonic()
        for t in sizes:
            row = across(spread[(name, t)]) if (name, t) in spread else bench_size(name, fn, op, names, t, bound[t], gen, 1)
            row["unfused_launches"] = g["unfused_launches"]
            row["bucket_tactic"] = bucket[t]["tactic"]
            row["copy_gbs"] = g["copy_gbs"]
            failed |= row["bad"]
            rows.append(row)
            print("%-12s %6d %-8s %9s %9.2f %9.2f %7.3f %6.3f-%6.3f %6.3f-%6.3f %3d:1 %5s %4d %9.2e  %s%s%s" % (
                name, t, row["kernel"], "-" if row["eager_us"] is None else f"{row['eager_us']:.2f}", row["compile_us"],
                row["fusescan_us"], row["compile_over_fusescan"], *row["ci95"], *row["aa_ci95"], g["unfused_launches"],
                "dir" if row["direct"] else row["calls_per_graph"], row.get("processes", 1), row["max_abs_diff"],
                bucket[t]["tactic"], "" if row["checked_against"] == "eager" else "  (checked against torch.compile: "
                "eager does not fit)", f"  OUTPUT DIFFERS FROM {row['checked_against'].upper()}" if row["bad"] else ""), flush=True)
        big = rows[-1]
        print(f"{name}: at {big['tokens']} tokens {big['gbs']:.0f} GB/s through the op, {100 * big['gbs'] / g['copy_gbs']:.0f}% "
              f"of copy ({g['copy_gbs']:.0f} GB/s); fusescan's own timing of the kernel: "
              f"{100 * g['fused_bytes'] / (g['fused_ms'] * 1e-3) / 1e9 / g['copy_gbs']:.0f}% of copy; wall time: tuning and "
              f"emitting {tuning_s:.0f} s, {0 if spread else len(sizes)} sizes timed here (torch.compile's compilations "
              f"included) {time.monotonic() - t1:.0f} s", flush=True)
        torch.cuda.empty_cache()
    for line in bench_table.summary(rows):
        print(line)
    with open(os.path.join(a.out, "bench.json.tmp"), "w") as f:
        json.dump({"device": dev, "torch": torch.__version__, "rows": rows}, f, indent=1)
    os.replace(os.path.join(a.out, "bench.json.tmp"), os.path.join(a.out, "bench.json"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
