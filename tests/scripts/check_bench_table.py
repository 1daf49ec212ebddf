#!/usr/bin/env python3
"""scripts/bench_table.py on bench.json files written here: the table's
marks (won, tie, lost, an output differing from eager's, a point not
measured), the verdicts' counts and names, the copy shares, and its errors
(a point in two files, a file that is no bench.json: exit 2 with the file's
name; an output differing: exit 1).

usage: check_bench_table.py REPO_ROOT"""
import json
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "scripts", "bench_table.py")
fails = 0


def row(chain, tokens, ratio, lo, hi, bad=False, gbs=3000.0, processes=6, per_process=None):
    return {"chain": chain, "tokens": tokens, "compile_over_fusescan": ratio, "ci95": [lo, hi], "aa": 1.0,
            "aa_ci95": [0.999, 1.001], "bad": bad, "gbs": gbs, "copy_gbs": 4000.0, "bucket_tactic": "v8 b128 e1",
            "processes": processes, "per_process": per_process or [lo, ratio, hi]}


def write(d, name, rows):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump({"device": "test", "torch": "test", "rows": rows}, f)
    return path


def run(*files):
    return subprocess.run([sys.executable, script, *files], capture_output=True, text=True)


def expect(name, ok, detail=""):
    global fails
    if not ok:
        fails += 1
        print(f"FAIL {name}{': ' + detail if detail else ''}")


with tempfile.TemporaryDirectory() as d:
    a = write(d, "a.json", [row("rmsnorm", 1, 1.151, 1.140, 1.160), row("rmsnorm", 512, 0.989, 0.988, 0.990),
                            row("rmsnorm", 16384, 1.142, 1.141, 1.143, gbs=3900.0)])
    b = write(d, "b.json", [row("swiglu", 1, 1.002, 0.999, 1.004, per_process=[0.999, 1.002, 1.004]),
                            row("swiglu", 16384, 1.001, 1.000, 1.002, gbs=4080.0)])
    r = run(a, b)
    lines = r.stdout.splitlines()
    expect("two files: exit 0", r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
    expect("header", lines[:2] == ["| tokens | rmsnorm | swiglu |", "|---|---|---|"], repr(lines[:2]))
    expect("won and tie", "| 1 | 1.151 | 1.002° |" in lines, r.stdout)
    expect("lost, not measured", "| 512 | 0.989* | - |" in lines, r.stdout)
    expect("a tie at the interval's edge", "| 16384 | 1.142 | 1.001° |" in lines, r.stdout)
    expect("counts", "sizes lost (interval wholly below 1.00): 1 of 5; won 2, ties 2" in r.stdout, r.stdout)
    expect("loss by name", "  lost: rmsnorm at 512 tokens, 0.989 (0.988-0.990, v8 b128 e1)" in lines, r.stdout)
    expect("tie by name", "  tie: swiglu at 1 tokens, 1.002 (0.999-1.004, v8 b128 e1)" in lines, r.stdout)
    expect("one process below", "swiglu 1 (0.999)" in r.stdout, r.stdout)
    expect("copy shares", "rmsnorm 16384 tokens 98% of copy, swiglu 16384 tokens 102% of copy" in r.stdout, r.stdout)

    c = write(d, "c.json", [row("layernorm", 8, 1.2, 1.1, 1.3, bad=True)])
    r = run(c)
    expect("an output differing: exit 1", r.returncode == 1, f"exit {r.returncode}")
    expect("an output differing: marked", "| 8 | 1.200! |" in r.stdout and "OUTPUT DIFFERS FROM EAGER: layernorm at 8"
           in r.stdout, r.stdout)

    dup = write(d, "dup.json", [row("swiglu", 16384, 1.0, 0.99, 1.01)])
    r = run(a, b, dup)
    expect("a point in two files: exit 2", r.returncode == 2 and f"{dup}: error: swiglu at 16384 tokens is also in {b}"
           in r.stderr, f"exit {r.returncode}: {r.stderr}")

    bad = os.path.join(d, "bad.json")
    with open(bad, "w") as f:
        f.write('{"rows": [{"chain": "x"}]}')
    r = run(a, bad)
    expect("a row without fields: exit 2", r.returncode == 2 and f"{bad}: error: not a bench_torch.py bench.json"
           in r.stderr and not r.stdout, f"exit {r.returncode}: {r.stderr}")
    r = run(os.path.join(d, "missing.json"))
    expect("a missing file: exit 2", r.returncode == 2 and "missing.json: error:" in r.stderr, r.stderr)
    r = run()
    expect("no file: usage, exit 2", r.returncode == 2 and "usage" in r.stderr, r.stderr)

print(f"bench_table: {'all checks passed' if not fails else f'{fails} failed'}")
sys.exit(1 if fails else 0)
