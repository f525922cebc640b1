"""Catching the PTX that nvcc writes, without changing nvcc's command line or environment.

nvcc writes its intermediate files to ``$TMPDIR`` (``/tmp``) as ``tmpxft_PPPPPPPP_00000000-N_STEM.ptx``
(``PPPPPPPP`` is the hex process id of the nvcc driver), runs ptxas, fatbinary and the host compiler, and
deletes them when it exits; with ``--keep`` it writes ``STEM.ptx`` to the keep directory instead and leaves
it there. A watch on those directories (inotify on Linux, else polling) hard-links each PTX file of a build
step (its process id belongs to the step's process or one of its descendants, so parallel builds do not mix)
into a private directory as soon as it is created, so nvcc's clean-up does not take it away, and reports it
complete when nvcc closes it: analysis can start while nvcc is still assembling and compiling host code.
Adding ``--keep``/``--keep-dir`` to the command instead would change the names nvcc embeds in the object file.
The cubins ptxas makes of that PTX (``tmpxft_PPPPPPPP_00000000-N_STEM[.compute_NN].sm_NN.cubin``) are taken in
the same way: what ptxas made of a PTX file is read from them rather than assembled again
(:mod:`ptxstatic.toolchain.cubin`).

:class:`Intake` is what one build step's files are; :class:`PtxCapture` watches for one step (the hook
analysing in its own process), :class:`Watcher` for the steps of every build the analysis server serves.
"""

from __future__ import annotations

import contextlib
import os
import re
import select

#: nvcc's temporary files the hook takes in: PTX, and the cubins ptxas makes of it (``sass``: their architecture)
TMPXFT = re.compile(r"^tmpxft_(?P<pid>[0-9a-f]{8})_[0-9a-f]{8}-\d+_(?P<base>(?P<stem>.+?)(?:\.compute_\w+)?)"
                    r"(?:\.ptx|\.(?P<sass>sm_\w+)\.cubin)$")
#: the same files under their ``--keep`` names
KEPT = re.compile(r"^(?P<base>(?P<stem>.+?)(?:\.compute_\w+)?)(?:\.ptx|\.(?P<sass>sm_\w+)\.cubin)$")
_SUFFIXES = (".ptx", ".cubin")


def nvcc_temp_dir() -> str:
    """The directory nvcc writes its temporary files to."""
    return os.environ.get("TMPDIR") or "/tmp"


def private_dir(temp_dir: str) -> str:
    """A new directory for captured PTX, beside nvcc's temporary files (so that hard links work)."""
    path = os.path.join(temp_dir, f"ptxstatic-hook-{os.getpid()}-{os.urandom(4).hex()}")
    os.mkdir(path, 0o700)
    return path


def remove_dir(directory: str) -> None:
    """Remove a private directory and the files in it (quietly: it may be gone)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(directory):
            os.unlink(entry.path)
        os.rmdir(directory)


class Captured:
    """One PTX file of the build, or a cubin ptxas made of one: nvcc's name for it, our link to it (or copy), its
    source's stem, and ``origin``, the same for a PTX file and the cubins made of it."""

    def __init__(self, name: str, path: str, stem: str, origin: str = "", sass: str | None = None) -> None:
        self.name = name
        self.path = path
        self.stem = stem
        self.origin = origin
        self.sass = sass  # a cubin's architecture (``sm_90``); None for PTX
        self.complete = False
        self.target: str | None = None  # a PTX file's ``.target`` (``sm_90a``), read when it is complete


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


def captured_in(directory: str) -> list[Captured]:
    """The complete PTX files an intake left in its private directory (an analysis server that stopped)."""
    out = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.scandir(directory), key=lambda e: e.name):
            m = TMPXFT.match(entry.name.split("-", 1)[-1])
            if m is not None and m.group("sass") is None:
                captured = Captured(entry.name, entry.path, m.group("stem"))
                captured.complete, captured.target = True, ptx_target(entry.path)
                out.append(captured)
    return out


