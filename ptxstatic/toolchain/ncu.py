"""Nsight Compute (``ncu``): hardware counters of every kernel a program launches, read without changing a
GPU setting (``--clock-control none``: the clocks stay as the board runs them; caches are flushed before
each replay pass, so every launch starts cold)."""

from __future__ import annotations

import csv
import glob
import io
import os
import re

from ptxstatic.errors import PtxstaticError
from ptxstatic.toolchain.process import find, run_tool

#: where Nsight Compute installs itself when it is not on the PATH
_INSTALL_GLOBS = ("/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda*/bin/ncu",
                  "/usr/local/cuda*/nsight-compute*/ncu")
_METRIC_NAME = re.compile(r"^([a-z0-9]+__[a-z0-9_]+)\b")


def ncu_path() -> str | None:
    """The ``ncu`` binary: on the PATH, else the newest of the usual install places; None without one."""
    found = find("ncu")
    if found:
        return found
    candidates = sorted(p for g in _INSTALL_GLOBS for p in glob.glob(g) if os.access(p, os.X_OK))
    return candidates[-1] if candidates else None


def ncu_version(ncu: str) -> str:
    """The first version line ``ncu --version`` prints."""
    done = run_tool([ncu, "--version"], 60, "ncu --version")
    lines = [ln for ln in done.stdout.splitlines() if "Version" in ln or "version" in ln]
    return (lines[-1] if lines else done.stdout.strip()).strip()


def available_metrics(ncu: str, chip: str | None = None, timeout_s: float = 120) -> set[str]:
    """The base metric names ``ncu --query-metrics`` lists for the device (or ``chip``); empty when it
    cannot tell."""
    argv = [ncu, "--query-metrics"] + (["--chip", chip] if chip else [])
    try:
        done = run_tool(argv, timeout_s, "ncu --query-metrics")
    except PtxstaticError:
        return set()
    return {m.group(1) for ln in done.stdout.splitlines() if (m := _METRIC_NAME.match(ln.strip()))}


def base_name(metric: str) -> str:
    """``lts__t_sectors_op_read.sum`` -> ``lts__t_sectors_op_read`` (the name ``--query-metrics`` lists)."""
    return metric.split(".", 1)[0]


def profile_command(ncu: str, metrics: list[str], log_file: str, program: list[str]) -> list[str]:
    """The ``ncu`` command that profiles every kernel ``program`` launches, in every process it starts, and
    writes one CSV row per launch (the ``raw`` page, values in base units: bytes, nanoseconds) to
    ``log_file``."""
    return [ncu, "--clock-control", "none", "--cache-control", "all", "--target-processes", "all",
            "--metrics", ",".join(metrics), "--print-units", "base", "--csv", "--page", "raw", "--log-file", log_file,
            *program]


def parse_raw_csv(text: str) -> list[dict[str, str]]:
    """The rows of ``ncu --csv --page raw`` output: one dict per profiled launch, keyed by column name (``ID``,
    ``Kernel Name``, the metrics ...), in launch order. Lines that are not CSV (``==PROF==`` messages, the
    program's own output) and the row of units are skipped."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    if not lines:
        return []
    reader = csv.reader(io.StringIO("\n".join(lines)))
    header = next(reader)
    rows = []
    for values in reader:
        row = dict(zip(header, values, strict=False))
        if not row.get("ID", "").strip().isdigit():  # the units row
            continue
        rows.append(row)
    return rows


def metric_value(text: str) -> float | None:
    """A CSV cell as a number (``1,234.5`` and ``n/a`` included), None when it is not one."""
    cleaned = text.replace(",", "").strip()
    try:
        return float(cleaned)
    except ValueError:
        return None
