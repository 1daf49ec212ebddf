#!/usr/bin/env python3
"""fusescan's GEMM fusions against PyTorch (GPU machine), at Llama-3-8B widths.

Rows (tests/data/gemm/*.txt, bf16): QKV (4096 -> 4096 + 1024 + 1024), gate /
up + SwiGLU (4096 -> 2 x 14336), the SwiGLU MLP (that, then down 14336 ->
4096), addmm + bias + GELU-tanh (4096 -> 14336), o_proj + residual add (4096
-> 4096), each at every size of --tokens. The plain GEMM column is one torch.mm
of the concatenated gate / up (QKV) weight: for the MLP, its first product only.

fusescan side: `fusescan --apply ID --tokens T` runs the fused plan (its
products through cuBLASLt, concatenated where they read one input, then the
generated epilogue kernel; or cuBLASLt's own epilogue; or, on sm_90, the
generated GEMM with the epilogue inside: the fastest) against the
unfused baseline (a cuBLASLt GEMM per product, a kernel per op), each checked
against fusescan's float64 reference; times from numerics.json (medians; CUDA
graphs of 20 calls at 256 tokens and below, or where the region moves
under 150 MB). The same run emits the plan as a
PyTorch op (`--buckets T --emit`: its products through cuBLASLt under the
algorithms fusescan tuned, the kernel beside them, or cuBLASLt's epilogue,
as measured fastest; the generated GEMM is not in the op). PyTorch side, in this process:
eager, torch.compile (default) and torch.compile max-autotune (compiled
`max-autotune-no-cudagraphs`: the graph is ours), one plain torch.mm of
the fused shape (the concatenated weight: the GEMM's own floor) and the
emitted op, each captured in a CUDA graph of 10 calls with input copies
rotated, replays interleaved round after round (100 rounds). fusescan's own
timings and the PyTorch side run one after the other in one run, not
interleaved with each other; the emitted op is interleaved with PyTorch's.

    python3 scripts/bench_gemm.py --fusescan gpu-carry/fusescan [--tokens 16,16384] [--only qkv,swiglu_mlp] [--out DIR]

Prints per row and size: ms per call of eager, compile, max-autotune, the
plain GEMM, fusescan's unfused baseline and fused plan, the emitted op, the best of
compile / max-autotune over fusescan's fused plan (> 1: fusescan faster) and
over the emitted op (timed interleaved with them), and
gen/cuBLASLt: the generated GEMM with its epilogue against cuBLASLt's plain
product of the same shape (its throughput share; timed side by side by fusescan).
"""
import argparse
import json
import os
import re
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_torch import interleaved, median_ci, replays_of  # noqa: E402
from torch_chains import load_op  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data", "gemm")
PATS = os.path.join(DATA, "patterns")
H, I, KV = 4096, 14336, 1024


def rows():
    """name, fusescan --apply arguments, make(tokens) -> (inputs, eager fn, plain GEMM fn)"""
    def qkv(t, g):
        x = torch.randn(1, t, H, device="cuda", dtype=torch.bfloat16, generator=g)
        ws = [torch.randn(n, H, device="cuda", dtype=torch.bfloat16, generator=g) * 0.02 for n in (H, KV, KV)]
        cat = torch.cat(ws)
        return (x, *ws), lambda x, a, b, c: (x @ a.t(), x @ b.t(), x @ c.t()), lambda x, *_: x @ cat.t()

    def gate_up(t, g):
        x = torch.randn(1, t, H, device="cuda", dtype=torch.bfloat16, generator=g)
        wg, wu = (torch.randn(I, H, device="cuda", dtype=torch.bfloat16, generator=g) * 0.02 for _ in range(2))
        cat = torch.cat([wg, wu])
        return (x, wg, wu), lambda x, a, b: torch.nn.functional.silu(x @ a.t()) * (x @ b.t()), lambda x, *_: x @ cat.t()

    def mlp(t, g):
        x = torch.randn(1, t, H, device="cuda", dtype=torch.bfloat16, generator=g)
        wg, wu = (torch.randn(I, H, device="cuda", dtype=torch.bfloat16, generator=g) * 0.02 for _ in range(2))
        wd = torch.randn(H, I, device="cuda", dtype=torch.bfloat16, generator=g) * 0.02
        cat = torch.cat([wg, wu])
        return ((x, wg, wu, wd), lambda x, a, b, d: (torch.nn.functional.silu(x @ a.t()) * (x @ b.t())) @ d.t(),
                lambda x, *_: x @ cat.t())

    def addmm_gelu(t, g):
        x = torch.randn(t, H, device="cuda", dtype=torch.bfloat16, generator=g)
        w = torch.randn(H, I, device="cuda", dtype=torch.bfloat16, generator=g) * 0.02
        b = torch.randn(I, device="cuda", dtype=torch.bfloat16, generator=g)
        return ((b, x, w), lambda b, x, w: torch.nn.functional.gelu(torch.addmm(b, x, w), approximate="tanh"),
                lambda b, x, w: x @ w)

    def oproj(t, g):
        x = torch.randn(1, t, H, device="cuda", dtype=torch.bfloat16, generator=g)
        w = torch.randn(H, H, device="cuda", dtype=torch.bfloat16, generator=g) * 0.02
        r = torch.randn(1, t, H, device="cuda", dtype=torch.bfloat16, generator=g)
        return (x, w, r), lambda x, w, r: r + x @ w.t(), lambda x, w, r: x @ w.t()

    return [("qkv", ["parallel_gemm", "qkv.txt"], qkv),
            ("gate_up_swiglu", ["gate_up_swiglu", "gate_up.txt", "--patterns", PATS], gate_up),
            ("swiglu_mlp", ["pattern:swiglu", "mlp.txt"], mlp),
            ("addmm_gelu_tanh", ["gemm_bias_gelu_tanh", "addmm_gelu.txt", "--patterns", PATS], addmm_gelu),
            ("oproj_residual", ["gemm_residual", "oproj_residual.txt", "--patterns", PATS], oproj)]


