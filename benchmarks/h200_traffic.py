"""The memory-traffic model against an NVIDIA H200's hardware counters, per family of microbenchmarks.

For every launch of ``datasets/h200-counters`` (Nsight Compute counters of the microbenchmarks on an H200,
clocks untouched, cold caches): the microbenchmark compiled by nvcc for sm_90, its static block counts and
the traffic model (``ptxstatic.traffic``) on the H200's figures, against the counters: global load and
store sectors through L1 (``l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}``), L2 sectors read by the SMs
(``lts__t_sectors_srcunit_tex_op_read``, after L1), and DRAM bytes read and written during the launch.
Per family (a manifest source file) and overall: the median of model / counter and the share within 25 %
(launches where the counter is under 1 MB are left out of the DRAM columns: there the bytes are noise of the
launch itself). Everything printed is measured in this run.

Run: ``python benchmarks/h200_traffic.py [--only PATTERN]`` (needs nvcc on the PATH).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sqlite3
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from ptxstatic.collect.compile import compile_all
from ptxstatic.collect.manifest import load_manifest
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.errors import PtxstaticError
from ptxstatic.hardware.figures import gpu_figures
from ptxstatic.launch import Launch
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.traffic.caches import SECTOR
from ptxstatic.traffic.model import launch_traffic

ROOT = Path(__file__).resolve().parents[1]
COUNTERS = ROOT / "datasets" / "h200-counters" / "microbenchmarks-counters.sqlite"
QUANTITIES = ("L1 ld sectors", "L1 st sectors", "L2 read", "DRAM read", "DRAM write")
MIN_DRAM = 1e6


def pairs(module, bench, key: str, metrics: dict, figures) -> dict[str, tuple[float, float]]:
    """(model, counter) of each quantity for one launch."""
    bound = bind(module, bench.kernel, Launch.from_dict(json.loads(key)))
    t = launch_traffic(bound, estimate_counts(bound).counts.counts, figures)
    glob = [i for i in t.instructions if i.space == "global"]
    out = {
        "L1 ld sectors": (sum(i.sectors for i in glob if i.kind == "load"),
                          metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]),
        "L1 st sectors": (sum(i.sectors for i in glob if i.kind == "store"),
                          metrics["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]),
        "L2 read": (t.l2_read_sectors.value, metrics["lts__t_sectors_srcunit_tex_op_read.sum"]),
        "DRAM read": (t.dram_read_bytes.value / SECTOR, metrics["dram__bytes_read.sum"] / SECTOR),
        "DRAM write": (t.dram_write_bytes.value / SECTOR, metrics["dram__bytes_write.sum"] / SECTOR),
    }
    return {k: v for k, v in out.items() if not k.startswith("DRAM") or v[1] * SECTOR >= MIN_DRAM}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="benchmarks whose names match this shell pattern")
    args = ap.parse_args(argv)
    spec = load_manifest(ROOT / "microbenchmarks" / "manifest.json")
    benches = {b.name: b for b in spec.benchmarks}
    with sqlite3.connect(COUNTERS) as db:
        stored = db.execute("SELECT benchmark, launch, metrics FROM collect_counters").fetchall()
    rows = [(b, k, json.loads(m)) for b, k, m in stored
            if b in benches and (not args.only or fnmatch.fnmatch(b, args.only))]
    sources = compile_all(sorted({benches[b].source for b, _, _ in rows}), "sm_90", spec.nvcc_flags)
    figures = gpu_figures("h200")
    ratios: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for b, key, metrics in rows:
        src = sources[benches[b].source]
        if isinstance(src, PtxstaticError):
            continue
        for q, (model, counter) in pairs(src.module, benches[b], key, metrics, figures).items():
            if model or counter:
                ratio = (model + 1) / (counter + 1)
                ratios[benches[b].source.stem][q].append(ratio)
                ratios["overall"][q].append(ratio)
    print(f"{len(rows)} launches; per quantity: median model/counter, share within 25 %")
    print(f"{'family':16s} " + " ".join(f"{q:>20s}" for q in QUANTITIES))
    for family in [*sorted(f for f in ratios if f != "overall"), "overall"]:
        cells = []
        for q in QUANTITIES:
            r = ratios[family].get(q, [])
            cells.append(f"{statistics.median(r):6.2f} {sum(abs(x - 1) <= .25 for x in r) / len(r):5.0%} ({len(r):3d})"
                         if r else f"{'-':>20s}")
        print(f"{family:16s} " + " ".join(f"{c:>20s}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
