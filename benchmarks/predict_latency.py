"""Seconds ``predict``, ``blocks`` and ``features`` take, as a user runs them, on the largest kernels of the
PTX corpus and on large generated kernels (goal: at most 2 s for any kernel of up to 10,000 PTX lines).

Each command runs as its own process (``python -m ptxstatic ...``, start-up included) with a launch of 108
CTAs of 128 threads and every scalar parameter given (32-bit integers 1000, floats 1.5). The generated
kernels are ``tests/data/static/straight_line.ptx`` and, where nvcc is on the PATH, more of them written by
``generated_kernels.py``. The script prints, per kernel and command, wall-clock seconds and the CPU seconds of
the process (user + system: what the command costs on a machine that other work also loads), and the
worst case of each.

    python benchmarks/predict_latency.py [--largest N] [--branches 60,120]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from child_time import run_timed
from corpus import kernels, ptx_files
from generated_kernels import straight_line_source

from ptxstatic.ptx.ast import Function

ROOT = Path(__file__).resolve().parents[1]
CORPUS = [ROOT / "tests" / "data" / "fixtures" / "ptx", ROOT / "tests" / "data" / "static"]
LAUNCH = "108/128"
COMMANDS = ("predict", "blocks", "features")


def scalar_params(fn: Function) -> list[str]:
    """``--param`` options giving every scalar parameter a value (pointers need none)."""
    out = []
    for decl in fn.params or ():
        for d in decl.names:
            if d.dims or decl.dtype in ("u64", "b64", "s64"):
                continue
            out += ["--param", f"{d.name}={1.5 if decl.dtype.startswith('f') else 1000}"]
    return out


def lines_of(fn: Function) -> int:
    """PTX lines of a function: from its header to its last statement."""
    return max((getattr(s, "line", 0) for s in fn.body or ()), default=fn.line) - fn.line + 1


def timed(command: str, path: Path, fn: Function) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one command."""
    args = [sys.executable, "-m", "ptxstatic", command, str(path), "-k", fn.name, "--launch", LAUNCH,
            *scalar_params(fn)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done, wall, cpu = run_timed(args, env=env, check=False)
    if done.returncode != 0:
        print(f"  {command} failed: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
    return wall, cpu


def generated(branches: list[int], folder: Path) -> list[Path]:
    """The shipped straight-line kernel, and more compiled with nvcc where it is on the PATH."""
    out = [ROOT / "tests" / "data" / "static" / "straight_line.ptx"]
    if shutil.which("nvcc") is None:
        return out
    for n in branches:
        cu = folder / f"straight_line_{n}.cu"
        cu.write_text(straight_line_source(n))
        ptx = cu.with_suffix(".ptx")
        subprocess.run(["nvcc", "-ptx", "-arch=sm_80", "-o", str(ptx), str(cu)], check=True)
        out.append(ptx)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--largest", type=int, default=4, help="corpus kernels to time (the longest)")
    ap.add_argument("--branches", default="60,130", help="data branches of the extra generated kernels")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        extra = generated([int(b) for b in args.branches.split(",") if b], Path(tmp))
        corpus = sorted(((lines_of(fn), p, fn) for p, _, fn in kernels(ptx_files(CORPUS))
                         if p not in extra), key=lambda t: -t[0])
        chosen = corpus[:args.largest] + [(lines_of(fn), p, fn) for p, _, fn in kernels(extra)]
        worst = {"wall": (0.0, ""), "CPU": (0.0, "")}
        print(f"{'kernel':<32} {'PTX lines':>9} " + " ".join(f"{c + ' wall/CPU s':>20}" for c in COMMANDS))
        for n_lines, path, fn in chosen:
            times = [timed(c, path, fn) for c in COMMANDS]
            print(f"{fn.name[:32]:<32} {n_lines:>9} " + " ".join(f"{w:>14.2f} {c:>5.2f}" for w, c in times),
                  flush=True)
            for c, (wall, cpu) in zip(COMMANDS, times, strict=True):
                what = f"{c} {path.name} -k {fn.name} ({n_lines} lines)"
                worst = {"wall": max(worst["wall"], (wall, what)), "CPU": max(worst["CPU"], (cpu, what))}
    for kind, (t, what) in worst.items():
        print(f"worst {kind}: {t:.2f} s ({what}); goal 2 s")


if __name__ == "__main__":
    main()
