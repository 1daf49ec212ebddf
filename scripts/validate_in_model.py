#!/usr/bin/env python3
"""The fusion inside the whole model (GPU machine): export an architecture as
scripts/export_dumps.py does, with seeded random bf16 weights on the GPU;
write its dump; `fusescan --apply ID... --emit DIR` on that dump (the
descriptors name every site each emitted op replaces, by node name); replace
those sites in the exported graph with the ops; run the original and the
rewritten model on the same tokens and report

  - replaced sites against fusescan's `[SUMMARY] matches=N` (must be equal);
  - (--train-steps N: first N AdamW steps on a synthetic language, whose
    successor rule gives peaked logits as a trained model's; seeded random
    weights give flat logits, where any rounding flips the top-1 of some
    positions: the original's own top-1 against float32 says how many)
  - logits against the original's and against a float32 run of the original
    (the rounding yardstick: the original's own error against float32);
    top-1 agreement with the original and, as the yardstick, of the original
    with float32;
  - time per forward at a prefill and a 1-token step, eager and under
    torch.compile, each side replayed from a CUDA graph of several calls,
    interleaved rounds: medians, and the median of the rounds' ratios with
    its 95% interval (faster, slower, or a tie within noise); and where
    each of those forwards spends its GPU time, by kind of kernel (GEMM,
    attention, fusescan's, Inductor's, the rest, the gaps between);
  - with --causal-mask: every attention whose mask fusescan proves causal
    (discovery's causal_mask cleanups) passes is_causal=True instead, and the
    nodes that only built the mask go (the flash path): as many as fusescan
    says (they must be equal);
  - with --scaffold (`fusescan --apply ... --scaffold DIR`): each
    candidate's transform scaffold; its search functions, run on the exported
    graph with torch.fx, match exactly the sites fusescan replaced for it,
    and its tests pass (micrographs that must and must not fuse, the
    replacement's numerics on the GPU).

  python3 scripts/validate_in_model.py --fusescan build/fusescan --arch llama --layers 4 \\
      --set hidden_size=4096 --set intermediate_size=14336 ... \\
      --apply add_rmsnorm --apply rmsnorm --apply rope_rotate_half --apply swiglu --work /tmp/vm

Exit 0 when every check holds (counts equal, top-1 agreement at least
--min-top1, logits error within 2x the yardstick's, the scaffold's sites
equal), 1 otherwise. Timing is reported, not gated.
"""

import argparse
import copy
import glob
import importlib.util
import json
import operator
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_dumps  # noqa: E402
from bench_torch import interleaved  # noqa: E402 (the rounds' order shuffled, as the benchmark times)

import torch  # noqa: E402


def log(*a):
    print(*a, flush=True)


def bigram_language(cfg, seed):
    """a synthetic language: 4096 words of the vocabulary, each followed by its
    own successor 9 times in 10 and by a random word otherwise; -> draw(batch,
    length): token ids"""
    g = torch.Generator(device="cuda").manual_seed(seed + 2)
    words = torch.randperm(cfg.vocab_size, device="cuda", generator=g)[:min(4096, cfg.vocab_size)]
    succ = torch.zeros(cfg.vocab_size, dtype=torch.long, device="cuda")
    succ[words] = words[torch.randperm(len(words), device="cuda", generator=g)]

    def draw(batch, length):
        out = torch.empty(batch, length, dtype=torch.long, device="cuda")
        cur = words[torch.randint(0, len(words), (batch,), device="cuda", generator=g)]
        for i in range(length):
            out[:, i] = cur
            jump = torch.rand(batch, device="cuda", generator=g) < 0.1
            cur = torch.where(jump, words[torch.randint(0, len(words), (batch,), device="cuda", generator=g)], succ[cur])
        return out
    return draw


def train(model, draw, steps):
    """a few AdamW steps in float32 on the synthetic language, so the logits
    are peaked as a trained model's are (random weights give flat logits,
    whose top-1 flips with any rounding); back to bf16. -> the last loss"""
    model.float().train()
    torch.backends.cuda.matmul.allow_tf32 = True
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.0)
    loss = None
    for step in range(steps):
        x = draw(8, 256)
        loss = model(input_ids=x, labels=x).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 50 == 0 or step == steps - 1:
            log(f"  train step {step}: loss {loss.item():.3f}")
    del opt
    torch.backends.cuda.matmul.allow_tf32 = False
    model.to(torch.bfloat16).eval()
    torch.cuda.empty_cache()
    return loss.item()


