#!/usr/bin/env python3
"""Time and memory of ``ptxstatic analyze`` against the size of its input, and the fitted exponent.

Inputs are made by ``many_kernels.py`` from the project's nvcc fixtures: 1, 10, 100, 1,000 and 10,000
kernels, then files of 5 to 200 MB; and one kernel of 50,000 to 400,000 lines with a forward branch every 10
lines (:func:`write_one_function`: a dominator tree as deep as the function is long). Each size runs in a
fresh process (``python -m ptxstatic analyze FILE``, output discarded); the figures are that process's wall
and CPU seconds and its peak resident memory, from ``wait4``. The exponent is the slope of log(CPU seconds)
over log(bytes), fitted by least squares over the sizes of at least 1 MB (below that the interpreter's
start-up dominates), for the files of many kernels and for the one huge function apart; 1.0 is linear.

    python benchmarks/scaling.py [--max-megabytes 200] [--kernels 1,10,100,1000,10000] [--lines 25000,200000]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from many_kernels import write  # beside this script

ROOT = Path(__file__).resolve().parents[1]


def measure(path: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS in MB) of one ``ptxstatic analyze`` process."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ptxstatic", "analyze", str(path)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"analyze {path} failed ({proc.returncode}): {proc.stderr.read().decode()[:500]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def write_one_function(path: Path, lines: int) -> int:
    """One kernel of about ``lines`` PTX lines: blocks of 10 lines, each ending in a branch over its last
    instruction, so the function is one long chain of diamonds (valid PTX that ptxas accepts). Returns 1."""
    out = [".version 8.0", ".target sm_80", ".address_size 64", "", ".visible .entry huge(",
           "\t.param .u64 huge_param_0,", "\t.param .u32 huge_param_1", ")", "{", "\t.reg .pred %p<2>;",
           "\t.reg .b32 %r<8>;", "\t.reg .f32 %f<4>;", "\t.reg .b64 %rd<3>;", "",
           "\tld.param.u64 %rd1, [huge_param_0];", "\tld.param.u32 %r1, [huge_param_1];", "\tmov.u32 %r2, %tid.x;",
           "\tmov.f32 %f1, 0f3F800000;"]
    n = 0
    while len(out) < lines:
        out += [f"\tadd.s32 %r3, %r2, {n};", "\tmul.lo.s32 %r4, %r3, %r1;", "\txor.b32 %r5, %r4, %r2;",
                "\tcvt.rn.f32.s32 %f2, %r5;", "\tfma.rn.f32 %f1, %f2, %f1, %f2;", "\tand.b32 %r6, %r5, 7;",
                "\tsetp.eq.s32 %p1, %r6, 0;", f"\t@%p1 bra $L__BB0_{n};", "\tadd.f32 %f1, %f1, %f2;", f"$L__BB0_{n}:"]
        n += 1
    out += ["\tcvta.to.global.u64 %rd2, %rd1;", "\tst.global.f32 [%rd2], %f1;", "\tret;", "}", ""]
    path.write_text("\n".join(out))
    return 1


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of log(y) over log(x)."""
    xs = [math.log(x) for x, _ in points]
    ys = [math.log(y) for _, y in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernels", default="1,10,100,1000,10000", help="kernel counts, comma-separated")
    ap.add_argument("--megabytes", default="5,10,20,50,100,200", help="file sizes in MB, comma-separated")
    ap.add_argument("--max-megabytes", type=float, default=200, help="skip larger files")
    ap.add_argument("--lines", default="50000,100000,200000,400000",
                    help="lines of the one-huge-function inputs, comma-separated")
    args = ap.parse_args()
    sizes: list[tuple[str, str, dict]] = [(f"{k} kernels", "many", {"kernels": int(k)})
                                          for k in args.kernels.split(",") if k]
    sizes += [(f"{m} MB", "many", {"megabytes": float(m)}) for m in args.megabytes.split(",")
              if m and float(m) <= args.max_megabytes]
    sizes += [(f"{int(n):,} lines", "one", {"lines": int(n)}) for n in args.lines.split(",") if n]
    points: dict[str, list[tuple[float, float]]] = {"many": [], "one": []}
    with tempfile.TemporaryDirectory(prefix="ptxstatic-scaling-") as tmp:
        env = dict(os.environ, PTXSTATIC_CACHE_DIR=str(Path(tmp) / "cache"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        path = Path(tmp) / "input.ptx"
        write(path, kernels=1)
        measure(path, env)  # fill the statement-shape cache once, as any earlier run would
        print(f"{'input':>14} {'kernels':>8} {'MB':>7} {'wall s':>8} {'CPU s':>8} {'peak RSS MB':>12} {'MB/s':>6}")
        for label, series, size in sizes:
            n = write(path, **size) if series == "many" else write_one_function(path, **size)
            nbytes = path.stat().st_size
            wall, cpu, rss = measure(path, env)
            if nbytes >= 1e6:
                points[series].append((nbytes, cpu))
            print(f"{label:>14} {n:8d} {nbytes / 1e6:7.1f} {wall:8.2f} {cpu:8.2f} {rss:12.0f} "
                  f"{nbytes / 1e6 / cpu:6.2f}", flush=True)
    for series, what in (("many", "files of many kernels"), ("one", "one huge function")):
        if len(points[series]) >= 2:
            print(f"fitted exponent of CPU time over file size ({what}, files of 1 MB and more): "
                  f"{slope(points[series]):.3f}")


if __name__ == "__main__":
    main()
