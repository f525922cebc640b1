"""Parse + analyse throughput, and the cost of analysis next to nvcc.

(a) PTX lines per second for parse + analyse (what ``ptxstatic analyze`` computes) on a large unrolled
    kernel, cold (empty statement-shape cache, as in a fresh process) and warm, validation of the parsed
    AST as a share of the warm parse, next to Lark's LALR parser building a tree of the same file, all
    measured in this run in CPU seconds of this process.
(b) For each CUDA test source: ``nvcc -ptx`` time, in-process analysis time of its PTX, and the whole
    ``ptxstatic analyze`` command time (interpreter start-up included), as ratios to nvcc's time.

Run: ``python benchmarks/parse_throughput.py [--only-a]`` (part b needs nvcc on the PATH).
"""

from __future__ import annotations

import argparse
import gzip
import os
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
from ptxstatic.ptx.validate import validate_module

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PTX = ROOT / "tests" / "data" / "fixtures" / "ptx" / "bench" / "unrolled_sm90.ptx.gz"


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
        ptx_parser._statements = ptx_parser.StatementParser(use_cache=False)  # no shapes known yet
        summarize_module(ptx_parser.parse_text(text, "bench.ptx"))

    def warm() -> None:
        summarize_module(ptx_parser.parse_text(text, "bench.ptx"))

    def parse_only() -> None:
        ptx_parser.parse_text(text, "bench.ptx")

    t_cold = cpu_time(cold, repeat)
    t_warm = cpu_time(warm, repeat)
    t_parse = cpu_time(parse_only, repeat)
    module = ptx_parser.parse_text(text, "bench.ptx")
    t_validate = cpu_time(lambda: validate_module(module, text), repeat)
    t_lark = cpu_time(lambda: lark_parser().parse(text, start="module"), 1)
    print(f"(a) {lines} PTX lines, best of {repeat} runs, CPU time of one process")
    print(f"    parse + analyse, cold cache : {lines / t_cold:10.0f} lines/s")
    print(f"    parse + analyse, warm cache : {lines / t_warm:10.0f} lines/s")
    print(f"    parse only, warm cache      : {lines / t_parse:10.0f} lines/s")
    print(f"    validation of the parsed AST: {lines / t_validate:10.0f} lines/s "
          f"({100 * t_validate / t_parse:.0f} % of the warm parse)")
    print(f"    Lark LALR tree of the file  : {lines / t_lark:10.0f} lines/s")
    print(f"    speed-up of cold parse + analyse over the Lark tree build: {t_lark / t_cold:.1f}x")


def versus_nvcc(sources: list[Path], arch: str) -> None:
    print(f"\n(b) nvcc -ptx -arch={arch} -lineinfo vs ptxstatic, per translation unit (wall seconds)")
    print("    analysis: in-process parse + analyse, with an empty shape cache (first build) and with the")
    print("    on-disk shape cache from an earlier build; command: the whole `ptxstatic analyze` process")
    head = f"{'nvcc':>6} {'first':>7} {'ratio':>6} {'cached':>7} {'ratio':>6} {'command':>8} {'ratio':>6}"
    print(f"    {'source':20} {head}")
    cols: dict[str, list[float]] = {"first": [], "cached": [], "command": []}
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PTXSTATIC_CACHE_DIR=str(Path(tmp) / "cache"))
        os.environ["PTXSTATIC_CACHE_DIR"] = env["PTXSTATIC_CACHE_DIR"]
        for src in sources:
            out = Path(tmp) / f"{src.stem}.ptx"
            t = time.perf_counter()
            subprocess.run(["nvcc", "-ptx", f"-arch={arch}", "-lineinfo", str(src), "-o", str(out)], check=True)
            t_nvcc = time.perf_counter() - t
            text = out.read_text()
            times = {}
            for name, use_cache in (("first", False), ("cached", True)):
                ptx_parser._statements = ptx_parser.StatementParser(use_cache=use_cache)
                t = time.perf_counter()
                summarize_module(ptx_parser.parse_text(text, str(out)))
                times[name] = time.perf_counter() - t
                ptx_parser._statements.flush()
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "ptxstatic", "analyze", str(out)], check=True,
                           stdout=subprocess.DEVNULL, env=env)
            times["command"] = time.perf_counter() - t
            for k, v in times.items():
                cols[k].append(v / t_nvcc)
            row = " ".join(f"{times[k]:7.3f} {cols[k][-1]:6.1%}" for k in cols)
            print(f"    {src.name:20} {t_nvcc:6.2f} {row}")
    for k, v in cols.items():
        print(f"    {k:8} / nvcc: median {statistics.median(v):6.1%}   worst {max(v):6.1%}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ptx", type=Path, default=DEFAULT_PTX, help="large PTX file (.ptx or .ptx.gz)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--arch", default="sm_80")
    ap.add_argument("--only-a", action="store_true", help="measure part (a) only")
    args = ap.parse_args()
    throughput(read_ptx(args.ptx), args.repeat)
    if args.only_a:
        return
    if shutil.which("nvcc") is None:
        print("\n(b) skipped: nvcc is not on the PATH")
        return
    sources = sorted(p for p in (ROOT / "tests" / "data" / "cuda").glob("*.cu") if p.name != "unrolled.cu")
    versus_nvcc(sources, args.arch)


if __name__ == "__main__":
    main()
