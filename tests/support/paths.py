"""Where the test data is (every input under ``tests/data/``), and skips for tools a machine may lack."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
FIXTURES = DATA / "fixtures" / "ptx"
CUDA_SOURCES = DATA / "cuda"
FRONTEND_DATA = DATA / "frontend"
# The GTX Titan X measurements (not part of the repository): $PTXSTATIC_TITANX_DATA, else ../shared/data beside it.
TITANX_DATA = Path(os.environ.get("PTXSTATIC_TITANX_DATA") or ROOT.parent / "shared" / "data" / "gpuptxmodel-gtxtitanx")
# ... and its validation applications: $PTXSTATIC_TITANX_APPS, else beside it
TITANX_APPS = Path(os.environ.get("PTXSTATIC_TITANX_APPS")
                   or TITANX_DATA.parent / "gpuptxmodel-gtxtitanx-apps-validation")

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on the PATH")
needs_ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas is not on the PATH")


def corpus_files() -> list[Path]:
    """Every committed PTX fixture."""
    return sorted(p for p in FIXTURES.rglob("*.ptx") if p.is_file())


def ptx_arch(text: str) -> str:
    """The -arch for ptxas from a module's .target line (sm_90a stays sm_90a)."""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(".target"):
            return s.split()[1].rstrip(",")
    return "sm_52"
