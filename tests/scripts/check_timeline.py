#!/usr/bin/env python3
"""A run's timeline and the MLIR pass's kernels, as discover reports them.

usage: check_timeline.py FUSESCAN DATA_DIR
Each candidate id has one row per run; a chain AutoDeploy swapped for a
reference op, one a fused kernel took the place of and one that changed form
get three different words; an mlir_fused_<hash> kernel is named by the ops it
replaced (read from the dump before it), or said to be of unknown ops where
the run holds no earlier dump; the MLIR evidence reads the run's log.
Exit 1 on a mismatch.
"""
import json, subprocess, sys

from tally import Tally


def run(exe, *args):
    out = subprocess.run([exe, 'discover', *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f'fusescan discover {" ".join(args)} failed ({out.returncode}):\n{out.stderr}')
    return out.stdout


def rows(doc):
    return [r for x in doc['runs'] for r in x['evolution']]


def table_ids(text):
    """the ids of each 'Candidate counts across' table, per table"""
    tables, cur = [], None
    for line in text.splitlines():
        if line.startswith('Candidate counts across'):
            cur = []
            tables.append(cur)
        elif cur is not None and line.startswith('  '):
            cur.append(line.split()[0])
        else:
            cur = None
    return tables


def main():
    exe, data = sys.argv[1:3]
    t = Tally()
    check = t.check
    tiny, mlir = f'{data}/adrun_tiny_llama_2l', f'{data}/adrun_mlir_2l'
    words = set()
    for path in (tiny, mlir):
        doc, text = json.loads(run(exe, '--format', 'json', path)), run(exe, path)
        for ids in table_ids(text):
            check(ids and len(ids) == len(set(ids)), f'{path}: a candidate id on two rows: {ids}')
        ev = rows(doc)
        check(all(r.get('id') for r in ev), f'{path}: an evolution row without its id')
        check(len({r['id'] for r in ev}) == len(ev), f'{path}: ids repeat in the evolution')
        byid = {r['id']: r for r in ev}
        for r in ev:
            f = r.get('fall')
            if not f:
                continue
            words.add(f['how'])
            check(f['text'] in r['summary'], f'{path}: {r["id"]}: the summary lacks its fall')
            if f['how'] in ('fused', 'reference_op'):
                check(f['op'], f'{path}: {r["id"]}: {f["how"]} without the op')
            if f['how'] == 'changed_form':
                check(byid.get(f['now'], {}).get('name') == r['name'], f'{path}: {r["id"]}: now {f["now"]} is not its name')
        if path == tiny:
            rms = [r for r in ev if r['name'] == 'rmsnorm' and r.get('fall')]
            check(rms and rms[0]['fall']['how'] == 'reference_op' and rms[0]['fall']['op'] == 'auto_deploy.torch_rmsnorm',
                  f'{path}: rmsnorm not replaced by the reference op: {rms[:1]}')
            check('replaced by reference op auto_deploy.torch_rmsnorm at' in text, f'{path}: no reference-op words')
            check('changed form at' in text, f'{path}: no changed-form words')
        else:
            sw = [r for r in ev if r['name'] == 'swiglu']
            check(sw and sw[0]['fall'] and sw[0]['fall']['how'] == 'fused' and
                  sw[0]['fall']['op'].startswith('auto_deploy.mlir_fused'), f'{path}: swiglu not fused by MLIR: {sw[:1]}')
            check('fused at 002 post_load_fusion/mlir_elementwise_fusion into' in text, f'{path}: no fused words')
            mk = doc['analyses'][0]['mlir_kernels']
            check(len(mk) == 1 and mk[0]['replaced'] == ['aten.silu.default', 'aten.mul.Tensor'] and mk[0]['at'] == 2
                  and mk[0]['count'] == 2 and mk[0]['replaced_nodes'] == 2, f'{path}: mlir kernel not traced: {mk}')
            check('x2: replaced silu, mul at 002 ' in text, f'{path}: the MLIR kernel not named by what it replaced')
            ml = [l for l in text.splitlines() if 'transform mlir_elementwise_fusion' in l]
            check(ml and all('ran: matches=2' in l and 'the log decides' in l for l in ml),
                  f'{path}: MLIR evidence does not read the log: {ml[:1]}')
    check(words >= {'fused', 'reference_op', 'changed_form'}, f'the three words: {sorted(words)}')
    alone = json.loads(run(exe, '--format', 'json', f'{mlir}/002_post_load_fusion_mlir_elementwise_fusion.txt'))
    mk = alone['analyses'][0]['mlir_kernels']
    check(len(mk) == 1 and mk[0]['replaced'] == [] and mk[0]['at'] is None and
          mk[0]['text'].startswith('an MLIR kernel reading 2 tensors'), f'a file on its own: {mk}')
    return t.finish()


if __name__ == '__main__':
    sys.exit(main())
