"""A run told to stop (SIGTERM, SIGINT) while ptxas works kills ptxas, removes its temporary files
(``ptxstatic-*/in.ptx``), in worker processes too, starts no other tool, and ends by the same signal without
a traceback."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.paths import DATA
from support.tools import fake_ptxas, process_gone

LOCAL_MEMORY = DATA / "check" / "local_memory.ptx"


def _started(pid_file: Path, count: int, within_s: float = 60.0) -> list[int]:
    """The pids of the first ``count`` fake ptxas processes, once that many have started."""
    deadline = time.monotonic() + within_s
    while True:
        pids = [int(p) for p in pid_file.read_text().split()] if pid_file.exists() else []
        if len(pids) >= count:
            return pids
        assert time.monotonic() < deadline, "the fake ptxas never started"
        time.sleep(0.05)


def _signals_act() -> None:
    """In the child: SIGINT acts, also where the tests run with it ignored (a background job), as in a shell."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize(("signum", "jobs"), [(signal.SIGTERM, 1), (signal.SIGTERM, 2), (signal.SIGINT, 2)])
def test_a_signal_while_ptxas_runs_leaves_nothing_behind(tmp_path: Path, signum: int, jobs: int):
    environment = fake_ptxas(tmp_path)
    files = []
    for i in range(jobs):  # one file per worker, each with its hanging ptxas
        (tmp_path / f"w{i}").mkdir()
        files.append(str(shutil.copy(LOCAL_MEMORY, tmp_path / f"w{i}" / "k.ptx")))
    proc = subprocess.Popen([sys.executable, "-m", "ptxstatic", "check", "--no-cache", "-j", str(jobs), *files],
                            env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            preexec_fn=_signals_act)
    try:
        pids = _started(Path(environment["FAKE_PTXAS_PID"]), jobs)
        assert len(list((tmp_path / "tmp").glob("ptxstatic-*/in.ptx"))) == jobs
        start = time.monotonic()
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert time.monotonic() - start < 10
    assert proc.returncode == -signum and "Traceback" not in err, err
    assert list((tmp_path / "tmp").iterdir()) == []
    assert all(process_gone(pid) for pid in pids)
    assert len(Path(environment["FAKE_PTXAS_PID"]).read_text().split()) == jobs  # no ptxas started after
