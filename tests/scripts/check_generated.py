#!/usr/bin/env python3
"""Every module --emit OPS and --scaffold DIR wrote imports (a stub torch
stands in for PyTorch, which need not be installed) and runs nothing an
input smuggled in: a module that ran a payload would have created
PAYLOAD_RAN in the working directory. In each op module, the op's
parameters are distinct, no keyword, builtin or name of the module; each
dim formula of its descriptor compiles. Every scaffold module's CANDIDATE
is the candidate's name (one string literal).
usage: check_generated.py OPS_DIR SCAFFOLD_DIR"""
import ast
import builtins
import glob
import importlib.util
import json
import keyword
import os
import sys
import types


class _Any:
    """whatever the generated modules touch in torch at import"""

    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return a[0] if len(a) == 1 and callable(a[0]) and not k else _Any()

    def __getattr__(self, name):
        return _Any()

    def register_fake(self, fn):
        return fn


def stub_torch():
    torch = types.ModuleType("torch")
    torch.__getattr__ = lambda name: _Any()
    torch.library = types.SimpleNamespace(custom_op=lambda *a, **k: (lambda fn: _Any()))
    fx = types.ModuleType("torch.fx")
    fx.GraphModule = _Any
    torch.fx = fx
    sys.modules.update({"torch": torch, "torch.fx": fx})


def load(path):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def check_op(path):
    src = open(path).read()
    tree = ast.parse(src, path)
    own = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for n in tree.body:
        for t in (n.targets if isinstance(n, ast.Assign) else []):
            own |= {x.id for x in ast.walk(t) if isinstance(x, ast.Name)}
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            own |= {(a.asname or a.name).split(".")[0] for a in n.names}
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name in ("_op", "_")):
        params = [a.arg for a in fn.args.args]
        assert len(set(params)) == len(params), (path, params)
        bad = [p for p in params if keyword.iskeyword(p) or hasattr(builtins, p) or p in own or p.startswith("_")]
        assert not bad, (path, fn.name, bad)
    load(path)
    desc = json.load(open(path[:-3] + ".json"))
    for s in desc["symbols"]:
        assert s["name"].isidentifier() and not keyword.iskeyword(s["name"]), s
        compile(s["name"], "symbol", "eval")
    compile(desc["tokens"], "tokens", "eval")


def main():
    ops, scaffold = sys.argv[1:3]
    stub_torch()
    mods = sorted(glob.glob(os.path.join(ops, "fs_*.py")))
    assert mods, "no op module in " + ops
    for p in mods:
        check_op(p)
    fuse = sorted(glob.glob(os.path.join(scaffold, "fuse_*.py")))
    assert fuse, "no scaffold module in " + scaffold
    for p in fuse:
        mod = load(p)
        assert isinstance(mod.CANDIDATE, str) and mod.VARIANTS, p
        json.load(open(p[:-3] + ".sites.json"))
    for p in sorted(glob.glob(os.path.join(scaffold, "test_fuse_*.py"))):
        sys.path.insert(0, scaffold)
        load(p)
    assert not os.path.exists("PAYLOAD_RAN"), "a payload ran"
    print(f"{len(mods)} op modules, {len(fuse)} scaffold modules imported")


main()
