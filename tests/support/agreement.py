"""Accept/reject agreement of ptxstatic's validation with ptxas over mutants of the PTX fixtures.

Shared by ``tests/ptx/test_ptxas_agreement.py`` and ``benchmarks/ptxas_agreement.py``. Each case is one
mutant (``support/mutants.py``) of a fixture whose ``.target`` CUDA 13's ptxas can assemble (sm_75 and later), at
most :data:`FIXTURE_BYTES` long so that a run stays short. ptxas runs with ``-arch`` = the mutant's own
``.target`` when ptxas knows it, else the fixture's; ptxstatic parses and validates the text.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ptxstatic.errors import PtxstaticError
from ptxstatic.ptx.parser import parse_text
from ptxstatic.ptx.validate import check
from support.mutants import Mutant, mutants
from support.paths import FIXTURES, corpus_files

FIXTURE_BYTES = 30_000
PTXAS_ARCHS = frozenset({
    "sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_90a", "sm_100", "sm_100a", "sm_100f",
    "sm_103", "sm_103a", "sm_103f", "sm_110", "sm_110a", "sm_110f", "sm_120", "sm_120a", "sm_120f", "sm_121",
    "sm_121a", "sm_121f",
})
_TARGET = re.compile(r"^\s*\.target\s+(\w+)", re.M)


@dataclass(frozen=True)
class Case:
    fixture: str
    mutant: Mutant
    arch: str


def fixtures() -> list[tuple[Path, str, str]]:
    """(path, text, arch) of every fixture short enough whose target ptxas can assemble."""
    out = []
    for path in corpus_files():
        if path.stat().st_size > FIXTURE_BYTES:
            continue
        text = path.read_text()
        m = _TARGET.search(text)
        if m and m[1] in PTXAS_ARCHS:
            out.append((path, text, m[1]))
    return out


def cases(n: int, seed: int) -> list[Case]:
    """``n`` mutants spread evenly over :func:`fixtures`, the same for the same seed."""
    found = fixtures()
    per, extra = divmod(n, len(found))
    out = []
    for k, (path, text, arch) in enumerate(found):
        for m in mutants(text, seed * 1_000_003 + k, per + (k < extra)):
            t = _TARGET.search(m.text)
            target = t[1].replace("compute_", "sm_") if t else ""
            out.append(Case(str(path.relative_to(FIXTURES)), m, target if target in PTXAS_ARCHS else arch))
    return out


def ptxas_accepts(text: str, arch: str, cache: Path | None = None) -> bool:
    """Whether ``ptxas -arch=ARCH`` assembles the text (verdicts optionally kept in ``cache``)."""
    key = hashlib.sha256(f"{arch}\0{text}".encode()).hexdigest()
    if cache is not None and (cache / key).exists():
        return (cache / key).read_text() == "1"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "m.ptx"
        src.write_text(text)
        proc = subprocess.run(["ptxas", f"-arch={arch}", str(src), "-o", str(Path(tmp) / "m.cubin")],
                              capture_output=True, timeout=120)
    accepted = proc.returncode == 0
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / key).write_text("1" if accepted else "0")
    return accepted


def ours(text: str) -> str:
    """``accept``, ``reject`` (the documented error) or ``crash: ...`` (anything else escaped)."""
    try:
        check(parse_text(text, "mutant.ptx"), text)
    except PtxstaticError:
        return "reject"
    except Exception as exc:
        return f"crash: {type(exc).__name__}: {exc}"
    return "accept"


@dataclass
class Outcome:
    case: Case
    ptxas: bool
    ours: str


@dataclass
class Confusion:
    outcomes: list[Outcome] = field(default_factory=list)

    def count(self, ptxas: bool, ours: str) -> int:
        return sum(1 for o in self.outcomes if o.ptxas == ptxas and o.ours == ours)

    @property
    def crashes(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.ours.startswith("crash")]

    @property
    def false_rejections(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.ptxas and o.ours == "reject"]

    @property
    def false_acceptances(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ptxas and o.ours == "accept"]

    @property
    def agreement(self) -> float:
        agree = self.count(True, "accept") + self.count(False, "reject")
        return agree / max(1, len(self.outcomes))

    def table(self) -> str:
        """The confusion matrix, and the disagreements per mutant kind."""
        rows = [
            f"{len(self.outcomes)} mutants of {len({o.case.fixture for o in self.outcomes})} fixtures",
            f"{'':18}{'ptxas accepts':>15}{'ptxas rejects':>15}",
            f"{'ptxstatic accepts':18}{self.count(True, 'accept'):>15}{self.count(False, 'accept'):>15}",
            f"{'ptxstatic rejects':18}{self.count(True, 'reject'):>15}{self.count(False, 'reject'):>15}",
            f"crashes: {len(self.crashes)}   agreement: {100 * self.agreement:.2f} %",
        ]
        kinds = Counter(o.case.mutant.kind for o in self.outcomes)
        wrong = Counter(o.case.mutant.kind for o in self.false_acceptances + self.false_rejections)
        rows.append("disagreements by kind: " + ", ".join(f"{k} {wrong[k]}/{kinds[k]}" for k in sorted(kinds)))
        return "\n".join(rows)


def judge(case: Case, cache: Path | None = None) -> Outcome:
    """ptxas's and ptxstatic's verdicts on one case."""
    return Outcome(case, ptxas_accepts(case.mutant.text, case.arch, cache), ours(case.mutant.text))


def run(n: int, seed: int, workers: int = 2, cache: Path | None = None) -> Confusion:
    """Judge ``n`` mutants with ptxas and ptxstatic in ``workers`` processes."""
    todo = cases(n, seed)
    with ProcessPoolExecutor(workers) as pool:
        return Confusion(list(pool.map(partial(judge, cache=cache), todo, chunksize=8)))
