"""The hook's analysis server: one long-lived process that analyses the PTX of every compile of a build, so that
the interpreter's start, the imports, the parser's tables and the rules' caches are paid once per build
rather than once per compile, and a rebuild's unchanged PTX costs a cache lookup.

:mod:`.client` starts it (``python -m ptxstatic.hook.server LISTENER LOCK``) with a listening Unix-domain
socket and the lock that makes it the socket's only owner. Each compile is one connection, one thread: the
hook sends its command, working directory, process id and temporary directory (after the version handshake);
the server watches that directory for the PTX nvcc writes there (one inotify instance for every compile;
:class:`~.capture.Watcher`), answers, and the hook starts nvcc. The PTX is analysed as soon as nvcc has written
it, by one worker thread that runs the compiles' analyses (:class:`~.unit.UnitAnalysis`) in the order their
work arrives; when nvcc has finished the hook sends its status and receives the diagnostics.

The server stops when no compile has come for ``PTXSTATIC_SERVER_IDLE`` seconds
(:data:`~ptxstatic.limits.HOOK_SERVER_IDLE_S`), on SIGTERM, and when a hook of another version connects or
its own code has changed on disk (watched with inotify; it refuses that compile, and the hook starts a new
server). It gives the socket and the lock up first, then finishes the compiles under way.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import signal
import socket
import sys
import threading
import time

from ptxstatic.hook.capture import Intake, Watcher, private_dir, remove_dir
from ptxstatic.hook.client import PROTOCOL, Outcome, Session, identity
from ptxstatic.hook.unit import UnitAnalysis
from ptxstatic.limits import (
    HOOK_SERVER_IDLE_S,
    HOOK_SERVER_RESULT_S,
    HOOK_SERVER_SHAPES_S,
    HOOK_SERVER_WAKE_S,
    HOOK_WATCH_LINGER_S,
)
from ptxstatic.toolchain.nvcc_command import parse_command

#: seconds the watching thread lets the events of nvcc's file operations gather before it reads them: each
#: wake-up costs more than the events it reads, and a PTX file lives until nvcc ends, a second or more later
_GATHER_S = 0.1
#: seconds a new connection has to send its handshake
_HELLO_S = 10.0


def log(message: str) -> None:
    """A line in the server's log (its standard error)."""
    sys.stderr.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} [{os.getpid()}] {message}\n")
    sys.stderr.flush()


class Compile:
    """One compile the server serves: the PTX files it takes in and their analysis."""

    def __init__(self, unit: UnitAnalysis, intake: Intake) -> None:
        self.unit, self.intake = unit, intake
        self.outcome = Outcome()
        self.finished = threading.Event()
        self.cancelled = False  # the hook went away


