#!/usr/bin/env python3
"""Benchmark: does every analysis grow linearly with the graph?

Builds graphs of 1x, 4x, 16x and 64x the base size with make_large.py (the
base: BASE_COPIES renamed copies of a dump's first module in one module; by
default 21 copies of the 2-layer Mixtral decomposition, about 8,700 nodes,
so 64x is about 560,000 nodes) and times, on each, best of REPEAT:
  - fusescan scan; fusescan discover; fusescan match (all patterns);
  - fusescan match --pattern P, for every pattern of the library alone;
  - fusescan --apply PATTERN --cpu-only --no-render (rewrite every site, the
    CPU numerics of the first; NVRTC's compiles are cached after a warm-up).
Copies of a model never make one long chain, so scan, discover and match
also run on graphs of the shapes make_large.py --shape makes (a chain, a sum
of many terms, a node of many operands, a balanced sum, values behind long
view chains, a chain of catalog chains, RoPE sites all reading one cos and
sin), of 1x, 4x, ... --shape-nodes nodes;
and discover --kernels-from indexes a source tree of 1x, 4x, ... 1,000 lines
of each registration form (custom_op, TORCH_LIBRARY's m.def, transforms).
For each it prints the time, the peak resident memory (the child's
ru_maxrss) and both as a ratio to the 1x figure. Linear cost shows as a
ratio near the size ratio; a quadratic step as a ratio far above it. A row
whose ratio exceeds 1.5 x the size ratio is flagged and the exit status is 1.

usage: scripts/bench_scaling.py [--fusescan build/fusescan] [--dump FILE]
                                [--base-copies 21] [--sizes 1,4,16,64] [--repeat 3]
                                [--shapes chain,sum,fanin,tree,views,motifs,shared] [--shape-nodes 2000]
                                [--no-model]
"""
import argparse, json, os, platform, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DUMP = os.path.join(ROOT, 'tests', 'data', 'export_mixtral_2l', '002_post_export_run_decompositions.txt')
LIMIT = 1.5


