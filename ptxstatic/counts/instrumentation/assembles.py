"""``instrument --check``: the instrumented PTX must assemble with ptxas wherever the original does."""

from __future__ import annotations

from ptxstatic.errors import PtxstaticError
from ptxstatic.toolchain.ptxas import assemble


def check_assembles(original: str, original_name: str, instrumented: str, instrumented_name: str,
                    arch: str) -> None:
    """Assemble ``instrumented`` for ``arch``; when ptxas rejects it, assemble ``original`` too, so that the
    error names the file at fault: the user's (``original_name`` and its lines) when the original does not
    assemble either, else the instrumented output (``instrumented_name``), a fault of the instrumentation."""
    try:
        assemble(instrumented, arch, name=instrumented_name)
    except PtxstaticError as exc:
        assemble(original, arch, name=original_name)
        raise PtxstaticError(f"the instrumented PTX does not assemble although {original_name} does "
                             f"(a bug in the instrumentation pass): {exc}") from None
