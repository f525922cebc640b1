"""The 32 lanes of an emulated warp: a value is an array over them, or a scalar standing for all of them."""

from __future__ import annotations

import numpy as np

from ptxstatic.limits import WARP_SIZE as WARP

LANES = np.arange(WARP)


def lanes(x: np.ndarray | np.generic) -> np.ndarray:
    """An operand as an array over the warp (scalars repeated)."""
    if type(x) is np.ndarray and x.ndim == 1:
        return x
    return np.full(WARP, x)
