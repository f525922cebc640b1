"""The language server's rendering: a document's findings and problems as LSP diagnostics, a kernel's
prediction and hottest blocks as a hover's Markdown, and the edit that adds a suppression comment."""

from __future__ import annotations

import os
import re
from functools import cache

from lsprotocol import types

from ptxstatic.features.intensity import DEFAULT_TRIPS
from ptxstatic.findings import Finding, Location, Severity
from ptxstatic.lint.document import DocumentResult, Problem
from ptxstatic.lint.insight import HotBlock, KernelInsight
from ptxstatic.package_data import data_path

SOURCE = "ptxstatic"
_SEVERITY = {Severity.ERROR: types.DiagnosticSeverity.Error, Severity.WARNING: types.DiagnosticSeverity.Warning,
             Severity.NOTE: types.DiagnosticSeverity.Information}
_IGNORE = re.compile(r"//\s*ptxstatic:\s*ignore\[(?P<codes>[^\]]*)\]")


def _same(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _range(lines: list[str], line: int, column: int = 0) -> types.Range:
    """From ``column`` (1-based; 0: the first non-blank) to the end of 1-based ``line``; a line outside the
    text is its first line."""
    n = line - 1 if 0 < line <= len(lines) else 0
    text = lines[n].rstrip("\r\n") if lines else ""
    start = column - 1 if column > 0 else len(text) - len(text.lstrip())
    start = min(start, len(text))
    return types.Range(types.Position(n, _utf16(text[:start])), types.Position(n, _utf16(text)))


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _uri(path: str) -> str:
    from pygls.uris import from_fs_path

    return from_fs_path(os.path.abspath(path)) or path


def _place(finding: Finding, path: str, kind: str) -> tuple[Location | None, bool]:
    """Where a finding goes in the document: its ``.cu`` line (or the call site in this file of inlined
    code) in CUDA, its PTX line in PTX; and whether a suppression comment can go on that line."""
    if kind == "ptx":
        return (finding.ptx if _same(finding.ptx.file, path) else None), False
    for i, loc in enumerate((finding.source, *finding.inlined_at)):
        if loc is not None and _same(loc.file, path):
            return loc, i == 0 or finding.source is not None
    return None, False


def finding_diagnostic(finding: Finding, result: DocumentResult, lines: list[str]) -> types.Diagnostic:
    """One finding: at its line in this document (else the first line, saying where it is), with its
    notes as related information and, where a comment can silence it, the line for the code action."""
    loc, suppressible = _place(finding, result.path, result.kind)
    message = finding.message
    if loc is None:
        message = f"{finding.location}: {message}"
    elif loc is not finding.source and finding.source is not None and result.kind != "ptx":
        message = f"{message} (in inlined code at {finding.source})"
    related = [types.DiagnosticRelatedInformation(types.Location(_uri(n.location.file), _range(
        _file_lines(n.location.file), n.location.line, n.location.column)), n.message)
        for n in finding.notes if n.location is not None]
    message += "".join(f"\n{n.message}" for n in finding.notes if n.location is None)
    where = loc or Location(result.path)
    return types.Diagnostic(_range(lines, where.line, where.column), message, _SEVERITY[finding.severity],
                            code=finding.code, code_description=rule_page(finding.code), source=SOURCE,
                            related_information=related or None,
                            data={"suppress_line": where.line - 1} if loc is not None and suppressible else None)


@cache
def rule_page(code: str) -> types.CodeDescription | None:
    """The rule's documentation page shipped with the package (``ptxstatic rule CODE`` shows the same), as a
    link on the diagnostic's code."""
    page = data_path("rules/docs", f"{code}.md")
    return types.CodeDescription(page.as_uri()) if page.is_file() else None


def _file_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def problem_diagnostic(problem: Problem, result: DocumentResult, lines: list[str]) -> types.Diagnostic:
    """Why (part of) the document could not be analysed, an error at its line (the first line when the
    problem is in another file or the file as a whole), with the tool's output."""
    here = _same(problem.file, result.path) and problem.line > 0
    message = problem.message if here or problem.line == 0 else f"{Location(problem.file, problem.line)}: " \
                                                                 f"{problem.message}"
    if problem.detail:
        message += "\n" + problem.detail
    return types.Diagnostic(_range(lines, problem.line if here else 0, problem.column if here else 0), message,
                            types.DiagnosticSeverity.Error, source=SOURCE)


def diagnostics(result: DocumentResult, text: str) -> list[types.Diagnostic]:
    """Every problem and finding of ``result`` as diagnostics of the document whose text is ``text``."""
    lines = text.splitlines()
    return ([problem_diagnostic(p, result, lines) for p in result.problems]
            + [finding_diagnostic(f, result, lines) for f in result.findings])


def suppression_edit(line_text: str, line: int, code: str) -> types.TextEdit:
    """The edit that silences ``code`` on ``line`` (0-based): the code added to the line's
    ``// ptxstatic: ignore[...]`` comment, or such a comment appended."""
    text = line_text.rstrip("\r\n")
    m = _IGNORE.search(text)
    if m is not None:
        codes = [c.strip() for c in m.group("codes").split(",") if c.strip()]
        new = f"// ptxstatic: ignore[{', '.join([*codes, code])}]"
        start, end = _utf16(text[:m.start()]), _utf16(text[:m.end()])
    else:
        new, start = f"{'  ' if text.strip() else ''}// ptxstatic: ignore[{code}]", _utf16(text.rstrip())
        end = _utf16(text)
    return types.TextEdit(types.Range(types.Position(line, start), types.Position(line, end)), new)


def hover_markdown(insight: KernelInsight, document: str) -> str:
    """A kernel's hover: how its time, power and energy scale over a few clock configurations, the
    minimum-energy clocks with saving and slowdown, memory- or compute-bound, and its hottest blocks with
    their lines (``document``: the file being edited, whose lines need no file name)."""
    title = f"**{insight.display_name}**"
    d = insight.prediction
    if d is None or d["model"] is None:
        why = insight.error or f"no DVFS model for GPU {d['gpu'] if d else '?'}"
        return "\n\n".join([f"{title}: no prediction ({why})", *_blocks(insight, document)])
    m = d["model"]
    level = f", {100 * m['interval_level']:.0f} % intervals" if m.get("interval_level") else ""
    launch = [f"_Shown without a launch: {insight.error}._"] if insight.error else _launch_note(d)
    parts = [f"{title} on {d['gpu']} — {m['name']} model{level}; scaling relative to F_max", _bound(d),
             _scaling_table(d), _decision(d), *_ood(d), *launch, *_blocks(insight, document)]
    return "\n\n".join(p for p in parts if p)


def _factor(row: dict, head: str) -> str:
    low = row.get(f"{head}_low")
    value = f"{row[f'{head}_scaling']:.3f}"
    return value if low is None or low == row.get(f"{head}_high") else f"{value} ({low:.2f}–{row[f'{head}_high']:.2f})"


def _scaling_table(d: dict) -> str:
    """F_max, the minimum-energy configuration, the lowest memory clock at the highest core clock and the
    lowest core clock at the highest memory clock."""
    configs = d["configs"]
    ref = next(r for r in configs if (r["f_mem_mhz"], r["f_core_mhz"]) == tuple(d["reference"].values()))
    top_mem, top_core = ref["f_mem_mhz"], ref["f_core_mhz"]
    low_mem = min((r for r in configs if r["f_core_mhz"] == top_core), key=lambda r: r["f_mem_mhz"])
    low_core = min((r for r in configs if r["f_mem_mhz"] == top_mem), key=lambda r: r["f_core_mhz"])
    best = next(r for r in configs if r["min_energy"])
    rows = {"F_max": ref, "minimum energy": best, "lowest memory clock": low_mem, "lowest core clock": low_core}
    out = ["| clocks (mem/core MHz) | time | power | energy |", "|---|---|---|---|"]
    seen: set[tuple[int, int]] = set()
    for label, r in rows.items():
        if (r["f_mem_mhz"], r["f_core_mhz"]) in seen:
            continue
        seen.add((r["f_mem_mhz"], r["f_core_mhz"]))
        out.append(f"| {label} {r['f_mem_mhz']}/{r['f_core_mhz']} | "
                   + " | ".join(_factor(r, h) for h in ("time", "power", "energy")) + " |")
    return "\n".join(out)


def _decision(d: dict) -> str:
    best = d["min_energy"]
    saving = f"{100 * best['saving']:.1f} %"
    if "saving_low" in best:
        saving += f" (range {100 * best['saving_low']:.1f} to {100 * best['saving_high']:.1f} %)"
    slowdown = 100 * (best["time_scaling"] - 1)
    return (f"Minimum energy at mem {best['f_mem_mhz']} MHz, core {best['f_core_mhz']} MHz: saves {saving} of the "
            f"energy at F_max, {slowdown:.1f} % slower (time × {best['time_scaling']:.3f})")


_RESOURCE = {"core": "Core", "dram": "DRAM", "l2": "L2", "l1": "L1"}


def _bound(d: dict) -> str:
    q = d.get("quantities") or {}
    a = d.get("absolute")
    if a:
        resources = ", ".join(f"{_RESOURCE[k]} {v:.3g} ms" for k, v in a["resources_ms"].items())
        t = a.get("traffic") or {}
        dram = sum(t[k]["value"] for k in ("dram_read_bytes", "dram_write_bytes") if k in t)
        moved = f"; DRAM {dram / 1e6:.4g} MB" if t else ""
        return (f"{_RESOURCE[a['bound']]}-bound at F_max by the bottleneck "
                f"estimate: {a['time_ms']:.4g} ms ({resources}; memory-bound share {a['memory_share']:.2f}"
                f"{moved})")
    if "time_memory" not in q:
        return ""
    share = q["time_memory"]
    return (f"{'Memory' if share >= 0.5 else 'Compute'}-bound: memory-bound share {share:.2f} of the "
            "clock-dependent time")


def _ood(d: dict) -> list[str]:
    o = d.get("ood")
    if not o or o["score"] <= 0:
        return []
    return [f"Out of the training distribution (score {o['score']:.2f}): shrunk {100 * o['shrinkage']:.0f} % "
            "toward the training mean surface"]


def _launch_note(d: dict) -> list[str]:
    if d.get("absolute"):
        return []
    return [f"_No launch configured (`launch` in `[tool.ptxstatic]`): program order with each loop weighted by "
            f"{DEFAULT_TRIPS:g}^depth, no absolute time._"]


def _blocks(insight: KernelInsight, document: str) -> list[str]:
    if not insight.hot_blocks:
        return []
    how = "from static block counts of the configured launch" if insight.launch else \
        f"loops assumed to run {DEFAULT_TRIPS:g} times"
    items = [f"- `{b.name}`: {100 * b.share:.0f} %" + (f", loop depth {b.loop_depth}" if b.loop_depth else "")
             + _where(b, document) for b in insight.hot_blocks]
    return [f"Hottest blocks (share of the executed instructions, {how}):\n" + "\n".join(items)]


def _where(block: HotBlock, document: str) -> str:
    """`` — lines 26–28`` of the document, and ``file:line`` of other files."""
    if not block.lines:
        return ""
    by_file: dict[str, list[int]] = {}
    for file, line in block.lines:
        by_file.setdefault(file, []).append(line)
    parts = []
    for file, lines in by_file.items():
        spans = _spans(sorted(lines))
        parts.append(("line" + ("s" if len(lines) > 1 else "") + " " if _same(file, document)
                      else f"{os.path.basename(file)}:") + ", ".join(spans))
    return " — " + "; ".join(parts)


def _spans(lines: list[int]) -> list[str]:
    """``[3, 4, 5, 9]`` -> ``["3–5", "9"]``."""
    out: list[list[int]] = []
    for n in lines:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return [f"{a}–{b}" if a != b else str(a) for a, b in out]
