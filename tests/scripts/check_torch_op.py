#!/usr/bin/env python3
"""The PyTorch op --emit writes, on the GPU, for every chain of the benchmark
(scripts/torch_chains.py; the test fixtures' dumps): fusescan tunes it at
buckets 1, 16, 256 and 4096 and emits it; then, at token counts 1, 3, 17,
100, 256, 1000, 4096, 5000 and 16384 (1, 256 and 4096 a bucket's own size,
where the op must take that bucket's exact-size kernel; the last two past the
largest bucket), the op's outputs, written into outputs poisoned with NaN, must be finite and within
the verdict's bound of a float64 reference (at most 3x eager's error + 1e-5,
eager and the reference computed chunk by chunk along the rows; softmax
also under a causal mask of -inf at 256, 1000 and 4096 tokens); the op
path equals the launch path; its outputs have eager's strides (RoPE's
[b, h, s, d] views of [b, s, h, d] memory); a wrong dtype, a CPU tensor and a wrong static
dim raise ValueError; an input 2 bytes off 16-byte alignment gives the same
outputs (the fallback kernel); the op runs under torch.compile (fullgraph) and inside
a captured CUDA graph, replayed on new inputs.
Then the regions with matrix products (tests/data/gemm, Llama-3-8B widths:
QKV, Qwen2's biased QKV, QKV + RoPE of q and k, gate / up + SwiGLU, the SwiGLU MLP, o_proj +
residual, addmm + bias + GELU-tanh, attention scores + softmax, mm + relu),
tuned at buckets 1, 16 and 256 and emitted (their products through
cuBLASLt): at 1, 3, 17, 100, 256, 1000 and 5000 tokens the same
checks of the region's outputs under each bucket's plan as tuned (at
1 and 256, each unbatched product under the algorithm tuned there, the
generated GEMM where it was chosen), then under each plan the op has at
every count (the products then the kernel; cuBLASLt's epilogue, where it
has the whole epilogue; each tactic of the generated GEMM it has, which
must run at every count where the device runs it); the same
errors, torch.compile and CUDA graph (replayed on new activations, the
weights kept); with room for 2 sizes, new sizes run in turn: the same
checks, and the op keeps 2 sizes' launch plans and cuBLASLt descriptors.
Exit 77 (skipped) without PyTorch or a GPU.
usage: check_torch_op.py FUSESCAN TESTS_DIR WORK_DIR [gemm (the regions with products alone)]"""
import json
import os
import subprocess
import sys

try:
    import torch
except ImportError:
    print("skipped: PyTorch is not installed")
    sys.exit(77)
if not torch.cuda.is_available():
    print("skipped: no CUDA device for PyTorch")
    sys.exit(77)
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import torch_chains as tc  # noqa: E402

exe, tests, work = sys.argv[1:4]
COUNTS = [1, 3, 17, 100, 256, 1000, 4096, 5000, 16384]  # 1, 256 and 4096: a bucket's exact-size kernel
BUCKETS = "1,16,256,4096"
GEMM_COUNTS, GEMM_BUCKETS = [1, 3, 17, 100, 256, 1000, 5000], "1,16,256"
P = ["--patterns", os.path.join(tests, "data", "gemm", "patterns")]


def gelu_tanh(x):
    return F.gelu(x, approximate="tanh")


def rope(q, cos, sin):
    """rotate-half RoPE, as Llama writes it"""
    return q * cos + torch.cat([-q[..., 64:], q[..., :64]], -1) * sin


