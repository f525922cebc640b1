"""The layout holds: the import contracts of pyproject.toml are kept (``lint-imports``, a real subprocess),
they fail on a deliberately wrong import in a copy of the package, no module imports a private name of
another, and no function is longer than 80 lines."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support.paths import ROOT

PACKAGE = ROOT / "ptxstatic"
MAX_FUNCTION_LINES = 80


def lint_imports(cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess:
    """``lint-imports`` with the configuration in ``cwd``'s pyproject.toml (no cache written)."""
    pytest.importorskip("importlinter", reason="import-linter is not installed (the test extra has it)")
    tool = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    if tool is None:
        pytest.skip("the lint-imports command is not on the PATH")
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([tool, "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True)


def test_import_contracts_are_kept():
    proc = lint_imports(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert f"Contracts: {len(contracts)} kept, 0 broken." in proc.stdout


@pytest.mark.parametrize("module,statement,broken", [
    # an upward import: the front end importing the command line
    ("ptx/isa.py", "from ptxstatic.cli import main", "- ptxstatic.ptx.isa -> ptxstatic.cli.main"),
    # a cycle inside a room: emulator memory importing the interpreter that imports it
    ("emulator/memory.py", "from ptxstatic.emulator import simt", "- .memory -> .simt"),
])
def test_a_wrong_import_breaks_the_contracts(tmp_path: Path, module: str, statement: str, broken: str):
    shutil.copytree(PACKAGE, tmp_path / "ptxstatic", ignore=shutil.ignore_patterns("__pycache__"))
    with (tmp_path / "ptxstatic" / module).open("a") as f:
        f.write(f"\n{statement}  # noqa\n")
    config = (ROOT / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(config[config.index("[tool.importlinter]"):])
    proc = lint_imports(tmp_path, pythonpath=tmp_path)
    assert proc.returncode != 0, proc.stdout
    assert "BROKEN" in proc.stdout and broken in proc.stdout, proc.stdout


def package_modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text(), str(p))) for p in sorted(PACKAGE.rglob("*.py"))]


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(tree: ast.Module) -> list[str]:
    """Private names this module takes from other package modules: ``from ptxstatic.x import _y``, a private
    module ``ptxstatic.x._y``, or ``x._y`` on a package module or name imported from one."""
    found, imported = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ptxstatic"):
            found += [f"{node.module}.{a.name}" for a in node.names if is_private(a.name)]
            found += [node.module] if any(is_private(part) for part in node.module.split(".")) else []
            imported |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("ptxstatic"):
                    found += [a.name] if any(is_private(part) for part in a.name.split(".")) else []
                    imported.add((a.asname or a.name).split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr) and isinstance(node.value, ast.Name) \
                and node.value.id in imported:
            found.append(f"{node.value.id}.{node.attr} (line {node.lineno})")
    return found


def test_no_module_imports_a_private_name_of_another():
    offenders = {str(p.relative_to(ROOT)): names for p, tree in package_modules() if (names := private_imports(tree))}
    assert not offenders


def test_the_private_import_scan_finds_each_form():
    code = "from ptxstatic.x import _y, z\nfrom ptxstatic.a._b import c\nimport ptxstatic.d as d\nd._e()\nz._f\n"
    found = set(private_imports(ast.parse(code)))
    assert found == {"ptxstatic.x._y", "ptxstatic.a._b", "d._e (line 4)", "z._f (line 5)"}


def test_no_function_is_longer_than_80_lines():
    long = [f"{p.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for p, tree in package_modules() for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long
