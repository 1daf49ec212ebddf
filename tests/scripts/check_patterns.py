#!/usr/bin/env python3
"""The pattern library on hand-written dumps (tests/patterns/expected.txt):
each file's match count for its pattern, and the near-miss causes --explain
gives. usage: check_patterns.py FUSESCAN TESTS_DIR
"""
import json, os, subprocess, sys


def main():
    exe, tests = sys.argv[1], sys.argv[2]
    d = os.path.join(tests, 'patterns')
    passed = failed = 0
    seen = set()
    for line in open(os.path.join(d, 'expected.txt')):
        if not line.strip() or line.startswith('#'):
            continue
        f, pat, n, *causes = line.split(None, 3)
        want = {c.strip() for c in causes[0].split(',')} if causes else None
        seen.add(pat)
        out = subprocess.run([exe, 'match', '--pattern', pat, '--explain', pat, '--format', 'json',
                              os.path.join(d, f)], capture_output=True, text=True)
        ok = out.returncode == 0
        if ok:
            res = [x for x in json.loads(out.stdout)['results'] if x['pattern'] == pat]
            got = sum(x['matches'] for x in res)
            why = {m['cause'] for x in res for m in x.get('near_misses', [])}
            ok = got == int(n) and (want is None or why == want)
        if ok:
            passed += 1
        else:
            failed += 1
            print(f'FAIL {f} {pat}: exit {out.returncode}, want matches={n} causes={want}; got',
                  out.stdout[:200] if out.returncode else f'matches={got} causes={why}', out.stderr[:300])
    lib = {f[:-4] for f in os.listdir(os.path.join(tests, '..', 'patterns')) if f.endswith('.pat')}
    for p in sorted(lib - seen):
        failed += 1
        print(f'FAIL library pattern {p} has no test')
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
