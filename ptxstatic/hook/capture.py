"""Catching the PTX that nvcc writes, without changing nvcc's command line or environment.

nvcc writes its intermediate files to ``$TMPDIR`` (``/tmp``) as ``tmpxft_PPPPPPPP_00000000-N_STEM.ptx``
(``PPPPPPPP`` is the hex process id of the nvcc driver), runs ptxas, fatbinary and the host compiler, and
deletes them when it exits; with ``--keep`` it writes ``STEM.ptx`` to the keep directory instead and leaves
it there. A watch on those directories (inotify on Linux, else polling) hard-links each PTX file of *this*
build (its process id belongs to the hook's child process or one of its descendants, so parallel builds do
not mix) into a private directory as soon as it is created, so nvcc's clean-up does not take it away, and
reports it complete when nvcc closes it: analysis can start while nvcc is still assembling and compiling
host code. Adding ``--keep``/``--keep-dir`` to the command instead would change the names nvcc embeds in
the object file.
"""

from __future__ import annotations

import contextlib
import os
import re
import select

TMPXFT_PTX = re.compile(r"^tmpxft_(?P<pid>[0-9a-f]{8})_[0-9a-f]{8}-\d+_(?P<stem>.+?)(?:\.compute_\w+)?\.ptx$")


def nvcc_temp_dir() -> str:
    """The directory nvcc writes its temporary files to."""
    return os.environ.get("TMPDIR") or "/tmp"


class Captured:
    """One PTX file of the build: nvcc's name for it, our link to it (or copy), its source's stem."""

    def __init__(self, name: str, path: str, stem: str) -> None:
        self.name = name
        self.path = path
        self.stem = stem
        self.complete = False
        self.target: str | None = None  # its ``.target`` (``sm_90a``), read when it is complete


def ptx_target(path: str) -> str | None:
    """The ``.target`` architecture of a PTX file (``sm_90a``), read from its first lines."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for _ in range(64):
                m = re.match(r"\s*\.target\s+(\w+)", f.readline())
                if m:
                    return m.group(1)
    except OSError:
        pass
    return None


def descends_from(pid: int, root: int) -> bool:
    """Whether process ``pid`` is ``root`` or one of its descendants (``/proc``; without it, only ``root``)."""
    for _ in range(64):
        if pid == root:
            return True
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            return False
        fields = stat[stat.rfind(b")") + 2:].split()
        pid = int(fields[1])
        if pid <= 1:
            return False
    return False


class PtxCapture:
    """Watches nvcc's temporary directory (and the ``--keep`` directory) for the PTX files of one build."""

    def __init__(self, private: str, keep_dir: str | None = None, stems: tuple[str, ...] = ()) -> None:
        self.private = private
        self.root_pid = -1
        self.dirs = [nvcc_temp_dir()] + ([keep_dir] if keep_dir else [])
        self.keep_dir = keep_dir
        self.stems = stems
        self.files: dict[str, Captured] = {}  # by "dir/name"
        self._inotify = None
        self._dir_of: dict[int, str] = {}

    def start(self) -> None:
        """Set the watches up (before nvcc starts, so that no file is missed)."""
        try:
            import ctypes

            import inotify_simple
            from inotify_simple import INotify, flags

            # the C library is part of this process already: give it to inotify_simple rather than let it
            # look for it with ctypes.util.find_library, which runs ``ldconfig -p`` beside the build
            inotify_simple._libc = inotify_simple._libc or ctypes.CDLL(None, use_errno=True)
            ino = INotify()
            for d in self.dirs:
                self._dir_of[ino.add_watch(d, flags.CREATE | flags.CLOSE_WRITE | flags.MOVED_TO)] = d
            self._inotify = ino
        except (ImportError, OSError):  # no inotify here: poll the directories instead
            self._inotify = None

    def scan(self) -> None:
        """Pick up files created before the watches were in place."""
        for d in self.dirs:
            with contextlib.suppress(OSError):
                for e in os.scandir(d):
                    if e.name.endswith(".ptx"):
                        self._seen(d, e.name, closed=False)

    def fileno(self) -> int | None:
        return self._inotify.fileno() if self._inotify is not None else None

    def poll(self, timeout: float = 0.0) -> list[Captured]:
        """Handle what happened in the watched directories; returns the files that became complete."""
        if self._inotify is None:
            if timeout:
                select.select([], [], [], timeout)
            self.scan()
            return []
        done = []
        from inotify_simple import flags

        for ev in self._inotify.read(timeout=int(timeout * 1000)):
            if not ev.name.endswith(".ptx"):
                continue
            captured = self._seen(self._dir_of.get(ev.wd, ""), ev.name, closed=not ev.mask & flags.CREATE)
            if captured is not None and captured.complete:
                done.append(captured)
        return done

    def finish(self) -> list[Captured]:
        """After nvcc exited: the captured files not reported complete yet (nvcc has closed them all)."""
        out = [c for c in self.files.values() if not c.complete and os.path.exists(c.path)]
        for c in out:
            self._completed(c)
        return out

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None

    def _ours(self, directory: str, name: str) -> str | None:
        """The source stem if ``directory/name`` is a PTX file of this build, else None."""
        if directory == self.keep_dir:
            stem = re.sub(r"(\.compute_\w+)?\.ptx$", "", name)
            return stem if stem in self.stems else None
        m = TMPXFT_PTX.match(name)
        if m is None or not descends_from(int(m.group("pid"), 16), self.root_pid):
            return None
        return m.group("stem")

    def _seen(self, directory: str, name: str, closed: bool) -> Captured | None:
        key = os.path.join(directory, name)
        captured = self.files.get(key)
        if captured is None:
            stem = self._ours(directory, name)
            if stem is None:
                return None
            captured = Captured(name, os.path.join(self.private, f"{len(self.files)}-{name}"), stem)
            with contextlib.suppress(OSError):  # another file system, or gone: copied when complete
                os.link(key, captured.path)
            self.files[key] = captured
        if closed and not captured.complete:
            if not os.path.exists(captured.path):
                import shutil

                try:
                    shutil.copyfile(key, captured.path)
                except OSError:
                    return None
            self._completed(captured)
        return captured

    @staticmethod
    def _completed(captured: Captured) -> None:
        captured.complete = True
        captured.target = ptx_target(captured.path)