def fusescan(exe, args, tokens, out):
    ident, dump, rest = args[0], os.path.join(DATA, args[1]), args[2:]
    cmd = [exe, "--apply", ident, "--tokens", str(tokens), "--buckets", str(tokens), "--no-render", "--out", out,
           "--emit", os.path.join(out, "emit"), dump, *rest]
    r = subprocess.run(cmd, capture_output=True, text=True)
    text = r.stdout + r.stderr
    try:
        with open(os.path.join(out, "numerics.json")) as f:
            j = json.load(f)
    except (OSError, ValueError):
        return None, None, text
    g = j.get("gpu", {})
    # pass, or correct but slower than the unfused products (timed all the same: the table says so)
    if r.returncode or not g.get("ran") or j.get("verdict") not in ("pass", "correct, not profitable"):
        return None, None, text
    g["verdict"] = j["verdict"]
    op = load_op(j)
    return g, getattr(op, op.DESC["name"]), text


def torch_side(make, tokens, op, calls=10):
    gen = torch.Generator(device="cuda").manual_seed(1)
    copies = []
    for _ in range(2):
        ins, eager, plain = make(tokens, gen)
        copies.append(ins)
    comp = torch.compile(eager, dynamic=False)
    auto = torch.compile(eager, dynamic=False, mode="max-autotune-no-cudagraphs")
    sides = [eager, comp, auto, plain, op]
    ref = eager(*copies[0])
    for f in (comp, auto, op):
        got = f(*copies[0])
        for a, b in zip(ref if isinstance(ref, tuple) else (ref,), got if isinstance(got, tuple) else (got,)):
            d = (a.float() - b.float()).abs().max().item()
            if not d < 0.05 * max(1.0, a.float().abs().max().item()):
                sys.exit(f"bench_gemm: {'the emitted op' if f is op else 'torch.compile'} differs from eager by {d}")
    replays = replays_of([lambda c, f=f: f(*c) for f in sides], copies, calls, captures=4)
    times = interleaved(replays)
    del replays
    return [median_ci([t / calls for t in ts])[0] for ts in times]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fusescan")
    ap.add_argument("--list", action="store_true", help="print the rows' names and stop")
    ap.add_argument("--tokens", default="16,16384")
    ap.add_argument("--out", default="/tmp/bench_gemm")
    ap.add_argument("--only", help="rows to run, comma-separated (default all)")
    a = ap.parse_args()
    if a.list:
        print(" ".join(name for name, _, _ in rows()))
        return
    if not a.fusescan:
        ap.error("--fusescan is required")
    os.makedirs(a.out, exist_ok=True)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; ms per call")
    print(f"{'row':<16} {'tokens':>6} {'eager':>9} {'compile':>9} {'max-auto':>9} {'plainGEMM':>9} "
          f"{'fs unfused':>10} {'fs fused':>9} {'fs op':>9} {'best/fs':>7} {'best/op':>7} {'gen/cuBLASLt':>12}  fused plan")
    failed, results = 0, []
    for name, args, make in rows():
        if a.only and name not in a.only.split(","):
            continue
        for t in [int(x) for x in a.tokens.split(",")]:
            g, op, text = fusescan(a.fusescan, args, t, os.path.join(a.out, f"{name}_{t}"))
            if g is None:
                failed += 1
                print(f"{name:<16} {t:>6} fusescan failed:\n{text[-1500:]}")
                continue
            eager, comp, auto, plain, op_ms = torch_side(make, t, op)
            fs = g["fused_ms"]
            best = min(comp, auto)
            plan = g.get("matrix_products", "")
            # the generated GEMM (its fastest tactic that passed the check) against cuBLASLt's plain
            # product of the same shape, timed side by side by fusescan
            gen = [m for m in re.findall(r"generated GEMM [^;]*", plan) if "failed" not in m]
            share = re.search(r"([0-9.]+) of cuBLASLt's plain product", gen[0]) if gen else None
            gen_share = float(share.group(1)) if share else float("nan")
            plan = plan[plan.find("fused plan:"):] if "fused plan:" in plan else plan
            if g["verdict"] != "pass":
                plan += f" [fusescan: {g['verdict']}]"
            print(f"{name:<16} {t:>6} {eager:9.4f} {comp:9.4f} {auto:9.4f} {plain:9.4f} {g['unfused_ms']:10.4f} {fs:9.4f} "
                  f"{op_ms:9.4f} {best / fs:7.3f} {best / op_ms:7.3f} {gen_share:12.3f}  {plan}")
            results.append({"row": name, "tokens": t, "eager_ms": eager, "compile_ms": comp, "max_autotune_ms": auto,
                            "plain_gemm_ms": plain, "fusescan_unfused_ms": g["unfused_ms"], "fusescan_fused_ms": fs,
                            "emitted_op_ms": op_ms, "best_over_fusescan": best / fs, "best_over_emitted_op": best / op_ms,
                            "generated_over_cublaslt": gen_share, "plan": g.get("matrix_products", "")})
            sys.stdout.flush()
    with open(os.path.join(a.out, "bench_gemm.json"), "w") as f:
        json.dump(results, f, indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
