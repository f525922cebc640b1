#!/usr/bin/env python3
"""What the nvcc hook costs a build: its CPU time over nvcc's CPU time, cold and warm, and the wall time of a
``make -j`` build with every core busy.

The sources are the project's CUDA files (``tests/data/cuda/*.cu`` and ``microbenchmarks/*.cu``; ``unrolled.cu``,
the 26k-line parser benchmark input, only with ``--all``), each compiled with ``nvcc FLAGS FILE -o OBJ``.

CPU (the headline; under ``make -j`` every process gets a share of a core, so the CPU the hook adds is the time
it adds): each round starts with an empty cache directory and no analysis server. A first build compiles every
file through the hook, one after the other, the first compile starting the server; a rebuild compiles them all
again (unchanged files: the server is up and every result is cached). Each file is also compiled plainly right
before its hooked compile. The hook's CPU is the hook process's own CPU time (user + system, from the
process's own account of itself, Python's start included; nvcc's is not in it) plus all the CPU time the
server used during that build (start-up, imports, watching, analysing, and the ``ptxas`` it runs). It is
printed per file and as the ratio of the sums over the build: first build (cold) and rebuild (warm).
A second figure, (hooked compiles' CPU with nvcc - plain compiles' CPU + server) / plain, counts the same
from the difference and shows how noisy nvcc's own CPU time is.

Wall time with every core busy: a Makefile with one rule per source is built with ``make -j JOBS`` (default:
the number of cores), plainly, through the hook with an empty cache (the first build, which starts the
server), and through the hook again after removing the objects (a rebuild); the medians over the rounds and
their ratios to the plain build are printed.

Caches (Lark tables, statement shapes, results) live in a private directory per round. Python's bytecode of
the package is kept (``PYTHONPYCACHEPREFIX``), as pip writes it when it installs the package.

    python benchmarks/hook_overhead.py [--repeat 3] [--flags "-c -arch=sm_90"] [--jobs N] [--all]
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from child_time import run_timed

ROOT = Path(__file__).resolve().parents[1]
#: the ``ptxstatic-nvcc`` script that installing the package puts on the PATH
SCRIPT = ROOT / "scripts" / "ptxstatic-nvcc"
#: runs the hook's script (named second) as its interpreter line would, and writes the process's own CPU seconds
#: to the file named first when it exits (the launcher ends with ``os._exit``); the measurement adds the import
#: of ``resource`` and the compilation of the script's few lines
HARNESS = """\
import os, resource, sys
out, real_exit = sys.argv.pop(1), os._exit
def _exit(status):
    r = resource.getrusage(resource.RUSAGE_SELF)
    with open(out, "w") as f:
        f.write(repr(r.ru_utime + r.ru_stime))
    real_exit(status)
os._exit = _exit
sys.argv = sys.argv[1:]
with open(sys.argv[0]) as f:
    code = compile(f.read(), sys.argv[0], "exec")
exec(code, {"__name__": "__main__", "__file__": sys.argv[0]})
"""


def sources(include_unrolled: bool) -> list[Path]:
    files = sorted((ROOT / "tests" / "data" / "cuda").glob("*.cu")) + sorted((ROOT / "microbenchmarks").glob("*.cu"))
    return [f for f in files if include_unrolled or f.stem != "unrolled"]


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children)."""
    run, wall, cpu = run_timed(cmd, env=env, cwd=cwd)
    if run.returncode != 0:
        raise SystemExit(f"failed ({run.returncode}): {shlex.join(cmd)}\n{run.stdout}{run.stderr}")
    return wall, cpu


def server_pid(cache: Path) -> int | None:
    """The analysis server's process id, from its lock file."""
    for lock in (cache / "hook-server").glob("*.lock"):
        text = lock.read_text().strip()
        if text and Path(f"/proc/{text}").exists():
            return int(text)
    return None


def server_cpu(cache: Path) -> float:
    """CPU seconds the running server has used, with the children it waited for (ptxas)."""
    pid = server_pid(cache)
    if pid is None:
        return 0.0
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rfind(")") + 2:].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def stop_server(cache: Path) -> None:
    """Stop the server a round's builds started, and wait for it to go."""
    pid = server_pid(cache)
    if pid is not None:
        os.kill(pid, signal.SIGTERM)
        for _ in range(200):
            stat = Path(f"/proc/{pid}/stat")
            if not stat.exists() or stat.read_text().split(") ")[-1][0] in "ZX":
                break
            time.sleep(0.05)


