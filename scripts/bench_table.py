#!/usr/bin/env python3
"""The size x chain table of scripts/bench_torch.py runs, and their verdicts.

Each run writes bench.json (one row per chain and size); runs split across
GPUs or across time (scripts/gpu_check.sh runs a chain per process, the chains
spread over the GPUs) are read together here into one markdown table of the
torch.compile / fusescan ratios, tokens down and chains across, in the order
they first appear:

    1.053   won: the ratio's 95% interval wholly above 1.00
    1.000°  tie: the interval reaches 1.00
    0.992*  lost: the interval wholly below 1.00
    1.010!  the op's output differed from eager's, or torch.compile's where eager
            does not fit (beyond fusescan's own errors)
    -       not measured

then the verdicts' counts, the lowest ratio, the losses and ties by name, and
each chain's GB/s at its largest size as a share of the device's copy
bandwidth. bench_torch.py prints the same summary for its own rows.

    python3 scripts/bench_table.py OUT/bench/run_*/bench.json

Exit status: 0; 1 where an op's output differed (the `!` above); 2 where a file
cannot be read or two files hold the same point.
"""
import argparse
import json
import sys


def verdict(row):
    """'won', 'tie' or 'lost': where the ratio's 95% interval lies against 1.00"""
    lo, hi = row["ci95"]
    return "won" if lo > 1.0 else "lost" if hi < 1.0 else "tie"


MARK = {"won": "", "tie": "°", "lost": "*"}


def summary(rows):
    """the verdicts of rows as lines: counts, the lowest ratio, losses and ties
    by name, the A/A control, and the points one process alone read below 1.00"""
    if not rows:
        return []
    v = [verdict(r) for r in rows]
    worst = min(rows, key=lambda r: r["ci95"][1])
    lines = [f"lowest torch.compile / fusescan: {worst['compile_over_fusescan']:.3f} (95% CI {worst['ci95'][0]:.3f}-"
             f"{worst['ci95'][1]:.3f}, {worst['chain']} at {worst['tokens']} tokens); sizes lost (interval wholly "
             f"below 1.00): {v.count('lost')} of {len(rows)}; won {v.count('won')}, ties {v.count('tie')}"]
    for r, k in zip(rows, v):
        if k != "won":
            lines.append(f"  {'lost' if k == 'lost' else 'tie'}: {r['chain']} at {r['tokens']} tokens, "
                         f"{r['compile_over_fusescan']:.3f} ({r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}, {r['bucket_tactic']})")
    off = [r for r in rows if not r["aa_ci95"][0] <= 1.0 <= r["aa_ci95"][1]]
    lines.append(f"A/A control (torch.compile against itself): interval off 1.00 at {len(off)} of {len(rows)} sizes" +
                 (f", widest miss {max(abs(r['aa'] - 1) for r in off):.3f}" if off else ""))
    single = [r for r in rows if r.get("processes", 1) > 1 and min(r["per_process"]) < 1.0 and r["ci95"][1] >= 1.0]
    if single:
        lines.append("sizes where one process of several read below 1.00 (the interval over processes reaches 1.00): " +
                     ", ".join(f"{r['chain']} {r['tokens']} ({min(r['per_process']):.3f})" for r in single))
    bad = [r for r in rows if r["bad"]]
    if bad:
        lines.append("OUTPUT DIFFERS FROM EAGER: " + ", ".join(f"{r['chain']} at {r['tokens']} tokens" for r in bad))
    return lines


def table(rows):
    """the markdown table of rows: tokens down, chains across"""
    chains = list(dict.fromkeys(r["chain"] for r in rows))
    at = {(r["chain"], r["tokens"]): r for r in rows}
    out = ["| tokens | " + " | ".join(chains) + " |", "|---" * (len(chains) + 1) + "|"]
    for t in sorted({r["tokens"] for r in rows}):
        cells = []
        for c in chains:
            r = at.get((c, t))
            cells.append("-" if r is None else
                         f"{r['compile_over_fusescan']:.3f}{MARK[verdict(r)]}{'!' if r['bad'] else ''}")
        out.append(f"| {t} | " + " | ".join(cells) + " |")
    return out


def copy_shares(rows):
    """each chain's GB/s through the op at its largest size against the device's copy bandwidth"""
    big = {}
    for r in rows:
        if r["chain"] not in big or r["tokens"] > big[r["chain"]]["tokens"]:
            big[r["chain"]] = r
    return ["at the largest size through the op: " + ", ".join(
        f"{c} {r['tokens']} tokens {100 * r['gbs'] / r['copy_gbs']:.0f}% of copy" if r.get("copy_gbs") else
        f"{c} {r['tokens']} tokens {r['gbs']:.0f} GB/s" for c, r in big.items())] if big else []


NEEDED = ("chain", "tokens", "compile_over_fusescan", "ci95", "aa", "aa_ci95", "bad", "gbs", "bucket_tactic")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench", nargs="+", help="bench.json files of scripts/bench_torch.py runs")
    a = ap.parse_args()
    rows, where = [], {}
    for path in a.bench:
        try:
            with open(path) as f:
                got = json.load(f)["rows"]
            missing = [k for r in got for k in NEEDED if k not in r]
            if missing:
                raise ValueError(f"a row without {missing[0]!r}")
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"{path}: error: not a bench_torch.py bench.json: {e}", file=sys.stderr)
            return 2
        for r in got:
            key = (r["chain"], r["tokens"])
            if key in where:
                print(f"{path}: error: {r['chain']} at {r['tokens']} tokens is also in {where[key]}", file=sys.stderr)
                return 2
            where[key] = path
            rows.append(r)
    for line in table(rows) + [""] + summary(rows) + copy_shares(rows):
        print(line)
    return 1 if any(r["bad"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
