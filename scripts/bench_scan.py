#!/usr/bin/env python3
"""Benchmark: `fusescan scan` throughput against wc -l and grep -c '^%'.

Builds a corpus of COPIES copies of a run directory (default: 20 copies of
../shared/dumps/adrun_llama3_8b, about 140 MB, each in its own directory) and
times, in one run and on the same warm files, best of REPEAT:
  - fusescan scan (text and JSON) on the replicated corpus, where identical
    graphs are recognised by content hash and parsed once;
  - fusescan scan on a "distinct" corpus where each copy's placeholder is
    renamed, so copies never match each other: the raw parser rate;
  - wc -l and grep -c '^%' over the same files.
Prints MB/s and the ratios (wc or grep time / fusescan time).

usage: scripts/bench_scan.py [--fusescan build/fusescan] [--run DIR] [--copies 20]
"""
import argparse, os, platform, shutil, sys, tempfile, time

from benchlib import best

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def build_corpus(src, dst, copies, distinct):
    os.makedirs(dst)
    for i in range(copies):
        d = os.path.join(dst, f'run_{i:02d}')
        os.makedirs(d)
        for name in sorted(os.listdir(src)):
            with open(os.path.join(src, name), 'rb') as f:
                data = f.read()
            if distinct:
                data = data.replace(b'input_ids', b'input_ids_%d' % i)
            with open(os.path.join(d, name), 'wb') as f:
                f.write(data)


def files_of(corpus):
    out = []
    for d in sorted(os.listdir(corpus)):
        out += [os.path.join(corpus, d, n) for n in sorted(os.listdir(os.path.join(corpus, d)))
                if n.endswith('.txt')]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--fusescan', default=os.path.join(ROOT, 'build', 'fusescan'))
    ap.add_argument('--run', default=os.path.join(ROOT, '..', 'shared', 'dumps', 'adrun_llama3_8b'))
    ap.add_argument('--copies', type=int, default=20)
    ap.add_argument('--repeat', type=int, default=5)
    a = ap.parse_args()
    if not os.path.isdir(a.run):
        sys.exit(f'run directory not found: {a.run}')
    tmp = tempfile.mkdtemp(prefix='fusescan-bench-')
    try:
        same, distinct = os.path.join(tmp, 'replicated'), os.path.join(tmp, 'distinct')
        build_corpus(a.run, same, a.copies, False)
        build_corpus(a.run, distinct, a.copies, True)
        files = files_of(same)
        mb = sum(os.path.getsize(f) for f in files) / 1e6
        for f in files + files_of(distinct):  # warm the page cache
            with open(f, 'rb') as fh:
                fh.read()
        rows = [
            ('fusescan scan (replicated)', best([a.fusescan, 'scan', same], a.repeat)),
            ('fusescan scan --format json (replicated)', best([a.fusescan, 'scan', '--format', 'json', same], a.repeat)),
            ('fusescan scan (distinct copies)', best([a.fusescan, 'scan', distinct], a.repeat)),
            ("wc -l", best(['wc', '-l'] + files, a.repeat)),
            ("grep -c '^%'", best(['grep', '-c', '^%'] + files, a.repeat, ok=(0, 1))),  # 1: a file without a match
        ]
        print(f'corpus: {a.copies} copies of {os.path.basename(os.path.abspath(a.run))}, '
              f'{len(files)} files, {mb:.1f} MB; best of {a.repeat}')
        print(f'machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores; '
              f'{time.strftime("%Y-%m-%d")}')
        print(f'{"command":44} {"seconds":>9} {"MB/s":>9}')
        for name, t in rows:
            print(f'{name:44} {t:9.4f} {mb / t:9.1f}')
        scan, wc, grep = rows[0][1], rows[3][1], rows[4][1]
        print(f'ratio wc -l / fusescan scan:          {wc / scan:.2f}')
        print(f"ratio grep -c '^%' / fusescan scan:   {grep / scan:.2f}")
        print(f'ratio wc -l / fusescan (distinct):    {wc / rows[2][1]:.2f}')
    finally:
        shutil.rmtree(tmp)


if __name__ == '__main__':
    main()
