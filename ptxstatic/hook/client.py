"""The hook's side of the analysis server: find the server of this build, start it when there is none, register
one compile with it, and read its findings.

One server serves one user's builds of one build tree with one installation of ptxstatic and one ``PATH``
(the tools it runs): its Unix-domain socket is named by a hash of those in the user cache directory
(``hook-server/KEY.sock``, beside ``KEY.lock`` and the server's log ``KEY.log``). The build tree is the
directory of the configuration that applies to the compiled file, else the compile's working directory.
A hook that finds no server takes the lock (an ``flock``, which the server holds for as long as it owns the
socket: two servers never serve one socket), removes a socket left by a server that died, binds and listens
on a new one and starts the server with it (``python -m ptxstatic.hook.server``), in a session of its own, its
output to the log: the compile connects at once, and the server answers as soon as it has started. The first
message is a version handshake: a server of another protocol or of other code refuses and shuts down, and the
hook analyses in its own process. Every failure here gives None (analyse in-process); nothing raises.

Only a few modules of the standard library are imported here, none that imports ``re``, ``enum`` or
``collections`` (``json``, ``contextlib``, ``signal``): the hook pays them on every compile. The messages are
``marshal``'s (a length, then the dict), between a hook and a server of the same installation.
"""

from __future__ import annotations

import marshal
import os
import select
import sys
import time

try:  # the socket module's start (its flag enums) costs about 4 ms of CPU on every compile: its C core is enough
    import _socket as socket
except ImportError:  # pragma: no cover - an interpreter without it
    import socket  # type: ignore[no-redef]

from ptxstatic.limits import HOOK_SERVER_ACCEPT_S

#: the messages' format: a server refuses a hook of another
PROTOCOL = 2
#: the largest message either side accepts (the findings of one compile are far smaller)
_MAX_MESSAGE = 1 << 26
#: the hook's own modules whose change makes a running server refuse (the server checks all of its code too)
_MODULES = ("client.py", "server.py", "unit.py", "capture.py")
#: the longest path of a Unix-domain socket (108 bytes on Linux, less elsewhere)
_MAX_SOCKET_PATH = 100


class Outcome:
    """What the analysis of a compile has to say once nvcc is done: diagnostics then notes, ready for stderr;
    how many findings reach the configured ``fail-on``; the analysis's own problems (each also in the text).
    It is also the server's last message (a plain class: ``dataclasses`` costs an import on every compile)."""

    def __init__(self, text: str = "", findings_at_fail_level: int = 0, failures: list[str] | None = None) -> None:
        self.text = text
        self.findings_at_fail_level = findings_at_fail_level
        self.failures = failures if failures is not None else []

    def to_message(self) -> dict:
        return {"text": self.text, "fail": self.findings_at_fail_level, "failures": self.failures}

    @classmethod
    def from_message(cls, message: dict) -> Outcome | None:
        """The outcome in a server's message, None if it holds none."""
        try:
            return cls(str(message["text"]), int(message["fail"]), [str(f) for f in message["failures"]])
        except (KeyError, TypeError, ValueError):
            return None


def enabled() -> bool:
    """``PTXSTATIC_SERVER`` set to 0 turns the server off; so does caching being off (it lives in the cache)."""
    return os.environ.get("PTXSTATIC_SERVER", "") != "0" and not os.environ.get("PTXSTATIC_NO_CACHE")


def identity() -> str:
    """This installation of the hook: the protocol, the package's place and its modules' sizes and times."""
    here = os.path.dirname(os.path.abspath(__file__))
    parts = [str(PROTOCOL), here]
    for name in _MODULES:
        st = os.stat(os.path.join(here, name))
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return " ".join(parts)


class Address:
    """Where the server of a build lives: its socket, lock file and log."""

    def __init__(self, directory: str, key: str) -> None:
        self.directory = directory
        self.lock = os.path.join(directory, f"{key}.lock")
        self.log = os.path.join(directory, f"{key}.log")
        self.socket = os.path.join(directory, f"{key}.sock")
        if len(self.socket.encode()) > _MAX_SOCKET_PATH:  # a deep cache directory: a short private one
            self.socket = os.path.join(_runtime_dir(), f"ptxstatic-{key}.sock")


