#!/usr/bin/env python3
"""Regenerate the PTX of the report tests: ``tests/data/report/kernels.cu`` -> ``kernels.ptx``.

Compiled for sm_90 with ``-lineinfo`` and the path normalisation of ``tests/data/fixtures/regenerate.py`` (``.file``
paths repository-relative). Run it from anywhere with the project's Python; it needs nvcc.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures"))
from regenerate import compile_checked  # noqa: E402 (the fixture tools, found by the path above)


def main() -> int:
    return 0 if compile_checked(HERE / "kernels.cu", "sm_90", ["-lineinfo"], HERE / "kernels.ptx") else 1


if __name__ == "__main__":
    sys.exit(main())
