"""Model time of one prediction with the shipped models (numpy inference, calibration included), measured in
one run.

    python benchmarks/model_inference.py [--models trained/gtxtitanx] [--data TITANX_FOLDER]

``TITANX_FOLDER`` defaults to ``$PTXSTATIC_TITANX_DATA``.

For each model: median and worst time of predicting one kernel (the encoding of the sequence included,
parsing excluded) over the PTX kernels of the test data and the nvcc sm_80 fixtures (what ``predict``
sees) and, when the data folder exists, separately over every Titan X benchmark (sequences unrolled to
tens of thousands of entries);
and the ratio to the time the front end takes to parse and sequence the same PTX file. Targets: LSTM
≤ 10 ms, trees ≤ 1 ms per kernel.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def best_of(fn: Callable[[], object], repeats: int = 5) -> float:
    """Fastest of ``repeats`` calls, in milliseconds (the least disturbed by other load)."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1000 * min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=str(ROOT / "trained" / "gtxtitanx"))
    ap.add_argument("--data", default=os.environ.get("PTXSTATIC_TITANX_DATA", ""),
                    help="GTX Titan X folder (gpuPTXModel layout) [default: $PTXSTATIC_TITANX_DATA]")
    args = ap.parse_args()

    from ptxstatic.analysis.sequence import kernel_sequence
    from ptxstatic.models.inference.loading import load_model
    from ptxstatic.ptx import parse_file

    ptx_files = sorted((ROOT / "tests" / "data" / "predict").glob("*.ptx"))
    parse_ms = {p.name: best_of(lambda p=p: [kernel_sequence(k) for k in parse_file(p).kernels], 3) for p in ptx_files}
    groups = {"PTX kernels": {p.name: kernel_sequence(parse_file(p).kernels[0]) for p in ptx_files}}
    for p in sorted((ROOT / "tests" / "data" / "fixtures" / "ptx" / "nvcc" / "sm_80" / "plain").glob("*.ptx")):
        groups["PTX kernels"].update({f"{p.stem}:{k.name}": kernel_sequence(k) for k in parse_file(p).kernels})
    if args.data and Path(args.data).is_dir():
        from ptxstatic.dataset.dataset import load_dataset, open_data

        data = load_dataset(open_data(args.data), "gtxtitanx")
        groups["Titan X benchmarks (unrolled)"] = dict(zip(data.names, data.runs))

    models = sorted(d for d in Path(args.models).iterdir() if (d / "card.json").is_file())
    print("times are the best of 5 calls per kernel (ms), sequence encoding included, parsing excluded")
    for title, sequences in groups.items():
        longest = max(len(s) for s in sequences.values())
        print(f"\n{title}: {len(sequences)} sequences, up to {longest} entries")
        print(f"{'model':<14} {'median':>8} {'worst':>8} {'target':>7}  {'vs parse (PTX files)':>22}  load ms")
        for d in models:
            load = best_of(lambda d=d: load_model(d), 3)
            m = load_model(d)
            p = m.predictor
            if m.is_dvfs:  # what predict runs: calibrated where the model is
                predict = (lambda s, m=m: m.details([s])) if m.calibration else p.predict
            else:
                predict = p.predict_sequence
            times = {name: best_of(lambda s=seq, f=predict: f(s)) for name, seq in sequences.items()}
            ratios = ", ".join(f"{times[n] / parse_ms[n]:.3f}" for n in parse_ms if n in times) or "-"
            target = "10" if m.kind == "lstm" else "1"
            print(f"{d.name:<14} {statistics.median(times.values()):>8.3f} {max(times.values()):>8.3f} {target:>7}  "
                  f"{ratios:>22}  {load:7.1f}")
    print("\nparse + sequence time of the PTX files (ms): " + ", ".join(f"{n} {t:.1f}" for n, t in parse_ms.items()))


if __name__ == "__main__":
    main()
