"""The HTML report of one file (:class:`~ptxstatic.report.file_report.FileReport`) as one self-contained page:
inline SVG plots and graphs, inline CSS, no script and nothing fetched when it is viewed. The page is a
Jinja2 template (``templates/report.html.j2``); rule pages are Markdown rendered with markdown-it-py."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from ptxstatic.errors import PtxstaticError
from ptxstatic.files import write_atomic
from ptxstatic.package_data import data_path
from ptxstatic.report.block_graph import block_graph_svg, legend_colours
from ptxstatic.report.dvfs_prediction import prediction_text
from ptxstatic.report.file_report import BlockInfo, FileReport, KernelReport
from ptxstatic.report.plots import HEADS, heatmap, tradeoff_svg

#: evaluations of a model card shown on the page, with their captions
EVALUATIONS = {"family_cv": "cross-validation grouped by benchmark family",
               "benchmark_cv": "cross-validation grouped by benchmark",
               "validation": "held-out applications (never fitted)"}


#: the libraries the page is made with (the ``report`` extra)
LIBRARIES = ("matplotlib", "jinja2", "markdown_it")


def require_libraries() -> None:
    """Raise a one-line error naming the extra to install when a library of the page is missing."""
    missing = [name for name in LIBRARIES if importlib.util.find_spec(name) is None]
    if missing:
        raise PtxstaticError(f"the HTML report needs {', '.join(missing)}: pip install 'ptxstatic[report]'")


def write_report(report: FileReport, out_dir: str | Path, *, use_dot: bool | None = None) -> Path:
    """Write the page to ``out_dir``/``<file stem>.html`` (the directory is created) and return its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / (Path(report.path).stem + ".html")
    write_atomic(path, render_report(report, use_dot=use_dot))
    return path


def render_report(report: FileReport, *, use_dot: bool | None = None) -> str:
    """The page's HTML text."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(data_path("report/templates")),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    files = {path: i for i, path in enumerate(report.sources)}
    kernels = [_kernel(k, i, report, files, use_dot) for i, k in enumerate(report.kernels)]
    return env.get_template("report.html.j2").render(
        report=report, title=os.path.basename(report.path), kernels=kernels, card=card_summary(report.card),
        heads=HEADS, legend=legend_colours(), rules=_rule_docs(report), sources=_listings(report, files))


def _kernel(k: KernelReport, index: int, report: FileReport, files: dict[str, int], use_dot: bool | None) -> dict:
    import markupsafe

    salt = f"k{index}"

    def link(b: BlockInfo) -> str | None:
        if b.source_file in files and b.source_lines:
            return f"#src{files[b.source_file]}-L{b.source_lines[0]}"
        return None

    p = k.prediction
    tradeoff, heatmaps = None, []
    if p["configs"]:
        tradeoff = markupsafe.Markup(tradeoff_svg(p, report.default_clocks, salt))
        heatmaps = [heatmap(p, head, report.default_clocks) for head in HEADS]
    default = next((c for c in p["configs"]
                    if (c["f_mem_mhz"], c["f_core_mhz"]) == report.default_clocks), None)
    return {"id": f"kernel-{index}", "report": k, "p": p, "tradeoff": tradeoff, "heatmaps": heatmaps,
            "default": default,
            "graph": markupsafe.Markup(block_graph_svg(k, link, salt, use_dot=use_dot)),
            "links": {b.id: link(b) for b in k.blocks}, "text": prediction_text(p) if p["configs"] else "",
            "codes": sorted({f.code for f in k.findings})}


def _rule_docs(report: FileReport) -> dict[str, object]:
    """Each reported rule's page, rendered from Markdown."""
    import markupsafe
    from markdown_it import MarkdownIt

    from ptxstatic.rules.catalog import get_rule

    md = MarkdownIt("commonmark").enable("table")
    codes = sorted({f.code for k in report.kernels for f in k.findings})
    return {code: markupsafe.Markup(md.render(get_rule(code).doc)) for code in codes}


def _listings(report: FileReport, files: dict[str, int]) -> list[dict]:
    """The source files blocks map to, each line with its anchor and whether a block maps to it."""
    used: dict[str, set[int]] = {path: set() for path in files}
    for k in report.kernels:
        for b in k.blocks:
            if b.source_file in used:
                used[b.source_file].update(b.source_lines)
    return [{"index": files[path], "path": path, "lines": lines, "used": used[path]}
            for path, lines in report.sources.items()]


def _metrics(evaluation: dict, energy_source: str | None) -> dict:
    scaling = evaluation.get("scaling", {})
    choice = evaluation.get("energy_choice", {}).get(energy_source or "head") or {}
    return {"mape": {h: scaling.get(h, {}).get("mape") for h in HEADS},
            "within_10": {h: scaling.get(h, {}).get("within_10") for h in HEADS},
            "coverage": evaluation.get("coverage", {}),
            "saved": choice.get("saved_vs_fmax"), "oracle": choice.get("oracle_saved_vs_fmax"),
            "samples": evaluation.get("samples"), "folds": evaluation.get("folds"), "data": evaluation.get("data")}


def card_summary(card: dict | None) -> dict | None:
    """What the page says of the model the predictions come from: its data and its error figures."""
    if card is None:
        return None
    data = card.get("training_data", {})
    source = card.get("energy_source")
    evaluation = card.get("evaluation", {})
    return {"name": card.get("name"), "kind": card.get("kind"), "gpu": card.get("gpu"), "date": card.get("date"),
            "data": data.get("source"), "license": data.get("license"), "samples": data.get("samples"),
            "benchmarks": len(data.get("benchmarks", [])), "split": card.get("split"),
            "why": (card.get("predict") or {}).get("why"),
            "interval_level": (card.get("calibration") or {}).get("interval_level"),
            "energy_source": source,
            "evaluations": [(caption, _metrics(evaluation[key], source))
                            for key, caption in EVALUATIONS.items() if key in evaluation]}
