#!/usr/bin/env python3
"""Regenerate the PTX of the report tests: ``tests/data/report/kernels.cu`` -> ``kernels.ptx``.

Compiled for sm_90 with ``-lineinfo`` and the path normalisation of ``tests/fixtures/regenerate.py`` (``.file``
paths repository-relative). Run it from anywhere with the project's Python; it needs nvcc.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _fixture_tools():
    spec = importlib.util.spec_from_file_location("regenerate", HERE.parents[1] / "fixtures" / "regenerate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> int:
    tools = _fixture_tools()
    toolkit = tools.cuda_toolkit_root()
    out = tools.nvcc_compile(HERE / "kernels.cu", "sm_90", ["-lineinfo"], HERE / "kernels.ptx", toolkit)
    ok, message = tools.run_ptxas(out)
    print(f"{tools.rel(out)}: ptxas {'ok' if ok else 'FAILED ' + message}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
