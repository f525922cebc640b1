"""Regenerates traffic.ptx from traffic.cu with nvcc (sm_90, -lineinfo): ``python tests/data/traffic/regenerate.py``."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures"))
from regenerate import compile_checked  # noqa: E402 (the fixture tools, found by the path above)


def main() -> int:
    return 0 if compile_checked(HERE / "traffic.cu", "sm_90", ["-lineinfo"], HERE / "traffic.ptx") else 1


if __name__ == "__main__":
    sys.exit(main())
