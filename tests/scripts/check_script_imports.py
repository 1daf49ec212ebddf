#!/usr/bin/env python3
"""The scripts that import each other's helpers still fit them, checked
without running them (most need torch and a GPU): for every Python file of
scripts/ and tests/scripts/, each name it takes from a sibling module
(`from bench_torch import graph_of`, `import torch_chains as tc`) exists
there, and each call of such a function (`graph_of(...)`, `tc.load_op(...)`)
passes arguments its signature takes: no required parameter missing, no
positional argument too many, no unknown keyword. A signature changed in one
script and not in its callers fails here, not on the GPU machine.

usage: check_script_imports.py REPO
"""
import ast
import os
import sys


def signature(fn):
    """(required positional names, all positional names, keyword-only names, *args, **kwargs)"""
    a = fn.args
    pos = [x.arg for x in a.posonlyargs + a.args]
    required = pos[:len(pos) - len(a.defaults)]
    kwonly = {x.arg for x in a.kwonlyargs}
    kw_required = {x.arg for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is None}
    return required, pos, kwonly, kw_required, a.vararg is not None, a.kwarg is not None


def module_defs(path):
    """a module's top-level names, and its functions' signatures"""
    tree = ast.parse(open(path).read(), path)
    names, funcs = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
            funcs[node.name] = signature(node)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        names.add(n.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add((a.asname or a.name).split(".")[0])
    return names, funcs


def check_call(call, sig, where, errors):
    required, pos, kwonly, kw_required, varargs, varkw = sig
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return  # *args / **kwargs at the call: not checked statically
    given = len(call.args)
    keys = [k.arg for k in call.keywords]
    if given > len(pos) and not varargs:
        errors.append(f"{where}: {given} positional arguments, the function takes at most {len(pos)}")
    for k in keys:
        if k not in pos and k not in kwonly and not varkw:
            errors.append(f"{where}: unknown keyword '{k}'")
    for name in required[given:]:
        if name not in keys:
            errors.append(f"{where}: required argument '{name}' missing")
    for name in kw_required:
        if name not in keys:
            errors.append(f"{where}: required keyword '{name}' missing")


def check_file(path, dirs, errors):
    tree = ast.parse(open(path).read(), path)
    local = {os.path.splitext(f)[0]: os.path.join(d, f) for d in dirs for f in os.listdir(d) if f.endswith(".py")}
    here = os.path.splitext(os.path.basename(path))[0]
    funcs = {}      # a name called bare -> (module, signature)
    modules = {}    # an alias -> the module's functions
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in local and node.module != here:
            names, defs = module_defs(local[node.module])
            for a in node.names:
                if a.name not in names:
                    errors.append(f"{path}:{node.lineno}: '{a.name}' is not in {node.module}")
                elif a.name in defs:
                    funcs[a.asname or a.name] = (node.module, defs[a.name])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name in local and a.name != here:
                    modules[a.asname or a.name] = (a.name,) + module_defs(local[a.name])
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id in funcs:
            mod, sig = funcs[f.id]
            check_call(node, sig, f"{path}:{node.lineno}: {mod}.{f.id}", errors)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in modules:
            mod, names, defs = modules[f.value.id]
            if f.attr not in names:
                errors.append(f"{path}:{node.lineno}: '{f.attr}' is not in {mod}")
            elif f.attr in defs:
                check_call(node, defs[f.attr], f"{path}:{node.lineno}: {mod}.{f.attr}", errors)


def main():
    repo = sys.argv[1]
    dirs = [os.path.join(repo, "scripts"), os.path.join(repo, "tests", "scripts")]
    errors, files = [], 0
    for d in dirs:
        for f in sorted(os.listdir(d)):
            if f.endswith(".py"):
                files += 1
                check_file(os.path.join(d, f), dirs, errors)
    for e in errors:
        print("FAIL", e)
    print(f"{files} scripts read, {len(errors)} mismatch{'es' if len(errors) != 1 else ''}")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
