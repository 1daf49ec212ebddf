#!/usr/bin/env python3
"""torch.compile's own GeGLU-tanh and SwiGLU kernels at Llama-3-8B widths, alone.

For each token count: the compiled function's time a call (median of 30
replays of a CUDA graph of 4 calls) with its inputs placed at several offsets
inside larger buffers, then the first placement five times again (drift); and
the Triton kernels torch.compile's autotuning chose among (PTX, TTGIR, config
JSON) and inductor's generated Python, copied to OUT. It answers where
torch.compile's time at the copy bandwidth comes from: its kernel's shape,
the inputs' placement, or the process. Needs a GPU; no fusescan involved.

  python3 scripts/torch_pointwise_probe.py OUT [--tokens 4096,8192]
"""
import argparse
import glob
import os
import shutil
import tempfile

CACHE = tempfile.mkdtemp(prefix="fs_probe_")
os.environ["TRITON_CACHE_DIR"] = os.path.join(CACHE, "triton")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(CACHE, "inductor")
import torch  # noqa: E402  (after the cache directories are set)
from bench_torch import graph_of  # noqa: E402  (scripts/, beside this file)
from torch_chains import geglu_tanh, swiglu  # noqa: E402

WIDTH = 14336  # Llama-3-8B's MLP width
PLACEMENTS = ((0, 0), (0, 1024), (0, 32768), (0, 1 << 20), (4096, 0), (1 << 19, 3 << 19), (0, 4 << 20))  # elements


def us_per_call(fn, args, calls=4, replays=30):
    """median over replays of one CUDA graph of `calls` calls (bench_torch's graph_of)"""
    g = graph_of(lambda c: fn(*c), [args], calls, torch.cuda.graph_pool_handle())
    for _ in range(3):
        g.replay()
    times = []
    for _ in range(replays):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / calls)
    return sorted(times)[replays // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--tokens", default="4096,8192")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    spare = max(off for pair in PLACEMENTS for off in pair)
    for tokens in (int(t) for t in args.tokens.split(",")):
        n = tokens * WIDTH
        big_a = torch.randn(n + spare, device="cuda").to(torch.bfloat16)
        big_b = torch.randn(n + spare, device="cuda").to(torch.bfloat16)
        for name, fn in (("geglu_tanh", geglu_tanh), ("swiglu", swiglu)):
            compiled = torch.compile(fn, dynamic=False)
            row = []
            for off_a, off_b in PLACEMENTS:
                a, b = big_a[off_a:off_a + n].view(tokens, WIDTH), big_b[off_b:off_b + n].view(tokens, WIDTH)
                row.append(f"a+{off_a} b+{off_b}: {us_per_call(compiled, (a, b)):.2f}")
            print(f"{name} {tokens} tokens, us a call by placement (elements): " + ", ".join(row), flush=True)
        compiled = torch.compile(geglu_tanh, dynamic=False)
        a, b = big_a[:n].view(tokens, WIDTH), big_b[:n].view(tokens, WIDTH)
        print(f"geglu_tanh {tokens} tokens, placement 0/0 five times: " +
              " ".join(f"{us_per_call(compiled, (a, b)):.2f}" for _ in range(5)), flush=True)
        del big_a, big_b
    for path in glob.glob(os.path.join(CACHE, "triton", "**", "*"), recursive=True):
        if os.path.isfile(path) and path.endswith((".ptx", ".ttgir", ".json", ".source")):
            shutil.copy(path, os.path.join(args.out, os.path.basename(os.path.dirname(path))[:10] + "_" + os.path.basename(path)))
    for path in glob.glob(os.path.join(CACHE, "inductor", "**", "*.py"), recursive=True):
        shutil.copy(path, os.path.join(args.out, "inductor_" + os.path.basename(path)))
    shutil.rmtree(CACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
