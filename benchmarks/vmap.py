"""dualad.vmap of compiled kernels against a serial compiled loop, on this machine's cores.

Problem: the Jacobian (2 × 4) of examples/dask_sensitivity.py's ODE model (a damped, driven
oscillator, 200 RK4 steps in @numba.njit) at 4000 parameter points, by its auto kernel
(forward mode here) and by the compiled tape (jacrev). Columns: a serial compiled loop (an
@njit loop calling the kernel), vmap on one numba thread (the machinery's overhead) and on
every thread (numba.set_num_threads); the speed-up is the serial loop's time over vmap's on
every thread, per round. Every vmap result is checked to equal the serial loop's bit for
bit. The three are timed in turn, round after round (7; each a batch of >= 50 ms): medians
over rounds ± half their range. The cores are shared with other work, which weighs on the
parallel column first: a round during which other processes used more than 0.2 of a core
(from /proc/stat) is discarded and run again, for up to 10 minutes.

    python benchmarks/vmap.py [--quick] [--points 4000]
"""

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

import numba
import numpy as np

import dualad
from common import fmt_time, per_call, save, table

ROOT = Path(__file__).resolve().parent.parent


def _example(name):
    """examples/<name>.py, imported as the module `name` (in sys.modules: numba's disk cache
    of its cache=True functions names their module, and one loaded anonymously is
    '<dynamic>', which the next process cannot load)."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
        module = sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return sys.modules[name]


def serial_loop(kernel):
    @numba.njit
    def loop(points):
        out = np.empty((points.shape[0], 2, 4))
        for i in range(points.shape[0]):
            out[i] = kernel(points[i])
        return out
    return loop


def _busy_seconds():
    """CPU seconds all processes have used (Linux /proc/stat), or None elsewhere."""
    try:
        with open("/proc/stat") as stat:
            fields = stat.readline().split()[1:]
    except OSError:
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = map(int, fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _others(run):
    """run(); the cores other processes used meanwhile, on average (0 where unknown)."""
    busy, own, start = _busy_seconds(), sum(os.times()[:2]), time.perf_counter()
    run()
    if busy is None:
        return 0.0
    wall = time.perf_counter() - start
    return max(0.0, (_busy_seconds() - busy - (sum(os.times()[:2]) - own)) / wall)


def measure(points, rounds=7, quiet=0.2, patience=600.0):
    """Per kernel: (name, points, serial, vmap on 1 thread, threads, vmap on every thread,
    speed-up, rounds discarded), the times (median, half range) over `rounds` rounds that
    time the three in turn. A round during which other processes used more than `quiet` of
    a core is discarded and run again (for up to `patience` seconds, then kept)."""
    model = _example("dask_sensitivity")
    rows = []
    for name, kernel in (("jacobian (auto: forward)", model.jacobian),
                         ("jacrev (compiled tape)", dualad.jacrev(model.final_state))):
        loop, mapped = serial_loop(kernel), dualad.vmap(kernel)
        expected = loop(points)
        threads = numba.get_num_threads()
        samples, discarded, deadline = {"serial": [], 1: [], threads: []}, 0, time.time() + patience
        try:
            while len(samples["serial"]) < rounds:
                times = {}

                def one_round():
                    times["serial"] = per_call(loop, points, repeats=1)
                    for used in (1, threads):
                        numba.set_num_threads(used)
                        np.testing.assert_array_equal(mapped(points), expected)
                        times[used] = per_call(mapped, points, repeats=1)
                    numba.set_num_threads(threads)

                if _others(one_round) > quiet and time.time() < deadline:
                    discarded += 1
                    continue
                for key, value in times.items():
                    samples[key].append(value)
        finally:
            numba.set_num_threads(threads)
        ratios = np.array(samples["serial"]) / np.array(samples[threads])
        spread = {key: _spread(values) for key, values in samples.items()}
        rows.append((name, len(points), spread["serial"], spread[1], threads, spread[threads],
                     _spread(ratios), discarded))
    return rows


def _spread(values):
    return float(np.median(values)), (max(values) - min(values)) / 2


def _cell(spread):
    median, half = spread
    return f"{fmt_time(median)} ± {fmt_time(half)}"


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="400 points, 3 rounds")
    parser.add_argument("--points", type=int, default=4000)
    args = parser.parse_args(argv)
    n = 400 if args.quick else args.points
    points = _example("dask_sensitivity").sample(n)
    rows = measure(points, rounds=3 if args.quick else 7)
    threads = rows[0][4]
    body = table(["kernel", "points", "serial compiled loop", "vmap, 1 thread",
                  f"vmap, {threads} threads", "speed-up", "rounds discarded"],
                 [(name, count, _cell(serial), _cell(one), _cell(every),
                   f"{ratio[0]:.2f}× ± {ratio[1]:.2f}", discarded)
                  for name, count, serial, one, _, every, ratio, discarded in rows])
    text = (f"## vmap of compiled kernels ({os.cpu_count()} cores, {threads} numba threads)\n\n"
            f"The Jacobian (2 × 4) of examples/dask_sensitivity.py's oscillator model (200 RK4 "
            f"steps). Medians over rounds that time the three in turn ± half their range; every "
            f"vmap result equals the serial loop's bit for bit. The cores are shared: a round "
            f"during which other processes used more than 0.2 of a core is discarded and run "
            f"again.\n\n{body}")
    print(text)
    if not args.quick:
        save("vmap", text)


if __name__ == "__main__":
    main()
