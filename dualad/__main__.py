"""Command line: `python -m dualad demo` | `python -m dualad bench [--quick]`."""

import argparse
import runpy
import sys
from pathlib import Path


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dualad")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="the textbook worked examples, with a forward trace")
    bench = sub.add_parser("bench", help="run benchmarks/run.py from a source checkout")
    bench.add_argument("--quick", action="store_true", help="small sizes, few rounds")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run

        run()
        return 0
    script = Path(__file__).resolve().parent.parent / "benchmarks" / "run.py"
    if not script.exists():
        print("benchmarks/ is not installed with the package: run it from a source checkout",
              file=sys.stderr)
        return 2
    sys.argv = [str(script)] + (["--quick"] if args.quick else [])
    runpy.run_path(str(script), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
