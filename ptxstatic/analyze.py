"""The analysis pipeline of ``ptxstatic analyze``, callable without the command line: which functions of an
input are analysed, each one's summary (:mod:`ptxstatic.analysis.summary`) as it is parsed, and the call
graph when asked. Functions come one at a time from a stream (:func:`ptxstatic.loader.load_stream`), so
memory holds one function, not the file::

    selection = Selection(kernel="saxpy")
    for summary in summaries(load_stream("saxpy.ptx"), selection):
        print(summary.name, summary.blocks)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from ptxstatic.analysis.cfg import call_sites
from ptxstatic.analysis.summary import FunctionSummary, summarize
from ptxstatic.ptx.ast import Function, Module
from ptxstatic.ptx.kernels import designates


class FunctionStream(Protocol):
    """What a loader's stream offers: the module read so far and its functions, one at a time."""

    module: Module

    def functions(self, select: object = None) -> Iterator[Function]: ...


@dataclass(frozen=True)
class Selection:
    """Which functions are analysed: kernels only, or device functions too; all, or those a name designates."""

    kernel: str | None = None
    functions: bool = False

    def wants(self, fn: Function) -> bool:
        return (self.functions or fn.is_kernel) and (self.kernel is None or designates(fn.name, self.kernel))


def summaries(stream: FunctionStream, selection: Selection, call_graph: list[dict] | None = None
              ) -> Iterator[FunctionSummary]:
    """The summary of every selected function of ``stream`` as it is parsed; with ``call_graph``, every call of
    every function is appended to it as ``{"caller", "callee", "line"}`` (so all functions are read)."""
    select = selection.wants if call_graph is None else None
    for fn in stream.functions(select):
        if call_graph is not None:
            call_graph += [{"caller": c.caller, "callee": c.callee, "line": c.line} for c in call_sites([fn])]
            if not selection.wants(fn):
                continue
        yield summarize(fn, stream.module)
