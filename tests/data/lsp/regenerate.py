#!/usr/bin/env python3
"""Regenerate ``kernels.ptx`` from ``kernels.cu`` for sm_80 with ``-lineinfo`` (the language server's default
flags), with the path normalisation of ``tests/fixtures/regenerate.py`` (``.file`` paths made
repository-relative). Run it from anywhere with the project's Python; it needs nvcc."""

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
    out = tools.nvcc_compile(HERE / "kernels.cu", "sm_80", ["-lineinfo"], HERE / "kernels.ptx",
                             tools.cuda_toolkit_root())
    ok, message = tools.run_ptxas(out)
    print(f"{tools.rel(out)}: ptxas {'ok' if ok else 'FAILED ' + message}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
