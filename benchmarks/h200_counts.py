"""Static block counts against the block counts an NVIDIA H200 measured, launch by launch.

``../shared/data/h200-default-clocks/microbenchmarks-short.sqlite`` holds, for each of its 206 launches of the
microbenchmark suite, the launch (grid, block, arguments with their buffers' fills) and the block counts the
instrumented kernel counted on the GPU. Each source of ``microbenchmarks/`` is compiled as the collection was
(``nvcc -ptx -arch=sm_90 -lineinfo``), every launch estimated with ``estimate_counts`` at its default budget,
and per microbenchmark (its launches together) the script prints:

* ``exact``: blocks whose count is called exact, of all blocks, and how many of those differ from the GPU's
  (``wrong``, which must be 0);
* ``ratio``: the estimated total of executed blocks (every block's count summed) over the GPU's, its range over
  the launches (the target: within 2x);
* ``covered``: of the blocks not called exact, those whose GPU count lies in their interval ``[low, high]``;
* ``total in``: launches whose GPU total lies in the interval of the estimated total;
* ``s``: the slowest launch's estimate in CPU seconds.

and the totals per source file and over all launches.

    python benchmarks/h200_counts.py [DATASET.sqlite] [-k NAME_PART]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ptxstatic.block_counts import BlockCounts
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.launch import Launch
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_text
from ptxstatic.toolchain.nvcc import compile_ptx

ROOT = Path(__file__).resolve().parents[1]
DATASET = ROOT.parent / "shared" / "data" / "h200-default-clocks" / "microbenchmarks-short.sqlite"


@dataclass
class Tally:
    """What the launches of one microbenchmark (or of a group of them) added up to."""

    launches: int = 0
    failed: int = 0
    blocks: int = 0
    exact: int = 0
    wrong: int = 0
    estimated: int = 0
    covered: int = 0
    totals_in: int = 0
    ratios: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, other: Tally) -> None:
        for name in ("launches", "failed", "blocks", "exact", "wrong", "estimated", "covered", "totals_in"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.ratios += other.ratios
        self.seconds = max(self.seconds, other.seconds)

    def row(self, name: str) -> str:
        ratio = f"{min(self.ratios):.3g}-{max(self.ratios):.3g}" if self.ratios else "-"
        covered = f"{self.covered}/{self.estimated}" if self.estimated else "-"
        return (f"{name:<28} {self.launches:>3} {self.failed:>3} {self.exact:>6}/{self.blocks:<6} {self.wrong:>5} "
                f"{ratio:>14} {covered:>11} {self.totals_in:>4}/{self.launches - self.failed:<4} {self.seconds:>5.2f}")


def compare(gpu: BlockCounts, est) -> Tally:
    """One launch's estimate against the GPU's counts."""
    out = Tally(launches=1)
    counts = est.counts
    for fn, blocks in counts.counts.items():
        for b, c in blocks.items():
            measured = gpu.counts.get(fn, {}).get(b, 0.0)
            out.blocks += 1
            if counts.exact[fn][b]:
                out.exact += 1
                out.wrong += abs(float(c) - measured) > 0.5
            else:
                low, high = counts.interval(fn, b)
                out.estimated += 1
                out.covered += low - 0.5 <= measured <= high + 0.5
    measured = sum(sum(blocks.values()) for blocks in gpu.counts.values())
    total = est.executed()
    high = float("inf") if total["high"] is None else total["high"]
    out.ratios.append(total["count"] / measured if measured else 1.0)
    out.totals_in += total["low"] - 0.5 <= measured <= high + 0.5
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dataset", nargs="?", type=Path, default=DATASET)
    ap.add_argument("-k", dest="only", default="", help="only microbenchmarks whose name contains this")
    args = ap.parse_args()
    db = sqlite3.connect(args.dataset)
    rows = db.execute("SELECT benchmark, source, kernel, launch, block_counts FROM collect_kernels "
                      "ORDER BY benchmark_id").fetchall()
    modules = {}
    with tempfile.TemporaryDirectory() as tmp:
        for source in sorted({r[1] for r in rows}):
            text = compile_ptx(ROOT / "microbenchmarks" / source, ["-arch=sm_90", "-lineinfo"], cwd=tmp,
                               dependencies=False).text
            modules[source] = parse_text(text, source.replace(".cu", ".ptx"))
    by_bench: dict[str, Tally] = {}
    by_source: dict[str, Tally] = {}
    print(f"{'microbenchmark':<28} {'n':>3} {'err':>3} {'exact/blocks':>13} {'wrong':>5} {'ratio':>14} "
          f"{'covered':>11} {'total in':>9} {'s':>5}")
    for bench, source, kernel, launch, counts in rows:
        if args.only not in bench:
            continue
        gpu = BlockCounts.from_dict(json.loads(counts))
        started = time.process_time()
        try:
            est = estimate_counts(bind(modules[source], kernel, Launch.from_dict(json.loads(launch))))
            tally = compare(gpu, est)
        except Exception as exc:  # a launch that gives no result is counted and reported
            print(f"  {bench}: no result: {type(exc).__name__}: {exc}")
            tally = Tally(launches=1, failed=1)
        tally.seconds = time.process_time() - started
        by_bench.setdefault(bench, Tally()).add(tally)
        by_source.setdefault(source, Tally()).add(tally)
    for bench, tally in by_bench.items():
        print(tally.row(bench))
    print()
    total = Tally()
    for source, tally in sorted(by_source.items()):
        print(tally.row(source))
        total.add(tally)
    print(total.row("all launches"))
    within = sum(1 for r in total.ratios if 0.5 <= r <= 2.0)
    print(f"\ntotal executed blocks within 2x of the GPU's: {within} of {len(total.ratios)} launches; counts called "
          f"exact that differ: {total.wrong}; estimated blocks whose interval holds the GPU's count: "
          f"{total.covered} of {total.estimated}")


if __name__ == "__main__":
    main()
