#!/usr/bin/env python3
"""Large graphs for tests and benchmarks, made from any dump without
committing megabytes: N renamed copies of a dump's first module in one module
(--copies), or a graph of one shape and about N nodes (--shape, below).

Every value of copy k (k > 0) is renamed NAME -> NAME__ck: the names defined
by node lines and placeholders, the references to them (`%NAME`, and the bare
names of Python lists and tuples), and the external inputs (weights) that are
referenced but never defined, so the copies share nothing but the symbolic
dims. The module's output line returns every copy's outputs. Targets, literals
and shapes are left as they are.

  scripts/make_large.py --copies 16 --out big.txt \
      tests/data/export_mixtral_2l/002_post_export_run_decompositions.txt

Shapes, the ones copies of a model never make (every pass must stay near
linear in them too):
  chain   a_i = a_{i-1} * x: one value n ops deep, x read n times
  sum     n products t_i = x * y summed by a chain of adds (s_i = s_{i-1} + t_i)
  fanin   n values into one cat: a node with n operands
  tree    n values summed pairwise: a balanced sum, log2 n levels
  views   a chain of n views, each read by an op: n values behind ever longer
          view chains, all of them outputs
  motifs  a chain of n / 2 SiLU-and-muls (a_i = a_{i-1} * sigmoid(a_{i-1})):
          one region holding n / 2 catalog chains to carve out
  shared  n / 16 sites of rotate-half RoPE on a q and a k, every site reading
          one cos and one sin (as every layer of a deep model does): a
          pattern's outputs joined only by values every site reads

  scripts/make_large.py --shape chain --nodes 4000 --out chain.txt

usage: make_large.py --copies N --out FILE DUMP
       make_large.py --shape KIND --nodes N --out FILE
"""
import argparse
import re
import sys

SECTION = "=" * 80
REF = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)")


def first_module(lines):
    """(header lines, body lines) of the dump's first module."""
    sections = [i for i, l in enumerate(lines) if l.rstrip("\r\n") == SECTION]
    if len(sections) < 2:  # older format: one implicit module after the comments
        start = next((i for i, l in enumerate(lines) if l.startswith("%")), len(lines))
        return lines[:start], lines[start:]
    start, end = sections[1] + 1, (sections[2] if len(sections) > 2 else len(lines))
    header = ["# GraphModules found: 1\n" if l.startswith("# GraphModules found") else l
              for l in lines[: sections[1] + 1]]
    return header, lines[start:end]


def names_of(body):
    """Every value name the module defines or references."""
    names = set()
    for line in body:
        names.update(REF.findall(line))
    return names


def rename_brackets(text, names, suffix):
    """Bare names inside [...] / (...) lists of the argument text."""
    out, depth, i = [], 0, 0
    while i < len(text):
        c = text[i]
        if c in "[(" and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            depth += 1
        elif c in "])" and depth:
            depth -= 1
        if depth and (c.isalpha() or c == "_") and (not i or not (text[i - 1].isalnum() or text[i - 1] in "_.%'\"")):
            m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i:])
            word = m.group(0)
            out.append(word + suffix if word in names else word)
            i += len(word)
            continue
        out.append(c)
        i += 1
    return "".join(out)


def rename_line(line, names, suffix):
    line = REF.sub(lambda m: "%" + m.group(1) + (suffix if m.group(1) in names else ""), line)
    eq = line.find(" = ")
    if eq < 0:
        return line
    paren = line.find("(", eq)
    if paren < 0:
        return line
    return line[: paren + 1] + rename_brackets(line[paren + 1:], names, suffix)


T = " : 4x4096 : torch.float32"


def ref(name):
    return "%" + name + T