def _runtime_dir() -> str:
    """``$XDG_RUNTIME_DIR``, else ``/tmp/ptxstatic-UID`` (made private to the user; refused if it is not)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return runtime
    path = f"/tmp/ptxstatic-{os.getuid()}"
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        st = os.lstat(path)
        if st.st_uid != os.getuid() or st.st_mode & 0o777 != 0o700 or not os.path.isdir(path) or os.path.islink(path):
            raise OSError(f"{path} is not a private directory of this user") from None
    return path


def address(cache_dir: str, tree: str) -> Address:
    """The server of builds of ``tree`` with this installation, interpreter and ``PATH``."""
    import zlib  # a name, not a secret: two checksums (hashlib's OpenSSL would cost 3 ms on every compile)

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts = (str(PROTOCOL), os.uname().nodename, str(os.getuid()), os.path.realpath(cache_dir),
             os.path.realpath(tree), package, sys.executable, os.environ.get("PATH", ""))
    data = "\0".join(parts).encode()
    return Address(os.path.join(cache_dir, "hook-server"), f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}")


class Session:
    """One compile registered with the server: messages over the socket, each a 4-byte length and a dict in
    ``marshal``'s format."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.private: str | None = None  # where the server links this compile's PTX
        self.broken = False  # the other side closed the connection, or it failed
        self._buffer = b""

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, message: dict) -> bool:
        data = marshal.dumps(message)
        try:
            self.sock.sendall(len(data).to_bytes(4, "big") + data)
            return True
        except OSError:
            return False

    def receive(self, timeout: float | None) -> dict | None:
        """The next message, or None when the server closed the connection, broke it, sent something else than
        a message or nothing in ``timeout`` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        size = None
        while size is None or len(self._buffer) < 4 + size:
            if size is None and len(self._buffer) >= 4:
                size = int.from_bytes(self._buffer[:4], "big")
                if size > _MAX_MESSAGE:
                    self.broken = True
                    return None
                continue
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                if not select.select([self.sock], [], [], left)[0]:
                    return None
                chunk = self.sock.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                self.broken = True
                return None
            self._buffer += chunk
        data, self._buffer = self._buffer[4:4 + size], self._buffer[4 + size:]
        try:
            message = marshal.loads(data)
        except (EOFError, ValueError, TypeError):
            return None
        return message if isinstance(message, dict) else None

    def close(self) -> None:
        self.sock.close()


def open_session(argv: list[str], cwd: str, strict: bool, config: str | None, cache_dir: str) -> Session | None:
    """Register the compile ``argv`` (run in ``cwd``; ``config``: its configuration file) with the server of
    its build, starting one if need be; None when no server accepts it within
    :data:`~ptxstatic.limits.HOOK_SERVER_ACCEPT_S`."""
    try:
        where = address(cache_dir, os.path.dirname(config) if config else cwd)
        request = {"protocol": PROTOCOL, "identity": identity(), "argv": argv, "cwd": cwd, "strict": strict,
                   "pid": os.getpid(), "tmpdir": os.environ.get("TMPDIR") or "/tmp"}
    except OSError:
        return None
    for _attempt in range(2):  # a second time after a server that is shutting down (or refused us and is) or died
        sock = _connect(where.socket) or _start(where)
        if sock is None:
            return None
        session = Session(sock)
        reply = session.receive(HOOK_SERVER_ACCEPT_S) if session.send(request) else None
        if reply is not None and reply.get("ok"):
            session.private = reply.get("dir")
            return session
        session.close()
        if reply is not None and reply.get("why") not in ("version", "stopping"):
            return None
    return None


def _connect(path: str) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        return sock
    except OSError:  # no socket, or one that no server listens on any more
        sock.close()
        return None


def _start(where: Address) -> socket.socket | None:
    """Start a server for ``where`` (unless another hook is starting one) and connect to it."""
    import fcntl

    try:
        os.makedirs(where.directory, 0o700, exist_ok=True)
        lock = os.open(where.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # another hook is starting the server, or one is shutting down: try its socket a while
            return _connect_soon(where.socket)
        listener = _listener(where.socket)
        try:
            _spawn_server(where, listener.fileno(), lock)
        finally:
            listener.close()
        return _connect(where.socket)
    except OSError:
        return None
    finally:
        os.close(lock)


def _connect_soon(path: str, tries: int = 20, pause: float = 0.01) -> socket.socket | None:
    for _ in range(tries):
        sock = _connect(path)
        if sock is not None:
            return sock
        time.sleep(pause)
    return None


def _listener(path: str) -> socket.socket:
    """A listening socket at ``path`` (a socket left there by a server that died is removed first: whoever
    holds the lock owns the path)."""
    try:  # noqa: SIM105 - no contextlib: it imports collections, on every compile
        os.unlink(path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
        os.chmod(path, 0o600)
        listener.listen(256)
    except OSError:
        listener.close()
        raise
    return listener


def _spawn_server(where: Address, listener: int, lock: int) -> None:
    """Start ``python -m ptxstatic.hook.server LISTENER LOCK`` detached from the build: a session of its own
    (the build's Ctrl-C does not reach it), no terminal, its output to its log, no other descriptor of ours
    (a build tool waits for the end of the pipes its steps write to)."""
    import subprocess

    with open(where.log, "ab") as log:
        subprocess.Popen([sys.executable, "-m", "ptxstatic.hook.server", str(listener), str(lock)],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(listener, lock),
                         start_new_session=True)