def export_model(a):
    """(HF model bf16 on the GPU, its exported graph module, the tokens to
    run: the synthetic language's when trained, else uniform)"""
    torch.manual_seed(a.seed)
    model, cfg = export_dumps.build(a.arch, a.layers, a.set, device="cuda")
    if a.train_steps:
        draw = bigram_language(cfg, a.seed)
        train(model, draw, a.train_steps)
        ids = draw(1, a.tokens)
    else:
        gen = torch.Generator(device="cuda").manual_seed(a.seed + 1)
        ids = torch.randint(0, cfg.vocab_size, (1, a.tokens), device="cuda", generator=gen)
    ep = export_dumps.export(model, "cuda")
    if a.flavour == "decomposed":
        ep = ep.run_decompositions()
    try:  # the guards pin the sizes export saw to ranges (batch and length >= 2); the 1-token step needs neither
        gm = ep.module(check_guards=False)
    except TypeError:
        gm = ep.module()
    return model, cfg, gm, ids


def fusescan(a, dump, apply, out, ops, scaffold=None):
    """fusescan --apply ... --emit OPS [--scaffold DIR] on the dump, its
    outputs emptied first; exits on failure"""
    for d in (out, ops) + ((scaffold,) if scaffold else ()):
        for f in glob.glob(os.path.join(d, "*")):
            os.remove(f)
    cmd = [a.fusescan]
    for x in apply:
        cmd += ["--apply", x]
    if a.patterns:
        cmd += ["--patterns", a.patterns]
    cmd += ["--no-render", "--tokens", str(a.tokens), "--buckets", f"1,{a.tokens}", "--out", out, "--emit", ops]
    if scaffold:
        cmd += ["--scaffold", scaffold]
    cmd.append(dump)
    log("$ " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write("".join(f"  | {l}\n" for l in r.stdout.splitlines() if re.search(r"SUMMARY|skipped|verdict|emitted|site %", l)))
    if r.returncode != 0:
        sys.exit(f"validate_in_model: fusescan exited {r.returncode}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")


def run_fusescan(a, dump):
    """every --apply at once (the ops replacing the sites); then, with
    --scaffold, the candidates whose ops hold no matrix product again, with
    their scaffolds (fusescan writes transforms of kernels alone)"""
    apply_dir, ops = os.path.join(a.work, "apply"), os.path.join(a.work, "ops")
    fusescan(a, dump, a.apply, apply_dir, ops)
    summary = open(os.path.join(apply_dir, "summary.txt")).read()
    matches = int(re.search(r"matches=(\d+)", summary).group(1))
    descs = []
    for path in sorted(glob.glob(os.path.join(ops, "*.json"))):
        j = json.load(open(path))
        spec = importlib.util.spec_from_file_location(j["name"], os.path.join(ops, j["module"]))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)  # registers torch.ops.fusescan.<name>
        descs.append((j, getattr(torch.ops.fusescan, j["name"]).default))
        MODULES.append(mod)
    if a.scaffold:
        products = {j["candidate"] for j, _ in descs if j["products"]}
        kernels = [x for x in a.apply if re.sub(r"-[0-9a-f]{8}$", "", re.sub(r"^pattern:", "", x)) not in products]
        if kernels:
            fusescan(a, dump, kernels, os.path.join(a.work, "apply_scaffold"), os.path.join(a.work, "ops_scaffold"),
                     os.path.join(a.work, "scaffold"))
    return matches, summary.strip(), descs


MODULES = []  # the ops' modules


