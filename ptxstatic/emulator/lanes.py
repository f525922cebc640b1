"""The 32 lanes of an emulated warp: a value is an array over them, or a scalar standing for all of them."""

from __future__ import annotations

import numpy as np

from ptxstatic.limits import WARP_SIZE as WARP

LANES = np.arange(WARP)
#: the mask of a whole warp, passed as this very object where every lane takes part: a write of a new array (one
#: that is no view of other data) then takes it as the register's value rather than merging it in, which is safe
#: as no register's value is ever changed in place; never written
FULL = np.ones(WARP, dtype=bool)
FULL.flags.writeable = False


def lanes(x: np.ndarray | np.generic) -> np.ndarray:
    """An operand as an array over the warp (scalars repeated)."""
    if type(x) is np.ndarray and x.ndim == 1:
        return x
    return np.full(WARP, x)
