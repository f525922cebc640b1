"""Scoring models: the evaluation figures and trained models scored on a dataset."""
