"""Parse + analyse throughput, and the cost of analysis next to nvcc.

(a) PTX lines per second for parse + analyse (what ``ptxstatic analyze`` computes) on a large unrolled
    kernel, cold (empty statement-shape cache, as in a fresh process) and warm, next to Lark's LALR parser
    building a tree of the same file, all measured in this run in CPU seconds of this process.
(b) For each CUDA test source: ``nvcc -ptx`` time, in-process analysis time of its PTX, and the whole
    ``ptxstatic analyze`` command time (interpreter start-up included), as ratios to nvcc's time.

Run: ``python benchmarks/parse_throughput.py`` (part b needs nvcc on the PATH).
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ptxstatic.analysis.summary import summarize_module
from ptxstatic.ptx import parser as ptx_parser
from ptxstatic.ptx.grammar import lark_parser

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PTX = ROOT / "tests" / "fixtures" / "ptx" / "bench" / "unrolled_sm90.ptx.gz"


def read_ptx(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def cpu_time(fn, repeat: int) -> float:
    """Best of ``repeat`` runs, in CPU seconds of this process."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def throughput(text: str, repeat: int) -> None:
    lines = text.count("\n")
    lark_parser()  # build the grammar once, as any process does at first use

    def cold() -> None:
        ptx_parser._statements = None  # a fresh statement-shape cache
        summarize_module(ptx_parser.parse_text(text, "bench.ptx"))

    def warm() -> None:
        summarize_module(ptx_parser.parse_text(text, "bench.ptx"))

    def parse_only() -> None:
        ptx_parser.parse_text(text, "bench.ptx")

    t_cold = cpu_time(cold, repeat)
    t_warm = cpu_time(warm, repeat)
    t_parse = cpu_time(parse_only, repeat)
    t_lark = cpu_time(lambda: lark_parser().parse(text, start="module"), 1)
    print(f"(a) {lines} PTX lines, best of {repeat} runs, CPU time of one process")
    print(f"    parse + analyse, cold cache : {lines / t_cold:10.0f} lines/s")
    print(f"    parse + analyse, warm cache : {lines / t_warm:10.0f} lines/s")
    print(f"    parse only, warm cache      : {lines / t_parse:10.0f} lines/s")
    print(f"    Lark LALR tree of the file  : {lines / t_lark:10.0f} lines/s")
    print(f"    speed-up of cold parse + analyse over the Lark tree build: {t_lark / t_cold:.1f}x")


def versus_nvcc(sources: list[Path], arch: str) -> None:
    print(f"\n(b) nvcc -ptx -arch={arch} -lineinfo vs ptxstatic, per translation unit")
    print(f"    {'source':24} {'nvcc s':>8} {'analysis s':>11} {'ratio':>7} {'CLI s':>7} {'CLI ratio':>10}")
    ratios, cli_ratios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for src in sources:
            out = Path(tmp) / f"{src.stem}.ptx"
            t = time.perf_counter()
            subprocess.run(["nvcc", "-ptx", f"-arch={arch}", "-lineinfo", str(src), "-o", str(out)], check=True)
            t_nvcc = time.perf_counter() - t
            text = out.read_text()
            ptx_parser._statements = None
            t = time.perf_counter()
            summarize_module(ptx_parser.parse_text(text, str(out)))
            t_an = time.perf_counter() - t
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "ptxstatic", "analyze", str(out)], check=True,
                           stdout=subprocess.DEVNULL)
            t_cli = time.perf_counter() - t
            ratios.append(t_an / t_nvcc)
            cli_ratios.append(t_cli / t_nvcc)
            print(f"    {src.name:24} {t_nvcc:8.2f} {t_an:11.3f} {ratios[-1]:7.1%} {t_cli:7.2f} {cli_ratios[-1]:10.1%}")
    print(f"    median analysis / nvcc: {statistics.median(ratios):.1%}   worst: {max(ratios):.1%}")
    print(f"    median whole command / nvcc: {statistics.median(cli_ratios):.1%}   worst: {max(cli_ratios):.1%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ptx", type=Path, default=DEFAULT_PTX, help="large PTX file (.ptx or .ptx.gz)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--arch", default="sm_80")
    args = ap.parse_args()
    throughput(read_ptx(args.ptx), args.repeat)
    if shutil.which("nvcc") is None:
        print("\n(b) skipped: nvcc is not on the PATH")
        return
    sources = sorted(p for p in (ROOT / "tests" / "cuda").glob("*.cu") if p.name != "unrolled.cu")
    versus_nvcc(sources, args.arch)


if __name__ == "__main__":
    main()
