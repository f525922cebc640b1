"""Fuzzing the whole pipeline: grammar-aware mutants of the fixtures (``tests/support/mutants.py``), stacked mutants,
random text, random bytes and non-UTF-8 go through parse, analyse, blocks, features, instrument and predict;
no exception escapes but :class:`PtxstaticError`, and the CLI turns that into a one-line message.

The budget is fixed and derandomised for CI (``PTXSTATIC_FUZZ_EXAMPLES``, default 60 examples per
strategy, about a minute on two cores in all). A release runs it longer and with fresh randomness:
``PTXSTATIC_FUZZ_EXAMPLES=5000 PTXSTATIC_FUZZ_RANDOM=1 pytest tests/cli/test_fuzz.py`` (docs/cli.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.mutants import mutants
from support.paths import DATA, FIXTURES, FRONTEND_DATA

from ptxstatic.analysis.summary import summarize_module
from ptxstatic.counts.instrumentation.ptx_pass import instrument
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.errors import PtxstaticError
from ptxstatic.features.portable import features_from_counts
from ptxstatic.launch import Launch
from ptxstatic.predict import load_models, predict_kernel
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_text, read_ptx

LINEINFO = FIXTURES / "nvcc" / "sm_80" / "lineinfo"
BASES = [DATA / "static" / "counted.ptx", DATA.parents[1] / "examples" / "saxpy_reduce.ptx",
         FRONTEND_DATA / "small_sm80_lineinfo.ptx", LINEINFO / "printf.ptx", LINEINFO / "branches.ptx",
         LINEINFO / "warp.ptx", LINEINFO / "calls.ptx"]
TEXTS = [p.read_text() for p in BASES]
LAUNCH = Launch((2, 1, 1), (64, 1, 1), 0, {"0": 100})
MAX_WORK = 2e5  # row-instructions of the static interpreter per kernel: the fallback is exercised too

EXAMPLES = int(os.environ.get("PTXSTATIC_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=not os.environ.get("PTXSTATIC_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], database=None)


@cache
def models():
    return load_models("gtxtitanx")


def guarded(step, *args):
    """``step(*args)``, or None when it refuses the input with a :class:`PtxstaticError` (the documented
    refusal); any other exception fails the test with the input that caused it."""
    try:
        return step(*args)
    except PtxstaticError as err:
        assert str(err).strip(), "an error without a message"
        return None


def _kernel_steps(module, kernel) -> None:
    params = {"0": 100} if kernel.params else {}
    launch = Launch(LAUNCH.grid, LAUNCH.block, 0, params)
    estimate = guarded(lambda: estimate_counts(bind(module, kernel.name, launch), max_work=MAX_WORK))
    if estimate is not None:
        guarded(features_from_counts, module, kernel.name, estimate.counts)
    guarded(predict_kernel, module, kernel, models())


def pipeline(text: str) -> None:
    """Every stage on ``text``, each stage on what the one before accepted."""
    guarded(parse_text, text, "fuzz.ptx")
    module = guarded(lambda: parse_text(text, "fuzz.ptx", recover=True))
    if module is None:
        return
    guarded(summarize_module, module, False)
    for kernel in module.kernels[:4]:
        _kernel_steps(module, kernel)
    done = guarded(instrument, module)
    if done is not None:
        parse_text(done.text, "instrumented.ptx")  # what the pass prints must parse back


def mutated(index: int, seed: int, stacked: int) -> str:
    text = TEXTS[index]
    for k in range(stacked):
        found = mutants(text, seed + k, 1)
        text = found[0].text if found else text
    return text


@FUZZ
@given(st.integers(0, len(TEXTS) - 1), st.integers(0, 2 ** 32), st.integers(1, 3))
@example(4, 2136, 1)  # a setp without a type: IndexError in the CTA-class analysis, found by a release run
@example(3, 483723, 3)  # a mad with an operand deleted: IndexError in the stride analysis of the features
@example(3, 395006, 3)  # an infinite float literal as an integer operand: OverflowError in the static counts
@example(2, 616426, 1)  # and.f16: a TypeError from numpy while the static counts ran the instruction
def test_grammar_aware_mutants_never_crash_the_pipeline(index, seed, stacked):
    pipeline(mutated(index, seed, stacked))


@FUZZ
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=400)
       | st.lists(st.sampled_from([".version 8.0", ".target sm_80", ".address_size 64", ".entry k(", ")", "{", "}",
                                   "ret;", ".reg .b32 %r<4>;", "add.s32 %r1, %r2, 9999999999999999999999;",
                                   "$L:", "bra $L;", ".param .u64 p", "08", "1e400", "\n", ";"]),
                  max_size=30).map("\n".join))
def test_random_text_never_crashes_the_pipeline(text):
    pipeline(text)


@FUZZ
@given(st.binary(max_size=600))
def test_random_bytes_are_refused_or_parsed(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("bytes") / "random.ptx"
    path.write_bytes(data)
    text = guarded(read_ptx, path)
    if text is not None:
        pipeline(text)


def run(args: list[str], stdin: bytes) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ptxstatic", *args], input=stdin, capture_output=True)


def test_the_cli_turns_refusals_into_one_line_messages(tmp_path: Path):
    """Through the real command line: mutants that the pipeline refuses give exit status 2 and messages
    of the form FILE:LINE:COL: error: ... (or error: ...), never a traceback."""
    cases = [mutated(i % len(TEXTS), 1000 + i, 1 + i % 2).encode() for i in range(4)]
    cases += [b"\xff\xfe\x00\x01", b"", b".version 8.0\n.target sm_80\n.entry k( {"]
    refused = 0
    for i, data in enumerate(cases):
        path = tmp_path / f"case{i}.ptx"
        path.write_bytes(data)
        for args in (["analyze", str(path)], ["instrument", str(path), "-o", str(tmp_path / "out.ptx")]):
            p = run(args, b"")
            err = p.stderr.decode()
            assert p.returncode in (0, 2), (args, err)
            assert "Traceback" not in err, (args, err)
            if p.returncode == 2:
                refused += 1
                messages = [ln for ln in err.splitlines() if "error:" in ln]
                assert messages and all(ln.startswith((str(path), "error:", "<stdin>")) for ln in messages), err
    assert refused >= 5  # the three garbage inputs, twice, save the empty file's analysis
    p = run(["blocks", str(tmp_path / "case0.ptx"), "-k", "nope", "--grid", "1", "--block", "32"], b"")
    assert p.returncode == 2 and p.stderr.decode().count("\n") == 1 and "no kernel named 'nope'" in p.stderr.decode()
    p = run(["parse", "-"], b"\x00\x01\x02binary")
    assert p.returncode == 2 and len(p.stderr.decode().strip().splitlines()) == 1