class Intake:
    """The PTX files of one build step: those in ``temp_dir`` named by a descendant of ``root_pid``, and those
    of its ``stems`` in ``keep_dir``, linked into ``private`` as they appear."""

    def __init__(self, private: str, keep_dir: str | None = None, stems: tuple[str, ...] = (),
                 temp_dir: str | None = None, root_pid: int = -1) -> None:
        self.private = private
        self.root_pid = root_pid
        self.dirs = [temp_dir or nvcc_temp_dir()] + ([keep_dir] if keep_dir else [])
        self.keep_dir = keep_dir
        self.stems = stems
        self.files: dict[str, Captured] = {}  # by "dir/name"

    def scan(self) -> None:
        """Pick up files created before the watches were in place."""
        for d in self.dirs:
            with contextlib.suppress(OSError):
                for e in os.scandir(d):
                    if e.name.endswith(_SUFFIXES):
                        self.seen(d, e.name, closed=False)

    def finish(self) -> list[Captured]:
        """After nvcc exited: the captured files not reported complete yet (nvcc has closed them all)."""
        out = [c for c in self.files.values() if not c.complete and os.path.exists(c.path)]
        for c in out:
            _completed(c)
        return out

    def ours(self, directory: str, name: str) -> re.Match | None:
        """The match of ``directory/name``'s name if it is a PTX file or cubin of this build step, else None."""
        if directory == self.keep_dir:
            m = KEPT.match(name)
            return m if m is not None and m.group("stem") in self.stems else None
        m = TMPXFT.match(name)
        if m is None or not descends_from(int(m.group("pid"), 16), self.root_pid):
            return None
        return m

    def seen(self, directory: str, name: str, closed: bool) -> Captured | None:
        """Note that ``directory/name`` was created (``closed``: written and closed); the file if it is ours."""
        key = os.path.join(directory, name)
        captured = self.files.get(key)
        if captured is None:
            m = self.ours(directory, name)
            if m is None:
                return None
            origin = f"{directory}/{m.groupdict().get('pid') or ''}/{m.group('base')}"
            captured = Captured(name, os.path.join(self.private, f"{len(self.files)}-{name}"), m.group("stem"),
                                origin, m.group("sass"))
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
            _completed(captured)
        return captured


def _completed(captured: Captured) -> None:
    captured.complete = True
    if captured.sass is None:
        captured.target = ptx_target(captured.path)


def _inotify(nonblocking: bool = False):  # -> inotify_simple.INotify
    """A new inotify instance (``ImportError``/``OSError`` where there is none)."""
    import ctypes

    import inotify_simple

    # the C library is part of this process already: give it to inotify_simple rather than let it look for it
    # with ctypes.util.find_library, which runs ``ldconfig -p`` beside the build
    inotify_simple._libc = inotify_simple._libc or ctypes.CDLL(None, use_errno=True)
    return inotify_simple.INotify(nonblocking=nonblocking)


def _watched_flags() -> int:
    from inotify_simple import flags

    return flags.CREATE | flags.CLOSE_WRITE | flags.MOVED_TO


def _is_create(mask: int) -> bool:
    from inotify_simple import flags

    return bool(mask & flags.CREATE)


class PtxCapture(Intake):
    """Watches nvcc's temporary directory (and the ``--keep`` directory) for the PTX files of one build step."""

    def __init__(self, private: str, keep_dir: str | None = None, stems: tuple[str, ...] = ()) -> None:
        super().__init__(private, keep_dir, stems)
        self._inotify = None
        self._dir_of: dict[int, str] = {}

    def start(self) -> None:
        """Set the watches up (before nvcc starts, so that no file is missed)."""
        try:
            ino = _inotify()
            for d in self.dirs:
                self._dir_of[ino.add_watch(d, _watched_flags())] = d
            self._inotify = ino
        except (ImportError, OSError):  # no inotify here: poll the directories instead
            self._inotify = None

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
        for ev in self._inotify.read(timeout=int(timeout * 1000)):
            if not ev.name.endswith(_SUFFIXES):
                continue
            captured = self.seen(self._dir_of.get(ev.wd, ""), ev.name, closed=not _is_create(ev.mask))
            if captured is not None and captured.complete:
                done.append(captured)
        return done

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None


