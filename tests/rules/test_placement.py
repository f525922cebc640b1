"""Where findings are shown (ptxstatic/rules/placement.py): never in system headers, as compilers do with
warnings (at the user's call site instead, or not at all), unless ``report-system-headers = true``; and at the
PTX line when the ``.cu`` file the line information names is absent.

The kernels are tests/data/rules/placement/placement.cu with its -isystem header vendor/vendor.h (PTX by
tests/data/rules/placement/regenerate.py): a local array read in libstdc++'s std::max, one in the vendor
header's function, and a kernel wholly in the vendor header."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.check import env
from support.paths import DATA, ROOT, needs_nvcc

from ptxstatic.config import Config, ConfigError, load_config
from ptxstatic.ptx import parse_file
from ptxstatic.rules.engine import lint_module

HERE = DATA / "rules" / "placement"
SOURCE, PTX, VENDOR = HERE / "placement.cu", HERE / "placement.ptx", HERE / "vendor"
REL = SOURCE.relative_to(ROOT).as_posix()


def marked() -> set[tuple[str, int]]:
    return {(REL, n) for n, line in enumerate(SOURCE.read_text().splitlines(), 1) if "// expect: PS301" in line}


def lint(config: Config | None = None, system_dirs: tuple[str, ...] = (str(VENDOR),)):
    return lint_module(parse_file(PTX), config or Config(), source_root=ROOT, system_dirs=system_dirs)


def where(findings) -> set[tuple[str, int]]:
    return {(Path(f.location.file).relative_to(ROOT).as_posix() if Path(f.location.file).is_absolute()
             else f.location.file, f.location.line) for f in findings}


def test_findings_in_system_headers_are_shown_at_the_users_call():
    findings = lint()
    assert where(findings) == marked()
    assert {f.kernel for f in findings} == {"_Z13std_max_localPKiPii", "_Z12vendor_localPKiPii"}  # not vendor_kernel
    for f in findings:
        assert f.inlined_at == ()  # the call site in placement.cu is the outermost
        [moved] = [n.message for n in f.notes if "system header" in n.message]
        assert re.fullmatch(r"the code is in a system header \((/usr/include/c\+\+/\d+/bits/stl_algobase\.h|"
                            rf"{ROOT}/tests/data/rules/placement/vendor/vendor\.h):\d+:\d+\), inlined here", moved)
        assert all(n.location is None or Path(n.location.file) == SOURCE for n in f.notes)


def test_report_system_headers_keeps_them_where_they_are():
    findings = lint(Config(report_system_headers=True))
    assert {f.location.file for f in findings} == {str(ROOT / "tests/data/rules/placement/vendor/vendor.h")} | {
        f.location.file for f in findings if "stl_algobase.h" in f.location.file}
    assert len(findings) == 3 and any(f.kernel == "_ZN6vendor13vendor_kernelEPKiPii" for f in findings)
    assert all(f.inlined_at for f in findings)


def test_a_header_is_the_users_unless_the_build_says_otherwise():
    """Without -isystem (and without a project root) vendor.h is the user's code: its findings stay there."""
    findings = lint(system_dirs=())
    assert where(findings) == {(REL, 16), ("tests/data/rules/placement/vendor/vendor.h", 14)}


def test_the_configuration_key(tmp_path: Path):
    (tmp_path / "ptxstatic.toml").write_text("report-system-headers = true\n")
    assert load_config(tmp_path / "ptxstatic.toml").report_system_headers
    assert not Config().report_system_headers
    (tmp_path / "ptxstatic.toml").write_text('report-system-headers = "yes"\n')
    with pytest.raises(ConfigError, match="report-system-headers must be true or false"):
        load_config(tmp_path / "ptxstatic.toml")


def check_json(*args: str, cwd: Path) -> dict:
    proc = subprocess.run([sys.executable, "-m", "ptxstatic", "check", "--no-cache", "--format", "json", *args],
                          cwd=cwd, env=env(cwd), capture_output=True, text=True, timeout=600)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)


@needs_nvcc
def test_check_a_project_with_a_header_outside_it_and_one_under_isystem(tmp_path: Path):
    """A project (its ptxstatic.toml) whose kernel includes a header from outside the project and not through
    -I: a system header; one found through -isystem: a system header; the same through -I: the user's."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    shutil.copytree(VENDOR, tmp_path / "third")
    (project / "ptxstatic.toml").write_text('select = ["PS301"]\n')
    (project / "src" / "k.cu").write_text('#include "../../third/vendor.h"\n' + SOURCE.read_text().split(
        "// The local array is the vendor header's, inlined here.\n")[1])
    flags = "-arch=sm_80 -lineinfo"
    doc = check_json("--nvcc-flags", flags, "src/k.cu", cwd=project)
    k = str(project / "src" / "k.cu")  # as nvcc names it in the line information
    assert [(f["location"]["file"], f["location"]["line"]) for f in doc["findings"]] == [(k, 4)]
    assert "vendor.h" in doc["findings"][0]["notes"][0]["message"]
    doc = check_json("--nvcc-flags", f"{flags} -I{tmp_path / 'third'}", "src/k.cu", cwd=project)
    assert sorted(Path(f["location"]["file"]).name for f in doc["findings"]) == ["vendor.h", "vendor.h"]
    (project / "src" / "k.cu").write_text((project / "src" / "k.cu").read_text().replace(
        '"../../third/vendor.h"', "<vendor.h>"))
    doc = check_json("--nvcc-flags", f"{flags} -isystem {tmp_path / 'third'}", "src/k.cu", cwd=project)
    assert [(f["location"]["file"], f["location"]["line"]) for f in doc["findings"]] == [(k, 4)]


def test_a_missing_source_file_falls_back_to_the_ptx_line(tmp_path: Path):
    """The PTX copied away from the sources its .file directives name (relative paths, read from the current
    directory): every finding is at its PTX line, says which file is missing, and the SARIF names no missing
    file."""
    shutil.copy(PTX, tmp_path / "placement.ptx")
    doc = check_json("placement.ptx", cwd=tmp_path)
    assert doc["findings"] and all(f["location"]["file"] == "placement.ptx" and f["source"] is None
                                   for f in doc["findings"])
    ptx_lines = PTX.read_text().splitlines()
    assert all("ld.local" in ptx_lines[f["location"]["line"] - 1] for f in doc["findings"])
    missing = r"source file tests/data/rules/placement/(placement\.cu|vendor/vendor\.h) not found: shown at its PTX " \
              r"line"
    assert all(re.fullmatch(missing, f["notes"][-1]["message"]) for f in doc["findings"])
    proc = subprocess.run([sys.executable, "-m", "ptxstatic", "check", "--no-cache", "--format", "sarif",
                           "placement.ptx"], cwd=tmp_path, env=env(tmp_path), capture_output=True, text=True)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"] for r in json.loads(proc.stdout)["runs"][0]["results"]
            for loc in r["locations"]}
    assert uris == {"placement.ptx"}
