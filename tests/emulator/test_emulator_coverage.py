"""benchmarks/emulator_coverage.py: synthetic launches, outcome classes, and a run over the emulator's own
test kernels (which must all complete)."""

from __future__ import annotations

import importlib.util

import pytest
from support.paths import ROOT

from ptxstatic.launch import Buffer
from ptxstatic.ptx.parser import parse_text


@pytest.fixture(scope="module")
def coverage():
    """The script as a module; its sibling ``corpus`` is found as when the script runs."""
    spec = importlib.util.spec_from_file_location("emulator_coverage", ROOT / "benchmarks" / "emulator_coverage.py")
    mod = importlib.util.module_from_spec(spec)
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(ROOT / "benchmarks"))
        spec.loader.exec_module(mod)
    return mod


def test_synthetic_launch_follows_the_parameter_types(coverage) -> None:
    m = parse_text(""".version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 p, .param .f32 x, .param .u32 n, .param .align 8 .b8 s[16]) .maxntid 64, 1, 1
{
    ret;
}""")
    launch = coverage.synthetic_launch(m.kernels[0], 128, 1.0, 16, 16)  # the script's values
    assert launch.block == (64, 1, 1)
    assert isinstance(launch.args["p"], Buffer) and launch.args["x"] == 1.0
    assert launch.args["n"] == 16 and launch.args["s"] == 0


@pytest.mark.parametrize(("message", "kind"), [
    ("a.ptx:3: wmma.load: opcode wmma.load is not supported", "unsupported"),
    ("a.ptx:9: ld.global.u32: 4-byte global access at address 0x10 is out of bounds", "fault"),
    ("more than 10 warp instructions executed (runaway loop?)", "runaway"),
    ("a.ptx:5: call.uni: call depth exceeds 64 (unbounded recursion?)", "runaway"),
    ("deadlock in CTA (0, 0, 0): barrier 1 (1 warps waiting)", "other"),
])
def test_outcome_classes(coverage, message: str, kind: str) -> None:
    assert coverage.classify(message) == kind


def test_every_emulator_test_kernel_runs(coverage, capsys) -> None:
    coverage.main([str(ROOT / "tests" / "data" / "emulator" / "kernels_sm80_plain.ptx")])
    out = capsys.readouterr().out
    assert "1 files, 14 kernels" in out
    assert "ok              14  100.0%" in out
