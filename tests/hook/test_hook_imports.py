"""The hook stays light: linting a module whose statement shapes are cached imports neither networkx (0.1 s of
CPU) nor Lark, and a compile the analysis server serves imports no more than the hook's client."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support.hook import HOOK_SCRIPT, copy_project, hook_env, run, stop_servers
from support.paths import FIXTURES, ROOT, needs_nvcc

SCRIPT = """
import json, sys
from ptxstatic.config import Config
from ptxstatic.ptx.parser import flush_shape_cache, parse_file
from ptxstatic.rules.engine import lint_module
import ptxstatic.hook.lint_thread, ptxstatic.hook.build_step, ptxstatic.hook.server
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


LIGHT_PATH_AVOIDS = ("pathlib", "subprocess", "dataclasses", "typing", "tempfile", "threading", "hashlib", "ctypes",
                     "socket", "inotify_simple", "numpy", "lark", "tomllib", "ptxstatic.ptx", "ptxstatic.rules",
                     "ptxstatic.lint", "ptxstatic.config", "ptxstatic.hook.unit", "ptxstatic.hook.capture",
                     # each of these costs milliseconds of CPU on every compile
                     "re", "json", "enum", "signal", "contextlib", "collections", "functools")


@needs_nvcc
def test_a_compile_served_by_the_server_imports_only_the_client(tmp_path):
    """With the analysis server up, the hook's script imports its client and a little of the standard library
    (not even ``re``): everything it imports costs CPU time on every compile of a build."""
    project = copy_project(tmp_path / "project")
    env = hook_env(tmp_path)
    command = [str(HOOK_SCRIPT), "nvcc", "-c", "-arch=sm_90", "-lineinfo", "src/kernel.cu", "-o", "k.o"]
    try:
        first = run([sys.executable, *command], project, env)  # starts the server
        assert first.returncode == 0, first.stderr
        served = run([sys.executable, "-X", "importtime", *command], project, env)
        assert served.returncode == 0, served.stderr
    finally:
        stop_servers(env)
    imported = {line.rsplit("|", 1)[1].strip() for line in served.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}
    assert "ptxstatic.hook.client" in imported
    assert not [m for m in imported if m in LIGHT_PATH_AVOIDS or m.startswith(tuple(f"{a}." for a in LIGHT_PATH_AVOIDS))
                ], sorted(imported)
    assert "[PS201]" in served.stderr
