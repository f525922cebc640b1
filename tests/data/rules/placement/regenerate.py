#!/usr/bin/env python3
"""Regenerate ``placement.ptx`` from ``placement.cu`` (sm_80, ``-lineinfo``, ``-isystem vendor``,
``--expt-relaxed-constexpr``), with the path normalisation of ``tests/data/fixtures/regenerate.py`` (``.file``
paths repository-relative, the toolkit's as ``/usr/local/cuda``; libstdc++'s stay as this machine has them).
Run it from anywhere with the project's Python; it needs nvcc."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "fixtures"))
from regenerate import compile_checked, rel  # noqa: E402 (the fixture tools, found by the path above)

FLAGS = ["-lineinfo", "--expt-relaxed-constexpr", "-isystem", rel(HERE / "vendor")]


def main() -> int:
    return 0 if compile_checked(HERE / "placement.cu", "sm_80", FLAGS, HERE / "placement.ptx") else 1


if __name__ == "__main__":
    sys.exit(main())
