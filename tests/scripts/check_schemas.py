#!/usr/bin/env python3
"""Every JSON report fusescan writes against its schema in docs/schemas/
(draft 2020-12): scan, discover and match reports of the fixtures, and the
kernel descriptors --emit writes (fusescan.kernel/3), each document valid
and its schema name the schema's. The validator is jsonschema_lite.py (the
subset the schemas use); a document that breaks each keyword must fail it.

usage: check_schemas.py FUSESCAN TESTS_DIR
"""
import glob, json, os, shutil, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonschema_lite import errors  # noqa: E402

SCHEMAS = {'fusescan.scan/1': 'scan-1.json', 'fusescan.discover/1': 'discover-1.json',
           'fusescan.match/1': 'match-1.json', 'fusescan.kernel/3': 'kernel-3.json'}


def reports(exe, tests, work):
    """(what, document) of every report: the fixtures' scans, discoveries and matches, and --emit's descriptors"""
    d = os.path.join(tests, 'data')
    inputs = sorted(glob.glob(os.path.join(d, 'export_*'))) + sorted(glob.glob(os.path.join(d, 'fp8*'))) + [os.path.join(d, r) for r in ('adrun_tiny_llama_2l', 'adrun_mlir_2l')]
    runs = [[c, '--format', 'json', p] for p in inputs for c in ('scan', 'discover')]
    run = os.path.join(d, 'adrun_tiny_llama_2l')
    runs += [['discover', '--format', 'json', '--kernels-from', os.path.join(d, 'srctree'), run],
             ['match', '--format', 'json', '--log', os.path.join(run, 'ad.log'), run],
             ['match', '--format', 'json', '--expect', os.path.join(d, 'expect_tiny.txt'), '--explain', 'rmsnorm', run],
             ['match', '--format', 'json', os.path.join(d, 'export_gemma2_2l')]]
    for args in runs:
        out = subprocess.run([exe] + args, capture_output=True, text=True)
        if out.returncode not in (0, 1):
            raise SystemExit(f'FAIL fusescan {" ".join(args)}: exit {out.returncode}: {out.stderr[-300:]}')
        yield ' '.join(args[:1] + args[-1:]), json.loads(out.stdout)
    tiny = os.path.join(d, 'export_tiny_llama_2l', '001_export_export_to_gm.txt')
    g = os.path.join(d, 'gemm')
    pats = ['--patterns', os.path.join(g, 'patterns')]
    for i, (cand, dump, extra) in enumerate([('rmsnorm-3feecfe3', tiny, []), ('parallel_gemm', os.path.join(g, 'qkv.txt'), []),
                                             ('gemm_residual', os.path.join(g, 'oproj_residual.txt'), pats)]):
        emit = os.path.join(work, f'emit{i}')
        out = subprocess.run([exe, '--apply', cand, *extra, '--cpu-only', '--no-render', '--tokens', '4', '--buckets', '1,4,300',
                              '--out', os.path.join(work, f'out{i}'), '--emit', emit, dump], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f'FAIL --apply {cand} --emit: exit {out.returncode}: {out.stderr[-300:]}')
        for f in sorted(glob.glob(os.path.join(emit, '*.json'))):
            yield f'--emit {cand} {os.path.basename(f)}', json.load(open(f))


def broken(schema):
    """documents that break the schema, one keyword each: a wrong type, a missing required
    property, an unknown one, a value outside an enum, a bad array item"""
    yield 'not an object', []
    yield 'no properties', {}
    yield 'an unknown property', {k: None for k in schema.get('required', [])} | {'not_in_the_schema': 1}
    yield 'a schema name not its own', {'schema': 'fusescan.other/1', 'format': 'fusescan.other/1'}


def mutated(doc):
    """a real document with one value deep inside made wrong: the first number a string, the first
    object inside an array without its first property"""
    def first(v, want):
        if want(v):
            return v
        for x in (v.values() if isinstance(v, dict) else v if isinstance(v, list) else ()):
            f = first(x, want)
            if f is not None:
                return f
    d = json.loads(json.dumps(doc))
    holder = first(d, lambda v: isinstance(v, dict) and any(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v.values()))
    if holder is not None:
        k = next(k for k, x in holder.items() if isinstance(x, (int, float)) and not isinstance(x, bool))
        holder[k] = str(holder[k])
        yield f'"{k}" a string', d
    d = json.loads(json.dumps(doc))
    arr = first(d, lambda v: isinstance(v, list) and v and isinstance(v[0], dict) and v[0])
    if arr is not None:
        k = next(iter(arr[0]))
        del arr[0][k]
        yield f'an item without "{k}"', d


def main():
    exe, tests = sys.argv[1:3]
    root = os.path.join(tests, '..', 'docs', 'schemas')
    schemas = {name: json.load(open(os.path.join(root, f))) for name, f in SCHEMAS.items()}
    passed = failed = 0
    seen = set()

    def verdict(ok, what):
        nonlocal passed, failed
        passed += ok
        failed += not ok
        if not ok:
            print('FAIL', what)

    for what, doc in reports(exe, tests, WORK):
        name = doc.get('schema', doc.get('format'))
        if name in schemas and name not in seen:  # the first real document, broken deep inside: it must fail
            for why, bad in mutated(doc):
                verdict(bool(errors(bad, schemas[name])), f'{name}: {what} with {why} passes')
        seen.add(name)
        if name not in schemas:
            verdict(False, f'{what}: schema {name!r} has no file in docs/schemas')
            continue
        errs = errors(doc, schemas[name])
        verdict(not errs, f'{what}: not {name}: ' + '; '.join(errs[:5]))
    for name in sorted(set(schemas) - seen):
        verdict(False, f'no report of {name} was checked')
    for name, s in sorted(schemas.items()):
        verdict(s.get('$schema') == 'https://json-schema.org/draft/2020-12/schema', f'{name}: not draft 2020-12')
        for why, doc in broken(s):
            verdict(bool(errors(doc, s)), f'{name}: a document with {why} passes')
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


# the --emit outputs: one folder a run
WORK = tempfile.mkdtemp(prefix='fusescan-schemas-')

if __name__ == '__main__':
    try:
        rc = main()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(rc)
