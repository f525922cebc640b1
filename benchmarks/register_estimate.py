#!/usr/bin/env python3
"""How close the register count estimated from the PTX comes to ptxas's, in one run.

Where ptxas cannot assemble for the target GPU (CUDA 13 has no Maxwell), ptxstatic estimates registers per
thread from the PTX's register pressure (ptxstatic.features.resources). This compares that estimate with
``ptxas -v`` for every kernel of the parser corpus compiled for one architecture, and prints the median
difference, the mean absolute difference and the share within 4 registers.

    python benchmarks/register_estimate.py [--arch sm_75]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ptxstatic.errors import PtxstaticError  # noqa: E402
from ptxstatic.features.resources import estimate_resources  # noqa: E402
from ptxstatic.ptx import parse_file  # noqa: E402
from ptxstatic.ptx.printer import module as print_module  # noqa: E402
from ptxstatic.toolchain.ptxas import ptxas_stats  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", default="sm_75", help="corpus architecture and ptxas -arch (default sm_75)")
    args = parser.parse_args()
    pairs = []
    for path in sorted((ROOT / "tests/data/fixtures/ptx/nvcc" / args.arch / "lineinfo").glob("*.ptx")):
        module = parse_file(path, recover=True)
        try:
            measured = ptxas_stats(print_module(module), args.arch)
        except PtxstaticError as exc:
            print(f"{path.name}: skipped: {exc}")
            continue
        if measured is None:
            print("ptxas is not on the PATH")
            return 1
        estimated = estimate_resources(module, args.arch, "benchmark")
        pairs += [(estimated[k.name].registers, measured[k.name].registers) for k in module.kernels
                  if k.name in measured and k.name in estimated]
    diffs = [e - m for e, m in pairs]
    print(f"{len(pairs)} kernels, {args.arch}: estimate - ptxas registers: median {statistics.median(diffs):+g}, "
          f"mean absolute {statistics.mean(abs(d) for d in diffs):.1f}, "
          f"within 4: {sum(abs(d) <= 4 for d in diffs) / len(diffs):.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
