"""A rich progress bar on stderr for the model commands (importing, cross-validation, training)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress


class Progress:
    """One bar whose description and total follow the current phase; ``say`` prints a line above it.
    When stderr is not a terminal, phases and every tenth of a phase are logged as plain lines instead."""

    def __init__(self) -> None:
        self.console = Console(stderr=True)
        self._bar = RichProgress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TimeRemainingColumn(), console=self.console, transient=True,
        )
        self._task = self._bar.add_task("starting", total=None)
        self._imported = 0
        self._logged: tuple[str, int] = ("", -1)

    def __enter__(self) -> Progress:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def say(self, text: str) -> None:
        self.console.print(text, highlight=False)

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
