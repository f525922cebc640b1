"""Seconds and exactness of static block counts on the launches that used to be slow or sampled: a
4096x4096 matmul (2^24 threads), a reduction and a grid-stride loop of 2^24 threads, a stencil with partial
tiles, a data-dependent branch in a grid-stride loop over 10^8 elements, printf in a loop of 10^7 steps,
and a 9,434-line straight-line kernel with 120 data branches (108 x 128 threads, the shape of SHOC's S3D
``ratt_kernel``). Each line gives the time of ``estimate_counts`` (parsing excluded), how the counts were
obtained, whether every block is exact, and the count of the block the closed form names against it.

    python benchmarks/count_cost.py
"""

from __future__ import annotations

import time
from pathlib import Path

from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.launch import Launch
from ptxstatic.ptx.launch_binding import bind
from ptxstatic.ptx.parser import parse_file

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "static"

#: file, kernel, launch, the marker of the block checked, its closed form (None: the entry, every thread)
CASES = [
    ("sweep.ptx", "matmul", Launch((256, 256, 1), (16, 16, 1), 0, {"3": 4096}), 1, 4096**3),
    ("sweep.ptx", "matmul", Launch((65, 65, 1), (16, 16, 1), 0, {"3": 1030}), 1, 1030**3),
    ("sweep.ptx", "reduce_sum", Launch((65536, 1, 1), (256, 1, 1), 0, {"2": (1 << 24) - 5}), 2, (1 << 24) - 5),
    ("sweep.ptx", "grid_stride_scale", Launch((16384, 1, 1), (1024, 1, 1), 0, {"1": 2.0, "2": 10**8}), 6, 10**8),
    ("sweep.ptx", "stencil5", Launch((128, 512, 1), (32, 8, 1), 0, {"2": 4000, "3": 4000}), 8, 3998**2),
    ("sweep.ptx", "grid_stride_positive", Launch((4096, 1, 1), (256, 1, 1), 0, {"2": 10**8}), 9, 10**8),
    ("sweep.ptx", "printf_loop", Launch((1, 1, 1), (32, 1, 1), 0, {"1": 10**7}), 12, 32 * 10**7),
    ("straight_line.ptx", "straight_line", Launch((108, 1, 1), (128, 1, 1), 0, {"3": 1.0}), None, 108 * 128),
]


def marker_block(module, kernel: str, marker: int | None) -> int:
    cfg = build_cfg(module.function(kernel))
    if marker is None:
        return cfg.entry
    return next(b.id for b in cfg.blocks for i in b.instructions
                if i.opcode == "pmevent" and int(i.operands[0].text) == marker)


def main() -> None:
    modules = {name: parse_file(DATA / name) for name in {c[0] for c in CASES}}
    print(f"{'kernel':<22} {'threads':>10} {'seconds':>8}  {'exact':<5} {'count':>16} {'closed form':>16}  method")
    for name, kernel, launch, marker, expected in CASES:
        module = modules[name]
        start = time.perf_counter()
        est = estimate_counts(bind(module, kernel, launch))
        seconds = time.perf_counter() - start
        count = est.counts.counts[kernel][marker_block(module, kernel, marker)]
        threads = launch.blocks * launch.threads_per_block
        print(f"{kernel:<22} {threads:>10} {seconds:>8.2f}  {est.exact!s:<5} {count:>16.0f} {expected:>16}  "
              f"{est.method}", flush=True)


if __name__ == "__main__":
    main()