def shape_nodes(kind, n):
    """(node lines, output names) of a graph of that shape and about n nodes."""
    lines = ["%x" + T, "%y" + T]
    op = lambda out, target, *args: lines.append(f"%{out} = {target}({', '.join(args)}){T}")
    if kind == "chain":
        prev = "x"
        for i in range(n):
            op(f"a{i}", "aten.mul.Tensor", ref(prev), ref("x"))
            prev = f"a{i}"
        return lines, [prev]
    if kind == "sum":
        prev = None
        for i in range(n // 2):
            op(f"t{i}", "aten.mul.Tensor", ref("x"), ref("y"))
            if prev:
                op(f"s{i}", "aten.add.Tensor", ref(prev), ref(f"t{i}"))
            prev = f"s{i}" if prev else f"t{i}"
        return lines, [prev]
    if kind == "fanin":
        for i in range(n):
            op(f"t{i}", "aten.exp.default", ref("x"))
        lines.append(f"%c = aten.cat.default([{', '.join(f't{i}' for i in range(n))}], -1) : 4x{4096 * n} : torch.float32")
        return lines, ["c"]
    if kind == "tree":
        level = []
        for i in range(n // 2):
            op(f"t{i}", "aten.exp.default", ref("x"))
            level.append(f"t{i}")
        k = 0
        while len(level) > 1:
            nxt = []
            for j in range(0, len(level) - 1, 2):
                op(f"p{k}", "aten.add.Tensor", ref(level[j]), ref(level[j + 1]))
                nxt.append(f"p{k}")
                k += 1
            level = nxt + level[len(level) - len(level) % 2:]
        return lines, level
    if kind == "motifs":
        prev = "x"
        for i in range(n // 2):
            op(f"s{i}", "aten.sigmoid.default", ref(prev))
            op(f"a{i}", "aten.mul.Tensor", ref(prev), ref(f"s{i}"))
            prev = f"a{i}"
        return lines, [prev]
    if kind == "views":
        op("v0", "aten.exp.default", ref("x"))
        outs = []
        for i in range(1, n // 2):
            op(f"v{i}", "aten.view.default", ref(f"v{i - 1}"), "[4, 4096]")
            op(f"k{i}", "aten.neg.default", ref(f"v{i}"))
            outs.append(f"k{i}")
        return lines, outs
    if kind == "shared":
        Q = " : 1x4x8x64 : torch.float32"
        H = " : 1x4x8x32 : torch.float32"
        lines += ["%cos" + Q, "%sin" + Q]
        outs = []
        for i in range(max(1, n // 16)):
            for t in (f"q{i}", f"k{i}"):
                r = lambda name, shape=Q: f"%{name}{shape}"
                lines += [f"%{t} = aten.exp.default({r('x', T)}){Q}",
                          f"%{t}_c = aten.mul.Tensor({r(t)}, {r('cos')}){Q}",
                          f"%{t}_lo = aten.slice.Tensor({r(t)}, 3, 0, 32){H}",
                          f"%{t}_hi = aten.slice.Tensor({r(t)}, 3, 32, 9223372036854775807){H}",
                          f"%{t}_n = aten.neg.default({r(t + '_hi', H)}){H}",
                          f"%{t}_cat = aten.cat.default([{t}_n, {t}_lo], -1){Q}",
                          f"%{t}_s = aten.mul.Tensor({r(t + '_cat')}, {r('sin')}){Q}",
                          f"%{t}_o = aten.add.Tensor({r(t + '_c')}, {r(t + '_s')}){Q}"]
                outs.append(t + "_o")
        return lines, outs
    sys.exit(f"make_large.py: unknown shape '{kind}' (chain, sum, fanin, tree, views, motifs, shared)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", type=int)
    ap.add_argument("--shape")
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--out", required=True)
    ap.add_argument("dump", nargs="?")
    a = ap.parse_args()
    if a.shape:
        if not a.nodes or a.nodes < 2 or a.copies or a.dump:
            sys.exit("make_large.py: --shape wants --nodes N (N >= 2) and no --copies or DUMP")
        lines, outs = shape_nodes(a.shape, a.nodes)
        with open(a.out, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\noutput " + ", ".join("%" + o for o in outs) + "\n")
        return
    if not a.copies or a.copies < 1 or not a.dump:
        sys.exit("make_large.py: --copies wants a positive integer, and a DUMP")
    with open(a.dump, encoding="utf-8", newline="") as f:
        lines = f.readlines()
    header, body = first_module(lines)
    names = names_of(body)
    nodes, outputs = [], []
    for k in range(a.copies):
        suffix = "__c%d" % k if k else ""
        for line in body:
            if line.startswith("output "):
                outputs += [rename_line(o.strip(), names, suffix) for o in line[7:].split(",")]
            elif line.strip():
                nodes.append(rename_line(line.rstrip("\r\n"), names, suffix) + "\n")
    with open(a.out, "w", encoding="utf-8") as f:
        f.writelines(header)
        f.write("\n")
        f.writelines(nodes)
        f.write("output " + ", ".join(outputs) + "\n")


if __name__ == "__main__":
    main()
