"""Progress on stderr: one rich bar for every long-running command (importing, training, cross-validation,
collecting), with messages printed above it.

Two ways to drive it: ``step(description, done, total)`` reports a position (the model commands' progress
callbacks), and ``phase(name, total)`` / ``current(text)`` / ``advance()`` count the units of a phase
(``collect``). When stderr is not a terminal, ``step`` logs each tenth of a phase as a plain line instead.
"""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress


class Progress:
    """One bar whose description and total follow the current phase; ``say`` prints a line above it
    (prefixed by ``prefix``, e.g. ``"collect: "``)."""

    def __init__(self, prefix: str = "") -> None:
        self.console = Console(stderr=True)
        self.prefix = prefix
        self._bar = RichProgress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TimeRemainingColumn(), console=self.console, transient=True,
        )
        self._task = self._bar.add_task("starting", total=None)
        self._phase = ""
        self._imported = 0
        self._logged: tuple[str, int] = ("", -1)

    def __enter__(self) -> Progress:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def say(self, text: str) -> None:
        self.console.print(f"{self.prefix}{text}", markup=False, highlight=False, soft_wrap=True)

    def importing(self, name: str) -> None:
        self._imported += 1
        self._bar.update(self._task, description=f"importing {name}", completed=self._imported, total=None)
        if not self.console.is_terminal and self._imported == 1:
            self.say("importing")

    def step(self, description: str, done: int, total: int) -> None:
        self._bar.update(self._task, description=description, completed=done, total=total)
        if self.console.is_terminal:
            return
        tenth = 10 * done // max(1, total)
        if (description, tenth) != self._logged:
            self._logged = (description, tenth)
            self.say(f"{description}: {done}/{total}")

    def phase(self, name: str, total: int) -> None:
        """A new phase of ``total`` units."""
        self._phase = name
        self._bar.update(self._task, description=name, completed=0, total=total)

    def current(self, text: str) -> None:
        """What the phase works on now."""
        self._bar.update(self._task, description=f"{self._phase}: {text}")

    def advance(self) -> None:
        """One unit of the phase is done."""
        self._bar.advance(self._task)
