"""How often static block-count estimates equal executed counts, and whether the others are flagged.

For every kernel of the PTX corpus the reference counts come from the functional emulator
(``ptxstatic.emulator``) and, with ``--gpu`` on a machine with a GPU, from instrumented runs
(``ptxstatic.counts.measured``). Each kernel gets a synthetic launch (2 CTAs of 96 threads, fewer when
``.maxntid``/``.reqntid`` says so; 32-bit integer arguments 40, floats 1.5, other scalars 0; every 64-bit
parameter a buffer of 2**18 32-bit words) and is emulated under several buffer fills (zeros, iota, two
random seeds, all bits set). A kernel whose counts are identical under every fill is *launch-determined*:
its control flow depended only on the launch configuration and scalar arguments. The script prints

* for launch-determined kernels: the agreement rate (every block count equal and flagged exact);
* for data-dependent kernels: the flagging rate (some block flagged), and whether every block whose count
  changed between fills was flagged;
* the number of blocks flagged exact whose count differs from the reference, which must be 0.

    python benchmarks/static_agreement.py [PTX files or folders] [--gpu] [-v]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from corpus import kernels, ptx_files, synthetic_launch

from ptxstatic.block_counts import BlockCounts
from ptxstatic.counts.static.estimate import estimate_counts
from ptxstatic.launch import Buffer, Launch
from ptxstatic.ptx.ast import Function
from ptxstatic.ptx.launch_binding import bind

ROOT = Path(__file__).resolve().parents[1]
CORPUS = [ROOT / "tests" / "data" / "fixtures" / "ptx", ROOT / "tests" / "data" / "static"]
FILLS = [("zeros", 0.0, 0), ("iota", 0.0, 0), ("random", 0.0, 1), ("random", 0.0, 2), ("const", -1.0, 0)]


def with_fill(launch: Launch, fill: tuple[str, float, int]) -> Launch:
    kind, value, seed = fill
    args = {k: replace(v, fill=kind, value=value, seed=seed) if isinstance(v, Buffer) else v
            for k, v in launch.args.items()}
    return replace(launch, args=args)


@dataclass
class Outcome:
    kernel: str
    status: str  # "launch", "data" or why no reference exists
    blocks: int = 0
    equal: int = 0  # blocks whose static count equals the reference
    flagged: int = 0  # blocks flagged as estimates
    false_exact: int = 0  # blocks flagged exact whose count differs from the reference
    varying_unflagged: int = 0  # blocks whose reference count changed between fills but were flagged exact


def compare(static: BlockCounts, refs: list[BlockCounts]) -> Outcome:
    out = Outcome(static.kernel, "launch" if all(r.counts == refs[0].counts for r in refs) else "data")
    ref = refs[0]
    for fn, blocks in ref.counts.items():
        for b, c in blocks.items():
            s = static.counts.get(fn, {}).get(b, 0.0)
            exact = static.exact.get(fn, {}).get(b, False)
            out.blocks += 1
            out.equal += abs(s - c) < 1e-6
            out.flagged += not exact
            out.false_exact += exact and abs(s - c) >= 1e-6
            varies = any(r.counts.get(fn, {}).get(b, 0.0) != c for r in refs[1:])
            out.varying_unflagged += exact and varies
    return out


def references(module, fn: Function, launch: Launch, gpu: bool) -> list[BlockCounts]:
    """Emulated counts under every fill (plus instrumented GPU counts when asked)."""
    from ptxstatic.emulator import emulate

    refs = [emulate(module, fn, with_fill(launch, f), max_steps=300_000).counts for f in FILLS]
    if gpu:
        from ptxstatic.counts.measured import profile
        from ptxstatic.gpu.open import open_device

        device = open_device("cuda")
        try:
            refs += [profile(bind(module, fn, with_fill(launch, f)), device).counts for f in FILLS]
        finally:
            device.close()
    return refs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, default=CORPUS)
    ap.add_argument("--gpu", action="store_true", help="also compare with instrumented runs on the GPU")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every kernel's outcome")
    opts = ap.parse_args(argv)
    try:
        import ptxstatic.emulator  # noqa: F401
    except ImportError:
        print("the emulator (ptxstatic.emulator) is not available: nothing to compare with")
        return 1
    files = ptx_files(opts.paths)
    outcomes: list[Outcome] = []
    start = time.perf_counter()
    static_time = 0.0
    for path, module, fn in kernels(files):
        launch = synthetic_launch(fn, 96, 1.5, 40, 0)
        try:
            refs = references(module, fn, launch, opts.gpu)
        except Exception as exc:  # the reference cannot run this kernel: not part of the comparison
            outcomes.append(Outcome(fn.name, f"no reference: {type(exc).__name__}"))
            if opts.verbose:
                print(f"skip   {fn.name}: the reference cannot run it: {str(exc)[:100]}")
            continue
        aggregates = {d.name for decl in fn.params or () for d in decl.names if d.dims}
        static_launch = replace(launch, args={k: v for k, v in launch.args.items() if k not in aggregates})
        t0 = time.perf_counter()
        # an aggregate takes no value (the emulator's zeros)
        est = estimate_counts(bind(module, fn.name, static_launch))
        spent = time.perf_counter() - t0
        static_time += spent
        o = compare(est.counts, refs)
        outcomes.append(o)
        if opts.verbose:
            rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            print(f"{o.status:6s} {rel} {fn.name}: {o.equal}/{o.blocks} equal, {o.flagged} flagged, "
                  f"{o.false_exact} exact-but-wrong, {o.varying_unflagged} varying-unflagged ({spent:.2f}s)")
    report(outcomes, time.perf_counter() - start, static_time, len(files))
    return 0


def report(outcomes: list[Outcome], elapsed: float, static_time: float, files: int) -> None:
    compared = [o for o in outcomes if o.status in ("launch", "data")]
    launch = [o for o in compared if o.status == "launch"]
    data = [o for o in compared if o.status == "data"]
    agree = [o for o in launch if o.equal == o.blocks and o.flagged == 0]
    flagged_launch = [o for o in launch if o.flagged]
    flagged_data = [o for o in data if o.flagged]
    covered = [o for o in data if o.varying_unflagged == 0]
    false_exact = sum(o.false_exact for o in compared)

    def pct(a: int, b: int) -> str:
        return f"{100 * a / b:.1f}%" if b else "n/a"

    print(f"{files} files, {len(outcomes)} kernels, {len(compared)} with reference counts "
          f"({len(outcomes) - len(compared)} the reference cannot run) in {elapsed:.1f}s "
          f"(static estimates {static_time:.1f}s)")
    print(f"launch-determined kernels: {len(launch)}")
    print(f"  agreement (every block equal and exact): {len(agree)}/{len(launch)} = {pct(len(agree), len(launch))}")
    print(f"  flagged as reading data in control flow (not exposed by the fills): {len(flagged_launch)}")
    print(f"data-dependent kernels: {len(data)}")
    print(f"  flagged: {len(flagged_data)}/{len(data)} = {pct(len(flagged_data), len(data))}; "
          f"every block that varied between fills flagged: {len(covered)}/{len(data)}")
    print(f"blocks flagged exact but different from the reference: {false_exact}")


if __name__ == "__main__":
    sys.exit(main())
