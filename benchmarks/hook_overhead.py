#!/usr/bin/env python3
"""Wall-clock time the nvcc hook adds to a compile, as a fraction of nvcc's own time, in one run.

For every CUDA source of the project (``tests/data/cuda/*.cu`` and ``microbenchmarks/*.cu``; ``unrolled.cu``, the
26k-line parser benchmark input, only with ``--all``) it times ``nvcc -c -arch=sm_90 FILE`` and the same
command through the hook, end to end (a new hook process each time, Python start-up included), alternating
plain and hooked runs ``--repeat`` times. Per file it prints the median times and the added-time ratio
``(hooked - plain) / plain``, then the median and the worst ratio over the files; and the CPU time the hook
process itself uses, over nvcc's wall time and over nvcc's own CPU time. The hook works beside nvcc, so on a
machine with an idle core the added wall time is about the first ratio; on a machine whose cores are all
busy every process gets a share of a core, and the added wall time is about the second. The hook's caches (Lark
tables, statement shapes) live in a private directory, warmed by one untimed hooked compile of each file
first, as in a build after its first compile; the cold first run is printed too. So does Python's bytecode
of the package (``PYTHONPYCACHEPREFIX``, written even where ``PYTHONDONTWRITEBYTECODE`` is set), as pip
writes it when it installs the package: without it (``--no-bytecode``, as a source checkout run with
``PYTHONDONTWRITEBYTECODE=1``) every hook process compiles the modules it imports.

    python benchmarks/hook_overhead.py [--repeat 5] [--flags "-c -arch=sm_90"] [--hook "ptxstatic-nvcc"]
                                       [--no-bytecode] [--all]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

from child_time import run_timed

ROOT = Path(__file__).resolve().parents[1]


def sources(include_unrolled: bool) -> list[Path]:
    files = sorted((ROOT / "tests" / "data" / "cuda").glob("*.cu")) + sorted((ROOT / "microbenchmarks").glob("*.cu"))
    return [f for f in files if include_unrolled or f.stem != "unrolled"]


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children)."""
    run, wall, cpu = run_timed(cmd, env=env, cwd=cwd)
    if run.returncode != 0:
        raise SystemExit(f"failed ({run.returncode}): {shlex.join(cmd)}\n{run.stderr}")
    return wall, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed runs of each kind per file")
    ap.add_argument("--flags", default="-c -arch=sm_90", help="nvcc flags")
    ap.add_argument("--hook", default=f"{sys.executable} -m ptxstatic.hook.launcher",
                    help="the hook command in front of nvcc (default: this Python running ptxstatic.hook.launcher)")
    ap.add_argument("--all", action="store_true", help="include tests/data/cuda/unrolled.cu")
    ap.add_argument("--no-bytecode", action="store_true", help="keep no Python bytecode (PYTHONDONTWRITEBYTECODE=1)")
    args = ap.parse_args()
    flags, hook = shlex.split(args.flags), shlex.split(args.hook)
    with tempfile.TemporaryDirectory(prefix="hook-overhead-") as tmp:
        work = Path(tmp)
        env = dict(os.environ, PTXSTATIC_CACHE_DIR=str(work / "cache"), PYTHONPYCACHEPREFIX=str(work / "bytecode"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        env.pop("PTXSTATIC_DISABLE", None)
        if args.no_bytecode:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env.pop("PYTHONPYCACHEPREFIX")
        else:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
        files = sources(args.all)
        out = str(work / "out.o")
        cold = timed([*hook, "nvcc", *flags, str(files[0]), "-o", out], env, work)[0]
        for f in files[1:]:  # warm the caches as a build's first compiles would
            timed([*hook, "nvcc", *flags, str(f), "-o", out], env, work)
        print(f"{'file':34} {'nvcc s':>7} {'hook s':>7} {'added':>7} {'CPU/wall':>9} {'CPU/CPU':>8}")
        ratios, cpu_ratios, cpu_cpu = [], [], []
        for f in files:
            plain, hooked, plain_cpu, hooked_cpu = [], [], [], []
            for rep in range(args.repeat):
                order = (False, True) if rep % 2 == 0 else (True, False)
                for with_hook in order:
                    cmd = [*(hook if with_hook else []), "nvcc", *flags, str(f), "-o", out]
                    wall, cpu = timed(cmd, env, work)
                    (hooked if with_hook else plain).append(wall)
                    (hooked_cpu if with_hook else plain_cpu).append(cpu)
            p, h = statistics.median(plain), statistics.median(hooked)
            ratios.append((h - p) / p)
            added_cpu = statistics.median(hooked_cpu) - statistics.median(plain_cpu)
            cpu_ratios.append(added_cpu / p)
            cpu_cpu.append(added_cpu / statistics.median(plain_cpu))
            print(f"{f.parent.name + '/' + f.name:34} {p:7.3f} {h:7.3f} {ratios[-1]:7.1%} {cpu_ratios[-1]:9.1%} "
                  f"{cpu_cpu[-1]:8.1%}", flush=True)
        print(f"\nfirst hooked compile with empty caches: {cold:.3f} s ({files[0].name})")
        print(f"added time over {len(files)} files ({args.repeat} interleaved runs each, medians): "
              f"median {statistics.median(ratios):.1%}, worst {max(ratios):.1%}, best {min(ratios):.1%}")
        print(f"CPU time the hook process adds, over nvcc's wall time: median {statistics.median(cpu_ratios):.1%}, "
              f"worst {max(cpu_ratios):.1%}; over nvcc's CPU time: median {statistics.median(cpu_cpu):.1%}, "
              f"worst {max(cpu_cpu):.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