def causal_masks(a, dump):
    """([(attention node, its mask node)] that fusescan proves causal: the
    causal_mask cleanups of `fusescan discover --format json`, the nodes it
    says only build those masks)"""
    cmd = [a.fusescan, "discover", "--format", "json", dump]
    log("$ " + " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"validate_in_model: fusescan discover exited {r.returncode}:\n{r.stderr[-3000:]}")
    analyses = json.loads(r.stdout)["analyses"]
    return ([(c["node"], c["other"]) for an in analyses for c in an["cleanups"] if c["kind"] == "causal_mask"],
            sum(an["causal_mask_frees"] for an in analyses))


def drop_causal_masks(gm, pairs):
    """each listed attention (SDPA) reads no mask and says is_causal=True; the
    nodes that only built the masks go, and the asserts about them.
    -> nodes erased (asserts aside)"""
    graph = gm.graph
    nodes = {n.name: n for n in graph.nodes}
    sdpa = torch.ops.aten.scaled_dot_product_attention.default
    cone = set()
    for att, mask in pairs:
        n, m = nodes.get(att), nodes.get(mask)
        if n is None or n.target != sdpa or len(n.args) < 4 or n.args[3] is not m or any(
                x is True for x in n.args[5:6]) or {"attn_mask", "dropout_p", "is_causal"} & set(n.kwargs):
            raise SystemExit(f"validate_in_model: {att} is no SDPA reading {mask} as its mask")
        args = list(n.args[:4]) + [n.args[4] if len(n.args) > 4 else 0.0, True]
        args[3] = None
        n.args = tuple(args)
        todo = [m]
        while todo:  # what the mask was built from
            x = todo.pop()
            if x not in cone and x.op == "call_function":
                cone.add(x)
                todo.extend(x.all_input_nodes)
    erased = 0
    for x in reversed(list(graph.nodes)):  # readers before what they read
        if x in cone and x.users and all("_assert" in str(u.target) for u in x.users):
            for u in list(x.users):
                graph.erase_node(u)
        if x in cone and not x.users:
            graph.erase_node(x)
            erased += 1
    graph.lint()
    gm.recompile()
    return erased


def gemm_paths():
    """how the ops' matrix products ran, counted: {"tuned": n, "heuristic: ...": n, ...}"""
    count = {}
    for mod in MODULES:
        for how in mod.gemm_paths().values():
            count[how] = count.get(how, 0) + 1
    return count


def replace_sites(gm, descs):
    """a new graph module over gm's weights with every site of every op
    replaced: the op reads the site's inputs and its outputs take the users
    of the site's outputs (an output that is columns of the op's one output,
    a narrow of it); the site's nodes (and asserts about them) go. Then,
    every op's inputs being final whatever order the ops were replaced in,
    an input is made contiguous where it is not: the exported strides say
    so, or it is such a column or a view of one (QKV's q into heads).
    -> (module, sites replaced, contiguous copies inserted, per candidate {sites})"""
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(gm.graph, {}))
    graph._codegen = copy.deepcopy(gm.graph._codegen)  # export's pytree calling convention
    nodes = {n.name: n for n in graph.nodes}
    columns = set()  # narrows of an op's output: strided
    views = (torch.ops.aten.view.default, torch.ops.aten._unsafe_view.default, torch.ops.aten.reshape.default,
             torch.ops.aten.transpose.int, torch.ops.aten.permute.default, torch.ops.aten.unsqueeze.default,
             torch.ops.aten.squeeze.dim, torch.ops.aten.slice.Tensor, torch.ops.aten.select.int, torch.ops.aten.expand.default)

    def strided(n):  # a column view, or a view of one (q's view into heads)
        while n not in columns and isinstance(n, torch.fx.Node) and n.target in views and n.args:
            n = n.args[0]
        return n in columns
    replaced, copies, per, fused_ops = 0, 0, {}, []
    for j, op in descs:
        outputs = [t["name"] for t in j["outputs"]]
        cols = {v["name"]: v for v in j.get("views", [])}
        for site in j["sites"]:
            missing = [x for x in site["inputs"] + site["nodes"] if x not in nodes]
            if missing:
                raise SystemExit(f"validate_in_model: {j['candidate']}: node {missing[0]} of a site is not in the exported graph")
            order = {n: i for i, n in enumerate(graph.nodes)}  # the graph as it is now (linear per site)
            ins = [nodes[x] for x in site["inputs"]]
            outs = [nodes[x] for x in site["outputs"]]
            inside = {nodes[x] for x in site["nodes"]}
            after = max(ins, key=lambda n: order[n])
            for o in outs:
                for u in o.users:
                    if u not in inside and order[u] <= order[after]:
                        raise SystemExit(f"validate_in_model: {o.name} is read by {u.name} before the inputs of its site are all defined")
            made = [after]

            def add(fn, args):  # a node after the last one made
                with graph.inserting_after(made[-1]):
                    made.append(graph.call_function(fn, args))
                return made[-1]
            fused = add(op, tuple(ins))
            fused_ops.append(fused)
            got = [fused] if len(outputs) == 1 else [add(operator.getitem, (fused, i)) for i in range(len(outputs))]
            results = []
            for name in j["results"]:
                if name in cols:
                    v = cols[name]
                    r = add(torch.ops.aten.narrow.default, (got[outputs.index(v["of"])], -1, int(v["col"]), int(v["width"])))
                    columns.add(r)
                else:
                    r = got[outputs.index(name)]
                results.append(r)
            for o, r in zip(outs, results):
                r.meta = dict(o.meta)
                o.replace_all_uses_with(r, delete_user_cb=lambda u: u not in inside)
                nodes[o.name] = r  # a later site reading this output reads the op's
            for n in sorted(inside, key=lambda n: -order[n]):
                for u in list(n.users):
                    if u not in inside:  # an assert about a value that goes away
                        graph.erase_node(u)
                graph.erase_node(n)
            replaced += 1
            per.setdefault(j["candidate"], []).append(site)
    for f in fused_ops:
        args = list(f.args)
        for i, n in enumerate(args):
            val = n.meta.get("val")
            if strided(n) or (isinstance(val, torch.Tensor) and not val.is_contiguous()):
                with graph.inserting_before(f):
                    args[i] = graph.call_function(torch.ops.aten.contiguous.default, (n,))
                copies += 1
        f.args = tuple(args)
    graph.lint()
    return torch.fx.GraphModule(gm, graph), replaced, copies, per


