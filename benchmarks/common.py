"""Timing helpers shared by the benchmark scripts: medians of repeats, Markdown tables."""

import os
import sys
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def per_call(fn, *args, min_time=0.05, repeats=5):
    """Median seconds per call of fn(*args) over `repeats` timed batches of >= min_time each."""
    return per_call_spread(fn, *args, min_time=min_time, repeats=repeats)[0]


def per_call_spread(fn, *args, min_time=0.05, repeats=5, slow=None):
    """(median, half the interquartile range) of seconds per call of fn(*args) over `repeats`
    timed batches of >= min_time each; at most 3 batches of one call where one call takes over
    `slow` seconds. (A round preempted by another process on a shared machine would make half
    the full range meaningless.)"""
    fn(*args)  # warm up (and compile, where there is anything to compile)
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            fn(*args)
        elapsed = time.perf_counter() - start
        if slow is not None and loops == 1 and elapsed > slow:
            repeats = min(repeats, 3)
        if elapsed >= min_time or loops >= 1 << 20:
            break
        loops *= 2
    samples = [elapsed / loops]
    for _ in range(repeats - 1):
        start = time.perf_counter()
        for _ in range(loops):
            fn(*args)
        samples.append((time.perf_counter() - start) / loops)
    low, median, high = np.percentile(samples, [25, 50, 75])
    return float(median), float(high - low) / 2


def fmt_time(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def stamp():
    """When, how and on what load a result was measured: its first line."""
    command = " ".join(["python", f"benchmarks/{Path(sys.argv[0]).name}"] + sys.argv[1:])
    return (f"*Measured {time.strftime('%Y-%m-%d %H:%M')} by `{command}`, load average "
            f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores.*")


def save(name, text):
    """results/name.md: the stamp, then text."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.md").write_text(stamp() + "\n\n" + text + "\n")


def save_part(name, part, text):
    """Write text as one part of results/name.md, between markers, keeping the other parts
    (so that a benchmark's sections can be re-run one at a time)."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.md"
    begin, end = f"<!-- {part} -->", f"<!-- /{part} -->"
    old = path.read_text() if path.exists() else ""
    block = f"{begin}\n{stamp()}\n\n{text}\n{end}"
    if begin in old and end in old:
        new = old[:old.index(begin)] + block + old[old.index(end) + len(end):]
    else:
        new = (old.rstrip("\n") + "\n\n" if old.strip() else "") + block + "\n"
    path.write_text(new)


def pyplot():
    """matplotlib.pyplot with a file backend, or None (and a note) when it is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[bench]'): no plot")
        return None
    return plt


def save_plot(fig, name):
    RESULTS.mkdir(exist_ok=True)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{name}.png", dpi=120)
