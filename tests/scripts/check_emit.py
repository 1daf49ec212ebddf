#!/usr/bin/env python3
"""What --emit DIR wrote (format fusescan.kernel/3): the descriptor names its
PTX, source and module; the PTX holds every kernel's entry point (one per
distinct bucket tactic, and the fallback `fs_any`, 64-bit indices, no
requirements); every bucket names a kernel whose requirements hold at the
bucket's own size, and (symbolic dims) its exact-size kernel; each symbol is read from an
input dim whose shape is that symbol; the launch formulas read only the
symbols; every tensor the kernels' args, the products and the results name
is an input, an output, a buffer or a view of the op; a region with matrix
products alone has no kernel, PTX or source and its buckets run the
products; an output's "order" (a layout other than row-major) permutes its
dims and keeps the last innermost; the module compiles (py_compile) and registers fusescan::NAME.
A bucket's "cublaslt" (tuned buckets of regions with products) names a
cuBLASLt algorithm per product, and the epilogue's where the op has one;
its plan "generated" names a kernel of the descriptor's "generated" (the
generated GEMM: the product it replaces, its epilogue's buffers, one PTX
per tactic holding fs_gemm, sm_90a's where it says so).
--tuned: every bucket tuned on a GPU (of a region with products, each with
its cuBLASLt algorithms); else none is (the heuristic tactic).
--buckets LIST: the buckets expected.
Every descriptor in DIR is checked (one per distinct kernel among the sites
of the candidates applied); where a descriptor names the sites its op
replaces, each has as many inputs and outputs as the op, and no node is
replaced by two ops.
usage: check_emit.py DIR [--tuned] [--buckets 1,2,4]"""
import glob
import json
import os
import py_compile
import re
import sys


def holds(r, at):
    v = eval(r["dim"], {"__builtins__": {"max": max, "min": min}}, at)
    return v % r["multiple_of"] == 0 if "multiple_of" in r else v <= r["at_most"] if "at_most" in r else v == r["equals"]


