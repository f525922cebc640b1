"""The hook's analysis in its own process: a thread beside nvcc that drives a :class:`~.unit.UnitAnalysis`.

It imports the parser and the rule engine and reads the configuration while nvcc compiles, analyses each
PTX file handed to :meth:`Analysis.offer` as it comes, and keeps the outcome until nvcc has finished. This
is how the hook works when the analysis server cannot be reached (or is turned off).
"""

from __future__ import annotations

import queue
import threading

from ptxstatic.hook.capture import Captured
from ptxstatic.hook.client import Outcome
from ptxstatic.hook.unit import UnitAnalysis
from ptxstatic.toolchain.nvcc_command import NvccCommand


class Analysis(threading.Thread):
    """Analyses the PTX files handed to :meth:`offer`; :meth:`nvcc_finished` closes the intake."""

    def __init__(self, cmd: NvccCommand, cwd: str, strict: bool) -> None:
        super().__init__(name="ptxstatic-analysis", daemon=True)
        self.unit = UnitAnalysis(cmd, cwd, strict)
        self.outcome = Outcome()
        self._queue: queue.Queue[Captured | int] = queue.Queue()

    def offer(self, captured: Captured) -> None:
        self._queue.put(captured)

    def nvcc_finished(self, status: int) -> None:
        self._queue.put(status)

    def run(self) -> None:
        self.unit.prepare()
        while not isinstance(item := self._queue.get(), int):
            self.unit.offer(item)
        self.outcome = self.unit.finish(item)
