#!/usr/bin/env python3
"""Regenerate the PTX of the rule tests: ``tests/data/rules/cuda/*.cu`` -> ``tests/data/rules/ptx/<variant>/``.

Each source is compiled for sm_90 three ways: ``lineinfo`` (``-lineinfo``), ``plain`` (no line information)
and ``G`` (``-G``), with the path normalisation of ``tests/fixtures/regenerate.py`` (run from the repository
root with ``PWD=/proc/self/cwd``, ``.file`` paths made repository-relative). Run it from anywhere with the
project's Python; it needs nvcc.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ARCH = "sm_90"
VARIANTS = {"lineinfo": ["-lineinfo"], "plain": [], "G": ["-G"]}


def _fixture_tools():
    spec = importlib.util.spec_from_file_location("regenerate", HERE.parents[1] / "fixtures" / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> int:
    tools = _fixture_tools()
    toolkit = tools.cuda_toolkit_root()
    for cu in sorted((HERE / "cuda").glob("*.cu")):
        for variant, flags in VARIANTS.items():
            out = tools.nvcc_compile(cu, ARCH, flags, HERE / "ptx" / variant / f"{cu.stem}.ptx", toolkit)
            ok, message = tools.run_ptxas(out)
            print(f"{tools.rel(out)}: ptxas {'ok' if ok else 'FAILED ' + message}")
            if not ok:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
