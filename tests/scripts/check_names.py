#!/usr/bin/env python3
"""One name, one count: discover's candidates against `fusescan match`, site by site.

usage: check_names.py FUSESCAN PATTERNS_DIR DIR...
Each DIR is a run (NNN_*.txt dumps) or a folder of runs. For every run, its first and
the run's last dump are analysed by `discover --format json` and by `match --format json`,
on the graph discover analyses (where a root calls other GraphModules of its file,
discover inlines them into one graph, node names kept; it is compared with match's
counts over every module of the file):
  - every candidate discover names after a catalog entry with a pattern says which
    (`counted_by`), and each of its sites holds a match of that pattern;
  - its `counted_by.matches` is the number of the pattern's matches in its sites (a
    match can span two candidates: RoPE's q and k of different widths), the matches of
    an inlined graph that cross a module boundary aside (`counted_by.crossing`: match,
    which counts each GraphModule alone, cannot see them; only those sites hold none);
  - every match of a pattern that confirms a catalog entry is reported by discover:
    in a candidate it counts, inside a larger candidate of another name, or as an op
    already fused (the `already_fused` count of that entry).
Exit 1 on a disagreement, 77 (skipped) when no DIR exists.
"""
import glob, json, os, re, subprocess, sys

from tally import Tally


def library(patdir):
    """pattern name -> (catalog entry, its input names)"""
    lib = {}
    for f in sorted(glob.glob(os.path.join(patdir, '*.pat'))):
        t = open(f).read()
        name = re.search(r'^pattern (\S+)', t, re.M).group(1)
        entry = re.search(r'^catalog (\S+)', t, re.M)
        lib[name] = (entry.group(1) if entry else None, set(re.findall(r'^input (\S+)', t, re.M)))
    return lib


def runs(dirs):
    for d in dirs:
        if glob.glob(os.path.join(d, '[0-9][0-9][0-9]_*.txt')):
            yield d
        else:
            yield from (r for r in sorted(glob.glob(os.path.join(d, '*'))) if glob.glob(os.path.join(r, '[0-9][0-9][0-9]_*.txt')))


def run_json(args):
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f'{" ".join(args)}: exit {out.returncode}\n{out.stderr}')
    return json.loads(out.stdout)


def check_analysis(exe, lib, a, t):
    tag = f"{a['file']} [{a['module']}]"
    res = {}
    for r in run_json([exe, 'match', '--format', 'json', a['file']])['results']:
        # a graph whose called modules discover inlined is one graph of them all, their node
        # names kept: match's counts of every module of the file, together, are its counts
        if r['module'] == a['module'] or a['call_modules_inlined']:
            res.setdefault(r['pattern'], {'bindings': []})['bindings'] += r['bindings']
    sites = [(k, set(s)) for k in a['candidates'] for s in k['sites']]
    fused = {f['name']: f['count'] for f in a['already_fused']}
    for name, (entry, inputs) in lib.items():
        if not entry or name not in res:
            continue
        ms = [set(v for p, v in b.items() if p not in inputs) for b in res[name]['bindings']]
        mine = [k for k in a['candidates'] if (k.get('counted_by') or {}).get('pattern') == name]
        for k in a['candidates']:
            if k['name'] == entry:
                t.check((k.get('counted_by') or {}).get('pattern') == name,
                        f"{tag}: candidate {k['id']} is named {entry} but not counted by pattern {name}")
        for k in mine:
            bare = [s for s in k['sites'] if not any(set(s) & m for m in ms)]
            t.check(len(bare) <= k['counted_by']['crossing'],  # a match across modules is discover's alone
                    f"{tag}: {k['id']} sites {['%' + s[-1] for s in bare]} hold no match of {name}")
            held = sum(1 for m in ms if any(m & set(s) for s in k['sites']))
            t.check(k['counted_by']['matches'] == held,
                    f"{tag}: {k['id']} says {name} counts {k['counted_by']['matches']} in its sites, match finds {held}")
        counted = [m for m in ms if any(m & set(s) for k in mine for s in k['sites'])]
        elsewhere = [m for m in ms if m not in counted and any(m & s for _, s in sites)]
        unreported = len(ms) - len(counted) - len(elsewhere)
        t.check(unreported <= fused.get(entry, 0),
                f"{tag}: {unreported} match(es) of {name} that discover reports nowhere "
                f"(already fused: {fused.get(entry, 0)})")


def main():
    exe, patdir, dirs = sys.argv[1], sys.argv[2], [d for d in sys.argv[3:] if os.path.isdir(d)]
    if not dirs:
        print(f'skipped: none of {" ".join(sys.argv[3:])} found')
        return 77
    lib, t = library(patdir), Tally()
    for run in runs(dirs):
        first = sorted(glob.glob(os.path.join(run, '[0-9][0-9][0-9]_*.txt')))[0]
        for path in (first, run):
            for a in run_json([exe, 'discover', '--format', 'json', path])['analyses']:
                check_analysis(exe, lib, a, t)
    return t.finish()


if __name__ == '__main__':
    sys.exit(main())
