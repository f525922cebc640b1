"""The hook's analysis path stays light: linting a module whose statement shapes are cached imports neither
networkx (0.1 s of CPU) nor Lark, so the time the hook adds to a compile stays small."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support.paths import FIXTURES, ROOT

SCRIPT = """
import json, sys
from ptxstatic.config import Config
from ptxstatic.ptx.parser import flush_shape_cache, parse_file
from ptxstatic.rules.engine import lint_module
import ptxstatic.hook.lint_thread, ptxstatic.hook.build_step
module = parse_file(sys.argv[1])
flush_shape_cache()
findings = lint_module(module, Config())
print(json.dumps({"kernels": len(module.kernels), "barriers": sum(i.opcode.startswith("bar") for k in module.kernels
                  for i in k.instructions), "loaded": sorted(m for m in ("networkx", "lark") if m in sys.modules)}))
"""


def test_linting_with_cached_shapes_imports_neither_networkx_nor_lark(tmp_path):
    ptx = FIXTURES / "nvcc" / "sm_90" / "lineinfo" / "shared.ptx"
    env = dict(os.environ, PTXSTATIC_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    env.pop("PTXSTATIC_NO_CACHE", None)

    def run() -> dict:
        out = subprocess.run([sys.executable, "-c", SCRIPT, str(ptx)], env=env, capture_output=True, text=True,
                             check=True)
        return json.loads(out.stdout)

    first = run()  # new shapes: the grammar is needed once
    assert "lark" in first["loaded"]
    again = run()
    assert again["kernels"] == 4 and again["barriers"] > 0  # the barrier rule's analyses ran
    assert again["loaded"] == []
