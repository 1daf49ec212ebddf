#!/usr/bin/env python3
"""Large graphs: N renamed copies of a dump in one module (make_large.py)
must give N times the base's pattern matches and candidate instances, and
--apply must rewrite N times the sites. This checks that the analyses that
find sites through the graph's adjacency (further pattern outputs, parallel
GEMMs, paired instances) find every one of them on a large graph; speed is
measured by scripts/bench_scaling.py, not here.

usage: check_large.py FUSESCAN TESTS_DIR   (exit 1 on any mismatch)
"""
import json, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COPIES = 8
DUMPS = ['export_mixtral_2l/002_post_export_run_decompositions.txt',
         'export_tiny_llama_2l/001_export_export_to_gm.txt',
         'export_gpt2_2l/002_post_export_run_decompositions.txt']


def fusescan(exe, *args):
    r = subprocess.run([exe, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f'fusescan {" ".join(args)} failed ({r.returncode}): {r.stderr[:400]}')
    return r.stdout


def matches(exe, path):
    out = json.loads(fusescan(exe, 'match', '--format', 'json', path))
    return {r['pattern']: r['matches'] for r in out['results']}


def candidates(exe, path):
    out = json.loads(fusescan(exe, 'discover', '--format', 'json', path))
    got = {}
    for c in out['analyses'][0]['candidates']:
        got[c['name']] = got.get(c['name'], 0) + c['instances']
    return got


def summary(exe, path, out):
    """(matches, fused nodes, sites skipped) of --apply add_rmsnorm."""
    text = fusescan(exe, '--apply', 'add_rmsnorm', '--cpu-only', '--no-render', '--out', out, path)
    m = re.search(r'\[SUMMARY\] matches=(\d+) \| (\d+) fused nodes, (\d+) sites skipped', text)
    return [int(x) for x in m.groups()] if m else None


def main():
    exe, tests = sys.argv[1], sys.argv[2]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for rel in DUMPS:
            base = os.path.join(tests, 'data', rel)
            big = os.path.join(tmp, 'big.txt')
            subprocess.run([sys.executable, os.path.join(ROOT, 'scripts', 'make_large.py'), '--copies',
                            str(COPIES), '--out', big, base], check=True)
            for what, fn in (('matches', matches), ('candidate instances', candidates)):
                one, many = fn(exe, base), fn(exe, big)
                for name in sorted(set(one) | set(many)):
                    if many.get(name, 0) != COPIES * one.get(name, 0):
                        bad += 1
                        print(f'FAIL {rel}: {what} of {name}: {many.get(name, 0)} in {COPIES} copies, '
                              f'{one.get(name, 0)} in one')
            print(f'{rel}: {COPIES} copies give {COPIES}x every count' if not bad else f'{rel}: checked')
        # a multi-output rewrite names every fused node afresh: one name per site
        base = os.path.join(tests, 'data', DUMPS[1])
        subprocess.run([sys.executable, os.path.join(ROOT, 'scripts', 'make_large.py'), '--copies',
                        str(COPIES), '--out', big, base], check=True)
        one, many = (summary(exe, path, os.path.join(tmp, 'applied')) for path in (base, big))
        if many != [COPIES * k for k in one]:
            bad += 1
            print(f'FAIL --apply add_rmsnorm: (matches, fused, skipped) {many} in {COPIES} copies, {one} in one')
    print(f'{0 if bad else 1} passed, {1 if bad else 0} failed')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
