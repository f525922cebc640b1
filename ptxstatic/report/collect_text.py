"""What ``ptxstatic collect`` reports: the run's summary and the statistics of the GPU's samples."""

from __future__ import annotations

from ptxstatic.collect.measure import board_words
from ptxstatic.collect.runner import Summary


def collect_text(summary: Summary, stats: dict) -> str:
    """The run (samples written, failed, already there, left by the budget; the board; clock settings used)
    and the dataset statistics."""
    lines = [f"{summary.db}: {summary.written} samples written ({summary.failed} failed), {summary.already} of "
             f"{summary.total} were already there"]
    if summary.budget_s is not None:
        lines.append(f"budget {summary.budget_s:.0f} s, used {summary.elapsed_s:.0f} s; "
                     + (f"{summary.left} samples left: run the same command again to continue" if summary.left
                        else "nothing left"))
    if summary.overhead is not None:
        lines.append(f"per-sample overhead beyond measuring: median {summary.overhead['median_s']:.2f} s, high "
                     f"{summary.overhead['high_s']:.2f} s")
    if summary.board is not None:
        lines.append(f"board: {board_words(summary.board)}")
    if summary.settings_changed:
        lines.append(f"clock settings used and restored: {', '.join(summary.settings_changed)}")
    return "\n".join([*lines, stats_text(stats)])


def stats_text(s: dict) -> str:
    """The dataset statistics as a few lines of text."""

    def rng(d: dict | None, unit: str, fmt: str = ".4g") -> str:
        return "-" if d is None else f"{d['min']:{fmt}} / {d['median']:{fmt}} / {d['max']:{fmt}} {unit}".rstrip()

    clocks = ", ".join(f"{k} MHz x{v}" for k, v in s["clock_configs"].items()) or "-"
    sources = ", ".join(f"{k} x{v}" for k, v in s["power_source"].items()) or "-"
    steady = s["power_steady"]
    return "\n".join([
        f"GPU {s['gpu']}: {s['samples_ok']} samples ok, {s['samples_failed']} failed; {s['benchmarks']} kernels, "
        f"{s['launches']} launches; settings {', '.join(s['settings']) or '-'}",
        f"  clocks (mem:core) {clocks}",
        f"  time per launch min/median/max {rng(s['time_ms'], 'ms')}",
        f"  power min/median/max {rng(s['power_w'], 'W')}; energy per launch {rng(s['energy_per_launch_mj'], 'mJ')}",
        f"  time spread (MAD/median) {rng(s['time_relative_mad'], '', '.2%')}; power from {sources}",
        f"  power steady in {steady['steady']} samples, not steady in {steady['not_steady']}"
        + (f", not recorded in {steady['unknown']}" if steady["unknown"] else "")
        + f"; spread between repeats {rng(s['power_repeat_spread'], '', '.2%')}, counter timing "
        f"{rng(s['power_resolution'], '', '.2%')}",
        f"  {s['throttled_samples']} samples clock-limited, {s['samples_with_warnings']} with warnings; "
        f"{s['measured_seconds']:.0f} s of measured loops",
    ])