class Round:
    """One first build and one rebuild, file by file, each hooked compile after a plain one."""

    def __init__(self, work: Path, env: dict[str, str], flags: list[str], files: list[Path]) -> None:
        self.work, self.flags, self.files = work, flags, files
        self.cache = work / "cache"
        self.env = dict(env, PTXSTATIC_CACHE_DIR=str(self.cache))
        self.out = str(work / "out.o")
        self.plain: dict[str, list[float]] = {"cold": [], "warm": []}
        self.hook: dict[str, list[float]] = {"cold": [], "warm": []}  # the hook process's own CPU
        self.hooked: dict[str, list[float]] = {"cold": [], "warm": []}  # the hooked compile's CPU, nvcc's included
        self.server: dict[str, float] = {}

    def build(self, kind: str) -> None:
        before = server_cpu(self.cache)
        cpu_file = self.work / "hook-cpu"
        for f in self.files:
            self.plain[kind].append(timed(["nvcc", *self.flags, str(f), "-o", self.out], self.env, self.work)[1])
            cmd = [sys.executable, "-c", HARNESS, str(cpu_file), str(SCRIPT), "nvcc", *self.flags, str(f), "-o",
                   self.out]
            self.hooked[kind].append(timed(cmd, self.env, self.work)[1])
            self.hook[kind].append(float(cpu_file.read_text()))
        self.server[kind] = server_cpu(self.cache) - before

    def ratio(self, kind: str) -> float:
        return (sum(self.hook[kind]) + self.server[kind]) / sum(self.plain[kind])

    def difference(self, kind: str) -> float:
        return (sum(self.hooked[kind]) - sum(self.plain[kind]) + self.server[kind]) / sum(self.plain[kind])


def cpu_rounds(args: argparse.Namespace, tmp: Path, env: dict[str, str], files: list[Path],
               flags: list[str]) -> list[Round]:
    rounds = []
    for i in range(args.repeat):
        work = Path(tempfile.mkdtemp(prefix=f"round{i}-", dir=tmp))
        r = Round(work, env, flags, files)
        try:
            r.build("cold")
            r.build("warm")
        finally:
            stop_server(r.cache)
        rounds.append(r)
        print(f"round {i + 1}: hook CPU / nvcc CPU: " + ", ".join(
            f"{name} {r.ratio(kind):.1%} (server {r.server[kind]:.2f} s, hook processes {sum(r.hook[kind]):.2f} s, "
            f"nvcc {sum(r.plain[kind]):.1f} s)" for kind, name in (("cold", "first build"), ("warm", "rebuild"))),
            flush=True)
    return rounds


def print_cpu(rounds: list[Round], files: list[Path]) -> None:
    print(f"\n{'file':34} {'nvcc CPU s':>10} {'hook, first':>12} {'hook, rebuild':>14}   (the hook process alone)")
    for i, f in enumerate(files):
        nvcc = statistics.median(r.plain[k][i] for r in rounds for k in ("cold", "warm"))
        cold = statistics.median(r.hook["cold"][i] for r in rounds)
        warm = statistics.median(r.hook["warm"][i] for r in rounds)
        print(f"{f.parent.name + '/' + f.name:34} {nvcc:10.3f} {cold:12.3f} {warm:14.3f}")
    for kind, name in (("cold", "first build, empty cache, server started by the build"),
                       ("warm", "rebuild of unchanged files")):
        ratios = [r.ratio(kind) for r in rounds]
        print(f"\nhook CPU / nvcc CPU, {name}: median {statistics.median(ratios):.1%} over {len(rounds)} rounds "
              f"({', '.join(f'{x:.1%}' for x in ratios)}); from the difference of hooked and plain compiles: "
              f"median {statistics.median(r.difference(kind) for r in rounds):.1%}")


MAKEFILE = """\
NVCC ?= nvcc
OBJS = {objects}
all: $(OBJS)
{rules}"""


