#!/usr/bin/env python3
"""`fusescan match` on a whole AutoDeploy run, as the pattern-library issue
states it: each chain matches in the dumps before its transform and not after,
and the ad.log cross-check agrees with every transform; the plain export and the
decomposed graph of the same model give the same counts.

usage: check_match.py FUSESCAN fixtures TESTS_DIR | shared DUMPS_DIR
Exit 1 on a mismatch, 77 (skipped) when the dumps are not there.
"""
import json, os, subprocess, sys


def main():
    exe, which, root = sys.argv[1:4]
    L, run = (2, f'{root}/data/adrun_tiny_llama_2l') if which == 'fixtures' else (32, f'{root}/adrun_llama3_8b')
    if not os.path.isdir(run):
        print(f'skipped: {run} not found')
        return 77
    out = subprocess.run([exe, 'match', '--format', 'json', '--log', f'{run}/ad.log', run],
                         capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stderr)
        print(f'FAIL fusescan exited {out.returncode}')
        return 1
    r = json.loads(out.stdout)
    count = {(int(x['dump'][:3]), x['pattern']): x['matches'] for x in r['results']}
    # pattern: (matches before, last dump that still has them); add_rmsnorm stays to the end,
    # through the norm ops match_rmsnorm_pattern and fuse_rmsnorm insert (fuse_add_rms_norm is off)
    want = {'rmsnorm': (2 * L + 1, 14), 'swiglu': (L, 19), 'rope_rotate_half': (L, 12), 'repeat_kv': (2 * L, 7),
            'add_rmsnorm': (2 * L, 35), 'noop_slice': (None, 1)}
    passed = failed = 0
    for pat, (n, last) in want.items():
        for dump in range(1, 36):
            got = count[(dump, pat)]
            ok = got == 0 if dump > last else (got > 0 if n is None else got == n)
            passed += ok
            failed += not ok
            if not ok:
                print(f'FAIL {pat} in dump {dump:03d}: {got} (want {0 if dump > last else n})')
    for g in r['gates']:
        passed += g['ok']
        failed += not g['ok']
        if not g['ok']:
            print('FAIL', g['check'], g['message'])
    if len(r['gates']) != 35:
        failed += 1
        print(f'FAIL {len(r["gates"])} ad.log checks, want 35')
    # the plain export and its decomposition (mm, _to_copy, sigmoid) match alike
    export = run.replace('adrun_', 'export_')
    flavours = {}
    for dump in ('001_export_export_to_gm.txt', '002_post_export_run_decompositions.txt'):
        out = subprocess.run([exe, 'match', '--format', 'json', f'{export}/{dump}'], capture_output=True, text=True)
        flavours[dump] = {x['pattern']: x['matches'] for x in json.loads(out.stdout)['results']} if out.returncode == 0 else {}
    for pat, n in {'rmsnorm': 2 * L + 1, 'swiglu': L, 'rope_rotate_half': L, 'add_rmsnorm': 2 * L,
                   'parallel_gemm': 2 * L}.items():
        for dump, got in flavours.items():
            ok = got.get(pat) == n
            passed += ok
            failed += not ok
            if not ok:
                print(f'FAIL {pat} in {os.path.basename(export)}/{dump}: {got.get(pat)} (want {n})')
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
