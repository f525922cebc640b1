"""The DVFS vocabulary shared by the data, the models and the decisions: the quantities that scale with the
clocks (:data:`TARGETS`) and a GPU's clock configurations (:class:`ClockTable`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ptxstatic.errors import PtxstaticError

#: what is measured and predicted at every clock configuration: time (ms), power (W), energy (mJ)
TARGETS = ("time", "power", "energy")
#: where a model's energy comes from: predicted time × power, or its own energy head
ENERGY_SOURCES = ("time*power", "head")


@dataclass(frozen=True)
class ClockTable:
    """A GPU's clock configurations (MHz), memory clock ascending then core clock ascending."""

    f_mem: tuple[int, ...]
    f_core: tuple[int, ...]
    idle_power_w: tuple[float, ...] | None = None

    def __len__(self) -> int:
        return len(self.f_mem)

    @property
    def reference(self) -> int:
        """Index of the reference configuration: the highest memory clock, then the highest core clock."""
        return max(range(len(self)), key=lambda i: (self.f_mem[i], self.f_core[i]))

    def normalised(self) -> np.ndarray:
        """(configs, 2) array of (f_mem, f_core) divided by the reference configuration's clocks."""
        ref = self.reference
        return np.column_stack([
            np.asarray(self.f_mem, float) / self.f_mem[ref], np.asarray(self.f_core, float) / self.f_core[ref],
        ])

    def index(self, f_mem: int, f_core: int) -> int:
        for i, pair in enumerate(zip(self.f_mem, self.f_core)):
            if pair == (f_mem, f_core):
                return i
        raise PtxstaticError(f"no clock configuration mem {f_mem} MHz, core {f_core} MHz")

    def to_dict(self) -> dict:
        return {"f_mem": list(self.f_mem), "f_core": list(self.f_core),
                "idle_power_w": list(self.idle_power_w) if self.idle_power_w else None}

    @classmethod
    def from_dict(cls, d: dict) -> ClockTable:
        idle = d.get("idle_power_w")
        return cls(tuple(int(x) for x in d["f_mem"]), tuple(int(x) for x in d["f_core"]),
                   tuple(float(x) for x in idle) if idle else None)
