"""Instrumented PTX assembles whenever the original does: over a fixed sample of grammar-aware mutants of the
fixtures (``tests/support/mutants.py``) that ptxas accepts before instrumentation, and for a module without
``.address_size``, which ptxas assembles for its 64-bit ``--machine``. (Every fixture itself is assembled
after instrumentation in test_instrument.py.)"""

from __future__ import annotations

import concurrent.futures as cf

import pytest
from support.mutants import mutants
from support.paths import DATA, FIXTURES, needs_ptxas

from ptxstatic.counts.instrumentation.ptx_pass import instrument
from ptxstatic.errors import PtxstaticError
from ptxstatic.ptx.parser import parse_text
from ptxstatic.toolchain.ptxas import assemble, target_arch

LINEINFO = FIXTURES / "nvcc" / "sm_80" / "lineinfo"
BASES = [DATA / "static" / "counted.ptx", LINEINFO / "branches.ptx", LINEINFO / "calls.ptx",
         LINEINFO / "warp.ptx", LINEINFO / "printf.ptx", LINEINFO / "shared.ptx"]
SAMPLE = 20  # mutants per base file of every kind, and as many of the kinds that often stay valid
OFTEN_VALID = ("register_rename", "opcode", "swap_tokens", "directive", "line")


def assembles(text: str, arch: str) -> str | None:
    """None when ptxas accepts ``text``, else its message."""
    try:
        assemble(text, arch)
    except PtxstaticError as err:
        return str(err)
    return None


def _case(text: str) -> tuple[str, str | None]:
    """("rejected" | "unparsed" | "refused" | "ok" | "broken", detail) of one mutant."""
    try:
        module = parse_text(text, "mutant.ptx")
        arch = target_arch(module)
    except PtxstaticError:
        return "unparsed", None
    if assembles(text, arch) is not None:
        return "rejected", None
    try:
        done = instrument(module)
    except PtxstaticError as err:
        return "refused", str(err)
    failure = assembles(done.text, arch)
    return ("ok", None) if failure is None else ("broken", failure)


@needs_ptxas
def test_mutants_ptxas_accepts_still_assemble_after_instrumentation():
    texts = [m.text for path in BASES for kinds in (None, OFTEN_VALID)
             for m in mutants(path.read_text(), 13, SAMPLE, *(() if kinds is None else (kinds,)))]
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_case, texts))
    tally = {kind: sum(r[0] == kind for r in results) for kind in ("ok", "broken", "refused", "rejected", "unparsed")}
    print(f"\n{len(texts)} mutants: {tally}")
    broken = [(i, detail) for i, (kind, detail) in enumerate(results) if kind == "broken"]
    assert not broken, broken[:3]
    assert tally["ok"] >= 30, tally  # the sample does reach the assembler on both sides


@needs_ptxas
@pytest.mark.parametrize("path", [DATA / "static" / "counted.ptx", LINEINFO / "calls.ptx"])
def test_a_module_without_address_size_is_instrumented_for_64_bit_addresses(path):
    text = "\n".join(ln for ln in path.read_text().splitlines() if not ln.strip().startswith(".address_size"))
    module = parse_text(text, "no_address_size.ptx")
    assert module.address_size == 64
    assert assembles(text, target_arch(module)) is None
    done = instrument(module)
    assert "cvta.to.global.u64" in done.text or "mov.u64" in done.text
    assert assembles(done.text, target_arch(module)) is None


@pytest.mark.parametrize("size", ["1e400", "48", "0"])
def test_an_invalid_address_size_is_refused_not_a_crash(size):
    """``.address_size 1e400`` (a directive mutant) crashed the pass with a ValueError: now a clear refusal."""
    text = (DATA / "static" / "counted.ptx").read_text().replace(".address_size 64", f".address_size {size}")
    with pytest.raises(PtxstaticError, match=r"\.address_size .*: the address size is 32 or 64"):
        instrument(parse_text(text, "bad_size.ptx"))
