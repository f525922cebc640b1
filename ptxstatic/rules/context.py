"""What a rule sees: the module, the configuration, one function, and its analyses computed once, on demand.

:class:`ModuleContext` holds what all functions of a module share (call graph, demangled names, memoised
module-wide facts); :class:`RuleContext` the analyses of one function: basic-block graph, def-use chains,
control dependence, thread-dependence and ``%tid.x`` strides, each built the first time a rule asks for it.
Rules make their findings with :meth:`RuleContext.finding`, which fills in the kernel, the PTX and ``.cu``
positions and the inlined-at chain from the instruction.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ptxstatic.config import Config
from ptxstatic.findings import Finding, Location, Note, Severity
from ptxstatic.ptx import printer
from ptxstatic.ptx.ast import Function, Instruction, Module, SourceLoc
from ptxstatic.ptx.kernels import demangle

if TYPE_CHECKING:  # the analyses are imported when a rule first asks for one
    from ptxstatic.analysis.cfg import BlockGraph
    from ptxstatic.analysis.control_dependence import ControlDependence
    from ptxstatic.analysis.defuse import DefUse
    from ptxstatic.analysis.strides import StrideAnalysis
    from ptxstatic.analysis.uniformity import ThreadDependence
    from ptxstatic.rules.budget import Budget

T = TypeVar("T")


class ModuleContext:
    """One parsed PTX module under one configuration.

    ``ptx_path`` is the PTX file as it should be shown; relative ``.file`` paths are taken relative to
    ``source_root`` (the directory nvcc ran in) when it is given. ``budget``: the CPU time the analysis may take
    (None: unbounded). ``cubins``: what ptxas made of the module with its default options, by architecture.
    """

    def __init__(self, module: Module, config: Config, ptx_path: str | None = None,
                 source_root: str | Path | None = None, budget: Budget | None = None,
                 cubins: Mapping[str, bytes] | None = None) -> None:
        self.module = module
        self.cubins = dict(cubins or {})
        self.budget = budget
        self.config = config
        self.ptx_path = ptx_path or module.filename
        self.source_root = Path(source_root) if source_root is not None else None
        self._memo: dict[str, Any] = {}
        self.notes: list[str] = []  # about the module as a whole (what could not be judged, and why), once each

    def note(self, message: str) -> None:
        """Say something about the module once (such as why its resources were not measured)."""
        if message not in self.notes:
            self.notes.append(message)

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """A module-wide fact computed once (``key`` should start with the rule's code)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def cfg(self, fn: Function) -> BlockGraph:
        """``fn``'s basic-block graph, built once per module for every rule."""
        from ptxstatic.analysis.cfg import build_cfg

        return self.memo(f"cfg:{fn.name}", lambda: build_cfg(fn))

    def def_use(self, fn: Function) -> DefUse:
        """``fn``'s reaching definitions, computed once per module (the rules and the memory rules' sampling)."""
        from ptxstatic.analysis.defuse import def_use

        return self.memo(f"du:{fn.name}", lambda: def_use(self.cfg(fn)))

    @cached_property
    def callers(self) -> dict[str, list[str]]:
        """Function -> the functions that call it directly (without networkx, which is slow to import)."""
        from ptxstatic.analysis.cfg import call_sites

        out: dict[str, list[str]] = {}
        for c in call_sites(self.module.functions):
            if c.caller not in out.setdefault(c.callee, []):
                out[c.callee].append(c.caller)
        return out

    @cached_property
    def defined(self) -> dict[str, Function]:
        """Functions with a body, by PTX name."""
        return {f.name: f for f in self.module.functions if f.body is not None}

    @cached_property
    def call_summaries(self) -> dict[str, str]:
        """How each function's result depends on the thread (:func:`.uniformity.call_summaries`)."""
        from ptxstatic.analysis.uniformity import call_summaries

        return call_summaries(self.module)

    def demangled(self, name: str) -> str:
        """A function's C++ name (``publish(float*, float)``), the PTX name where it is not mangled."""
        if "demangled" not in self._memo:
            self._memo["demangled"] = demangle(f.name for f in self.module.functions)
        return self._memo["demangled"].get(name, name)

    @cached_property
    def has_line_info(self) -> bool:
        return bool(self.module.files)

    def source_file(self, path: str) -> str:
        """A ``.file`` path as a path to open: relative ones under ``source_root``."""
        if self.source_root is not None and not os.path.isabs(path):
            return str(self.source_root / path)
        return path


class RuleContext:
    """One function of a module, with its analyses built on first use and shared by all rules."""

    def __init__(self, module: ModuleContext, function: Function) -> None:
        self.mc = module
        self.function = function
        # the rule now running, with its severity and option values as configured (set by the engine)
        self.code = ""
        self.severity = Severity.WARNING
        self.options: dict[str, Any] = {}

    @property
    def module(self) -> Module:
        return self.mc.module

    @property
    def config(self) -> Config:
        return self.mc.config

    @property
    def instructions(self) -> list[Instruction]:
        return self.function.instructions

    @cached_property
    def cfg(self) -> BlockGraph:
        return self.mc.cfg(self.function)

    @cached_property
    def du(self) -> DefUse:
        return self.mc.def_use(self.function)

    @cached_property
    def cd(self) -> ControlDependence:
        from ptxstatic.analysis.control_dependence import ControlDependence

        return ControlDependence(self.cfg)

    @cached_property
    def thread_dependence(self) -> ThreadDependence:
        from ptxstatic.analysis.uniformity import thread_dependence

        return thread_dependence(self.cfg, self.du, self.cd, self.mc.call_summaries)

    @cached_property
    def strides(self) -> StrideAnalysis:
        """The ``%tid.x`` coefficient of every register definition (features.divergence)."""
        from ptxstatic.analysis.strides import StrideAnalysis

        return StrideAnalysis(self.function, self.du)

    def option(self, name: str) -> Any:
        """The current rule's option ``name`` from the configuration, else its default."""
        return self.options[name]

    # ------------------------------------------------------------------------------------- making findings

    def ptx_location(self, index: int) -> Location:
        ins = self.instructions[index]
        return Location(self.mc.ptx_path, ins.line, ins.column)

    def source_location(self, index: int) -> tuple[Location | None, tuple[Location, ...]]:
        """The instruction's innermost ``.cu`` position and the call sites it was inlined through."""
        loc = self.instructions[index].loc
        if loc is None:
            return None, ()
        chain: list[Location] = []
        caller: SourceLoc | None = loc.inlined_at
        while caller is not None and len(chain) < 64:
            chain.append(self._location(caller))
            caller = caller.inlined_at
        return self._location(loc), tuple(chain)

    def _location(self, loc: SourceLoc) -> Location:
        return Location(self.mc.source_file(loc.file), loc.line, loc.column)

    def note(self, index: int, message: str) -> Note:
        """A note at instruction ``index`` (its ``.cu`` position when known, else its PTX one)."""
        source, _ = self.source_location(index)
        return Note(message, source or self.ptx_location(index))

    def finding(self, index: int, message: str, *, notes: Iterable[Note] = (),
                properties: dict[str, Any] | None = None) -> Finding:
        """A finding of the current rule at instruction ``index`` of this function."""
        assert self.code, "finding() is for rules run by the engine"
        source, chain = self.source_location(index)
        return Finding(
            code=self.code, severity=self.severity, message=message, kernel=self.function.name,
            ptx=self.ptx_location(index), source=source, inlined_at=chain, notes=tuple(notes),
            context=printer.instruction(self.instructions[index]), properties=dict(properties or {}),
        )