# name, fusescan candidate, fixture (tests/data/gemm), its options, the region in PyTorch (its inputs by node name)
GEMM_CHAINS = [
    ("qkv", "parallel_gemm", "qkv", [], lambda x, wq, wk, wv: (F.linear(x, wq), F.linear(x, wk), F.linear(x, wv))),
    ("qkv_bias", "parallel_gemm", "qkv_bias", [],
     lambda x, wq, bq, wk, bk, wv, bv: (F.linear(x, wq, bq), F.linear(x, wk, bk), F.linear(x, wv, bv))),
    ("gate_up_swiglu", "gate_up_swiglu", "gate_up", P, lambda x, wg, wu: F.silu(F.linear(x, wg)) * F.linear(x, wu)),
    ("mlp", "pattern:swiglu", "mlp", [], lambda x, wg, wu, wd: F.linear(F.silu(F.linear(x, wg)) * F.linear(x, wu), wd)),
    ("qkv_rope", "pattern:qkv_rope", "qkv_rope", [], lambda x, wq, wk, wv, cos, sin: (
        F.linear(x, wv), rope(F.linear(x, wq).view(1, -1, 32, 128).transpose(1, 2), cos, sin),
        rope(F.linear(x, wk).view(1, -1, 8, 128).transpose(1, 2), cos, sin))),
    ("oproj_residual", "gemm_residual", "oproj_residual", P, lambda x, w, r: r + F.linear(x, w)),
    ("addmm_gelu", "gemm_bias_gelu_tanh", "addmm_gelu", P, lambda x, b, w: gelu_tanh(torch.addmm(b, x, w))),
    ("bmm_softmax", "bmm_softmax", "bmm_softmax", P, lambda q, k: torch.softmax(torch.bmm(q, k.transpose(1, 2)), -1)),
    ("mm_relu", "mm_relu", "mm_relu", P, lambda x, w: torch.relu(torch.mm(x, w.t()))),
]
CHUNK = 1 << 28  # float64 bytes of the reference per chunk of rows
passed = failed = 0


def ok(what, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what} {detail}", flush=True)


def token_dim(t, n):
    """the dim of t that runs over the n tokens: the last one of size n but
    the innermost (q's projection [b, s, h, d], cos [1, 1, s, d], scores
    [b, h, s, s]'s rows), or None (a weight)"""
    return next((d for d in range(t.dim() - 2, -1, -1) if t.shape[d] == n), None)


def take(t, n, sl):
    d = token_dim(t, n)
    return t if d is None else t.narrow(d, sl.start, min(sl.stop, n) - sl.start)


