#!/usr/bin/env python3
"""The function-length gate: the lengths of the top-level C function bodies of
the project's sources, counted as ../shared/tools/funclen.py counts them, and a
failure where more functions than allowed are over 100 or over 50 lines.

Counted: every .c file under ROOT outside any folder whose path from ROOT holds
/build, /.git or /tests. A definition starts at a line in column 0 that reads
as `[static|inline ...] type ... name(`, does not end with ';' and does not open
with typedef, struct, enum or '#'; the first line from there ending with '{'
(before one ending with ';') opens its body; the first line after it starting
with '}' closes it. Its length runs from the first line to the closing one.

With --agree FUNCLEN_PY, FUNCLEN_PY's summary of ROOT must equal this one's
(the two counters never drift); where that file is missing, that check is
skipped and said so. Exit 0 within the limits, 1 past them (one line per
offender: file:line name length) or on a disagreement, 2 on bad usage.

usage: funclen_gate.py ROOT [--max-over-100 N] [--max-over-50 N] [--agree FUNCLEN_PY]
"""
import argparse, os, re, statistics, subprocess, sys

SKIPPED_DIRS = ("/build", "/.git", "/tests")
DEFINITION = re.compile(r"""
    (?:static\s+|inline\s+)*   # storage words
    [A-Za-z_][\w\s*]*?         # the return type (lazy: the name is the last word before '(')
    \b(\w+)\s*\(               # the name and its parameter list
""", re.VERBOSE)
NOT_DEFINITIONS = ("typedef", "struct", "enum", "#")


def functions_of(lines):
    """[(first line, name, length)] of one file's lines"""
    found, i = [], 0
    while i < len(lines):
        head = lines[i]
        m = DEFINITION.match(head)
        if m and not head.rstrip().endswith(";") and not head.startswith(NOT_DEFINITIONS):
            opener = i
            while opener < len(lines) and not lines[opener].rstrip().endswith(("{", ";")):
                opener += 1
            if opener < len(lines) and lines[opener].rstrip().endswith("{"):
                close = opener + 1
                while close < len(lines) and not lines[close].startswith("}"):
                    close += 1
                found.append((i + 1, m.group(1), close - i + 1))
                i = close
        i += 1
    return found


def functions_under(root):
    """[(length, "file:name", line)] of every counted file under root"""
    out = []
    for folder, _, files in os.walk(root):
        rel = "/" + os.path.relpath(folder, root)
        if any(s in rel for s in SKIPPED_DIRS):
            continue
        for name in files:
            if name.endswith(".c"):
                path = os.path.join(folder, name)
                with open(path, errors="replace") as f:
                    lines = f.read().split("\n")
                rel_path = os.path.relpath(path, root)
                out += [(n, f"{rel_path}:{fn}", line) for line, fn, n in functions_of(lines)]
    return sorted(out, reverse=True)


def summary(funcs):
    """the line funclen.py prints"""
    n = [length for length, _, _ in funcs]
    longest = ", ".join(f"{where}:{length}" for length, where, _ in funcs[:5])
    return (f"functions {len(n)}, median {statistics.median(n):.0f}, over 50: {sum(x > 50 for x in n)}, "
            f"over 100: {sum(x > 100 for x in n)}, longest: {longest}")


def offenders(funcs, over, allowed):
    """the lines naming the functions over `over` lines, where more than `allowed` are"""
    past = [(length, where, line) for length, where, line in funcs if length > over]
    if len(past) <= allowed:
        return []
    said = [f"{len(past)} functions over {over} lines, at most {allowed} allowed:"]
    for length, where, line in past:
        path, name = where.rsplit(":", 1)
        said.append(f"{path}:{line} {name} {length}")
    return said


def agreement(root, funclen_py, ours):
    """'' where funclen_py (run on ROOT) prints our summary, else what differs"""
    if not os.path.isfile(funclen_py):
        print(f"agreement with funclen.py skipped: {funclen_py} not found")
        return ""
    # run from ROOT on '.': its folder test then reads the paths below ROOT, as ours does
    p = subprocess.run([sys.executable, os.path.abspath(funclen_py), "."], cwd=root,
                       capture_output=True, text=True, timeout=120)
    theirs = p.stdout.strip()
    if theirs == ours:
        print(f"agreement with {funclen_py}: the same summary")
        return ""
    return f"funclen_gate.py and {funclen_py} disagree:\n  ours:   {ours}\n  theirs: {theirs or p.stderr.strip()}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root")
    ap.add_argument("--max-over-100", type=int, default=3, metavar="N")
    ap.add_argument("--max-over-50", type=int, default=25, metavar="N")
    ap.add_argument("--agree", metavar="FUNCLEN_PY")
    a = ap.parse_args()
    if a.max_over_100 < 0 or a.max_over_50 < 0:
        ap.error("the limits want counts of 0 or more")
    if not os.path.isdir(a.root):
        ap.error(f"{a.root}: not a folder")
    funcs = functions_under(a.root)
    if not funcs:
        ap.error(f"{a.root}: no C function found")
    ours = summary(funcs)
    print(ours)
    said = offenders(funcs, 100, a.max_over_100) + offenders(funcs, 50, a.max_over_50)
    if a.agree:
        differ = agreement(a.root, a.agree, ours)
        said += [differ] if differ else []
    for line in said:
        print(line)
    return 1 if said else 0


if __name__ == "__main__":
    sys.exit(main())
