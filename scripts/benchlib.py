"""Timing shared by the benchmark scripts."""
import subprocess, sys, time


def best(cmd, repeat, ok=(0,)):
    """Best wall time of `repeat` runs of cmd; exits when it fails (exit status not in ok)."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - t)
        if r.returncode not in ok:
            sys.exit(f'{" ".join(cmd[:3])} failed ({r.returncode}): {r.stderr.decode()[:400]}')
    return min(times)