def check(d, path, replaced):
    j = json.load(open(path))
    name = j["name"]
    assert j["format"] == "fusescan.kernel/3" and name.startswith("fs_") and j["op"] == "fusescan::" + name, j
    kernels = bool(j["kernels"])
    assert kernels or j["products"], "neither a kernel nor a product"
    for f in ("ptx", "source", "module"):
        if f == "module" or kernels:
            assert os.path.isfile(os.path.join(d, j[f])) and j[f].startswith(name), (f, j[f])
        else:
            assert j[f] is None, (f, j[f])
    entries = [k["entry"] for k in j["kernels"]]
    assert len(set(entries)) == len(entries), entries
    if kernels:
        ptx = open(os.path.join(d, j["ptx"])).read()
        assert ".target sm_" in ptx, ptx[:300]
        for e in entries:
            assert re.search(r"\.entry %s\(" % re.escape(e), ptx), f"no .entry {e} in the PTX"
        fb = j["kernels"][j["fallback"]]
        assert fb["entry"] == "fs_any" and fb["index_bits"] == 64 and not fb["requires"] and fb["tactic"].startswith("v1 "), fb
    else:
        assert j["fallback"] is None and not j["args"], j
    tensors = {t["name"] for t in j["inputs"] + j["outputs"] + j["buffers"]}
    assert len(tensors) == len(j["inputs"] + j["outputs"] + j["buffers"]), "two tensors of one name"
    assert all(a["tensor"] in tensors and a["offset"] >= 0 for a in j["args"]), j["args"]
    assert all(v["of"] in {t["name"] for t in j["outputs"]} and v["width"] > 0 for v in j["views"]), j["views"]
    assert set(j["results"]) <= tensors | {v["name"] for v in j["views"]} and j["results"], j["results"]
    for p in j["products"] + ([j["epilogue"]] if "epilogue" in j else []):
        named = [p["a"], p["out"]] + p["weights"] + p["biases"] + ([p["c"]] if "c" in p else [])
        assert set(named) <= tensors and p["weights"], p
    syms = [s["name"] for s in j["symbols"]]
    assert j["tokens"] == " * ".join(syms) or (not syms and j["tokens"] == "1"), j["tokens"]
    for s in j["symbols"]:
        t = j["inputs"][s["from"]["input"]]
        assert t["shape"][s["from"]["dim"]] == s["name"], (s, t)
    formula = re.compile(r"^[0-9A-Za-z_ ()+*/%,-]*$")
    for k in j["kernels"]:
        texts = [k["max_elements"], k["launch"]["grid"]["work"]] + [r["dim"] for r in k["requires"]]
        for r in k["requires"]:
            assert sorted(r) in (["dim", "multiple_of"], ["at_most", "dim"], ["dim", "equals"]) and min(
                r.get("multiple_of", 1), r.get("at_most", 1), r.get("equals", 1)) >= 1, r
        for t in texts:
            assert formula.match(t) and set(re.findall(r"[A-Za-z_]\w*", t)) <= set(syms) | {"max", "min"}, (t, syms)
        assert k["launch"]["block"][0] > 0 and k["launch"]["grid"]["per_block"] > 0, k
    for t in j["inputs"] + j["outputs"] + j["buffers"]:
        assert t["name"].isidentifier() and t["dtype"].startswith("torch."), t
        # a layout other than row-major: a permutation of the dims, the last innermost (the kernels' vectors)
        assert "order" not in t or (t in j["outputs"] and sorted(t["order"]) == list(range(len(t["shape"]))) and
                                    t["order"] != sorted(t["order"]) and t["order"][-1] == len(t["shape"]) - 1), t
        for dim in t["shape"]:
            assert isinstance(dim, int) or (formula.match(dim) and set(re.findall(r"[A-Za-z_]\w*", dim)) <= set(syms) | {"max", "min"}), t
    assert j["outputs"], j
    buckets = [b["tokens"] for b in j["buckets"]]
    assert buckets == sorted(buckets) and all(0 <= b.get("kernel", 0) < max(1, len(entries)) for b in j["buckets"]), j["buckets"]
    g = j.get("generated")
    assert all(b["plan"] == ("kernel" if kernels else "products") or (b["plan"] == "epilogue" and "epilogue" in j) or
               (b["plan"] == "generated" and g and 0 <= b["generated"] < len(g["kernels"])) for b in j["buckets"]), j["buckets"]
    if g:  # the generated GEMM: the product it replaces with the kernel, its epilogue's buffers, a PTX per tactic
        assert kernels and 0 <= g["product"] < len(j["products"]) and not j["products"][g["product"]]["after_kernel"], g
        assert g["members"] in (1, 2) and g["K"] % 8 == 0 and g["kernels"], g
        assert all(a["tensor"] in tensors and a["offset"] >= 0 for a in g["args"]), g["args"]
        assert any(b["plan"] == "generated" for b in j["buckets"]), j["buckets"]
        for k in g["kernels"]:
            assert k["ptx"].startswith(name + ".g") and k["entry"] == "fs_gemm", k
            text = open(os.path.join(d, k["ptx"])).read()
            assert re.search(r"\.entry fs_gemm\(", text) and (".target sm_90a" in text) == k["sm_90a"], k
            assert k["weight_rows"] >= g["columns"] * g["members"] and k["weight_rows"] % g["members"] == 0, k
    assert all(("kernel" in b) == kernels for b in j["buckets"]), j["buckets"]
    # every bucket's kernel serves its own bucket (batch 1: the last symbol the token count):
    # its requirements hold there
    # and its exact-size kernel (every symbol required equal; one per bucket, where the dims are symbolic)
    for b in j["buckets"] if kernels else []:
        at = {n: 1 for n in syms}
        if syms:
            at[syms[-1]] = b["tokens"]
        assert all(holds(r, at) for r in j["kernels"][b["kernel"]]["requires"]), (b, at)
        assert ("exact" in b) == bool(syms), b
        if syms:
            e = j["kernels"][b["exact"]]
            assert e["entry"] == "fs_e%d" % b["tokens"] and all(holds(r, at) for r in e["requires"]), (b, e)
            assert sorted(r["dim"] for r in e["requires"] if "equals" in r) == sorted(syms), e
            assert not all(holds(r, dict(at, **{syms[-1]: b["tokens"] + 1})) for r in e["requires"]), e
    # the cuBLASLt algorithms tuned at a bucket: one per product (64 bytes in hex), and the epilogue's
    for b in j["buckets"]:
        c = b.get("cublaslt")
        assert c is None or (b["tuned"] and j["products"] and c["version"] > 0 and len(c["products"]) == len(j["products"])
                             and all(re.fullmatch(r"[0-9a-f]{128}", h) for h in c["products"] + [c.get("epilogue", "0" * 128)])
                             and ("epilogue" in c) == ("epilogue" in j)), b
    if "--buckets" in sys.argv:
        want = [int(x) for x in sys.argv[sys.argv.index("--buckets") + 1].split(",")]
        assert buckets == want, (buckets, want)
    if "--tuned" in sys.argv:
        assert j["tuned_on"] and all(b["tuned"] and b["median_ms"] > 0 for b in j["buckets"]), j["buckets"]
        assert not j["products"] or all("cublaslt" in b for b in j["buckets"]), j["buckets"]
    else:
        assert not j["tuned_on"] and not any(b["tuned"] for b in j["buckets"]), j["buckets"]
    src = open(os.path.join(d, j["module"])).read()
    assert f'@torch.library.custom_op("fusescan::{name}"' in src and "@_op.register_fake" in src and "@" + "NAME@" not in src
    # the module reads the formulas checked above: the same grammar, max and min in its namespace
    assert f'_FORMULA = re.compile(r"{formula.pattern}")' in src and '"max": max, "min": min' in src
    py_compile.compile(os.path.join(d, j["module"]), cfile=os.path.join(d, "__check.pyc"), doraise=True)
    os.remove(os.path.join(d, "__check.pyc"))
    for site in j.get("sites", []):
        assert len(site["inputs"]) == len(j["inputs"]) and len(site["outputs"]) == len(j["results"]), (site, j["inputs"])
        assert set(site["outputs"]) <= set(site["nodes"]) and not set(site["inputs"]) & set(site["nodes"]), site
        assert not set(site["nodes"]) & replaced, ("replaced twice", site)
        replaced |= set(site["nodes"])
    if "sites" in j:
        assert j["candidate"] and j["graph"]["dump"] and j["sites"], j


d = sys.argv[1]
paths = sorted(glob.glob(os.path.join(d, "*.json")))
assert paths, f"no descriptor in {d}"
replaced = set()
for path in paths:
    check(d, path, replaced)
