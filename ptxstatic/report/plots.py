"""The report's plots of one prediction (:func:`ptxstatic.predict.prediction`) as inline SVG, drawn with
matplotlib (imported here only, never on the check or hook path): speed-up against normalised energy over
every clock configuration; and the colours of the time, power and energy heatmaps over (memory, core) clocks,
which the page draws as tables of the numbers."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

HEADS = ("time", "power", "energy")
#: the colour map of the scaling heatmaps (low: dark, high: light)
HEAT_MAP = "viridis"
#: matplotlib settings of every plot: text stays text (small, searchable SVG), ids are reproducible
_STYLE = {"svg.fonttype": "none", "font.size": 8, "axes.spines.top": False, "axes.spines.right": False}


def figure_svg(fig: Figure, salt: str) -> str:
    """The figure as an ``<svg>`` element to inline in HTML (no XML prolog); ``salt`` keeps its ids apart
    from other figures' on the same page."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({**_STYLE, "svg.hashsalt": salt}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _figure(width: float, height: float) -> Figure:
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(_STYLE):
        return Figure(figsize=(width, height))


def _index(configs: list[dict], clocks: tuple[int, int] | None) -> int | None:
    if clocks is None:
        return None
    return next((i for i, c in enumerate(configs) if (c["f_mem_mhz"], c["f_core_mhz"]) == clocks), None)


def tradeoff_svg(prediction: dict, default_clocks: tuple[int, int] | None, salt: str) -> str:
    """Speed-up against F_max (x) and energy relative to F_max (y) of every configuration with their
    intervals, one colour per memory clock; the Pareto set joined, the minimum-energy and default clocks
    marked."""
    import matplotlib

    configs = prediction["configs"]
    fig = _figure(6.4, 4.0)
    with matplotlib.rc_context(_STYLE):
        ax = fig.add_axes((0.1, 0.12, 0.87, 0.85))
        for mem in sorted({c["f_mem_mhz"] for c in configs}):
            rows = [c for c in configs if c["f_mem_mhz"] == mem]
            _scatter(ax, rows, f"memory {mem} MHz")
        front = sorted((c for c in configs if c["pareto"]), key=lambda c: c["speedup"])
        ax.plot([c["speedup"] for c in front], [c["energy_scaling"] for c in front], color="black", lw=1,
                zorder=3, label="Pareto set")
        best = next(c for c in configs if c["min_energy"])
        ax.scatter([best["speedup"]], [best["energy_scaling"]], marker="*", s=220, color="#d62728",
                   edgecolor="black", zorder=5, label=f"minimum energy ({best['f_mem_mhz']}/{best['f_core_mhz']})")
        d = _index(configs, default_clocks)
        if d is not None:
            ax.scatter([configs[d]["speedup"]], [configs[d]["energy_scaling"]], marker="D", s=90,
                       facecolor="none", edgecolor="#2ca02c", linewidth=2, zorder=6,
                       label=f"default clocks ({default_clocks[0]}/{default_clocks[1]})")
        ax.set_xlabel("speed-up against F_max")
        ax.set_ylabel("energy / energy at F_max")
        ax.grid(alpha=0.3)
        ax.legend(loc="best", fontsize=7)
    return figure_svg(fig, salt + "-tradeoff")


def _scatter(ax: Axes, rows: list[dict], label: str) -> None:
    x = np.array([r["speedup"] for r in rows])
    y = np.array([r["energy_scaling"] for r in rows])
    if "energy_low" in rows[0]:
        xerr = np.abs(np.array([[1 / r["time_high"] for r in rows], [1 / r["time_low"] for r in rows]]) - x)
        yerr = np.abs(np.array([[r["energy_low"] for r in rows], [r["energy_high"] for r in rows]]) - y)
        ax.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="none", alpha=0.25, lw=0.8, zorder=1)
    ax.scatter(x, y, s=22, zorder=4, label=label)


def heatmap(prediction: dict, head: str, default_clocks: tuple[int, int] | None) -> dict:
    """One head's scaling over memory (rows, highest first) and core (columns) clocks, for an HTML table: each
    cell's value, its colour on the head's range, and whether it is the minimum-energy or the default
    configuration (None where the GPU lacks that pair)."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    configs = prediction["configs"]
    mems = sorted({c["f_mem_mhz"] for c in configs}, reverse=True)
    cores = sorted({c["f_core_mhz"] for c in configs})
    values = [c[f"{head}_scaling"] for c in configs]
    low, high = min(values), max(values)
    cmap = colormaps[HEAT_MAP]
    by_clocks = {(c["f_mem_mhz"], c["f_core_mhz"]): c for c in configs}
    rows = []
    for mem in mems:
        cells = []
        for core in cores:
            c = by_clocks.get((mem, core))
            if c is None:
                cells.append(None)
                continue
            v = c[f"{head}_scaling"]
            rgba = cmap((v - low) / (high - low) if high > low else 0.5)
            light = 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] > 0.55
            cells.append({"value": v, "colour": to_hex(rgba), "text": "black" if light else "white",
                          "best": c["min_energy"], "default": (mem, core) == default_clocks})
        rows.append({"mem": mem, "cells": cells})
    return {"head": head, "cores": cores, "rows": rows, "low": low, "high": high}
