"""The analysis of one build step's PTX, from the configuration to the diagnostics, wherever it runs: in the
hook's own thread beside nvcc (:mod:`.lint_thread`) or in the analysis server (:mod:`.server`).

It reads the configuration, analyses the PTX of the command's highest virtual architecture as soon as nvcc has
written it (where nvcc assembles that PTX with ptxas's default options, as soon as the cubin is written too:
what ptxas made of the code is read from it rather than assembled again), and after nvcc each source not
analysed yet; it keeps the diagnostics until nvcc has finished.
Results are looked up in and stored to ``check``'s result cache, keyed by the PTX text, the configuration,
the tool's code and the build directory, so that the same PTX is never analysed twice. Each analysis has a
budget of CPU time (``hook-budget``, :data:`~ptxstatic.limits.HOOK_BUDGET_S` by default); one cut short says so
in one note. Every
problem of its own becomes one line ``ptxstatic: note: ...`` (an error with ``--strict``); nothing here can
change nvcc's result.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from ptxstatic.hook.capture import Captured
from ptxstatic.hook.client import Outcome
from ptxstatic.limits import HOOK_KEPT_PTX_FILES
from ptxstatic.toolchain.nvcc_command import NvccCommand, arch_key


class UnitAnalysis:
    """One build step: :meth:`prepare` (imports, configuration), :meth:`offer` each complete PTX file, then
    :meth:`finish` with nvcc's status. Call them from one thread (the budget is that thread's CPU time)."""

    def __init__(self, cmd: NvccCommand, cwd: str, strict: bool, flush_shapes: bool = True) -> None:
        self.cmd, self.cwd, self.strict = cmd, cwd, strict
        self.flush_shapes = flush_shapes  # write the parser's new statement shapes to disk after each file
        self._done: set[str] = set()  # stems analysed
        self._complete: list[Captured] = []
        self._cubins: dict[str, dict[str, Captured]] = {}  # origin -> architecture -> cubin
        self._waiting: dict[str, Captured] = {}  # origin -> PTX whose cubin nvcc is still assembling
        self._lines: list[str] = []
        self._failures: list[str] = []
        self._found_at_fail_level = 0
        self._config = None

    def prepare(self) -> None:
        """Imports and configuration, while nvcc runs."""
        try:
            self._read_config()
        except Exception as exc:  # the analysis must never break the build
            self._fail(f"could not start the analysis: {type(exc).__name__}: {exc}")
            self._config = None

    def offer(self, captured: Captured) -> None:
        """A complete PTX file or cubin of the step: a PTX file of the command's highest architecture is analysed
        now, or once the cubin that nvcc assembles from it for its own architecture is there too."""
        if captured.sass is not None:
            if captured.sass in self.cmd.sass_archs:
                self._cubins.setdefault(captured.origin, {})[captured.sass] = captured
            waiting = self._waiting.get(captured.origin)
            if waiting is not None and waiting.target == captured.sass:
                del self._waiting[captured.origin]
                self._analyse(waiting)
            return
        self._complete.append(captured)
        if self._config is not None and captured.stem not in self._done and self._is_best(captured):
            if captured.target in self.cmd.sass_archs and captured.target not in self._cubins.get(captured.origin, {}):
                self._waiting[captured.origin] = captured
            else:
                self._analyse(captured)

    def finish(self, status: int) -> Outcome:
        """nvcc has exited with ``status``: what is left to analyse, then the outcome (nothing when nvcc failed:
        its own messages are what matters)."""
        if status == 0 and self._config is not None:
            self._analyse_rest()
        lines = self._lines if status == 0 else []
        return Outcome("".join(line + "\n" for line in lines), self._found_at_fail_level, self._failures)

    # ------------------------------------------------------------------------------------------------

    def _read_config(self) -> None:
        from ptxstatic.config import Config, ConfigError, load_config
        from ptxstatic.config_search import config_file
        from ptxstatic.ptx import parser  # noqa: F401 - imported now, used when the PTX is ready
        from ptxstatic.rules.engine import check_config

        first = os.path.join(self.cwd, self.cmd.inputs[0]) if self.cmd.inputs else self.cwd
        try:
            found = config_file(first)  # not memoised: a server outlives edits of the configuration
            config = load_config(found) if found is not None else Config()
            check_config(config)
        except ConfigError as exc:
            if self.strict:
                self._lines.append(str(exc))
                self._failures.append(str(exc))
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
        from ptxstatic.report.diagnostics import format_findings

        self._done.add(captured.stem)
        source = next((i for i in self.cmd.inputs if Path(i).stem == captured.stem), captured.stem)
        try:
            result = self._findings(captured, source)
        except PtxstaticError as exc:
            self._fail(f"could not analyse the PTX of {source}: {str(exc).splitlines()[0]}")
            return
        except Exception as exc:
            self._fail(f"could not analyse the PTX of {source}: internal error {type(exc).__name__}: {exc}")
            return
        findings, cut = result
        fail_on = self._config.fail_on
        text = format_findings(findings, self.cwd, errors_from=fail_on if self.strict else None)
        if text:
            self._lines.append(text.rstrip("\n"))
        if cut:
            self._lines.append(f"ptxstatic: note: {source}: the analysis stopped at its budget of "
                               f"{self._config.hook_budget:g} s of CPU time (hook-budget), leaving undone: {cut} "
                               "(the build is not affected)")
        self._found_at_fail_level += sum(f.severity >= fail_on for f in findings)

    def _findings(self, captured: Captured, source: str) -> tuple[list[Any], str]:
        """The findings of one PTX file and what its budget left undone ("" for nothing), from the result cache
        when the same PTX was analysed before under the same configuration and code."""
        from ptxstatic.findings import Finding
        from ptxstatic.lint.cache import ResultCache

        data = Path(captured.path).read_bytes()
        cache = ResultCache.default()
        # the findings depend on the PTX, the configuration and the code (in every key), the directory that
        # relative .file paths and the shown paths are taken from, and the stem that names a kept copy
        key = cache.key(path=self.cwd, kind="hook", content=data, config=self._config, compile=None,
                        extra=captured.stem)
        hit = cache.get(key)
        if hit is not None:
            return [Finding.from_dict(f) for f in hit["findings"]], hit["cut"]
        findings, cut, dependencies, failures = self._lint(captured, data, source)
        if not failures:
            cache.put(key, dependencies, {"findings": [f.to_dict() for f in findings], "cut": cut})
        return findings, cut

    def _lint(self, captured: Captured, data: bytes, source: str) -> tuple[list[Any], str, list[str], list[str]]:
        """(findings, what the budget left undone, the files they were made from, rule failures)."""
        from ptxstatic.loader import load_module
        from ptxstatic.ptx.parser import flush_shape_cache
        from ptxstatic.rules.budget import Budget
        from ptxstatic.rules.engine import lint_module
        from ptxstatic.user_cache import keep_copy

        budget = Budget(self._config.hook_budget)
        module = load_module(captured.path, text=data.decode("utf-8", errors="replace"), validate=False).module
        if self.flush_shapes:
            flush_shape_cache()  # now, beside nvcc, rather than at exit after it
        shown, dependencies = captured.path, []
        if not module.files:  # findings will point into the PTX: keep it where the user can open it
            kept = keep_copy(data, captured.stem, "ptx", HOOK_KEPT_PTX_FILES)
            shown = str(kept) if kept is not None else captured.path
            dependencies.append(shown)
        for f in module.files.values():  # their suppression comments enter the findings
            path = os.path.join(self.cwd, f.path)
            if os.path.isfile(path):
                dependencies.append(os.path.abspath(path))
        failures: list[str] = []

        def failed(message: str) -> None:
            failures.append(message)
            self._fail(f"{source}: {message}")

        cubins = {}
        for sass, cubin in self._cubins.get(captured.origin, {}).items():
            with contextlib.suppress(OSError):
                cubins[sass] = Path(cubin.path).read_bytes()
        findings = lint_module(module, self._config, ptx_path=shown, source_root=self.cwd, on_failure=failed,
                               display_names=False, budget=budget, cubins=cubins)
        return findings, budget.summary(), dependencies, failures

    def _fail(self, message: str) -> None:
        self._failures.append(message)
        kind = "error" if self.strict else "note"
        self._lines.append(f"ptxstatic: {kind}: {message}" + ("" if self.strict else " (the build is not affected)"))