def run(cmd):
    """(seconds, peak KiB) of one run; exits when it fails."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f'{" ".join(cmd)} failed ({p.returncode}): {err.decode()[:400]}')
    return dt, usage.ru_maxrss


def best(cmd, repeat):
    runs = [run(cmd) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def patterns(exe):
    out = subprocess.run([exe, 'match', '--format', 'json', DEFAULT_DUMP], capture_output=True, text=True)
    return [p['name'] for p in json.loads(out.stdout)['patterns']]


def nodes_of(exe, path):
    out = subprocess.run([exe, 'scan', '--format', 'json', path], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)['graphs'][0]['nodes']


def source_tree(path, lines):
    """A tree of registrations: `lines` of each form fusescan indexes."""
    os.makedirs(path)
    with open(os.path.join(path, 'ops.py'), 'w') as f:
        f.writelines(f'@torch.library.custom_op("ns::op{i}", mutates_args=())\n' for i in range(lines))
        f.writelines(f'@TransformRegistry.register("t{i}")\n' for i in range(lines))
    with open(os.path.join(path, 'ops.cpp'), 'w') as f:
        f.write('TORCH_LIBRARY(ns, m) {\n')
        f.writelines(f'  m.def("op{i}(Tensor x) -> Tensor");\n' for i in range(lines))
        f.write('}\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--fusescan', default=os.path.join(ROOT, 'build', 'fusescan'))
    ap.add_argument('--dump', default=DEFAULT_DUMP)
    ap.add_argument('--base-copies', type=int, default=21)
    ap.add_argument('--sizes', default='1,4,16,64')
    ap.add_argument('--repeat', type=int, default=3)
    ap.add_argument('--apply', default='rmsnorm', help='pattern applied by the --apply row')
    ap.add_argument('--shapes', default='chain,sum,fanin,tree,views,motifs,shared', help='make_large.py shapes ("" for none)')
    ap.add_argument('--shape-nodes', type=int, default=2000, help='nodes of a shape at 1x')
    ap.add_argument('--no-model', action='store_true', help='the shapes only, no copies of the dump')
    a = ap.parse_args()
    exe, sizes = a.fusescan, [int(x) for x in a.sizes.split(',')]
    make = [sys.executable, os.path.join(ROOT, 'scripts', 'make_large.py')]
    with tempfile.TemporaryDirectory() as tmp:
        graphs, steps = {}, []  # graphs[(input, n)]; steps: (name, args, input)
        if not a.no_model:
            for n in sizes:
                graphs[('model', n)] = os.path.join(tmp, f'x{n}.txt')
                subprocess.run(make + ['--copies', str(n * a.base_copies), '--out', graphs[('model', n)], a.dump],
                               check=True)
            steps = [('scan', ['scan']), ('discover', ['discover']), ('match (all patterns)', ['match'])]
            steps += [(f'match --pattern {p}', ['match', '--pattern', p]) for p in patterns(exe)]
            steps.append((f'--apply {a.apply} --cpu-only', ['--apply', a.apply, '--cpu-only', '--no-render',
                                                             '--out', os.path.join(tmp, 'apply')]))
            steps = [(name, args, 'model') for name, args in steps]
            print(f'base: {a.base_copies} copies of {os.path.relpath(a.dump, ROOT)}; sizes '
                  + ', '.join(f'{n}x = {nodes_of(exe, graphs[("model", n)])} nodes' for n in sizes))
        for shape in filter(None, a.shapes.split(',')):
            for n in sizes:
                graphs[(shape, n)] = os.path.join(tmp, f'{shape}{n}.txt')
                subprocess.run(make + ['--shape', shape, '--nodes', str(n * a.shape_nodes), '--out',
                                       graphs[(shape, n)]], check=True)
            steps += [(f'{cmd} [{shape}]', [cmd], shape) for cmd in ('scan', 'discover', 'match')]
        if a.shapes:
            print(f'shapes: {a.shapes}, {a.shape_nodes} nodes at 1x (make_large.py --shape)')
            for n in sizes:
                graphs[('sources', n)] = os.path.join(tmp, f'src{n}')
                source_tree(graphs[("sources", n)], 1000 * n)
            tiny = os.path.join(ROOT, 'tests', 'data', 'export_tiny_llama_2l', '001_export_export_to_gm.txt')
            steps.append(('discover --kernels-from [sources]', ['discover', tiny, '--kernels-from'], 'sources'))
        print(f'best of {a.repeat}; machine: {platform.machine()}, {os.cpu_count()} cores; '
              f'{time.strftime("%Y-%m-%d")}')
        head = f'{"step":36s}' + ''.join(f'{str(n) + "x s":>9s}' for n in sizes) + \
            ''.join(f'{str(n) + "x MB":>8s}' for n in sizes) + \
            ''.join(f'{"t" + str(n) + "/t1":>8s}' for n in sizes[1:]) + \
            ''.join(f'{"m" + str(n) + "/m1":>8s}' for n in sizes[1:])
        print(head)
        flagged = []
        for name, args, graph in steps:
            run([exe] + args + [graphs[(graph, sizes[0])]])  # warm-up (page cache, NVRTC cache)
            res = {n: best([exe] + args + [graphs[(graph, n)]], a.repeat) for n in sizes}
            t1, m1 = res[sizes[0]]
            tr = [res[n][0] / t1 for n in sizes[1:]]
            mr = [res[n][1] / m1 for n in sizes[1:]]
            bad = [n for n, t, m in zip(sizes[1:], tr, mr) if max(t, m) > LIMIT * n / sizes[0]]
            if bad:
                flagged.append(name)
            print(f'{name:36s}' + ''.join(f'{res[n][0]:9.3f}' for n in sizes) +
                  ''.join(f'{res[n][1] / 1024:8.0f}' for n in sizes) +
                  ''.join(f'{r:8.1f}' for r in tr) + ''.join(f'{r:8.1f}' for r in mr) +
                  ('  > %.1fx size' % LIMIT if bad else ''))
        print(f'every ratio within {LIMIT} x the size ratio' if not flagged else
              f'over {LIMIT} x the size ratio: ' + ', '.join(flagged))
        return 1 if flagged else 0


if __name__ == '__main__':
    sys.exit(main())