def logits_of(out):
    out = out[0] if isinstance(out, (tuple, list)) else out
    return out.logits if hasattr(out, "logits") else out


def errors(x, ref):
    d = (x.float() - ref.float()).abs()
    return {"max_abs": d.max().item(), "rel_rms": (d.pow(2).mean().sqrt() / ref.float().pow(2).mean().sqrt()).item()}


def captured(fn, ids, calls):
    """a CUDA graph of `calls` forwards of fn on static ids, after 3 warm-up calls"""
    for _ in range(3):
        fn(ids)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn(ids)
    return g


def timed(fns, ids, calls, rounds):
    """ms per forward of each fn in each round: a CUDA graph of `calls`
    forwards on static ids per fn, replays interleaved over `rounds` rounds
    (bench_torch.interleaved: each round in a fresh order)"""
    graphs = [captured(fn, ids, calls) for fn in fns]
    times = [[t / calls for t in ts] for ts in interleaved([g.replay for g in graphs], rounds=rounds)]
    del graphs
    torch.cuda.empty_cache()
    return times


KINDS = [("GEMM", re.compile(r"gemm|gemv|nvjet|cutlass|xmma|cublas|splitk", re.I)),
         ("attention", re.compile(r"flash|fmha|attention|sdpa", re.I)),
         ("fusescan", re.compile(r"^fs_")),
         ("Inductor (Triton)", re.compile(r"^triton"))]


def breakdown(fn, ids, reps=5):
    """GPU time of one forward in a CUDA graph, by kind of kernel: the
    profiler's kernel records of `reps` replays (GEMM, attention, fusescan's
    kernels, Inductor's, everything else), ms per forward; -> {kind: ms},
    ms of the whole replay, kernels per forward"""
    g = captured(fn, ids, 1)
    g.replay()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            g.replay()
        end.record()
        torch.cuda.synchronize()
    kinds, count = {}, 0
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA or "memcpy" in e.name.lower() or "memset" in e.name.lower():
            continue
        kind = next((k for k, r in KINDS if r.search(e.name)), "other")
        kinds[kind] = kinds.get(kind, 0.0) + e.time_range.elapsed_us() / 1000 / reps
        count += 1
    del g
    return kinds, start.elapsed_time(end) / reps, count / reps


def ratio_ci(t0, t1):
    """the median of the rounds' t0 / t1 and its 95% interval (order
    statistics of the median)"""
    r = sorted(x / y for x, y in zip(t0, t1))
    n = len(r)
    k = max(0, int(n / 2 - 0.98 * n ** 0.5))
    return statistics.median(r), r[k], r[min(n - 1, n - 1 - k)]


