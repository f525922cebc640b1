"""Evaluation results of DVFS and absolute models as text and Markdown tables.

``results`` is the JSON-ready dict built by the evaluate command: ``{"title", "samples", "dvfs": {model:
dvfs_report(...)}, "absolute": {model: absolute_metrics(...)}, "notes": [...]}``.
"""

from __future__ import annotations

from ptxstatic.models.targets import HEADS

_DVFS_COLUMNS = [
    *[(f"{h} MAPE %", h, "mape") for h in HEADS],
    *[(f"{h} err pts", h, "abs_points") for h in HEADS],
    *[(f"{h} ≤10 %", h, "within_10") for h in HEADS],
]


def energy_choice(report: dict) -> tuple[str, dict]:
    """The energy estimate whose minimum-energy choice has the smaller mean excess over the oracle."""
    return min(report["energy_choice"].items(), key=lambda kv: kv[1]["excess_over_oracle"])


def _dvfs_rows(results: dict) -> tuple[list[str], list[list[str]]]:
    header = ["model", *[c[0] for c in _DVFS_COLUMNS], "E saved vs F_max %", "E over oracle %", "E from"]
    rows = []
    for name, rep in results.get("dvfs", {}).items():
        source, choice = energy_choice(rep)
        rows.append([
            name, *[f"{rep['scaling'][h][k]:.2f}" for _, h, k in _DVFS_COLUMNS],
            f"{choice['saved_vs_fmax']:.1f}", f"{choice['excess_over_oracle']:.2f}", source,
        ])
    return header, rows


def _absolute_rows(results: dict) -> tuple[list[str], list[list[str]]]:
    header = ["model", "MAPE median %", "MAPE mean %", "≤10 %", "≤20 %"]
    rows = [
        [name, f"{m['mape_median']:.2f}", f"{m['mape_mean']:.2f}", f"{m['within_10']:.1f}", f"{m['within_20']:.1f}"]
        for name, m in results.get("absolute", {}).items()
    ]
    return header, rows


def _oracle_line(results: dict) -> list[str]:
    reports = list(results.get("dvfs", {}).values())
    if not reports:
        return []
    oracle = reports[0]["energy_choice"]["head"]["oracle_saved_vs_fmax"]
    return [f"oracle (true minimum-energy configuration) saves {oracle:.1f} % energy vs F_max"]


def evaluation_text(results: dict) -> str:
    lines = [results.get("title", "evaluation"), f"samples: {results.get('samples', '?')}"]
    for header, rows in (_dvfs_rows(results), _absolute_rows(results)):
        if not rows:
            continue
        widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]
        lines.append("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths))))
        lines += ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in rows]
    lines += _oracle_line(results)
    lines += [f"note: {n}" for n in results.get("notes", [])]
    return "\n".join(lines)


def evaluation_markdown(results: dict) -> str:
    out = []
    for header, rows in (_dvfs_rows(results), _absolute_rows(results)):
        if not rows:
            continue
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|")
        out += ["| " + " | ".join(r) + " |" for r in rows]
        out.append("")
    out += _oracle_line(results)
    return "\n".join(out)
