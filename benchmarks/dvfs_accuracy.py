"""Accuracy of candidate DVFS models, side by side: validation applications, family-grouped and
benchmark-grouped 10-fold cross-validation, with the mean surface and the shipped models as rows (the
shipped models scored on the applications as they are, their cross-validation rows taken from their saved
results), and how well four physical quantities reproduce the measured surfaces.

    python benchmarks/dvfs_accuracy.py --data TITANX_FOLDER --apps APPS_FOLDER [--models trained/gtxtitanx]
        [--only NAME,...] [--groupings family,benchmark] [--lstm-epochs N] [--json OUT.json]

``TITANX_FOLDER`` defaults to ``$PTXSTATIC_TITANX_DATA``; ``APPS_FOLDER`` is the validation folder of real
applications (never fitted on). Prints Markdown tables (stdout); progress goes to stderr. Training needs
the ``train`` extra (scikit-learn, scipy).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.environ.get("PTXSTATIC_TITANX_DATA", ""))
    ap.add_argument("--apps", default="")
    ap.add_argument("--models", default=str(ROOT / "trained" / "gtxtitanx"))
    ap.add_argument("--only", default="", help="comma-separated candidate names (default: all)")
    ap.add_argument("--groupings", default="family,benchmark")
    ap.add_argument("--lstm-epochs", type=int, default=0,
                    help="also compare the LSTM as a quantity learner, trained this many epochs (one member)")
    ap.add_argument("--json", default="", help="also write the results here")
    return ap.parse_args()


def main() -> None:
    from ptxstatic.dataset.dataset import default_gpu, load_dataset, open_data
    from ptxstatic.models.evaluation.scoring import shipped_results
    from ptxstatic.models.inference.loading import load_model
    from ptxstatic.models.training.cross_validation import (
        compare,
        lstm_candidate,
        physical_candidates,
        quantity_fit,
        saved_rows,
    )
    from ptxstatic.report.dvfs_evaluation import comparison_markdown, quantity_fit_markdown

    args = _args()
    if not args.data:
        sys.exit("error: give --data or set PTXSTATIC_TITANX_DATA")

    def dataset(path: str):
        store = open_data(path)
        return load_dataset(store, default_gpu(store, None))

    train = dataset(args.data)
    apps = dataset(args.apps) if args.apps else None
    wanted = {n for n in args.only.split(",") if n}
    pool = physical_candidates() + ([lstm_candidate(args.lstm_epochs)] if args.lstm_epochs else [])
    groupings = [g for g in args.groupings.split(",") if g]
    results = compare(train, apps, [c for c in pool if not wanted or c.name in wanted], groupings=groupings,
                      progress=lambda m: print(m, file=sys.stderr))
    models = Path(args.models)
    dirs = sorted(d for d in models.iterdir() if (d / "card.json").is_file()) if models.is_dir() else []
    shipped = [load_model(d) for d in dirs]
    if apps is not None and shipped:
        for name, entry in shipped_results(apps, [m for m in shipped if m.is_dvfs])["dvfs"].items():
            results["validation"][f"shipped {name}"] = entry
    for grouping in groupings:
        for name, entry in saved_rows(models / "cv" / f"{grouping}.json", train, grouping, 10, 0).items():
            results[grouping][f"shipped {name}"] = entry
    results["quantity_fit"] = quantity_fit(train, {"validation applications (diagnosis)": apps} if apps else {})
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(quantity_fit_markdown(results["quantity_fit"]))
    print(comparison_markdown(results))


if __name__ == "__main__":
    main()