class Server:
    """Serves compiles on ``listener`` while it holds ``lock`` (a file descriptor with the ``flock``)."""

    def __init__(self, listener: socket.socket, lock: int, idle: float) -> None:
        self.listener, self.lock, self.idle = listener, lock, idle
        self.path = listener.getsockname()
        self.identity = identity()
        self.watcher = Watcher(HOOK_WATCH_LINGER_S)
        self.watcher.watch_code(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self.jobs: queue.Queue[tuple[Compile, str, object]] = queue.Queue()
        self.compiles: dict[int, Compile] = {}  # by id of the intake
        self.stopping = threading.Event()
        self._mutex = threading.Lock()  # the watcher, the compiles, the listening state
        self._listening = True
        self._last_active = time.monotonic()

    # ------------------------------------------------------------------------------------- main thread

    def serve(self) -> None:
        """Accept compiles until told to stop or idle for too long; then finish the ones under way."""
        for target in (self._watch, self._work):
            threading.Thread(target=target, daemon=True).start()
        log(f"serving {self.path}")
        while not self.stopping.is_set():
            with self._mutex:  # wake when the server would have been idle for long enough, not before
                left = self.idle if self.compiles else self.idle - (time.monotonic() - self._last_active)
            if left <= 0:
                self.stop(f"no compile for {self.idle:g} s")
                break
            self.listener.settimeout(left)
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:  # no more connections to be had (out of file descriptors): stop serving
                break
            if self.stopping.is_set():  # stop()'s wake-up call, or a compile that came as it stopped (whose hook
                conn.close()  # then analyses in its own process)
                break
            conn.setblocking(True)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()
        self.stop("stopping")
        self.listener.close()
        deadline = time.monotonic() + HOOK_SERVER_RESULT_S
        while self.compiles and time.monotonic() < deadline:
            time.sleep(0.05)
        from ptxstatic.lint.cache import ResultCache

        ResultCache.default().prune()
        log("stopped")

    def stop(self, why: str) -> None:
        """Give up the socket's name and the lock (a new server may start at once) and end the accepting loop:
        a connection of its own wakes it (shutting the listening socket down instead leaves an accept with a
        timeout retrying at full speed until that timeout, up to the idle time)."""
        with self._mutex:
            if self._listening:
                self._listening = False
                log(f"stop: {why}")
                self.stopping.set()
                with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as wake:
                    wake.settimeout(HOOK_SERVER_WAKE_S)
                    wake.connect(self.path)
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
                os.close(self.lock)
        self.stopping.set()

    # ---------------------------------------------------------------------------------- one connection

    def _handle(self, conn: socket.socket) -> None:
        session = Session(conn)
        try:
            hello = session.receive(_HELLO_S)
            if hello is None:
                return
            why = self._refusal(hello)
            if why is not None:
                if why == "version":
                    self.stop("a hook of another version, or this server's code changed")
                session.send({"ok": False, "why": why})
                return
            self._serve_compile(session, hello)
        except Exception as exc:  # one bad compile must not take the server down
            log(f"internal error: {type(exc).__name__}: {exc}")
        finally:
            session.close()

    def _refusal(self, hello: dict) -> str | None:
        if hello.get("protocol") != PROTOCOL or hello.get("identity") != self.identity:
            return "version"
        with self._mutex:
            self._dispatch(self.watcher.read())  # whatever happened to the code until now
            changed = self.watcher.code_changed
        if changed:
            return "version"
        if not self._listening:
            return "stopping"
        return None

    def _serve_compile(self, session: Session, hello: dict) -> None:
        cmd = parse_command(hello["argv"], hello["cwd"])
        if not cmd.analysed:
            session.send({"ok": False, "why": "not analysed"})
            return
        try:
            compile_ = self._register(cmd, hello)
        except OSError as exc:  # a temporary directory that cannot be watched or written to
            session.send({"ok": False, "why": str(exc)})
            return
        try:
            if not session.send({"ok": True, "dir": compile_.intake.private}):
                return
            message = session.receive(None)  # when nvcc has finished
            if message is None or not isinstance(message.get("status"), int):
                return
            session.send({"ok": True, **self._finish(compile_, message["status"]).to_message()})
        finally:
            self._unregister(compile_)

    def _register(self, cmd, hello: dict) -> Compile:
        temp_dir = hello["tmpdir"]
        stems = tuple(os.path.splitext(os.path.basename(i))[0] for i in cmd.inputs)
        intake = Intake(private_dir(temp_dir), cmd.keep_dir, stems, temp_dir, int(hello["pid"]))
        compile_ = Compile(UnitAnalysis(cmd, hello["cwd"], bool(hello["strict"]), flush_shapes=False), intake)
        with self._mutex:
            try:
                self.watcher.add(intake)
            except OSError:
                remove_dir(intake.private)
                raise
            self.compiles[id(intake)] = compile_
            self._last_active = time.monotonic()
        self.jobs.put((compile_, "prepare", None))
        return compile_

    def _finish(self, compile_: Compile, status: int) -> Outcome:
        """nvcc has finished: the files it closed last, then the outcome once the worker has it."""
        with self._mutex:
            self._dispatch(self.watcher.read())
            last = compile_.intake.finish()
        for captured in last:
            self.jobs.put((compile_, "offer", captured))
        self.jobs.put((compile_, "finish", status))
        compile_.finished.wait()
        return compile_.outcome

    def _unregister(self, compile_: Compile) -> None:
        compile_.cancelled = True
        with self._mutex:
            self.watcher.discard(compile_.intake, time.monotonic())
            self.compiles.pop(id(compile_.intake), None)
            self._last_active = time.monotonic()
        remove_dir(compile_.intake.private)

    # -------------------------------------------------------------------------------- watcher, worker

    def _watch(self) -> None:
        """Link each PTX file of a compile as nvcc creates it, and hand it to the worker when it is closed."""
        while True:
            if select.select([self.watcher.fileno()], [], [], HOOK_WATCH_LINGER_S)[0]:
                time.sleep(_GATHER_S)
            with self._mutex:
                self._dispatch(self.watcher.read())
                self.watcher.drop_unused(time.monotonic())

    def _dispatch(self, done: list) -> None:
        for intake, captured in done:
            compile_ = self.compiles.get(id(intake))
            if compile_ is not None:
                self.jobs.put((compile_, "offer", captured))

    def _work(self) -> None:
        """Run the compiles' analyses, one step at a time, in the order the steps came; write the statement shapes
        the parser has learnt to disk when no step has come for a while (rewriting the file after every compile
        costs more than parsing with it)."""
        flushed = time.monotonic()
        while True:
            try:
                compile_, step, arg = self.jobs.get(timeout=HOOK_SERVER_SHAPES_S)
            except queue.Empty:
                flushed = self._flush_shapes()
                continue
            try:
                if step == "finish":
                    compile_.outcome = compile_.unit.finish(arg)
                elif compile_.cancelled:
                    continue
                elif step == "prepare":
                    compile_.unit.prepare()
                else:
                    compile_.unit.offer(arg)
            except Exception as exc:  # UnitAnalysis catches the analysis's errors; this is a last resort
                log(f"internal error: {type(exc).__name__}: {exc}")
            finally:
                if step == "finish":
                    compile_.finished.set()
            if self.jobs.empty() and time.monotonic() - flushed >= HOOK_SERVER_SHAPES_S:
                flushed = self._flush_shapes()

    @staticmethod
    def _flush_shapes() -> float:
        """Write the parser's new statement shapes to the on-disk cache (when it has parsed); returns the time."""
        parser = sys.modules.get("ptxstatic.ptx.parser")
        if parser is not None:
            parser.flush_shape_cache()
        return time.monotonic()


def main() -> None:
    """``python -m ptxstatic.hook.server LISTENER LOCK`` (file descriptors passed by :mod:`.client`)."""
    listener = socket.socket(fileno=int(sys.argv[1]))
    lock = int(sys.argv[2])
    idle = float(os.environ.get("PTXSTATIC_SERVER_IDLE") or HOOK_SERVER_IDLE_S)
    os.chdir("/")  # every path comes with its compile; keep no directory busy
    os.ftruncate(lock, 0)
    os.pwrite(lock, f"{os.getpid()}\n".encode(), 0)  # who holds the lock, for people and tools
    server = Server(listener, lock, idle)
    # stop() takes the lock the accepting loop may hold: run it in a thread of its own
    signal.signal(signal.SIGTERM, lambda _sig, _frame: threading.Thread(target=server.stop, args=("SIGTERM",)).start())
    server.serve()
    sys.stderr.flush()
    os._exit(0)  # daemon threads may be blocked in select or a queue: end without joining them


if __name__ == "__main__":
    main()
