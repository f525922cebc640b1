"""Accept/reject agreement of ptxstatic's validation with ptxas over grammar-aware mutants of the fixtures.

Prints the confusion matrix, the agreement, the crashes and the disagreements by mutant kind, with a few
examples of each disagreement. Needs ptxas on the PATH.

    python benchmarks/ptxas_agreement.py [-n 10000] [--seed 1] [--workers 2] [-v]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.agreement import Outcome, run


def show(title: str, outcomes: list[Outcome], limit: int) -> None:
    print(f"\n{title}: {len(outcomes)}")
    for o in outcomes[:limit]:
        c = o.case
        print(f"  {c.fixture} (-arch={c.arch}) line {c.mutant.line}, {c.mutant.kind}: {c.mutant.detail[:90]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=10_000, help="mutants [10000]")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2, help="processes running ptxas and ptxstatic [2]")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every disagreement")
    args = ap.parse_args()
    if shutil.which("ptxas") is None:
        print("ptxas is not on the PATH", file=sys.stderr)
        return 2
    start = time.perf_counter()
    result = run(args.n, args.seed, args.workers)
    print(result.table())
    print(f"{time.perf_counter() - start:.0f} s with {args.workers} workers")
    limit = len(result.outcomes) if args.verbose else 10
    show("ptxas accepts, ptxstatic refuses (false rejections)", result.false_rejections, limit)
    show("ptxas refuses, ptxstatic accepts (false acceptances)", result.false_acceptances, limit)
    show("crashes", result.crashes, limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