#: the files of ptxstatic's code (as ``lint.cache.code_stamp`` counts them)
_CODE_SUFFIXES = (".py", ".md", ".lark")


class Watcher:
    """One inotify instance watching the directories of many build steps' intakes (the analysis server's), and
    the server's own code.

    A directory is watched while an intake needs it, and for ``linger`` seconds after the last one is done, so
    that the watches of a build's steps are set up once: adding or removing a watch on a busy ``/tmp`` costs
    the kernel a walk over its entries. A change to a file of the code (``watch_code``) sets ``code_changed``.
    """

    def __init__(self, linger: float) -> None:
        self._inotify = _inotify(nonblocking=True)
        self.linger = linger
        self.code_changed = False
        self._code: set[int] = set()  # the watches on the code's directories
        self._wd: dict[str, int] = {}  # directory -> watch
        self._dir_of: dict[int, str] = {}
        self._intakes: dict[str, list[Intake]] = {}  # directory -> the intakes watching it
        self._unused_since: dict[str, float] = {}

    def fileno(self) -> int:
        return self._inotify.fileno()

    def watch_code(self, package: str) -> None:
        """Watch every directory of the package at ``package`` for its files being written, added, removed or
        replaced (an upgrade in place, an edit of an editable install)."""
        from inotify_simple import flags

        mask = flags.CLOSE_WRITE | flags.MOVED_TO | flags.MOVED_FROM | flags.CREATE | flags.DELETE | flags.ATTRIB
        for root, dirs, _files in os.walk(package):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            self._code.add(self._inotify.add_watch(root, mask))

    def add(self, intake: Intake) -> None:
        """Watch ``intake``'s directories (``OSError`` if one cannot be watched). Its compiler has not started
        yet, so nothing of it is there to scan for."""
        for d in intake.dirs:
            if d not in self._wd:
                wd = self._inotify.add_watch(d, _watched_flags())
                self._wd[d], self._dir_of[wd] = wd, d
            self._intakes.setdefault(d, []).append(intake)
            self._unused_since.pop(d, None)

    def discard(self, intake: Intake, now: float) -> None:
        """Stop taking files in for ``intake``."""
        for d in intake.dirs:
            users = self._intakes.get(d, [])
            if intake in users:
                users.remove(intake)
            if not users:
                self._unused_since[d] = now

    def read(self) -> list[tuple[Intake, Captured]]:
        """Handle the events that are there (without waiting); returns the files that became complete, with
        their intakes. The events are read raw (``inotify_simple.INotify.read`` would poll first, and the
        server's watching thread has just waited for them)."""
        from inotify_simple import parse_events

        done = []
        for ev in parse_events(self._drain()):
            if ev.wd in self._code:
                self.code_changed |= ev.name.endswith(_CODE_SUFFIXES)
                continue
            if not ev.name.endswith(_SUFFIXES):
                continue
            directory = self._dir_of.get(ev.wd, "")
            for intake in self._intakes.get(directory, ()):
                captured = intake.seen(directory, ev.name, closed=not _is_create(ev.mask))
                if captured is not None and captured.complete:
                    done.append((intake, captured))
        return done

    def _drain(self) -> bytes:
        data = b""
        while True:
            try:
                chunk = os.read(self._inotify.fileno(), 65536)
            except BlockingIOError:
                return data
            if not chunk:
                return data
            data += chunk

    def drop_unused(self, now: float) -> None:
        """Remove the watches no intake has needed for ``linger`` seconds."""
        for d, since in list(self._unused_since.items()):
            if now - since >= self.linger:
                with contextlib.suppress(OSError):
                    self._inotify.rm_watch(self._wd[d])
                del self._dir_of[self._wd.pop(d)], self._unused_since[d]
                self._intakes.pop(d, None)

    def close(self) -> None:
        self._inotify.close()
