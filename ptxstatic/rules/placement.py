"""Where a finding is shown: in code the user can change, at a line that exists.

As compilers do with warnings, findings in **system headers** are not reported at the header: a finding whose
``.cu`` position is in one moves to the first call site in the user's code it was inlined through, and is
dropped when it has none (``report-system-headers = true`` in the configuration keeps them where they are). A
system header is one under the CUDA toolkit (``places.TOOLKIT_HEADER``, or a toolkit found by its
``include/cuda_runtime.h``), under a system include directory (``/usr/include``, ``/usr/local/include``, the
C++ compilers' own directories), under an ``-isystem`` directory of the compilation, or, for a CUDA file
compiled in a project with a configuration file, a file outside the project's directory and outside the
compilation's ``-I`` directories, working directory and the checked file's own directory.

A finding whose ``.cu`` file does not exist (a ``.ptx`` file whose sources are elsewhere) is shown at its
first call site whose file does, else at its PTX line, with a note naming the missing file (its notes keep
their ``.cu`` lines). The notes of a finding moved out of a system header lose those in system headers and
gain one naming the header's line.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import shutil
from collections.abc import Sequence
from functools import cache

from ptxstatic.config import Config
from ptxstatic.findings import Finding, Note
from ptxstatic.rules.places import TOOLKIT_HEADER

#: directories whose headers are the system's (glob patterns), as gcc and clang search them
SYSTEM_INCLUDE_PATTERNS = ("/usr/include", "/usr/local/include", "/usr/lib/gcc", "/usr/lib64/gcc",
                           "/usr/lib/clang", "/usr/lib/llvm-*", "/usr/lib64/clang", "/opt/rh/*/root/usr")
#: where CUDA toolkits are installed when neither nvcc on the PATH nor the environment says
_TOOLKIT_PLACES = ("/usr/local/cuda", "/usr/local/cuda-*", "/opt/cuda", "/opt/nvidia/hpc_sdk/*/*/cuda/*")


@cache
def system_directories() -> tuple[str, ...]:
    """The system include directories and the CUDA toolkits of this machine, each as written and resolved."""
    found = [p for pattern in SYSTEM_INCLUDE_PATTERNS for p in glob.glob(pattern)]
    nvcc = shutil.which("nvcc")
    roots = [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""),
             os.path.dirname(os.path.dirname(nvcc)) if nvcc else ""]
    roots += [p for pattern in _TOOLKIT_PLACES for p in glob.glob(pattern)]
    found += [r for r in roots if r and (glob.glob(os.path.join(r, "include", "cuda_runtime.h"))
                                         or glob.glob(os.path.join(r, "targets", "*", "include", "cuda_runtime.h")))]
    return tuple(dict.fromkeys(d for p in found for d in (os.path.normpath(p), os.path.realpath(p))))


def _under(path: str, directories: Sequence[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip(os.sep) + os.sep) for d in directories)


class Placement:
    """Moves findings out of system headers and missing files, for one module under one configuration.

    ``include_dirs`` and ``system_dirs`` are the compilation's ``-I`` and ``-isystem`` directories, and
    ``work_dir`` the directory it ran in (all absolute); ``include_dirs`` is None where the compilation is not
    known (a ``.ptx`` file), and then no header is judged by being outside the project."""

    def __init__(self, config: Config, include_dirs: Sequence[str] | None = None, system_dirs: Sequence[str] = (),
                 work_dir: str | None = None) -> None:
        self.keep_system = config.report_system_headers
        self.system = (*system_directories(), *(os.path.realpath(d) for d in system_dirs))
        root = config.root
        self.user = None if root is None or include_dirs is None else tuple(
            os.path.realpath(d) for d in (str(root), *include_dirs, *([work_dir] if work_dir else [])))
        self._exists: dict[str, bool] = {}

    def is_system(self, file: str) -> bool:
        """Whether ``file`` (an absolute ``.file`` path, or one relative to the current directory) is a system
        header."""
        path = os.path.abspath(file)
        if TOOLKIT_HEADER.search(path.replace("\\", "/")) or _under(path, self.system):
            return True
        real = os.path.realpath(path)
        if _under(real, self.system):
            return True
        return self.user is not None and not _under(real, self.user) and self.exists(path)

    def exists(self, file: str) -> bool:
        if file not in self._exists:
            self._exists[file] = os.path.isfile(file)
        return self._exists[file]

    def place(self, finding: Finding) -> Finding | None:
        """``finding`` shown where the user can act on it, or None for one only in system headers."""
        if finding.source is None:
            return finding
        chain = (finding.source, *finding.inlined_at)
        notes = finding.notes
        if not self.keep_system and self.is_system(finding.source.file):
            user = [i for i, loc in enumerate(chain) if not self.is_system(loc.file)]
            if not user:
                return None
            inner = chain[user[0] - 1]
            notes = (Note(f"the code is in a system header ({inner}), inlined here"),
                     *(n for n in notes if n.location is None or not self.is_system(n.location.file)))
            chain = chain[user[0]:]
        kept = next((i for i, loc in enumerate(chain) if self.exists(loc.file)), None)
        if kept != 0:
            where = "its PTX line" if kept is None else "the first call site whose file exists"
            notes = (*notes, Note(f"source file {chain[0].file} not found: shown at {where}"))
        if kept is None:
            return dataclasses.replace(finding, source=None, inlined_at=(), notes=notes)
        return dataclasses.replace(finding, source=chain[kept], inlined_at=chain[kept + 1:], notes=notes)

