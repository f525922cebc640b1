#!/usr/bin/env python3
"""What each rule costs and finds on the nvcc corpus, in one run: seconds per rule over all files (the
first rule that needs ``ptxas -v`` pays for it; the cache is a fresh private directory, so the first pass is
cold and a second pass warm), and the number of findings per rule. Opt-in rules are selected too.

    python benchmarks/rules_cost.py [PTX files or folders]    (default: the sm_90 -lineinfo nvcc corpus)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from corpus import ptx_files

from ptxstatic.config import Config
from ptxstatic.ptx.parser import parse_file
from ptxstatic.rules.catalog import all_rules
from ptxstatic.rules.engine import lint_module

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "fixtures" / "ptx" / "nvcc" / "sm_90" / "lineinfo"


def one_pass(modules: list, rules: list) -> tuple[dict[str, float], Counter]:
    """Seconds per rule and findings per rule over all modules (each rule alone, in code order)."""
    config = Config(select=("PS",))
    spent: dict[str, float] = dict.fromkeys((r.code for r in rules), 0.0)
    found: Counter = Counter()
    for module in modules:
        for r in rules:
            start = time.perf_counter()
            findings = lint_module(module, config, rules=[r])
            spent[r.code] += time.perf_counter() - start
            found[r.code] += len(findings)
    return spent, found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, default=[CORPUS])
    opts = ap.parse_args(argv)
    files = ptx_files(opts.paths)
    modules = [parse_file(p, recover=True) for p in files]
    kernels = sum(len(m.kernels) for m in modules)
    rules = all_rules()
    with tempfile.TemporaryDirectory(prefix="ptxstatic-rules-cost-") as cache:
        os.environ["PTXSTATIC_CACHE_DIR"] = cache
        cold, found = one_pass(modules, rules)
        warm, _ = one_pass(modules, rules)
    print(f"{len(files)} files, {kernels} kernels")
    print(f"{'rule':6} {'cold s':>8} {'warm s':>8} {'findings':>9}")
    for r in rules:
        print(f"{r.code:6} {cold[r.code]:8.2f} {warm[r.code]:8.2f} {found[r.code]:9d}")
    print(f"{'all':6} {sum(cold.values()):8.2f} {sum(warm.values()):8.2f} {sum(found.values()):9d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