def errors(fn, args, outs, n):
    """max abs error of outs and of eager against the float64 reference,
    chunked along the n tokens"""
    per_token = max(1, sum(a.numel() // n for a in args if token_dim(a, n) is not None) * 8)
    rows = max(1, CHUNK // per_token)
    e_op = e_eager = 0.0
    with torch.no_grad():
        for at in range(0, n, rows):
            sl = slice(at, at + rows)
            part = [take(a, n, sl) for a in args]
            ref = tc.listify(fn(*[a.double() for a in part], acc=torch.float64))
            eager = tc.listify(fn(*part))
            for o, r, e in zip(outs, ref, eager):
                o = take(o, n, sl)
                e_op = max(e_op, (o.double() - r).abs().max().item())
                e_eager = max(e_eager, (e.double() - r).abs().max().item())
            del ref, eager
    return e_op, e_eager


def main():
    gen = torch.Generator(device="cuda").manual_seed(3)
    os.makedirs(work, exist_ok=True)
    for name, cand, _, fixture, fn in tc.CHAINS if sys.argv[4:] != ["gemm"] else []:
        op, names = emitted(name, cand, os.path.join(tests, "data", fixture, "001_export_export_to_gm.txt"), BUCKETS)
        if not op:
            continue
        desc = op.DESC
        for t in COUNTS:
            args, ins = tc.draw_inputs(op, names, t, gen)
            kernel = op.pick(tc.symbols_at(op, t))[0].entry
            if t in (1, 256, 4096):
                ok(f"{name} at {t} tokens: the bucket's exact-size kernel", kernel == f"fs_e{t}", kernel)
            outs = launch_and_check(f"{name} at {t} tokens ({kernel})", op, fn, args, ins, t)
            if name == "softmax" and t in (256, 1000, 4096):
                check_causal(name, op, fn, names, t, gen)
            if t == 17:
                y = tc.listify(getattr(torch.ops.fusescan, desc["name"])(*ins))
                ok(f"{name}: the op equals the launch", all(torch.equal(a, b) for a, b in zip(y, outs)))
                with torch.no_grad():
                    want = tc.listify(fn(*args))
                ok(f"{name}: the op's outputs have eager's strides", all(same_layout(a, b) for a, b in zip(y, want)),
                   [(a.stride(), b.stride()) for a, b in zip(y, want)])
                check_errors(name, op, ins)
                check_compile_and_graph(name, op, ins, names, gen)
                check_misaligned(name, op, fn, names, gen, 0)
            del args, ins, outs
            torch.cuda.empty_cache()
    for name, cand, fixture, opts, region in GEMM_CHAINS:
        gemm_chain(gen, name, cand, fixture, opts, region)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def emitted(name, cand, dump, buckets, opts=()):
    """fusescan --apply CAND --tokens 16 --buckets BUCKETS --emit on dump: the
    op's module, imported, and the region's input names (None, None where it
    failed); every bucket tuned"""
    out = os.path.join(work, name)
    r = subprocess.run([exe, "--apply", cand, "--tokens", "16", "--buckets", buckets, "--no-render", "--out", out,
                        "--emit", os.path.join(out, "emit"), dump, *opts], capture_output=True, text=True)
    ok(f"{name}: fusescan --emit", r.returncode == 0, r.stdout[-1500:] + r.stderr[-1500:])
    if r.returncode:
        return None, None
    j = json.load(open(os.path.join(out, "numerics.json")))
    op = tc.load_op(j)
    ok(f"{name}: every bucket tuned", all(b["tuned"] for b in op.DESC["buckets"]), op.DESC["buckets"])
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_emit.py"),
                        os.path.join(out, "emit"), "--tuned", "--buckets", buckets], capture_output=True, text=True)
    ok(f"{name}: check_emit.py accepts the descriptor", r.returncode == 0, r.stdout[-1500:] + r.stderr[-1500:])
    return op, tc.input_names(j)


def gemm_chain(gen, name, cand, fixture, opts, region):
    """a region with matrix products: emitted, then checked at GEMM_COUNTS under
    each bucket's tuned plan, then under every plan the op has"""
    op, names = emitted(name, cand, os.path.join(tests, "data", "gemm", fixture + ".txt"), GEMM_BUCKETS, opts)
    if not op:
        return
    desc = op.DESC

    def fn(*a, acc=None):
        return region(**dict(zip(names, a)))
    print(f"{name}: plans {[(b['tokens'], b['plan']) for b in desc['buckets']]}", flush=True)
    plans = [None] + (["kernel"] if desc["kernels"] else []) + (["epilogue"] if "epilogue" in desc else []) + \
        [("generated", i) for i in range(len(desc["generated"]["kernels"]) if "generated" in desc else 0)]
    for plan in plans:
        if plan:  # every bucket under one plan: the products then the kernel, cuBLASLt's epilogue, a generated GEMM
            plan, generated = plan if isinstance(plan, tuple) else (plan, None)
            op._BUCKETS[:] = [(b[0], b[1], b[2], plan, b[4], generated) for b in op._BUCKETS]
            op._launches.clear()
            op.PATHS.clear()
        for t in GEMM_COUNTS:
            args, ins = tc.draw_inputs(op, names, t, gen)
            outs = launch_and_check(f"{name} at {t} tokens ({op.pick(tc.symbols_at(op, t))[1]})", op, fn, args, ins, t)
            if t == 17 and not plan:
                y = tc.listify(op._results(getattr(torch.ops.fusescan, desc["name"])(*ins)))
                ok(f"{name}: the op equals the launch", all(torch.equal(a, b) for a, b in zip(y, outs)))
                ok(f"{name}: the module's function equals the op", all(
                    torch.equal(a, b) for a, b in zip(tc.listify(getattr(op, desc["name"])(*ins)), outs)))
                check_errors(name, op, ins)
                check_compile_and_graph(name, op, ins, names, gen)
            del args, ins, outs
        if not plan:  # at a bucket's own count, each product runs the cuBLASLt algorithm tuned there, and the
            # generated GEMM runs where it was chosen
            paths = {km: how for km, how in op.gemm_paths().items() if km[1] in (1, 256) and "batched" not in how}
            ok(f"{name}: the tuned cuBLASLt algorithms and generated GEMM run at the buckets",
               all(h == "tuned" or h.startswith("the generated GEMM ") for h in paths.values()), paths)
            ins_names = [n for n, *_ in op._INPUTS]  # a product's input misaligned
            check_misaligned(name, op, fn, names, gen, next((ins_names.index(p.a) for p in op._PRODUCTS if p.a in ins_names), 0))
            check_sizes_kept(name, op, fn, names, gen)
        elif plan == "generated":  # it runs wherever the device runs its tactic, else the products then the kernel
            k = desc["generated"]["kernels"][generated]
            runs = not k["sm_90a"] or torch.cuda.get_device_capability() == (9, 0)
            ran = {km: how for km, how in op.gemm_paths().items() if km[0] == "generated" and km[1] in GEMM_COUNTS}
            ok(f"{name}: generated GEMM {k['tactic']} {'ran' if runs else 'gave way to the kernel'} at every count",
               len(ran) == len(GEMM_COUNTS) and all((h == "the generated GEMM " + k["tactic"]) == runs for h in ran.values()), ran)
            check_misaligned(name, op, fn, names, gen, [n for n, *_ in op._INPUTS].index(op._GENERATED.product.a))
    torch.cuda.empty_cache()


def same_layout(a, b):
    """a and b have one shape and lie in memory alike (a dim of 1 has no stride)"""
    return a.shape == b.shape and all(n == 1 or x == y for n, x, y in zip(a.shape, a.stride(), b.stride()))


def launch_and_check(what, op, fn, args, ins, t):
    """the op at t tokens into outputs poisoned with NaN: every output
    written and finite, and the region's outputs (columns of a product's
    output as views of it) within 3x eager's error + 1e-5 of the float64
    reference (in the function's order); returns the region's outputs"""
    outs = [torch.empty_strided(shape, strides, dtype=dtype, device="cuda").fill_(float("nan"))
            for shape, dtype, strides in op._output_shapes(tc.symbols_at(op, t))]  # laid out as the op's own
    op.launch(*ins, out=tuple(outs))
    torch.cuda.synchronize()
    ok(f"{what}: every output written, finite", all(torch.isfinite(o).all().item() for o in outs))
    outs = tc.listify(op._results(tuple(outs) if len(outs) > 1 else outs[0]))
    e_op, e_eager = errors(fn, args, outs, t)
    ok(f"{what}: error {e_op:.3e} <= 3 x eager's {e_eager:.3e} + 1e-5", e_op <= 3 * e_eager + 1e-5)
    print(f"{what}: max abs error {e_op:.3e}  eager {e_eager:.3e}", flush=True)
    return outs


def check_causal(name, op, fn, names, t, gen):
    """a causal mask of -inf (row i sees keys 0..i): the first rows' keys are
    nearly all -inf, whole parts of a row a thread holds"""
    args, ins = tc.draw_inputs(op, names, t, gen)
    mask = args[1]
    mask.copy_(torch.full(mask.shape[-2:], float("-inf"), device="cuda").triu(1).expand_as(mask))
    launch_and_check(f"{name} at {t} tokens, causal -inf mask", op, fn, args, ins, t)


def check_sizes_kept(name, op, fn, names, gen):
    """room for 2 sizes, three sizes not run before, then the first again:
    the oldest launch plans and cuBLASLt descriptors go (destroyed) and come
    back, the outputs stay right, the caches hold 2"""
    kept, op._SIZES_KEPT = op._SIZES_KEPT, 2
    try:
        for t in (2, 5, 9, 2):
            args, ins = tc.draw_inputs(op, names, t, gen)
            launch_and_check(f"{name} at {t} tokens, 2 sizes kept", op, fn, args, ins, t)
        held = [len(op._launches)] + [len(p._lt) for p in op._PRODUCTS + ([op._EPILOGUE] if op._EPILOGUE else [])]
        ok(f"{name}: the op keeps 2 sizes' plans and descriptors", max(held) <= 2, held)
    finally:
        op._SIZES_KEPT = kept


def check_misaligned(name, op, fn, names, gen, i, t=17):
    """the op's input i 16-byte misaligned (contiguous, 2 bytes in): the
    vectorised kernels, TMA and cuBLASLt's algorithms cannot read it, so the
    op runs the fallback kernel, PyTorch's GEMM, and the products before the
    kernel instead of the generated GEMM; the outputs stay right"""
    args, ins = tc.draw_inputs(op, names, t, gen)
    x = ins[i]
    ins[i] = torch.empty(x.numel() + 8, dtype=x.dtype, device=x.device)[1:1 + x.numel()].view(x.shape).copy_(x)
    op.PATHS.clear()
    launch_and_check(f"{name} at {t} tokens, input '{op._INPUTS[i][0]}' misaligned", op, fn, args, ins, t)

    def reads(key):  # the product (or the generated GEMM) reads the misaligned input
        p = op._EPILOGUE if key == "epilogue" else op._GENERATED.product if key == "generated" else op._PRODUCTS[key]
        return p.a == op._INPUTS[i][0]
    bad = {k: h for k, h in op.gemm_paths().items() if reads(k[0]) and not (
        "not 16-byte aligned" in h if k[0] == "generated" else h.startswith("PyTorch's GEMM: "))}
    ok(f"{name}: a misaligned input runs no cuBLASLt algorithm, no generated GEMM", not bad, bad)


def raises(what, f):
    try:
        f()
    except ValueError as e:
        ok(what, "fusescan::" in str(e), str(e))
        return
    ok(what, False, "(no ValueError)")


def check_errors(name, op, ins):
    o = getattr(torch.ops.fusescan, op.DESC["name"])
    raises(f"{name}: wrong dtype", lambda: o(*[ins[0].float()] + ins[1:]))
    raises(f"{name}: CPU tensor", lambda: o(*[ins[0].cpu()] + ins[1:]))
    # a static dim changed: the first input with one
    for i, t in enumerate(op.DESC["inputs"]):
        d = next((k for k, x in enumerate(t["shape"]) if isinstance(x, int) and x > 1), None)
        if d is not None:
            shape = list(ins[i].shape)
            shape[d] += 1
            bad = torch.ones(shape, dtype=ins[i].dtype, device="cuda")
            raises(f"{name}: wrong static dim", lambda: o(*ins[:i] + [bad] + ins[i + 1:]))
            break


def check_compile_and_graph(name, op, ins, names, gen):
    o = getattr(torch.ops.fusescan, op.DESC["name"])
    want = tc.listify(o(*ins))
    torch._dynamo.reset()  # one compiled lambda per chain, not recompiles of one
    compiled = torch.compile(lambda *a: o(*a), fullgraph=True, dynamic=False)
    got = tc.listify(compiled(*ins))
    ok(f"{name}: under torch.compile", all(torch.equal(a, b) for a, b in zip(got, want)))
    static = [x.clone() for x in ins]
    # new activations (a region with products: its weights kept, as serving keeps them)
    redraw = [x for x, t in zip(static, op.DESC["inputs"]) if not op.DESC["products"] or any(isinstance(d, str) for d in t["shape"])]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        o(*static)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        captured = tc.listify(o(*static))
    for x in redraw:
        x.uniform_(-2, 2, generator=gen)
    g.replay()
    torch.cuda.synchronize()
    want = tc.listify(o(*static))
    ok(f"{name}: inside a CUDA graph", all(torch.equal(a, b) for a, b in zip(captured, want)))


if __name__ == "__main__":
    main()
