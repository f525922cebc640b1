#!/usr/bin/env python3
"""How long ``ptxstatic check`` takes on an unchanged tree, as a fraction of the first run, in one run.

It copies the project's CUDA sources (``tests/data/cuda/*.cu``, ``microbenchmarks/*.cu`` with its header, and the
check tests' project; ``unrolled.cu``, the 26k-line parser benchmark input, only with ``--all``) into a temporary tree
with a ``ptxstatic.toml`` (``-arch=sm_90 -lineinfo``), then runs ``ptxstatic check --format json`` there as
a new process (Python start-up included) with an empty private result cache, and again ``--repeat`` times
on the unchanged tree. It prints both times, the files the second run took from the cache, and the ratio
warm / cold (the goal: at most 0.10).

    python benchmarks/check_cache.py [--repeat 3] [--jobs 2] [--all]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def sources(include_unrolled: bool) -> list[Path]:
    files = sorted((ROOT / "tests" / "data" / "cuda").glob("*.cu")) + sorted((ROOT / "microbenchmarks").glob("*.cu"))
    return [f for f in files if include_unrolled or f.stem != "unrolled"]


def run_check(tree: Path, env: dict[str, str], jobs: int) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "ptxstatic", "check", "--format", "json", "--jobs", str(jobs), "."],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"ptxstatic check failed (exit {proc.returncode}):\n{proc.stderr}")
    return seconds, json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="warm runs (the median is reported)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--all", action="store_true", help="include unrolled.cu")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ptxstatic-check-bench-") as tmp:
        tree = Path(tmp) / "tree"
        shutil.copytree(ROOT / "tests" / "data" / "check" / "project" / "src", tree / "project")
        for f in sources(args.all):
            (tree / f.parent.name).mkdir(exist_ok=True)
            shutil.copy(f, tree / f.parent.name / f.name)
        shutil.copy(ROOT / "microbenchmarks" / "common.cuh", tree / "microbenchmarks")
        (tree / "ptxstatic.toml").write_text('nvcc-flags = "-arch=sm_90 -lineinfo"\n')
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   PTXSTATIC_CACHE_DIR=str(Path(tmp) / "cache"))
        env.pop("PTXSTATIC_NO_CACHE", None)
        cold, first = run_check(tree, env, args.jobs)
        warm_runs = [run_check(tree, env, args.jobs) for _ in range(args.repeat)]
        warm = statistics.median(s for s, _ in warm_runs)
        cached = warm_runs[-1][1]["summary"]["cached"]
        files = first["summary"]["files"]
        print(f"files: {files} (.cu and .cuh), jobs: {args.jobs}")
        print(f"first run (empty cache):     {cold:7.2f} s, {first['summary']['findings']} findings")
        print(f"unchanged tree (median of {args.repeat}): {warm:7.2f} s, {cached} of {files} files from the cache")
        print(f"ratio warm / cold: {warm / cold:.3f} (goal <= 0.10)")


if __name__ == "__main__":
    main()
