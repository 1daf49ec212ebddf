#!/usr/bin/env python3
"""The symbols an emitted op gets from its inputs (fusescan.kernel/3's
"symbols": read off a dim, solved from one, a value the shapes do not read
apart) give every input and output the shape it has at the true sizes. A
stub torch stands in for PyTorch: the module imports, and its _symbols and
_output_shapes run on tensors that only carry a shape (real=False).
usage: check_op_symbols.py OPS_DIR NAME=N... (the true sizes, e.g. s72=3 s70=5)"""
import glob
import importlib.util
import json
import os
import sys
import types


class _Any:
    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return a[0] if len(a) == 1 and callable(a[0]) and not k else _Any()

    def __getattr__(self, name):
        return _Any()

    def register_fake(self, fn):
        return fn


class Tensor:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype

    def dim(self):
        return len(self.shape)


def stub_torch():
    torch = types.ModuleType("torch")
    torch.__getattr__ = lambda name: _Any()
    torch.Tensor = Tensor
    for dt in ("bfloat16", "float16", "float32", "float64", "int64", "int32", "bool", "uint8", "int8"):
        setattr(torch, dt, dt)
    torch.library = types.SimpleNamespace(custom_op=lambda *a, **k: (lambda fn: _Any()))
    sys.modules["torch"] = torch


def at(text, sizes):
    return text if isinstance(text, int) else eval(text, {"__builtins__": {}, "max": max, "min": min}, sizes)


def main():
    ops, sizes = sys.argv[1], {k: int(v) for k, v in (a.split("=") for a in sys.argv[2:])}
    stub_torch()
    n = 0
    for path in sorted(glob.glob(os.path.join(ops, "fs_*.py"))):
        desc = json.load(open(path[:-3] + ".json"))
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        true = {s["name"]: sizes[s["name"]] for s in desc["symbols"]}
        inputs = tuple(Tensor([at(d, true) for d in t["shape"]], t["dtype"].split(".")[-1]) for t in desc["inputs"])
        s = mod._symbols(inputs, path, real=False)
        got = [shape for shape, _, _ in mod._output_shapes(s)]
        want = [[at(d, true) for d in t["shape"]] for t in desc["outputs"]]
        assert got == want, (path, s, got, want)
        print(f"{os.path.basename(path)}: {s} from inputs {[t.shape for t in inputs]}: outputs {got}")
        n += 1
    assert n, "no op module in " + ops


main()
