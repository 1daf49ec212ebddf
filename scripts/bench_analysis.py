#!/usr/bin/env python3
"""Benchmark: analysis time on the largest shared dump and on a whole run.

Times, best of REPEAT and side by side in one run, on the largest dump under
../shared/dumps (the 4000-node decomposed Llama-3-8B graph): `fusescan scan`
(read + parse + summary), `fusescan discover` (+ mining) and `fusescan match`
(+ the whole pattern library), so the differences are the analyses
themselves; then discover and match on the whole Llama-3-8B run directory (35
dumps). Prints milliseconds and the ratios.

usage: scripts/bench_analysis.py [--fusescan build/fusescan] [--dumps ../shared/dumps]
"""
import argparse, json, os, platform, subprocess, sys, time

from benchlib import best

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--fusescan', default=os.path.join(ROOT, 'build', 'fusescan'))
    ap.add_argument('--dumps', default=os.path.join(ROOT, '..', 'shared', 'dumps'))
    ap.add_argument('--repeat', type=int, default=20)
    a = ap.parse_args()
    files = [os.path.join(d, f) for d, _, fs in os.walk(a.dumps) for f in fs if f.endswith('.txt')]
    if not files:
        sys.exit(f'no dumps under {a.dumps}')
    largest = max(files, key=os.path.getsize)
    run = os.path.join(a.dumps, 'adrun_llama3_8b')
    scan = best([a.fusescan, 'scan', largest], a.repeat)
    disc = best([a.fusescan, 'discover', largest], a.repeat)
    disc_json = best([a.fusescan, 'discover', '--format', 'json', largest], a.repeat)
    match = best([a.fusescan, 'match', largest], a.repeat)
    lib = subprocess.run([a.fusescan, 'match', '--format', 'json', largest], capture_output=True, text=True)
    n_patterns = len(json.loads(lib.stdout)['patterns'])
    rows = [('scan (parse + summary)', scan), ('discover (parse + mine + text)', disc),
            ('discover --format json', disc_json), (f'match (parse + {n_patterns} patterns + text)', match)]
    if os.path.isdir(run):
        rows.append(('discover on the whole run (35 dumps)', best([a.fusescan, 'discover', run], a.repeat)))
        rows.append(('match on the whole run (35 dumps)', best([a.fusescan, 'match', run], a.repeat)))
    print(f'largest dump: {os.path.relpath(largest, a.dumps)}, {os.path.getsize(largest) / 1e6:.2f} MB; '
          f'best of {a.repeat}')
    print(f'machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores; {time.strftime("%Y-%m-%d")}')
    for name, t in rows:
        print(f'  {name:40} {t * 1e3:8.2f} ms')
    print(f'  mining alone (discover - scan):          {(disc - scan) * 1e3:8.2f} ms')
    print(f'  matching alone (match - scan):           {(match - scan) * 1e3:8.2f} ms')
    print(f'  ratio discover / scan:                   {disc / scan:8.2f}')
    print(f'  ratio match / scan:                      {match / scan:8.2f}')


if __name__ == '__main__':
    main()
