"""Every predictor: numpy inference of the shipped models (``inference/``), their training with torch,
scikit-learn and scipy (``training/``), and the figures they are scored by (``evaluation/``)."""
