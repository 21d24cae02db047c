"""Run every benchmark: `python benchmarks/run.py [--quick]` or `python -m dualad bench`."""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import accuracy  # noqa: E402
import checkpoint  # noqa: E402
import compiled  # noqa: E402
import first_use  # noqa: E402
import linalg  # noqa: E402
import modes  # noqa: E402
import peers  # noqa: E402
import python_path  # noqa: E402
import real_code  # noqa: E402

BENCHMARKS = [real_code, python_path, compiled, linalg, modes, checkpoint, peers, accuracy, first_use]


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="small sizes, few rounds")
    args = parser.parse_args(argv)
    for bench in BENCHMARKS:
        bench.main(["--quick"] if args.quick else [])


if __name__ == "__main__":
    main()