def make_builds(args: argparse.Namespace, tmp: Path, env: dict[str, str], files: list[Path], flags: list[str]) -> None:
    make = shutil.which("make")
    if make is None:
        print("\nmake is not installed: no -j figure")
        return
    jobs = args.jobs or os.cpu_count() or 1
    work = Path(tempfile.mkdtemp(prefix="make-", dir=tmp))
    objects = [f"obj/{f.parent.name}-{f.stem}.o" for f in files]
    rules = "".join(f"{o}: {f}\n\t@mkdir -p obj && $(NVCC) {shlex.join(flags)} {f} -o {o}\n"
                    for o, f in zip(objects, files))
    (work / "Makefile").write_text(MAKEFILE.format(objects=" ".join(objects), rules=rules))
    hook = shlex.join([sys.executable, str(SCRIPT), "nvcc"])
    walls: dict[str, list[float]] = {"plain": [], "first": [], "rebuild": []}
    for i in range(args.repeat):
        cache = work / f"cache{i}"
        round_env = dict(env, PTXSTATIC_CACHE_DIR=str(cache))
        try:
            for kind, nvcc in (("plain", "nvcc"), ("first", hook), ("rebuild", hook)):
                shutil.rmtree(work / "obj", ignore_errors=True)
                walls[kind].append(timed([make, "-s", f"-j{jobs}", f"NVCC={nvcc}"], round_env, work)[0])
        finally:
            stop_server(cache)
        print(f"make -j{jobs} round {i + 1}: plain {walls['plain'][-1]:.1f} s, hooked first build "
              f"{walls['first'][-1]:.1f} s, hooked rebuild {walls['rebuild'][-1]:.1f} s", flush=True)
    plain = statistics.median(walls["plain"])
    print(f"\nmake -j{jobs} of {len(files)} files on {os.cpu_count()} cores (medians of {args.repeat}): plain "
          f"{plain:.1f} s; hooked first build {statistics.median(walls['first']):.1f} s "
          f"({statistics.median(walls['first']) / plain:.3f}x); hooked rebuild "
          f"{statistics.median(walls['rebuild']):.1f} s ({statistics.median(walls['rebuild']) / plain:.3f}x)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="rounds (each: first build and rebuild)")
    ap.add_argument("--flags", default="-c -arch=sm_90", help="nvcc flags")
    ap.add_argument("--jobs", type=int, default=0, help="make -j jobs (default: the number of cores)")
    ap.add_argument("--all", action="store_true", help="include tests/data/cuda/unrolled.cu")
    ap.add_argument("--no-make", action="store_true", help="skip the make -j builds")
    args = ap.parse_args()
    flags, files = shlex.split(args.flags), sources(args.all)
    with tempfile.TemporaryDirectory(prefix="hook-overhead-") as name:
        tmp = Path(name)
        env = dict(os.environ, PYTHONPYCACHEPREFIX=str(tmp / "bytecode"),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        for var in ("PTXSTATIC_DISABLE", "PTXSTATIC_SERVER", "PTXSTATIC_NO_CACHE", "PYTHONDONTWRITEBYTECODE"):
            env.pop(var, None)
        warm_bytecode(tmp, env, files[0], flags)
        print(f"{len(files)} files, nvcc {args.flags}, {os.cpu_count()} cores, {args.repeat} rounds", flush=True)
        rounds = cpu_rounds(args, tmp, env, files, flags)
        print_cpu(rounds, files)
        if not args.no_make:
            make_builds(args, tmp, env, files, flags)
    return 0


def warm_bytecode(tmp: Path, env: dict[str, str], source: Path, flags: list[str]) -> None:
    """Python's bytecode of every module the hook and its analysis use, as an installed package has it: one
    hooked compile analysed in-process, with a cache of its own, and the server's modules."""
    once = dict(env, PTXSTATIC_SERVER="0", PTXSTATIC_CACHE_DIR=str(tmp / "bytecode-cache"))
    timed([sys.executable, str(SCRIPT), "nvcc", *flags, str(source), "-o", str(tmp / "o.o")], once, tmp)
    timed([sys.executable, "-c", "import ptxstatic.hook.server"], once, tmp)


if __name__ == "__main__":
    sys.exit(main())
