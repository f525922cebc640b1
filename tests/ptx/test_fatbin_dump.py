"""PTX as ``cuobjdump -ptx`` writes it: section headers (``Fatbin ptx code:``, a rule, ``arch = ...``, code
version, host, compile size, ``compressed``), machine-code sections between them, and one PTX section per
translation unit and virtual architecture. The dumps here are laid out as cuobjdump lays them out, around
nvcc 13's committed PTX of two translation units (``loops.cu`` and ``shared.cu``) for sm_80 and sm_90."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import FIXTURES

from ptxstatic.errors import SourceError
from ptxstatic.ptx.parser import parse_file

NVCC = FIXTURES / "nvcc"


def header(kind: str, arch: str, version: str) -> str:
    extra = "compressed\nptxasOptions = \n" if kind == "ptx" else ""
    return (f"\nFatbin {kind} code:\n================\narch = {arch}\ncode version = {version}\nhost = linux\n"
            f"compile_size = 64bit\n{extra}\n")


def dump(*parts: tuple[str, str, str]) -> str:
    """A dump of (kind, arch, body) sections: a ptx section's body is the PTX file's text."""
    return "".join(header(kind, arch, "[8,8]" if kind == "ptx" else "[1,7]") + body for kind, arch, body in parts)


def ptx(arch: str, name: str) -> str:
    return (NVCC / arch / "plain" / f"{name}.ptx").read_text()


def kernels(path: Path) -> set[str]:
    return {f.name for f in parse_file(path).kernels}


def test_the_highest_architecture_of_every_translation_unit_is_read(tmp_path: Path):
    path = tmp_path / "app.ptx"
    path.write_text(dump(("elf", "sm_90", "\tcode for sm_90\n"), ("ptx", "sm_80", ptx("sm_80", "loops")),
                         ("ptx", "sm_90", ptx("sm_90", "loops")), ("ptx", "sm_90", ptx("sm_90", "shared"))))
    module = parse_file(path)
    assert module.target == ("sm_90",)
    plain = {f.name for f in parse_file(NVCC / "sm_90" / "plain" / "loops.ptx").kernels}
    shared = {f.name for f in parse_file(NVCC / "sm_90" / "plain" / "shared.ptx").kernels}
    assert {f.name for f in module.kernels} == plain | shared and plain and shared


def test_errors_point_at_the_dump_files_lines(tmp_path: Path):
    text = dump(("ptx", "sm_80", ptx("sm_80", "loops")), ("ptx", "sm_90", ptx("sm_90", "shared")))
    lines = text.split("\n")
    second = [i for i, line in enumerate(lines) if line == "Fatbin ptx code:"][1]
    bad = next(i for i, line in enumerate(lines) if i > second and line.strip().startswith("ld."))
    lines[bad] = "\tthis is not PTX;"
    path = tmp_path / "bad.ptx"
    path.write_text("\n".join(lines))
    with pytest.raises(SourceError) as err:
        parse_file(path)
    assert err.value.line == bad + 1


def test_a_dump_of_machine_code_only_is_refused_with_the_remedy(tmp_path: Path):
    path = tmp_path / "sass.ptx"
    path.write_text(dump(("elf", "sm_90", "\tcode for sm_90\n")))
    with pytest.raises(SourceError, match=r"cuobjdump output without PTX sections .* `cuobjdump -ptx`"):
        parse_file(path)


def test_the_cli_analyses_a_dump_from_standard_input():
    text = dump(("ptx", "sm_90", ptx("sm_90", "shared")))
    p = subprocess.run([sys.executable, "-m", "ptxstatic", "analyze", "-"], input=text, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    assert all(f"kernel {name}" in p.stdout for name in kernels(NVCC / "sm_90" / "plain" / "shared.ptx"))
