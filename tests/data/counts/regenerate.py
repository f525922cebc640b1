#!/usr/bin/env python3
"""Regenerate ``data.ptx`` from ``data.cu`` for sm_90 with ``-lineinfo``, with the path normalisation of
``tests/data/fixtures/regenerate.py`` (``.file`` paths made repository-relative). Run it from anywhere with the
project's Python; it needs nvcc."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures"))
from regenerate import compile_checked  # noqa: E402 (the fixture tools, found by the path above)


def main() -> int:
    return 0 if compile_checked(HERE / "data.cu", "sm_90", ["-lineinfo"], HERE / "data.ptx") else 1


if __name__ == "__main__":
    sys.exit(main())
