"""The hook's analysis side: runs in a thread beside nvcc, from imports to diagnostics.

It imports the parser and the rule engine and reads the configuration while nvcc compiles, analyses the
PTX of the highest virtual architecture as soon as nvcc has written it, and keeps the diagnostics until
nvcc has finished. Every problem of its own becomes one line ``ptxstatic: note: ...`` (an error with
``--strict``); nothing here can change nvcc's result.
"""

from __future__ import annotations

import os
import queue
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ptxstatic.hook.capture import Captured
from ptxstatic.limits import HOOK_KEPT_PTX_FILES
from ptxstatic.toolchain.nvcc_command import NvccCommand, arch_key


@dataclass
class Outcome:
    """What the analysis has to say once nvcc is done."""

    text: str = ""  # diagnostics, then notes, ready for stderr
    findings_at_fail_level: int = 0
    failures: list[str] = field(default_factory=list)  # analysis problems (each also in ``text``)


class Analysis(threading.Thread):
    """Analyses the PTX files handed to :meth:`offer`; :meth:`nvcc_finished` closes the intake."""

    def __init__(self, cmd: NvccCommand, cwd: str, strict: bool) -> None:
        super().__init__(name="ptxstatic-analysis", daemon=True)
        self.cmd, self.cwd, self.strict = cmd, cwd, strict
        self.outcome = Outcome()
        self._queue: queue.Queue[Captured | int] = queue.Queue()
        self._done: set[str] = set()  # stems analysed
        self._complete: list[Captured] = []
        self._lines: list[str] = []
        self._config = None

    def offer(self, captured: Captured) -> None:
        self._queue.put(captured)

    def nvcc_finished(self, status: int) -> None:
        self._queue.put(status)

    def run(self) -> None:
        try:
            self._prepare()
        except Exception as exc:  # the analysis must never break the build
            self._fail(f"could not start the analysis: {type(exc).__name__}: {exc}")
            self._config = None
        while True:
            item = self._queue.get()
            if isinstance(item, int):
                if item == 0 and self._config is not None:
                    self._analyse_rest()
                break
            self._complete.append(item)
            if self._config is not None and item.stem not in self._done and self._is_best(item):
                self._analyse(item)
        if item != 0:
            self._lines = []  # nvcc failed: its own messages are what matters
        self.outcome.text = "".join(line + "\n" for line in self._lines)

    # ------------------------------------------------------------------------------------------------

    def _prepare(self) -> None:
        """Imports and configuration, while nvcc runs."""
        from ptxstatic.config import ConfigError, config_for
        from ptxstatic.ptx import parser  # noqa: F401 - imported now, used when the PTX is ready
        from ptxstatic.rules.engine import check_config, lint_module  # noqa: F401

        first = os.path.join(self.cwd, self.cmd.inputs[0]) if self.cmd.inputs else self.cwd
        try:
            config = config_for(first)
            check_config(config)
        except ConfigError as exc:
            if self.strict:
                self._lines.append(str(exc))
                self.outcome.failures.append(str(exc))
            else:
                self._lines.append(f"ptxstatic: note: {exc}; PTX not analysed")
            return
        self._config = config

    def _is_best(self, captured: Captured) -> bool:
        """Whether ``captured`` is the PTX of the command's highest virtual architecture."""
        return captured.target is not None and captured.target == self.cmd.best_target

    def _analyse_rest(self) -> None:
        """After nvcc: each source not yet analysed, from its highest architecture's PTX."""
        best: dict[str, Captured] = {}
        for c in self._complete:
            if c.stem not in self._done and os.path.exists(c.path):
                old = best.get(c.stem)
                if old is None or arch_key(c.target or "") > arch_key(old.target or ""):
                    best[c.stem] = c
        for c in best.values():
            self._analyse(c)
        if not self._done and not self.cmd.launchers:  # behind ccache, a cache hit runs no nvcc at all
            self._lines.append("ptxstatic: note: nvcc wrote no PTX that the hook could find; nothing analysed")

    def _analyse(self, captured: Captured) -> None:
        from ptxstatic.errors import PtxstaticError
        from ptxstatic.findings import Severity
        from ptxstatic.loader import load_module
        from ptxstatic.ptx.parser import flush_shape_cache
        from ptxstatic.report.diagnostics import format_findings
        from ptxstatic.rules.engine import lint_module
        from ptxstatic.user_cache import keep_copy

        self._done.add(captured.stem)
        source = next((i for i in self.cmd.inputs if Path(i).stem == captured.stem), captured.stem)
        try:
            module = load_module(captured.path, validate=False).module
            flush_shape_cache()  # now, beside nvcc, rather than at exit after it
            shown = captured.path
            if not module.files:  # findings will point into the PTX: keep it where the user can open it
                kept = keep_copy(Path(captured.path).read_bytes(), captured.stem, "ptx", HOOK_KEPT_PTX_FILES)
                shown = str(kept) if kept is not None else captured.path
            findings = lint_module(module, self._config, ptx_path=shown, source_root=self.cwd,
                                   on_failure=lambda msg: self._fail(f"{source}: {msg}"), display_names=False)
        except PtxstaticError as exc:
            self._fail(f"could not analyse the PTX of {source}: {str(exc).splitlines()[0]}")
            return
        except Exception as exc:
            self._fail(f"could not analyse the PTX of {source}: internal error {type(exc).__name__}: {exc}")
            return
        fail_on = self._config.fail_on if self._config is not None else Severity.WARNING
        text = format_findings(findings, self.cwd, errors_from=fail_on if self.strict else None)
        if text:
            self._lines.append(text.rstrip("\n"))
        self.outcome.findings_at_fail_level += sum(f.severity >= fail_on for f in findings)

    def _fail(self, message: str) -> None:
        self.outcome.failures.append(message)
        kind = "error" if self.strict else "note"
        self._lines.append(f"ptxstatic: {kind}: {message}" + ("" if self.strict else " (the build is not affected)"))

