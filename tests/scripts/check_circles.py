#!/usr/bin/env python3
"""Calls between the files of a library go one way (docs/architecture.md): in
each static library given, a file calls a function of another (nm: the
member's undefined symbol is that member's text symbol) only where no chain
of calls leads back. Prints each circle with the functions that close it.

usage: check_circles.py LIB.a...   (exit 1 on a circle)
"""
import subprocess, sys


def calls(lib):
    """{file: {callee file: {function}}} of one archive"""
    defined, wanted = {}, {}
    out = subprocess.run(['nm', '-A', lib], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.rsplit(':', 2)  # LIB.a:MEMBER.o:ADDRESS TYPE NAME
        if len(fields) != 3:
            continue
        member, parts = fields[1].removesuffix('.o'), fields[2].split()
        if len(parts) == 3 and parts[1] == 'T':
            defined[parts[2]] = member
        elif len(parts) == 2 and parts[0] == 'U':
            wanted.setdefault(member, set()).add(parts[1])
    g = {}
    for member, syms in wanted.items():
        for s in syms:
            if defined.get(s, member) != member:
                g.setdefault(member, {}).setdefault(defined[s], set()).add(s)
    return g


def circles(g):
    """the strongly connected sets of more than one file (Tarjan's, iterative)"""
    index, low, on, stack, found, n = {}, {}, set(), [], [], 0
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g.get(root, {}))))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    part = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        part.append(x)
                        if x == v:
                            break
                    if len(part) > 1:
                        found.append(sorted(part))
            elif w not in index:
                index[w] = low[w] = n
                n += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(g.get(w, {})))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return found


def main():
    bad = 0
    for lib in sys.argv[1:]:
        g, before = calls(lib), bad
        for part in circles(g):
            bad += 1
            print(f'FAIL {lib}: a circle of calls between ' + ', '.join(part))
            for a in part:
                for b in part:
                    if b in g.get(a, {}):
                        print(f'  {a} -> {b}: {", ".join(sorted(g[a][b]))}')
        if bad == before:
            print(f'ok   {lib}: the calls of its {len(g)} calling files go one way')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
