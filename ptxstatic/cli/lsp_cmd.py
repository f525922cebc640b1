"""``ptxstatic lsp``: the language server for editors, over standard input and output."""

from __future__ import annotations

import importlib.util

import click

from ptxstatic.errors import PtxstaticError


@click.command()
@click.option("--stdio", is_flag=True, help="Speak over standard input and output (the default and only transport; "
                                            "accepted because editors' LSP clients pass it).")
def lsp(stdio: bool) -> None:
    """Run the language server for .cu, .cuh and .ptx files: the findings of `check` as diagnostics while you
    edit, each kernel's predicted clock scaling and minimum-energy clocks on hover, and a quick fix that adds
    `// ptxstatic: ignore[PSnnn]`. Start it from an editor's LSP client (see docs/lsp.md)."""
    if importlib.util.find_spec("pygls") is None:
        raise PtxstaticError("the language server needs pygls: pip install 'ptxstatic[lsp]'")
    from ptxstatic.lsp.server import serve

    serve()
