"""Evaluation results of DVFS and absolute models as text and Markdown tables.

``results`` is the JSON-ready dict of ``ptxstatic evaluate``: ``{"title", "samples", "dvfs": {model:
entry}, "absolute": {model: absolute_metrics(...)}, "notes": [...]}``, an entry being
``metrics.dvfs_entry`` (with ``coverage`` for models with intervals, ``per_sample`` errors, ``saved`` for
rows taken from earlier results, ``energy_source`` where the model fixes it). A comparison
(``dvfs_comparison.compare``) holds one such ``dvfs`` dict per section.
"""

from __future__ import annotations

from ptxstatic.models.inference.targets import HEADS

DVFS_HEADER = ["model", "time MAPE %", "power MAPE %", "energy MAPE %", "time ≤10 %", "E over oracle %",
               "E saved vs F_max %", "E from", "interval coverage T/P/E %"]
SECTIONS = {
    "validation": "Validation applications (never fitted on)",
    "family": "Cross-validation grouped by benchmark family",
    "benchmark": "Cross-validation grouped by benchmark",
}
#: per-sample tables are printed (text, Markdown) up to this many samples; JSON always has them
PER_SAMPLE_ROWS = 40


def energy_choice(report: dict) -> tuple[str, dict]:
    """The energy estimate a row is scored with: the model's own where the entry records it, else the one
    whose minimum-energy choice has the smaller mean excess over the oracle (what training picks)."""
    fixed = report.get("energy_source")
    if fixed in report["energy_choice"]:
        return fixed, report["energy_choice"][fixed]
    return min(report["energy_choice"].items(), key=lambda kv: kv[1]["excess_over_oracle"])


def energy_mape(rep: dict, source: str) -> str:
    """The energy error of the energy a row's decisions use (results saved before the product was scored
    give the head's, marked so)."""
    if source == "time*power":
        if "energy_time_power" in rep:
            return f"{rep['energy_time_power']['mape']:.2f}"
        return f"{rep['scaling']['energy']['mape']:.2f} (head)"
    return f"{rep['scaling']['energy']['mape']:.2f}"


def _dvfs_row(name: str, rep: dict) -> list[str]:
    source, choice = energy_choice(rep)
    s, cov = rep["scaling"], rep.get("coverage")
    return [
        name + (" (saved CV)" if rep.get("saved") else ""), *[f"{s[h]['mape']:.2f}" for h in HEADS[:2]],
        energy_mape(rep, source),
        f"{s['time']['within_10']:.1f}", f"{choice['excess_over_oracle']:.2f}", f"{choice['saved_vs_fmax']:.1f}",
        source, "/".join(f"{cov[h]:.0f}" for h in HEADS) if cov else "–",
    ]


def _per_sample(dvfs: dict) -> tuple[list[str], list[list[str]]]:
    per_model = {n: r["per_sample"] for n, r in dvfs.items() if "per_sample" in r}
    if not per_model:
        return [], []
    samples = list(next(iter(per_model.values())))
    if len(samples) > PER_SAMPLE_ROWS:
        return [], []
    rows = [[a, *(f"{m[a]['time']:.1f} / {m[a]['power']:.1f} / {m[a]['energy']:.1f}" for m in per_model.values())]
            for a in samples]
    return ["sample (time / power / energy MAPE %)", *per_model], rows


def _absolute(results: dict) -> tuple[list[str], list[list[str]]]:
    """The absolute models' rows; the launches scored and the 90 % interval's coverage where a model has them
    (the bottleneck and power models; "–" for the forests)."""
    header = ["model", "MAPE median %", "MAPE mean %", "≤10 %", "≤20 %", "launches", "in 90 % interval %"]
    rows = [
        [name, f"{m['mape_median']:.2f}", f"{m['mape_mean']:.2f}", f"{m['within_10']:.1f}", f"{m['within_20']:.1f}",
         str(m.get("launches", "–")), f"{m['interval']:.1f}" if "interval" in m else "–"]
        for name, m in results.get("absolute", {}).items()
    ]
    return header, rows


def _oracle(dvfs: dict) -> list[str]:
    live = [r for r in dvfs.values() if not r.get("saved")] or list(dvfs.values())
    if not live:
        return []
    oracle = live[0]["energy_choice"]["head"]["oracle_saved_vs_fmax"]
    return [f"oracle (true minimum-energy configuration) saves {oracle:.1f} % energy vs F_max"]


def _tables(results: dict) -> list[tuple[list[str], list[list[str]]]]:
    dvfs = results.get("dvfs", {})
    return [(DVFS_HEADER, [_dvfs_row(n, r) for n, r in dvfs.items()]), _per_sample(dvfs), _absolute(results)]


def _text_table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return [line(header), *map(line, rows)]


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    rule = "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"
    return ["| " + " | ".join(header) + " |", rule, *["| " + " | ".join(r) + " |" for r in rows]]


def evaluation_text(results: dict) -> str:
    lines = [results.get("title", "evaluation"), f"samples: {results.get('samples', '?')}"]
    for header, rows in _tables(results):
        if rows:
            lines += [*_text_table(header, rows), ""]
    lines += _oracle(results.get("dvfs", {}))
    lines += [f"note: {n}" for n in results.get("notes", [])]
    return "\n".join(lines)


def evaluation_markdown(results: dict) -> str:
    out: list[str] = []
    for header, rows in _tables(results):
        if rows:
            out += [*markdown_table(header, rows), ""]
    out += _oracle(results.get("dvfs", {}))
    out += [f"note: {n}" for n in results.get("notes", [])]
    return "\n".join(out)


def comparison_markdown(results: dict) -> str:
    """Every section of a comparison (``dvfs_comparison.compare``) as Markdown."""
    out: list[str] = []
    for key, title in SECTIONS.items():
        if results.get(key):
            out += [f"### {title}", "", evaluation_markdown({"dvfs": results[key]}), ""]
    return "\n".join(out)


def quantity_fit_markdown(fit: dict) -> str:
    """The table of ``dvfs_comparison.quantity_fit``."""
    rows = [[name, *(f"{m[h]:.2f}" for h in HEADS)] for name, m in fit["fit"].items()]
    return "\n".join([
        f"GPU shape learned on the training set: overlap p = {fit['overlap']:g}, core power exponent k = "
        f"{fit['core_exponent']:g}", "",
        *markdown_table(["surfaces fitted", "time MAPE %", "power MAPE %", "energy MAPE %"], rows), ""])
