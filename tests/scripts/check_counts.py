#!/usr/bin/env python3
"""Cross-checks `fusescan scan --format json` against plain text counting.

For every dump under the given paths (a file of several GraphModules: its
graphs summed): `nodes` must equal the number of
`%name = ...` lines, each op count must equal the number of lines calling that
target, placeholders the `%name : ...` lines, outputs the names on the output
line. Usage: check_counts.py FUSESCAN PATH...   (exit 1 on any mismatch)
"""
import collections, json, re, subprocess, sys

NODE = re.compile(r'^%[^ =:(]+ = (.*)$')
PLACEHOLDER = re.compile(r'^%[^ =:(]+ : ')


def expected(path):
    nodes, placeholders, outputs = 0, 0, 0
    ops = collections.Counter()
    with open(path, newline='') as f:
        for line in f:
            line = line.rstrip('\n').rstrip('\r')
            m = NODE.match(line)
            if m:
                nodes += 1
                ops[m.group(1).split('(', 1)[0]] += 1
            elif PLACEHOLDER.match(line):
                placeholders += 1
            elif line.startswith('output'):
                outputs += len(re.findall(r'%[A-Za-z0-9_]+', line))
    return nodes, placeholders, outputs, ops


def main():
    exe, paths = sys.argv[1], sys.argv[2:]
    out = subprocess.run([exe, 'scan', '--format', 'json', *paths], capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr, file=sys.stderr)
        print(f'FAIL: fusescan exited {out.returncode}')
        return 1
    report = json.loads(out.stdout)
    assert report['schema'] == 'fusescan.scan/1'
    # a file of several GraphModules (one section each): its graphs summed
    files = {}
    for g in report['graphs']:
        t = files.setdefault(g['file'], [0, 0, 0, collections.Counter()])
        t[0] += g['nodes']
        t[1] += g['placeholders']
        t[2] += g['outputs']
        t[3].update(g['op_counts'])
    bad = 0
    for path, got in files.items():
        nodes, ph, outs, ops = expected(path)
        if tuple(got) != (nodes, ph, outs, ops):
            bad += 1
            print(f"MISMATCH {path}: nodes {got[0]}/{nodes} placeholders {got[1]}/{ph} outputs {got[2]}/{outs}")
            for k in set(ops) | set(got[3]):
                if ops[k] != got[3].get(k, 0):
                    print(f"  {k}: fusescan {got[3].get(k, 0)} grep {ops[k]}")
    n = len(files)
    print(f"{n - bad} passed, {bad} failed")
    return 1 if bad or not n else 0


if __name__ == '__main__':
    sys.exit(main())
