#!/usr/bin/env python3
"""Pattern fragility: for each library pattern, mutate a matching site of its
tests/patterns/NAME.match.txt automatically and check the outcome.

  cast    insert aten.to.dtype between two ops of the match: still matches, or
          fails as "extra cast or view inside the chain"
  view    the same with aten.view.default
  swap    swap the operands of a commutative op of the match: still matches
  second  give an intermediate of the match a second consumer: fails as
          "second consumer"

usage: fragility.py FUSESCAN TESTS_DIR
"""
import json, os, re, shutil, subprocess, sys, tempfile

NODE = re.compile(r'^%([A-Za-z0-9_.]+) = ')


def parse_pattern(path):
    """name -> {kind, refs (argument node names), flags}"""
    nodes = {}
    for line in open(path):
        line = line.split(' #')[0].strip()
        m = re.match(r'(input|node|optional)\s+(\w+)\s*(.*)$', line)
        if not m:
            continue
        kind, name, rest = m.groups()
        args = re.search(r'\s\((.*)\)', rest)
        refs = re.findall(r'[A-Za-z_]\w*', args.group(1)) if args else []
        nodes[name] = {'kind': kind, 'refs': [r for r in refs if r in nodes], 'flags': rest}
    return nodes


# one folder a run: a fixed /tmp path is clobbered by another run of this test at the same time
WORK = tempfile.mkdtemp(prefix='fusescan-fragility-')


def match(exe, pat, text):
    path = os.path.join(WORK, 'dump.txt')
    open(path, 'w').write(text)
    out = subprocess.run([exe, 'match', '--pattern', pat, '--explain', pat, '--format', 'json', path],
                         capture_output=True, text=True)
    if out.returncode not in (0,):
        return None, None, out.stderr
    res = [x for x in json.loads(out.stdout)['results'] if x['pattern'] == pat]
    return (sum(x['matches'] for x in res), {m['cause'] for x in res for m in x.get('near_misses', [])},
            res[0]['bindings'] if res else [])


def line_of(lines, name):
    for i, l in enumerate(lines):
        m = NODE.match(l)
        if m and m.group(1) == name:
            return i
    return None


def out_type(line):
    depth, i = 0, line.index('(')
    for j in range(i, len(line)):
        depth += line[j] in '([' and 1 or line[j] in ')]' and -1 or 0
        if depth == 0:
            return line[j + 4:]  # after ") : "


def redirect(line, old, new):
    head, args = line.split(' = ', 1)
    if f'%{old} :' in args:
        return head + ' = ' + args.replace(f'%{old} :', f'%{new} :', 1)
    return head + ' = ' + re.sub(rf'(?<=[\[(, ]){re.escape(old)}(?=[,\]\)])', new, args, count=1)


def mutations(pat, nodes, bind, lines):
    """(name, mutated text, expected: 'keep' or a cause)"""
    ops = [n for n, v in nodes.items() if v['kind'] != 'input' and n in bind]
    edge = next(((c, p) for c in ops for p in nodes[c]['refs'] if p in ops and nodes[p]['kind'] != 'input'), None)
    if edge:
        c, p = edge
        cg, pg = bind[c], bind[p]
        ip, ic = line_of(lines, pg), line_of(lines, cg)
        typ = out_type(lines[ip])
        if typ and '(' not in typ and 'tuple' not in typ:
            shape, dtype = typ.split(' : ')
            for kind, op in (('cast', f'aten.to.dtype(%{pg} : {typ}, {dtype})'),
                             ('view', f'aten.view.default(%{pg} : {typ}, [-1])')):
                ls = list(lines)
                ls[ic] = redirect(ls[ic], pg, 'fz_' + kind)
                ls.insert(ip + 1, f'%fz_{kind} = {op} : {typ}')
                yield kind, '\n'.join(ls) + '\n', 'extra cast or view inside the chain'
    for n in ops:
        if 'commutative' in nodes[n]['flags']:
            ls = list(lines)
            i = line_of(ls, bind[n])
            head, args = ls[i].split(' = ', 1)
            target, rest = args.split('(', 1)
            body, tail = rest.rsplit(') : ', 1)
            parts = [x.strip() for x in re.split(r',(?![^\[]*\])', body)]
            if len(parts) >= 2:
                parts[0], parts[1] = parts[1], parts[0]
                ls[i] = f'{head} = {target}({", ".join(parts)}) : {tail}'
                yield 'swap', '\n'.join(ls) + '\n', 'keep'
            break
    inner = [n for n in ops if 'shared' not in nodes[n]['flags'] and not any(
        re.match(rf'output\b.*\b{n}\b', l) for l in open(PATS[pat]))]
    for n in inner:
        g = bind[n]
        typ = out_type(lines[line_of(lines, g)])
        if not typ or '(' in typ or 'tuple' in typ:
            continue
        ls = list(lines)
        o = next(i for i, l in enumerate(ls) if l.startswith('output'))
        ls.insert(o, f'%fz_user = aten.neg.default(%{g} : {typ}) : {typ}')
        ls[o + 1] = ls[o + 1] + ', %fz_user'
        yield 'second', '\n'.join(ls) + '\n', 'second consumer'
        break


PATS = {}


def main():
    exe, tests = sys.argv[1], sys.argv[2]
    lib = os.path.join(tests, '..', 'patterns')
    for f in sorted(os.listdir(lib)):
        if f.endswith('.pat'):
            PATS[f[:-4]] = os.path.join(lib, f)
    passed = failed = 0
    for pat, path in PATS.items():
        site = os.path.join(tests, 'patterns', pat + '.match.txt')
        if not os.path.isfile(site):
            failed += 1
            print(f'FAIL {pat}: no {site}: each library pattern needs its matching sites there '
                  '(docs/architecture.md, adding a pattern)')
            continue
        text = open(site).read()
        base, _, binds = match(exe, pat, text)
        if base is None or not binds:
            failed += 1
            why = f'fusescan match failed: {binds.strip()[-300:]}' if base is None else 'nothing in it matches'
            print(f'FAIL {pat}: {site}: {why}, so there is no site to mutate')
            continue
        nodes = parse_pattern(path)
        lines = text.rstrip('\n').split('\n')
        for kind, mutated, expect in mutations(pat, nodes, binds[0], lines):
            n, causes, err = match(exe, pat, mutated)
            ok = n is not None and ((expect == 'keep' and n == base) or
                                    (expect != 'keep' and (n == base or (n == base - 1 and expect in causes))))
            passed += ok
            failed += not ok
            print(f'{"ok  " if ok else "FAIL"} {pat:20} {kind:6} matches {base} -> {n}, causes {sorted(causes) if causes else []}'
                  + ('' if ok else f' (want {expect}) {err if n is None else ""}'))
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    try:
        rc = main()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(rc)
