"""The counter map of an instrumented module: which basic block each 64-bit counter belongs to.

Written next to the instrumented PTX (``--map OUT.json``) and read back by the GPU runner, which folds the
raw counter array (``banks`` banks of ``len(counters)`` counters, bank-major) into per-block counts.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ptxstatic.errors import PtxstaticError
from ptxstatic.files import write_atomic

MODES = ("all", "sample", "warp")


@dataclass
class Counter:
    """One counter: the block it counts, where that block is in the original PTX and the ``.cu`` file."""

    index: int
    function: str
    block: int  # block id from build_cfg on the original function
    label: str  # the block's first label, or bbN for an unlabelled block
    kernels: list[str]  # kernels whose launches can reach the block (the kernel itself, or callers)
    lines: tuple[int, int]  # first and last line of the block in the input (PTX, labels included; or the IR)
    source: dict | None = None  # {"file", "line"} of the block's first instruction with a .loc, if any
    instructions: int = 0
    ptx_blocks: list[int] | None = None  # llvm-ir route: the PTX blocks (build_cfg ids) holding this counter


@dataclass
class CounterMap:
    """Every counter of an instrumented module, and how the counters were placed."""

    counters: list[Counter]
    mode: str = "all"
    banks: int = 16
    stride: int = 1  # sample mode: CTAs whose linear id is a multiple of this count
    symbol: str = "__ptxstatic_counters"
    module_hash: str = ""  # sha256 of the original PTX text
    source_file: str = ""
    notes: list[str] = field(default_factory=list)
    route: str = "ptx"  # "ptx": counters inserted into PTX; "llvm-ir": into LLVM IR, then lowered

    @property
    def size(self) -> int:
        """Number of 64-bit elements of the device-side counter array (at least one)."""
        return max(1, len(self.counters)) * self.banks

    def of(self, function: str) -> list[Counter]:
        return [c for c in self.counters if c.function == function]

    def for_kernel(self, kernel: str) -> list[Counter]:
        return [c for c in self.counters if kernel in c.kernels]

    def fold(self, raw: list[int]) -> dict[str, dict[int, int]]:
        """Per-block totals from the raw counter array: the banks summed; function -> block id -> count."""
        n = len(self.counters)
        if len(raw) < n * self.banks:
            raise PtxstaticError(f"counter array has {len(raw)} elements; the map needs {n * self.banks}")
        out: dict[str, dict[int, int]] = {}
        for c in self.counters:
            out.setdefault(c.function, {})[c.block] = sum(raw[b * n + c.index] for b in range(self.banks))
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["counters"] = [{**asdict(c), "lines": list(c.lines)} for c in self.counters]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> CounterMap:
        try:
            counters = [Counter(**{**c, "lines": tuple(c["lines"])}) for c in d["counters"]]
            m = cls(counters, **{k: v for k, v in d.items() if k != "counters"})
        except (KeyError, TypeError, ValueError) as exc:
            raise PtxstaticError(f"bad counter map: {exc}") from None
        if m.mode not in MODES or m.banks < 1 or m.stride < 1:
            raise PtxstaticError(f"bad counter map: mode {m.mode!r}, banks {m.banks}, stride {m.stride}")
        if [c.index for c in counters] != list(range(len(counters))):
            raise PtxstaticError("bad counter map: counter indices are not 0, 1, 2, ...")
        return m

    def save(self, path: str | Path) -> None:
        write_atomic(path, json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> CounterMap:
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise PtxstaticError(f"{path}: cannot read counter map: {exc}") from None
