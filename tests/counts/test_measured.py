"""Measured counts without a GPU: the hand kernel's counts hold when its instrumented copy runs on the
emulator, it assembles, the IR and PTX routes agree on the emulator, and the runner's 'no GPU' error is
clear. The same kernels on a GPU are tests/gpu_hardware/test_gpu_runner.py."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from support.kernels import HAND, by_name, check_routes, hand_expected, hand_launch, ir_and_ptx_routes
from support.paths import FIXTURES, needs_ptxas

from ptxstatic.counts.instrumentation.ptx_pass import InstrumentOptions, instrument
from ptxstatic.counts.measured import block_counts
from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.driver import NO_GPU, Driver
from ptxstatic.ptx.parser import parse_text
from ptxstatic.toolchain.ptxas import assemble


def test_hand_counts_hold_in_the_emulator():
    emulator = pytest.importorskip("ptxstatic.emulator", reason="the PTX emulator is not available")
    m = parse_text(HAND, "hand.ptx")
    launch = hand_launch(3, 96, 250)
    result = instrument(m, InstrumentOptions(banks=4))
    run = emulator.emulate(result.module, "hand", launch)
    raw = run.globals[result.counters.symbol].astype(np.uint64).tolist()
    counts = block_counts(result.counters, raw, "hand", launch)
    want, out = hand_expected(288, 250)
    assert by_name(m, counts.counts["hand"]) == want
    assert np.array_equal(run.buffers["out"], out)


@needs_ptxas
def test_hand_kernel_assembles():
    assemble(instrument(parse_text(HAND, "hand.ptx")).text, "sm_75")


def test_no_gpu_is_a_clear_error():
    try:
        Driver()
    except PtxstaticError as err:
        assert str(err).startswith(NO_GPU)
    else:
        pytest.skip("a GPU is present")
    proc = subprocess.run([sys.executable, "-m", "ptxstatic", "profile", str(FIXTURES / "llvm" / "loop_sum.ptx"),
                           "-k", "loop_sum", "--grid", "2", "--block", "64", "--arg", "0=buf:f32:640:iota",
                           "--arg", "1=buf:f32:128:out", "--arg", "2=5"], capture_output=True, text=True)
    assert proc.returncode == 2 and NO_GPU in proc.stderr and "Traceback" not in proc.stderr


def test_ir_route_counts_match_ptx_route_counts_emulated():
    emulator = pytest.importorskip("ptxstatic.emulator", reason="the PTX emulator is not available")
    ir, both, launch = ir_and_ptx_routes()
    run = emulator.emulate(both.module, "halvings", launch)
    # the IR route's array is declared by LLVM as .b8 bytes: read every array as raw 64-bit words
    raw = {m.symbol: np.frombuffer(run.globals[m.symbol].tobytes(), np.uint64).tolist()
           for m in (ir.counters, both.counters)}
    check_routes(ir, ir.counters.fold(raw[ir.counters.symbol]), both.counters.fold(raw[both.counters.symbol]))
