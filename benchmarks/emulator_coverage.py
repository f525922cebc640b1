"""How many kernels of the PTX corpus the emulator runs to completion, and why the others stop.

Every kernel gets a synthetic launch: 2 CTAs of 128 threads (fewer when ``.maxntid``/``.reqntid`` says so),
16 KiB of dynamic shared memory, every 64-bit parameter a zero-filled 1 MiB buffer, 32-bit integers 16,
floats 1.0 and other parameters zero. Outcomes are ``ok`` or the kind of EmulationError: ``unsupported``
(an instruction or feature the emulator does not model), ``fault`` (an address outside any allocation,
which synthetic arguments can cause), ``runaway`` (the step limit or the call-depth limit, which synthetic
data can also cause) or ``other``.

    python benchmarks/emulator_coverage.py [PTX files or folders] [--max-steps N] [-v]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter
from pathlib import Path

from corpus import kernels, ptx_files, synthetic_launch

from ptxstatic.emulator import EmulationError, emulate

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "fixtures" / "ptx"


def classify(message: str) -> str:
    if "not supported" in message or "declares but does not define" in message:
        return "unsupported"
    if re.search(r"out of bounds|misaligned|no memory window|not a function address", message):
        return "fault"
    if "warp instructions executed" in message or "call depth" in message:
        return "runaway"
    return "other"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, default=[CORPUS])
    ap.add_argument("--max-steps", type=int, default=200_000)
    ap.add_argument("-v", "--verbose", action="store_true", help="print every kernel's outcome")
    opts = ap.parse_args(argv)
    files = ptx_files(opts.paths)
    outcomes: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    start = time.perf_counter()
    for path, module, fn in kernels(files):
        t0 = time.perf_counter()
        try:
            emulate(module, fn, synthetic_launch(fn, 128, 1.0, 16, 16), max_steps=opts.max_steps)
            kind, why = "ok", ""
        except EmulationError as exc:
            kind, why = classify(str(exc)), str(exc)
            reasons[f"{kind}: {re.sub(r'^.*?:[0-9]+: ', '', why)[:100]}"] += 1
        outcomes[kind] += 1
        if opts.verbose:
            where = path.relative_to(path.parents[2])
            print(f"{kind:12s} {time.perf_counter() - t0:6.2f}s {where} {fn.name} {why}")
    total = sum(outcomes.values())
    print(f"{len(files)} files, {total} kernels in {time.perf_counter() - start:.1f}s")
    for kind in ("ok", "unsupported", "fault", "runaway", "other"):
        print(f"  {kind:12s} {outcomes[kind]:5d}  {100 * outcomes[kind] / max(total, 1):5.1f}%")
    if reasons:
        print("reasons:")
        for why, n in reasons.most_common():
            print(f"  {n:4d}  {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
