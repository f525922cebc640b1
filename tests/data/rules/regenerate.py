#!/usr/bin/env python3
"""Regenerate the PTX of the rule tests: ``tests/data/rules/cuda/*.cu`` -> ``tests/data/rules/ptx/<variant>/``.

Each source is compiled for sm_90 three ways: ``lineinfo`` (``-lineinfo``), ``plain`` (no line information)
and ``G`` (``-G``), with the path normalisation of ``tests/data/fixtures/regenerate.py`` (run from the repository
root with ``PWD=/proc/self/cwd``, ``.file`` paths made repository-relative). Run it from anywhere with the
project's Python; it needs nvcc.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures"))
from regenerate import compile_checked  # noqa: E402 (the fixture tools, found by the path above)

ARCH = "sm_90"
VARIANTS = {"lineinfo": ["-lineinfo"], "plain": [], "G": ["-G"]}


def main() -> int:
    for cu in sorted((HERE / "cuda").glob("*.cu")):
        for variant, flags in VARIANTS.items():
            if not compile_checked(cu, ARCH, flags, HERE / "ptx" / variant / f"{cu.stem}.ptx"):
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
