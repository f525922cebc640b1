#!/usr/bin/env python3
"""Regenerate ``kernels.ptx`` from ``kernels.cu`` for sm_80 with ``-lineinfo`` (the language server's default
flags), with the path normalisation of ``tests/data/fixtures/regenerate.py`` (``.file`` paths made
repository-relative). Run it from anywhere with the project's Python; it needs nvcc."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures"))
from regenerate import compile_checked  # noqa: E402 (the fixture tools, found by the path above)


def main() -> int:
    return 0 if compile_checked(HERE / "kernels.cu", "sm_80", ["-lineinfo"], HERE / "kernels.ptx") else 1


if __name__ == "__main__":
    sys.exit(main())
