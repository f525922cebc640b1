#!/usr/bin/env python3
"""Regenerate ``targets_<arch>.ptx`` from ``targets.cu`` for sm_89, sm_100a and sm_120, with the path normalisation
of ``tests/data/fixtures/regenerate.py``, each checked by ptxas. Run it from anywhere with the project's Python; it
needs nvcc."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures"))
from regenerate import compile_checked  # noqa: E402 (the fixture tools, found by the path above)

ARCHS = ("sm_89", "sm_100a", "sm_120")


def main() -> int:
    ok = [compile_checked(HERE / "targets.cu", arch, [], HERE / f"targets_{arch.replace('_', '')}.ptx")
          for arch in ARCHS]
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())
