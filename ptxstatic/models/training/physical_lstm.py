"""The LSTM as a learner of the physical quantities (training and evaluation; torch).

The tuned LSTM (``training.TUNED_LSTM``) is trained on the physical surfaces of the training kernels'
fitted quantities, and its predicted surfaces are read back as quantities (``physical.project``), so what
it predicts is the four quantities and every surface it gives is physically consistent. It is compared
with the other quantity learners in ``dvfs_comparison``; it is not exported as a physical model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator

from ptxstatic.dvfs import ClockTable
from ptxstatic.models.inference.physical_surfaces import project
from ptxstatic.models.training.lstm import LstmDvfs
from ptxstatic.models.training.surface_fit import fit_quantities, fit_shape


class PhysicalLstm(BaseEstimator):
    def __init__(self, epochs: int = 60, members: int = 1, seed: int = 0) -> None:
        self.epochs = epochs
        self.members = members
        self.seed = seed

    def fit(self, X: Sequence[Sequence], y: np.ndarray, clocks: ClockTable) -> PhysicalLstm:
        from ptxstatic.models.training.train import TUNED_LSTM

        self.shape_ = fit_shape(y, clocks)
        targets = self.shape_.surfaces(fit_quantities(y, self.shape_))
        params = {**TUNED_LSTM, "epochs": self.epochs, "members": self.members}
        self.lstm_ = LstmDvfs(seed=self.seed, **params).fit(X, targets, clocks)
        return self

    def quantities(self, X: Sequence[Sequence]) -> np.ndarray:
        return project(self.lstm_.predict(X), self.shape_)

    def predict(self, X: Sequence[Sequence]) -> np.ndarray:
        return self.shape_.surfaces(self.quantities(X))
