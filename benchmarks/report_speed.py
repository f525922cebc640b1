#!/usr/bin/env python3
"""How long ``ptxstatic report`` takes for a file of ten kernels (the goal: at most 5 s), in one run.

It runs ``ptxstatic report tests/data/report/kernels.ptx --out TMP`` as a new process (Python start-up,
imports, model loading, analysis, prediction, plots, graphs and the page all included) once to warm the
caches (matplotlib's font cache, the parser's tables), then ``--repeat`` times, and prints the median wall
and CPU seconds and their ratio to the goal. ``--cu`` reports ``kernels.cu`` instead (nvcc's compile
included); ``--launch GRID/BLOCK`` adds a launch (static block counts for every kernel).

    python benchmarks/report_speed.py [--repeat 5] [--cu] [--launch 64/256]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from child_time import run_timed

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "report"
GOAL_S = 5.0


def run_once(args: list[str], out: str) -> tuple[float, float]:
    """Wall and CPU seconds of one ``ptxstatic report`` process."""
    proc, wall, cpu = run_timed([sys.executable, "-m", "ptxstatic", "report", *args, "--out", out], cwd=ROOT,
                                timeout=600)
    if proc.returncode != 0:
        sys.exit(f"ptxstatic report failed (exit {proc.returncode}):\n{proc.stderr}")
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed runs (the median is reported)")
    parser.add_argument("--cu", action="store_true", help="report kernels.cu (compiled with nvcc) instead of its PTX")
    parser.add_argument("--launch", metavar="GRID/BLOCK", help="a launch for every kernel")
    args = parser.parse_args()
    source = DATA / ("kernels.cu" if args.cu else "kernels.ptx")
    command = [str(source.relative_to(ROOT))]
    if args.cu:
        command += ["--nvcc-flags", "-arch=sm_90 -lineinfo"]
    if args.launch:
        command += ["--launch", args.launch]
    with tempfile.TemporaryDirectory(prefix="ptxstatic-report-bench-") as out:
        run_once(command, out)
        runs = [run_once(command, out) for _ in range(args.repeat)]
        size = os.path.getsize(Path(out) / "kernels.html")
    wall = statistics.median(w for w, _ in runs)
    cpu = statistics.median(c for _, c in runs)
    print(f"ptxstatic report {' '.join(command)}: 10 kernels, page {size / 1e3:.0f} kB")
    print(f"median of {args.repeat} runs: {wall:.2f} s wall, {cpu:.2f} s CPU; wall / goal ({GOAL_S:g} s) = "
          f"{wall / GOAL_S:.2f}")


if __name__ == "__main__":
    main()
