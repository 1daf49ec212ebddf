#!/usr/bin/env python3
"""Large graphs for tests and benchmarks, made from any dump without
committing megabytes: N renamed copies of a dump's first module in one module.

Every value of copy k (k > 0) is renamed NAME -> NAME__ck: the names defined
by node lines and placeholders, the references to them (`%NAME`, and the bare
names of Python lists and tuples), and the external inputs (weights) that are
referenced but never defined, so the copies share nothing but the symbolic
dims. The module's output line returns every copy's outputs. Targets, literals
and shapes are left as they are.

  scripts/make_large.py --copies 16 --out big.txt \
      tests/data/export_mixtral_2l/002_post_export_run_decompositions.txt

usage: make_large.py --copies N --out FILE DUMP
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--copies", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("dump")
    a = ap.parse_args()
    if a.copies < 1:
        sys.exit("make_large.py: --copies wants a positive integer")
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
