"""Accuracy of every candidate DVFS model, side by side: validation applications, family-grouped and
benchmark-grouped 10-fold cross-validation, with the mean surface and the shipped models as rows.

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
SHIPPED = ("lstm", "group_forest", "wu_clusters")


def main() -> None:
    from ptxstatic.dataset.dataset import default_gpu, load_dataset, open_data
    from ptxstatic.models.dvfs_comparison import compare, lstm_candidate, physical_candidates, quantity_fit
    from ptxstatic.report.dvfs_comparison import comparison_markdown, quantity_fit_markdown

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.environ.get("PTXSTATIC_TITANX_DATA", ""))
    ap.add_argument("--apps", default="")
    ap.add_argument("--models", default=str(ROOT / "trained" / "gtxtitanx"))
    ap.add_argument("--only", default="", help="comma-separated candidate names (default: all)")
    ap.add_argument("--groupings", default="family,benchmark")
    ap.add_argument("--lstm-epochs", type=int, default=0,
                    help="also compare the LSTM as a quantity learner, trained this many epochs (one member)")
    ap.add_argument("--json", default="", help="also write the results here")
    args = ap.parse_args()
    if not args.data:
        sys.exit("error: give --data or set PTXSTATIC_TITANX_DATA")

    def dataset(path: str):
        store = open_data(path)
        return load_dataset(store, default_gpu(store, None))

    train = dataset(args.data)
    apps = dataset(args.apps) if args.apps else None
    wanted = {n for n in args.only.split(",") if n}
    pool = physical_candidates() + ([lstm_candidate(args.lstm_epochs)] if args.lstm_epochs else [])
    candidates = [c for c in pool if not wanted or c.name in wanted]
    models = Path(args.models)
    shipped = [models / n for n in SHIPPED if (models / n / "card.json").is_file()] if models.is_dir() else []
    results = compare(train, apps, candidates, groupings=[g for g in args.groupings.split(",") if g],
                      shipped=shipped, shipped_cv=models / "cv", progress=lambda m: print(m, file=sys.stderr))
    results["quantity_fit"] = quantity_fit(train, {"validation applications (diagnosis)": apps} if apps else {})
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(quantity_fit_markdown(results["quantity_fit"]))
    print(comparison_markdown(results))


if __name__ == "__main__":
    main()
