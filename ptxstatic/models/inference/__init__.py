"""Numpy inference of the shipped models, loaded from arrays and JSON: never torch, scikit-learn, scipy or
the dataset store (an import-linter contract)."""
