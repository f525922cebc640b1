"""Training every model (torch, scikit-learn, scipy) on a dataset, its calibration and cross-validation, and
writing it as arrays and a model card."""
