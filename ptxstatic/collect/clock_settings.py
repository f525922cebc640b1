"""Clock sweeps for ``collect --clocks``: which settings to measure at, and changing them safely.

Without ``--clocks`` nothing here touches the board. With it, :class:`ClockGuard` checks permission before
the first change, records the board's original applications clocks in the dataset (so that a run killed
before it could restore them is repaired by the next run), announces every change, and restores the
original settings on the way out, whether the run finished, failed or was interrupted.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from ptxstatic.dataset.samples import DEFAULT_SETTING
from ptxstatic.dataset.store import DatasetStore
from ptxstatic.errors import PtxstaticError
from ptxstatic.gpu.device import Board, ClockState

Pair = tuple[int, int]  # (memory MHz, core MHz)
META_KEY = "collect.clock_restore"


def setting_name(pair: Pair | None) -> str:
    return DEFAULT_SETTING if pair is None else f"{pair[0]}:{pair[1]}"


def parse_clocks(spec: str, supported: list[Pair], current_mem: int | None) -> list[Pair]:
    """``all`` (every supported pair) or a comma list of ``MEM:CORE`` (or ``CORE`` at the current memory clock),
    each checked against the supported pairs."""
    if spec.strip() == "all":
        if not supported:
            raise PtxstaticError("--clocks all: the board lists no supported clock pairs")
        return list(supported)
    pairs: list[Pair] = []
    for item in (x.strip() for x in spec.split(",") if x.strip()):
        mem_text, _, core_text = item.rpartition(":")
        try:
            core = int(core_text)
            mem = int(mem_text) if mem_text else current_mem
        except ValueError:
            raise PtxstaticError(f"--clocks: bad item {item!r}: expected MEM:CORE or CORE in MHz, or 'all'") from None
        if mem is None:
            raise PtxstaticError(f"--clocks: {item!r} needs a memory clock (MEM:CORE); the board reports none")
        if supported and (mem, core) not in supported:
            shown = ", ".join(f"{m}:{c}" for m, c in supported[:12]) + (" ..." if len(supported) > 12 else "")
            raise PtxstaticError(f"--clocks: mem {mem} MHz, core {core} MHz is not supported (supported: {shown})")
        pairs.append((mem, core))
    if not pairs:
        raise PtxstaticError("--clocks: no clock pairs given")
    return list(dict.fromkeys(pairs))


def _say_state(state: ClockState) -> str:
    return f"mem {state.mem_mhz} MHz, core {state.core_mhz} MHz"


def repair(board: Board, store: DatasetStore, device_id: str, say: Callable[[str], None]) -> None:
    """Restore clocks that a killed run of this dataset changed on this device and could not put back."""
    raw = store.meta(META_KEY)
    if not raw:
        return
    record = json.loads(raw)
    if record.get("device") != device_id:
        return
    state = ClockState.from_dict(record["state"])
    board.restore_clocks(state)
    with store.transaction():
        store.db.execute("DELETE FROM meta WHERE key = ?", (META_KEY,))
    say(f"restored applications clocks left changed by an interrupted run: {_say_state(state)}")


class ClockGuard:
    """Sets clocks on request, announces each change, and restores the original settings on exit."""

    def __init__(self, board: Board, store: DatasetStore, device_id: str, say: Callable[[str], None]) -> None:
        self.board = board
        self.store = store
        self.device_id = device_id
        self.say = say
        self.original: ClockState | None = None
        self.changes: list[str] = []

    def __enter__(self) -> ClockGuard:
        return self

    def apply(self, pair: Pair | None) -> None:
        """Set applications clocks to ``pair``; ``None`` leaves the board as it is."""
        if pair is None:
            return
        if self.original is None:
            reason = self.board.clock_permission()
            if reason:
                raise PtxstaticError(f"--clocks: changing clocks is not permitted here: {reason}. Nothing was "
                                     "changed; run without --clocks to measure at the current settings")
            self.original = self.board.clock_state()
            with self.store.transaction():
                self.store.set_meta(META_KEY, json.dumps({"device": self.device_id,
                                                          "state": self.original.to_dict()}))
            self.say(f"clock sweep: applications clocks were {_say_state(self.original)}; they are restored at "
                     "the end")
        self.board.set_clocks(*pair)
        self.changes.append(setting_name(pair))
        self.say(f"set applications clocks to mem {pair[0]} MHz, core {pair[1]} MHz")

    def __exit__(self, *exc: object) -> None:
        if self.original is None:
            return
        self.board.restore_clocks(self.original)
        with self.store.transaction():
            self.store.db.execute("DELETE FROM meta WHERE key = ?", (META_KEY,))
        self.say(f"restored applications clocks to {_say_state(self.original)}")
        self.original = None


def snap(value: float | None, choices: list[int]) -> int | None:
    """The supported clock closest to a measured one (the value rounded when nothing is listed)."""
    if value is None:
        return None
    return min(choices, key=lambda c: abs(c - value)) if choices else round(value)
