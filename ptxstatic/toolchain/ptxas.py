"""ptxas: assembling PTX for an architecture, and the per-function resource usage ``ptxas -v`` reports.

:func:`assemble` checks that PTX assembles (the instrumentation pass's ``--check``); :func:`ptxas_stats`
gives registers, shared/constant/stack bytes and spills per function, cached on disk by the hash of the
PTX text, the target architecture and the ptxas version, so a file is assembled once per architecture.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from ptxstatic.errors import PtxstaticError
from ptxstatic.files import write_atomic
from ptxstatic.limits import PTXAS_STATS_BYTES, PTXAS_STATS_TIMEOUT_S, PTXAS_TIMEOUT_S, TOOL_QUERY_TIMEOUT_S
from ptxstatic.ptx.ast import Module
from ptxstatic.toolchain.process import ToolTimeout, find, run_tool, scratch_directory
from ptxstatic.user_cache import cache_root


@dataclass
class PtxasFunction:
    """What ptxas reports for one function on one architecture."""

    name: str
    arch: str
    registers: int = 0
    barriers: int = 0
    shared_bytes: int = 0  # static shared memory (smem)
    const_bytes: int = 0  # all cmem banks together
    stack_frame: int = 0
    spill_stores: int = 0  # bytes
    spill_loads: int = 0  # bytes
    cumulative_stack: int = 0


_COMPILING = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_FIELDS = {
    "barriers": re.compile(r"used (\d+) barriers"),
    "shared_bytes": re.compile(r"(\d+) bytes smem"),
    "cumulative_stack": re.compile(r"(\d+) bytes cumulative stack size"),
}
_CMEM = re.compile(r"(\d+) bytes cmem\[\d+\]")


class PtxasSkipped(PtxstaticError):
    """``ptxas -v`` was not run, or was stopped, because of a size or time limit; the message says which."""


def parse_verbose(text: str, arch: str) -> dict[str, PtxasFunction]:
    """Per-function records from the ``ptxas -v`` info lines."""
    out: dict[str, PtxasFunction] = {}
    current: PtxasFunction | None = None
    for line in text.splitlines():
        if m := _COMPILING.search(line):
            current = out.setdefault(m.group(1), PtxasFunction(m.group(1), m.group(2)))
        elif m := _PROPERTIES.search(line):
            current = out.setdefault(m.group(1), PtxasFunction(m.group(1), arch))
        elif current is not None and (m := _FRAME.search(line)):
            current.stack_frame, current.spill_stores, current.spill_loads = (int(g) for g in m.groups())
        elif current is not None and (m := _USED.search(line)):
            current.registers = int(m.group(1))
            for name, pattern in _FIELDS.items():
                if f := pattern.search(line):
                    setattr(current, name, int(f.group(1)))
            current.const_bytes = sum(int(c) for c in _CMEM.findall(line))
    return out


def available() -> bool:
    return find("ptxas") is not None


@lru_cache(maxsize=1)
def _facts() -> dict[str, str]:
    """``--version`` and ``--help`` of the ptxas on the PATH (empty without one), kept on disk per ptxas
    binary (its path, size and modification time): asking ptxas costs about 0.2 s of CPU, which the nvcc
    hook would otherwise pay on every compile."""
    ptxas = find("ptxas")
    if ptxas is None:
        return {}
    cache = cache_dir()
    path = None
    if cache is not None:
        st = os.stat(ptxas)
        key = hashlib.sha256(f"{os.path.realpath(ptxas)}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()
        path = cache / f"tool-{key[:24]}.json"
        with contextlib.suppress(OSError, ValueError, TypeError):
            facts = json.loads(path.read_text())
            if isinstance(facts, dict) and all(isinstance(facts.get(k), str) for k in ("version", "help")):
                return facts
    facts = {"version": run_tool([ptxas, "--version"], TOOL_QUERY_TIMEOUT_S, "ptxas --version").stdout.strip(),
             "help": run_tool([ptxas, "--help"], TOOL_QUERY_TIMEOUT_S, "ptxas --help").stdout}
    if path is not None:
        with contextlib.suppress(OSError, PtxstaticError):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(facts))
    return facts


def supported_archs() -> frozenset[str]:
    """The ``sm_XX`` targets this ptxas assembles for (from the allowed values ``--help`` lists); empty
    without ptxas."""
    return frozenset(re.findall(r"'(sm_\d+[a-z]?)'", _facts().get("help", "")))


def unassemblable(ptx_arch: str, arch: str) -> str | None:
    """Why ptxas cannot assemble PTX for ``.target ptx_arch`` to ``arch`` (None when it can): no ptxas, an
    architecture this ptxas dropped (CUDA 13 has no Maxwell or Pascal), or PTX newer than the target."""
    if not available():
        return "ptxas is not on the PATH"
    if arch not in supported_archs():
        return f"this ptxas cannot assemble for {arch}"
    have, want = (int(re.sub(r"\D", "", a) or 0) for a in (ptx_arch, arch))
    if have > want:
        return f"PTX for {ptx_arch} cannot be assembled for the older {arch}"
    return None


def version() -> str:
    """ptxas's version text, or '' without ptxas."""
    return _facts().get("version", "")


