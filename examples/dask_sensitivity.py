"""Sensitivity of an ODE model over a parameter sample: its Jacobian at 10⁵ parameter points
on one core, on every core (dualad.vmap) and on a Dask cluster of worker processes.

The model is a damped, driven oscillator

    x'' + 2 ζ ω x' + ω² x = F cos(Ω t),    x(0) = 1, x'(0) = 0,

integrated to T = 10 by 200 fixed RK4 steps inside @numba.njit. Its parameters are
p = (ω, ζ, F, Ω) and its output the final state (x, x'), so each Jacobian is 2 × 4 and the
sample's is (n, 2, 4). The same compiled kernel runs three ways: a serial compiled loop,
dualad.vmap (numba's prange on every core), and dask.array.map_blocks over a LocalCluster
whose worker processes each run the vmap kernel on their blocks (the kernel pickles as
the transform that made it and is loaded from the disk cache there). The three results
are checked to be identical.

    python examples/dask_sensitivity.py                10⁵ points
    python examples/dask_sensitivity.py --quick        2000 points, in seconds
    python examples/dask_sensitivity.py --points 400000 --workers 4

Needs the dask extra: pip install -e ".[dask]".
"""

import argparse
import math
import os
import time

import numba
import numpy as np

import dualad

T_END, STEPS = 10.0, 200


@numba.njit(cache=True)
def acceleration(x, v, t, omega, zeta, force, drive):
    return -2.0 * zeta * omega * v - omega * omega * x + force * math.cos(drive * t)


@numba.njit(cache=True)
def final_state(p):
    """(x, x') at T_END of the driven oscillator with parameters p = (ω, ζ, F, Ω): RK4."""
    omega, zeta, force, drive = p[0], p[1], p[2], p[3]
    h = T_END / STEPS
    x, v, t = 1.0, 0.0, 0.0
    for _ in range(STEPS):
        k1x, k1v = v, acceleration(x, v, t, omega, zeta, force, drive)
        k2x = v + 0.5 * h * k1v
        k2v = acceleration(x + 0.5 * h * k1x, k2x, t + 0.5 * h, omega, zeta, force, drive)
        k3x = v + 0.5 * h * k2v
        k3v = acceleration(x + 0.5 * h * k2x, k3x, t + 0.5 * h, omega, zeta, force, drive)
        k4x = v + h * k3v
        k4v = acceleration(x + h * k3x, k4x, t + h, omega, zeta, force, drive)
        x = x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x)
        v = v + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
        t += h
    state = np.empty(2)  # np.array([x, v]) of these loop-carried accumulators does not compile
    state[0], state[1] = x, v
    return state


jacobian = dualad.jacobian(final_state)      # (4,) -> (2, 4), a compiled kernel
batch_jacobian = dualad.vmap(jacobian)        # (n, 4) -> (n, 2, 4), on every core


@numba.njit
def serial_jacobians(points):
    """The same kernel in a plain compiled loop: one core."""
    out = np.empty((points.shape[0], 2, 4))
    for i in range(points.shape[0]):
        out[i] = jacobian(points[i])
    return out


def sample(n, seed=0):
    """n parameter points: ω in [0.5, 2], ζ in [0.05, 0.5], F in [0, 1], Ω in [0.5, 2]."""
    low, high = np.array([0.5, 0.05, 0.0, 0.5]), np.array([2.0, 0.5, 1.0, 2.0])
    return low + (high - low) * np.random.default_rng(seed).random((n, 4))


def timed(fn, *args, repeats=3):
    """(result, best seconds of `repeats` runs after a first, warming one)."""
    result = fn(*args)
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn(*args)
        best = min(best, time.perf_counter() - start)
    return result, best


def on_cluster(points, workers, block):
    """The Jacobians by dask.array.map_blocks over a LocalCluster of worker processes: each
    block (block, 4) goes to batch_jacobian, pickled to the workers. Returns (result,
    seconds of the first run, which loads the kernels in every worker, best seconds)."""
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    # one numba thread per worker process: the workers are the parallelism here
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, env={"NUMBA_NUM_THREADS": "1"}) as cluster, \
            Client(cluster) as client:
        lazy = da.from_array(points, chunks=(block, 4))
        jacobians = lazy.map_blocks(batch_jacobian, dtype=np.float64, new_axis=1,
                                    chunks=(lazy.chunks[0], (2,), (4,)),
                                    meta=np.empty((0, 2, 4)))
        start = time.perf_counter()
        result = client.compute(jacobians).result()
        first = time.perf_counter() - start
        best = math.inf
        for _ in range(3):
            start = time.perf_counter()
            result = client.compute(jacobians).result()
            best = min(best, time.perf_counter() - start)
    return result, first, best


def run(n, workers=None, block=None):
    """Time the three ways on n points; returns {way: (seconds, Jacobians)} and checks that
    they agree exactly."""
    workers = workers or os.cpu_count()
    points = sample(n)
    serial, t_serial = timed(serial_jacobians, points)
    batched, t_vmap = timed(batch_jacobian, points)
    np.testing.assert_array_equal(batched, serial)
    block = block or max(1, -(-n // (4 * workers)))  # four blocks per worker
    clustered, t_first, t_cluster = on_cluster(points, workers, block)
    np.testing.assert_array_equal(clustered, serial)
    return {"one core (serial compiled loop)": (t_serial, serial),
            f"every core (vmap, {numba.get_num_threads()} threads)": (t_vmap, batched),
            f"Dask LocalCluster ({workers} worker processes, blocks of {block})": (t_cluster, clustered),
            "Dask, first run (kernels loaded in each worker)": (t_first, clustered)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2000 points, in seconds")
    parser.add_argument("--points", type=int, default=None, help="sample size (default 10^5)")
    parser.add_argument("--workers", type=int, default=None, help="Dask worker processes (default: cores)")
    args = parser.parse_args()
    n = args.points or (2000 if args.quick else 100_000)
    rows = run(n, args.workers)
    serial = rows["one core (serial compiled loop)"][0]
    print(f"Jacobians (2 x 4) of the driven oscillator's final state at {n} parameter points "
          f"({os.cpu_count()} cores); all three results identical")
    for way, (seconds, _) in rows.items():
        print(f"  {way:<62} {seconds:8.3f} s   {serial / seconds:5.2f}x")


if __name__ == "__main__":
    main()
