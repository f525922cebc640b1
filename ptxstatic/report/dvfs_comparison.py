"""Markdown tables of a model comparison (``ptxstatic.models.dvfs_comparison.compare``)."""

from __future__ import annotations

from ptxstatic.report.dvfs_evaluation import energy_choice

SECTIONS = {
    "validation": "Validation applications (never fitted on)",
    "family": "Cross-validation grouped by benchmark family",
    "benchmark": "Cross-validation grouped by benchmark",
}
HEADS = ("time", "power", "energy")


def _row(name: str, rep: dict) -> list[str]:
    _, choice = energy_choice(rep)
    cov = rep.get("coverage")
    s = rep["scaling"]
    return [
        name, *[f"{s[h]['mape']:.2f}" for h in HEADS], f"{s['time']['within_10']:.1f}",
        f"{choice['excess_over_oracle']:.2f}", f"{choice['saved_vs_fmax']:.1f}",
        "/".join(f"{cov[h]:.0f}" for h in HEADS) if cov else "–",
    ]


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    rule = "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"
    return ["| " + " | ".join(header) + " |", rule, *["| " + " | ".join(r) + " |" for r in rows]]


def comparison_markdown(results: dict) -> str:
    header = ["model", "time MAPE %", "power MAPE %", "energy MAPE %", "time ≤10 %", "E over oracle %",
              "E saved vs F_max %", "interval coverage T/P/E %"]
    out: list[str] = []
    for key, title in SECTIONS.items():
        reports = results.get(key) or {}
        if not reports:
            continue
        out += [f"### {title}", ""]
        out += _table(header, [_row(n, r) for n, r in reports.items()])
        oracle = next(iter(reports.values()))["energy_choice"]["head"]["oracle_saved_vs_fmax"]
        out += ["", f"oracle (true minimum-energy configuration) saves {oracle:.1f} % energy vs F_max", ""]
    validation = results.get("validation") or {}
    per_model = {n: r["per_sample"] for n, r in validation.items() if "per_sample" in r}
    if per_model:
        apps = list(next(iter(per_model.values())))
        out += ["### Per application (time / power / energy MAPE %)", ""]
        out += _table(["application", *per_model], [
            [a, *(f"{m[a]['time']:.1f} / {m[a]['power']:.1f} / {m[a]['energy']:.1f}" for m in per_model.values())]
            for a in apps])
        out.append("")
    out += [f"note: {n}" for n in results.get("notes", [])]
    return "\n".join(out)


def quantity_fit_markdown(fit: dict) -> str:
    """The table of ``dvfs_comparison.quantity_fit``."""
    rows = [[name, *(f"{m[h]:.2f}" for h in HEADS)] for name, m in fit["fit"].items()]
    return "\n".join([
        f"GPU shape learned on the training set: overlap p = {fit['overlap']:g}, core power exponent k = "
        f"{fit['core_exponent']:g}", "",
        *_table(["surfaces fitted", "time MAPE %", "power MAPE %", "energy MAPE %"], rows), ""])