def scaffold_checks(a, gm):
    """each scaffold's search functions on the exported graph (torch.fx): their
    matches, each the set of graph nodes it covers, against the sites fusescan
    found for that candidate (fuse_<name>.sites.json: before overlaps were
    resolved, as the transform alone would see the graph); then its tests
    (micrographs, the replacement's numerics).
    -> [(candidate, matches, fusescan's sites, equal, tests passed)]"""
    rows = []
    for path in sorted(glob.glob(os.path.join(a.work, "scaffold", "fuse_*.py"))):
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        got = {frozenset(n.name for n in m) for m in mod.find_sites(gm)}
        want = {frozenset(s) for s in json.load(open(path[:-3] + ".sites.json"))["sites"]}
        test = os.path.join(os.path.dirname(path), "test_" + os.path.basename(path))
        r = subprocess.run([sys.executable, test], capture_output=True, text=True)
        sys.stdout.write("".join(f"  | {l}\n" for l in (r.stdout + r.stderr).splitlines()[-8:]))
        rows.append((mod.CANDIDATE, len(got), len(want), got == want, r.returncode == 0))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fusescan", required=True)
    ap.add_argument("--arch", required=True, choices=sorted(export_dumps.ARCHS))
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--set", action="append", default=[], type=export_dumps.config_field, metavar="KEY=INT")
    ap.add_argument("--apply", action="append", required=True, metavar="ID", help="candidate or pattern (repeatable)")
    ap.add_argument("--causal-mask", action="store_true",
                    help="also drop every attention mask fusescan proves causal (is_causal=True instead)")
    ap.add_argument("--patterns", metavar="DIR", help="fusescan's --patterns: pattern files instead of the built-in library")
    ap.add_argument("--flavour", choices=("export", "decomposed"), default="export",
                    help="the graph to rewrite: the exported one (dump 001) or after run_decompositions (002)")
    ap.add_argument("--tokens", type=int, default=4096, help="the prefill's length (and the largest bucket)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scaffold", action="store_true",
                    help="also write each candidate's AutoDeploy scaffold; check its search functions and run its tests")
    ap.add_argument("--min-top1", type=float, default=0.999)
    ap.add_argument("--calls", type=int, default=5, help="forwards per CUDA graph")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--train-steps", type=int, default=0,
                    help="train this many steps on a synthetic language first (peaked logits, as a trained model's)")
    ap.add_argument("--no-compile", action="store_true", help="skip the torch.compile timings")
    ap.add_argument("--work", required=True, help="scratch directory: the dump, fusescan's outputs, the ops")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    os.makedirs(os.path.join(a.work, "dump"), exist_ok=True)

    model, cfg, gm, ids = export_model(a)
    name = ("001_export_export_to_gm.txt", "export_to_gm", "export") if a.flavour == "export" else \
        ("002_post_export_run_decompositions.txt", "run_decompositions", "post_export")
    dump = os.path.join(a.work, "dump", name[0])
    export_dumps.write_atomic(dump, export_dumps.print_graph(gm, name[1], name[2]))
    log(f"{a.arch}: {cfg.num_hidden_layers} layers, hidden {cfg.hidden_size}, vocab {cfg.vocab_size} -> {dump}")
    matches, summary, descs = run_fusescan(a, dump)
    new, replaced, copies, per = replace_sites(gm, descs)
    res = {"arch": a.arch, "layers": cfg.num_hidden_layers, "hidden": cfg.hidden_size, "tokens": a.tokens,
           "trained_steps": a.train_steps,
           "apply": a.apply, "summary": summary, "matches": matches, "replaced": replaced, "contiguous_copies": copies,
           "per_candidate": {k: len(v) for k, v in per.items()}, "ops": len(descs)}
    ok = replaced == matches
    log(f"sites replaced: {replaced} ({', '.join(f'{k} {len(v)}' for k, v in per.items())}) by {len(descs)} ops; "
        f"fusescan: matches={matches}: {'equal' if ok else 'DIFFERENT'}; {copies} contiguous copies inserted")
    if a.causal_mask:
        pairs, frees = causal_masks(a, dump)
        if not pairs:
            sys.exit("validate_in_model: --causal-mask: fusescan proves no attention mask causal in this graph")
        erased = drop_causal_masks(new, pairs)
        res["causal_masks"] = {"attentions": len(pairs), "nodes_erased": erased, "fusescan_frees": frees}
        ok = ok and erased == frees
        log(f"causal masks: {len(pairs)} attentions (mask {', '.join(sorted({m for _, m in pairs}))}) now is_causal=True; "
            f"{erased} nodes that only built the masks erased, fusescan: {frees}: {'equal' if erased == frees else 'DIFFERENT'}")

    with torch.no_grad():
        ref = logits_of(gm(ids))
        got = logits_of(new(ids))
        m32 = copy.deepcopy(model).float()
        y32 = logits_of(m32(input_ids=ids)).float()
        del m32
        torch.cuda.empty_cache()
    paths = gemm_paths()
    if paths:
        res["gemm_paths"] = paths
        log("matrix products in the ops (product, size): " + "; ".join(f"{n} {how}" for how, n in sorted(paths.items())))
    e_orig, e_new, e_pair = errors(ref, y32), errors(got, y32), errors(got, ref)
    top1 = (got.argmax(-1) == ref.argmax(-1)).float().mean().item()
    top1_yard = (ref.argmax(-1) == y32.argmax(-1)).float().mean().item()
    top1_new32 = (got.argmax(-1) == y32.argmax(-1)).float().mean().item()
    res.update({"logits_vs_fp32": {"original": e_orig, "rewritten": e_new}, "logits_vs_original": e_pair,
                "top1_vs_original": top1, "top1_original_vs_fp32": top1_yard, "top1_rewritten_vs_fp32": top1_new32})
    within = e_new["max_abs"] <= 2 * e_orig["max_abs"] and e_new["rel_rms"] <= 2 * e_orig["rel_rms"]
    ok = ok and top1 >= a.min_top1 and within
    log(f"logits over {a.tokens} tokens:")
    log(f"  {'':34s} {'max abs':>10s} {'rel rms':>10s}   top-1 agreement")
    log(f"  {'original bf16 vs float32':34s} {e_orig['max_abs']:10.4f} {e_orig['rel_rms']:10.2e}   {top1_yard:.4%} (yardstick)")
    log(f"  {'rewritten vs float32':34s} {e_new['max_abs']:10.4f} {e_new['rel_rms']:10.2e}   {top1_new32:.4%}")
    log(f"  {'rewritten vs original':34s} {e_pair['max_abs']:10.4f} {e_pair['rel_rms']:10.2e}   {top1:.4%}"
        f" ({'at least' if top1 >= a.min_top1 else 'BELOW'} {a.min_top1:.1%})")
    log(f"  rewritten error within 2x the yardstick's: {'yes' if within else 'NO'}")

    if a.scaffold:
        res["scaffold"] = []
        for cand, got_n, want_n, same, tests in scaffold_checks(a, gm):
            res["scaffold"].append({"candidate": cand, "search_matches": got_n, "fusescan_sites": want_n, "equal": same,
                                    "tests_pass": tests})
            ok = ok and same and tests
            log(f"scaffold fuse_{cand}: its search functions match {got_n} sites of the exported graph, fusescan "
                f"replaced {want_n}: {'the same nodes' if same else 'DIFFERENT'}; its tests: {'pass' if tests else 'FAIL'}")

    rows = []
    with torch.no_grad():
        for tokens in (a.tokens, 1):
            x = ids[:, :tokens].contiguous()
            sides = [("eager", gm, new)]
            if not a.no_compile:
                torch._dynamo.reset()
                # fullgraph: a graph break at a fused op is an error, not a silent split
                sides.append(("torch.compile", torch.compile(gm, dynamic=False, fullgraph=True),
                              torch.compile(new, dynamic=False, fullgraph=True)))
            for mode, f0, f1 in sides:
                r0, r1 = timed([f0, f1], x, a.calls, a.rounds)
                t0, t1 = statistics.median(r0), statistics.median(r1)
                sp, lo, hi = ratio_ci(r0, r1)
                word = "faster" if lo > 1 else "slower" if hi < 1 else "tie (within noise)"
                rows.append({"tokens": tokens, "mode": mode, "original_ms": t0, "rewritten_ms": t1, "speedup": sp,
                             "ci95": [lo, hi], "verdict": word})
                log(f"  {tokens:6d} tokens  {mode:14s} original {t0:9.4f} ms  rewritten {t1:9.4f} ms  "
                    f"{sp:6.3f}x [{lo:.3f}, {hi:.3f}]  {word}")
                for side, f in (("original", f0), ("rewritten", f1)):  # what the forward spends its time on
                    kinds, whole, count = breakdown(f, x)
                    rows[-1].setdefault("breakdown", {})[side] = {"kernels": count, "replay_ms": whole, "ms": kinds}
                    log(f"       {side:9s} {count:5.0f} kernels, {whole:.4f} ms a replay: " + ", ".join(
                        f"{k} {v:.4f}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])) +
                        f", between kernels {max(0.0, whole - sum(kinds.values())):.4f}")
    res["timing"] = rows
    res["ok"] = ok
    if a.json:
        export_dumps.write_atomic(a.json, json.dumps(res, indent=1) + "\n")
    log("in-model validation: " + ("pass" if ok else "FAIL"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
