"""What the memory rules (PS101, PS102) cost and find on the nvcc corpus: seconds per file for the two rules
against the other rules, how many accesses were measured by emulation and how many estimated, and every
finding, so that each can be checked by hand.

    python benchmarks/memory_rules.py [PTX files or folders]    (default: the sm_90 -lineinfo nvcc corpus)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from corpus import ptx_files

from ptxstatic.config import Config
from ptxstatic.ptx.parser import parse_file
from ptxstatic.rules.catalog import all_rules
from ptxstatic.rules.engine import lint_module

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "fixtures" / "ptx" / "nvcc" / "sm_90" / "lineinfo"
MEMORY = ("PS101", "PS102")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, default=[CORPUS])
    opts = ap.parse_args(argv)
    rules = all_rules()
    memory = [r for r in rules if r.code in MEMORY]
    others = [r for r in rules if r.code not in MEMORY]
    spent = {"memory": 0.0, "others": 0.0}
    methods = {"emulation": 0, "affine": 0}
    kernels = 0
    for path in ptx_files(opts.paths):
        module = parse_file(path, recover=True)
        kernels += len(module.kernels)
        times = {}
        for name, chosen in (("others", others), ("memory", memory)):
            start = time.perf_counter()
            found = lint_module(module, Config(), rules=chosen, on_failure=print)
            times[name] = time.perf_counter() - start
            spent[name] += times[name]
        print(f"{path.name:24s} {len(module.kernels):3d} kernels  memory rules {times['memory']:6.2f} s  "
              f"other rules {times['others']:6.2f} s  {len(found)} findings")
        for f in found:
            methods[f.properties["method"]] += 1
            print(f"    {f.code} {f.display_name or f.kernel} line {(f.source or f.ptx).line}: {f.message}")
    print(f"{kernels} kernels: memory rules {spent['memory']:.2f} s ({spent['memory'] / max(kernels, 1):.3f} s a "
          f"kernel), the other rules {spent['others']:.2f} s; findings measured by emulation "
          f"{methods['emulation']}, estimated from the affine stride {methods['affine']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
