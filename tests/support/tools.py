"""Tools that misbehave, for the tests of the bounds on external tools: a ``ptxas`` that hangs, and whether a
process has ended."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

from support.check import env


def process_gone(pid: int, within_s: float = 5.0) -> bool:
    """Whether process ``pid`` has ended (and been reaped, or is a zombie) within ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


FAKE_PTXAS = """\
    #!/bin/sh
    # a ptxas that answers --version and --help, then hangs on any PTX (its pid added to $FAKE_PTXAS_PID)
    case "$1" in
      --version) echo "ptxas: fake 1.0"; exit 0;;
      --help) echo "Allowed values for this option:  'sm_80','sm_90'"; exit 0;;
    esac
    echo $$ >> "$FAKE_PTXAS_PID"
    exec sleep 300
"""


def fake_ptxas(tmp_path: Path) -> dict[str, str]:
    """An environment whose PATH finds a ptxas that hangs, with this checkout, a private cache and a private
    temporary directory (``tmp_path / "tmp"``)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "ptxas").write_text(textwrap.dedent(FAKE_PTXAS))
    (bin_dir / "ptxas").chmod(0o755)
    (tmp_path / "tmp").mkdir()
    return env(tmp_path, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", FAKE_PTXAS_PID=str(tmp_path / "ptxas.pid"),
               TMPDIR=str(tmp_path / "tmp"))
