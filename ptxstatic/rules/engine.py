"""Running the rules on a module: selection, per-file ignores, suppression comments, deterministic order.

:func:`lint_module` is the one entry point that ``check``, the nvcc hook and the language server share.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ptxstatic.config import Config
from ptxstatic.errors import PtxstaticError
from ptxstatic.findings import Finding, Note, Severity
from ptxstatic.ptx.ast import Module
from ptxstatic.ptx.kernels import demangle
from ptxstatic.rules.budget import Budget
from ptxstatic.rules.catalog import all_rules
from ptxstatic.rules.context import ModuleContext, RuleContext
from ptxstatic.rules.placement import Placement
from ptxstatic.rules.registry import Rule
from ptxstatic.rules.suppression import SourceLines, is_suppressed

LINE_INFO_HINT = "the PTX has no line information: add -lineinfo (or -G) to nvcc's flags to see .cu lines"


def check_config(config: Config, rules: Sequence[Rule] | None = None) -> None:
    """Raise :class:`~ptxstatic.config.ConfigError` for rule codes, rule options or a GPU the configuration
    names but that do not exist."""
    known = {r.code: r for r in (rules if rules is not None else all_rules())}
    for key, codes in (("select", config.select), ("ignore", config.ignore),
                       *((("per-file-ignores", p), c) for p, c in config.per_file_ignores)):
        keys = key if isinstance(key, tuple) else (key,)
        for code in codes:
            if len(code) == 5 and code not in known:
                raise config.error(f"unknown rule code '{code}' in {keys[0]}", *keys)
    for code, options in config.rules.items():
        rule = known.get(code)
        if rule is None:
            raise config.error(f"unknown rule code '{code}' under rules", "rules", code)
        for name, value in options.items():
            _check_option(config, rule, name, value)
    if config.gpu is not None:
        from ptxstatic.hardware.occupancy import gpu_spec

        try:
            gpu_spec(config.gpu)
        except PtxstaticError as exc:
            raise config.error(f"gpu: {exc}", "gpu") from None


def _check_option(config: Config, rule: Rule, name: str, value: object) -> None:
    keys = ("rules", rule.code, name)
    if name == "severity":
        try:
            Severity.parse(str(value))
        except PtxstaticError as exc:
            raise config.error(f"{rule.code} severity: {exc}", *keys) from None
        return
    option = rule.options.get(name)
    if option is None:
        known = ", ".join(["severity", *rule.options])
        raise config.error(f"unknown option '{name}' for {rule.code} ({rule.name}); known: {known}", *keys)
    want = type(option.default)
    ok = isinstance(value, want) and not (want is not bool and isinstance(value, bool))
    if want is float and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if not ok:
        raise config.error(f"{rule.code} {name} must be a {want.__name__}, not {type(value).__name__}", *keys)


def lint_module(module: Module, config: Config, *, ptx_path: str | None = None,
                source_root: str | Path | None = None, rules: Sequence[Rule] | None = None,
                on_failure: Callable[[str], None] | None = None, display_names: bool = True,
                on_note: Callable[[str], None] | None = None, include_dirs: Sequence[str] | None = None,
                system_dirs: Sequence[str] = (), budget: Budget | None = None,
                cubins: Mapping[str, bytes] | None = None) -> list[Finding]:
    """Run the selected rules on every function with a body and return the findings that survive
    ``per-file-ignores`` and suppression comments, sorted by location.

    ``ptx_path`` is how the PTX file is shown (default: ``module.filename``); relative ``.file`` paths are
    resolved under ``source_root``. A rule that raises on a function is reported through ``on_failure`` (one
    line) and the other rules still run; without ``on_failure`` the exception propagates. Without
    ``display_names`` the findings' ``display_name`` is the PTX name (no demangling: the compiler-style text
    does not show it, and loading the demangler runs ``ldconfig`` in a process of its own). ``on_note``
    receives what the rules say of the module as a whole (such as resources that were not measured).
    Findings are then placed in the user's code (:mod:`.placement`): out of system headers (judged with the
    compilation's ``include_dirs`` and ``system_dirs``, ``-I`` and ``-isystem``; ``include_dirs`` None where
    the compilation is not known) and out of missing files. Once ``budget`` is spent no rule starts on a
    function, and what is skipped is recorded in it. ``cubins``: what ptxas made of this PTX with its default
    options, by architecture (a build's cubins), read in place of running ``ptxas -v`` where they tell as much.
    """
    selected = [(r, *r.configured(config)) for r in (rules if rules is not None else all_rules())
                if config.is_selected(r.code, r.opt_in)]
    mc = ModuleContext(module, config, ptx_path, source_root, budget, cubins)
    found: list[Finding] = []
    for fn in module.functions:
        if fn.body is None:
            continue
        ctx = RuleContext(mc, fn)
        for rule, severity, options in selected:
            ctx.code, ctx.severity, ctx.options = rule.code, severity, options
            if budget is not None and budget.spent():
                budget.record(rule.code, fn.name)
                continue
            try:
                found.extend(rule.check(ctx))
            except Exception as exc:  # one crashing analysis must not lose the other rules' findings
                if on_failure is None:
                    raise
                on_failure(f"{rule.code} ({rule.name}) failed on {fn.name}: {type(exc).__name__}: {exc}")
    if on_note is not None:
        for message in mc.notes:
            on_note(message)
    placement = Placement(config, include_dirs, system_dirs, str(source_root) if source_root is not None else None)
    placed = [p for p in map(placement.place, found) if p is not None]
    sources = SourceLines()
    kept = [f for f in placed if not config.ignored_in(f.code, f.location.file) and not is_suppressed(f, sources)]
    return _finish(kept, mc, sources, display_names)


def _finish(findings: list[Finding], mc: ModuleContext, sources: SourceLines, display_names: bool) -> list[Finding]:
    """Display names, the source line as context, the line-information hint, occurrences, and order."""
    names = demangle(f.kernel for f in findings) if findings and display_names else {}
    done = []
    for f in findings:
        context = sources.line(f.source) if f.source is not None else None
        done.append(dataclasses.replace(f, display_name=names.get(f.kernel, f.kernel),
                                        context=(context or f.context).strip()))
    done.sort(key=Finding.sort_key)
    if done and not mc.has_line_info:  # said once, on the first finding
        done[0] = dataclasses.replace(done[0], notes=(*done[0].notes, Note(LINE_INFO_HINT)))
    root = mc.config.root
    seen: Counter[str] = Counter()
    out = []
    for f in done:
        base = f.fingerprint(root)
        out.append(dataclasses.replace(f, occurrence=seen[base]) if seen[base] else f)
        seen[base] += 1
    return out