#: a located ptxas message: ``ptxas /tmp/x/in.ptx, line 69; error   : Arguments mismatch for ...``
_PTXAS_LINE = re.compile(r"^ptxas \S.*?, line (\d+); (error|warning)\s*: (.*)$", re.M)


def target_arch(module: Module) -> str:
    """The ``-arch`` for ptxas from the module's ``.target`` (``sm_90a``; ``compute_80`` gives ``sm_80``)."""
    sm = module.sm
    m = re.fullmatch(r"(?:sm|compute)_(\d+)([a-z]?)", sm)
    if m is None:
        raise PtxstaticError(f"{module.filename}: no sm_XX in the .target directive ({', '.join(module.target)})")
    return f"sm_{m.group(1)}{m.group(2)}"


def assemble(text: str, arch: str, *, verbose: bool = False, timeout_s: float = PTXAS_TIMEOUT_S,
             name: str = "<input>") -> str:
    """Assemble PTX with ``ptxas -arch=ARCH`` (``-v`` with ``verbose``) and return what ptxas printed; a
    missing ptxas, a timeout or a rejection is a :class:`PtxstaticError` with ptxas's error lines, each as
    ``NAME:LINE: error: MESSAGE`` (``name``: the file the text is from, to name in them)."""
    ptxas = find("ptxas")
    if ptxas is None:
        raise PtxstaticError("ptxas is not on the PATH; install the CUDA toolkit to assemble PTX")
    with scratch_directory("ptxstatic-") as tmp:
        src = Path(tmp) / "in.ptx"
        src.write_text(text)
        argv = [ptxas, *(["-v"] if verbose else []), f"-arch={arch}", str(src), "-o", str(Path(tmp) / "out.cubin")]
        proc = run_tool(argv, timeout_s, f"ptxas -arch={arch}")
    if proc.returncode != 0:
        located = [f"{name}:{m[1]}: {m[2]}: {m[3].strip()}" for m in _PTXAS_LINE.finditer(proc.stderr)]
        errors = "\n".join(located or [ln for ln in proc.stderr.splitlines() if "error" in ln.lower()])
        msg = (errors or proc.stderr.strip() or proc.stdout.strip()).replace(str(src), name)
        raise PtxstaticError(f"ptxas -arch={arch} rejected the PTX:\n{msg}")
    return proc.stderr + proc.stdout


def cache_dir() -> Path | None:
    """Where the statistics are cached (``ptxas/`` in the user cache directory), or None when caching is off."""
    root = cache_root()
    return None if root is None else root / "ptxas"


def ptxas_stats(ptx: str, arch: str, *, cache: Path | None = None) -> dict[str, PtxasFunction] | None:
    """``ptxas -v -arch=ARCH`` statistics of every function in ``ptx``; None when ptxas is not installed.

    Raises :class:`PtxstaticError` with ptxas's message when it rejects the PTX, and :class:`PtxasSkipped`
    for PTX over :data:`~ptxstatic.limits.PTXAS_STATS_BYTES` or a ptxas that runs past
    :data:`~ptxstatic.limits.PTXAS_STATS_TIMEOUT_S`.
    """
    if not available():
        return None
    size = len(ptx.encode())
    if size > PTXAS_STATS_BYTES:
        raise PtxasSkipped(f"ptxas -v statistics skipped: the PTX is {size:,} bytes, over the limit of "
                           f"{PTXAS_STATS_BYTES:,} bytes (limits.PTXAS_STATS_BYTES)")
    cache = cache or cache_dir()
    path = None
    if cache is not None:
        key = hashlib.sha256(f"{version()}\0{arch}\0{ptx}".encode()).hexdigest()
        path = cache / f"{key}.json"
        with contextlib.suppress(OSError, ValueError, TypeError):
            return {n: PtxasFunction(**d) for n, d in json.loads(path.read_text()).items()}
    try:
        stats = parse_verbose(assemble(ptx, arch, verbose=True, timeout_s=PTXAS_STATS_TIMEOUT_S), arch)
    except ToolTimeout as exc:
        raise PtxasSkipped(f"ptxas -v statistics skipped: {exc} (limits.PTXAS_STATS_TIMEOUT_S)") from None
    if path is not None:
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({n: asdict(s) for n, s in stats.items()}))
    return stats
