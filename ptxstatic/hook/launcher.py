"""The ``ptxstatic-nvcc`` console script: ``ptxstatic-nvcc [--strict] [--] nvcc ARGS...``.

It is a compiler launcher (CMake's ``CMAKE_CUDA_COMPILER_LAUNCHER``, ``NVCC = ptxstatic-nvcc nvcc`` in a
Makefile): everything after its own options is the compiler command, run unchanged. It imports only what
running nvcc needs before nvcc starts; ``PTXSTATIC_DISABLE=1`` makes it exec the command directly.
"""

from __future__ import annotations

import os
import sys

USAGE = """usage: ptxstatic-nvcc [--strict] [--] COMPILER [ARGS...]

Runs the compiler command unchanged and analyses the PTX of the CUDA it compiles; findings are printed
on stderr as compiler warnings. The exit status is the compiler's.

  --strict   fail a step that compiled (status 1) when findings reach the configured fail-on
             severity or the analysis fails (also PTXSTATIC_STRICT=1)

PTXSTATIC_DISABLE=1 runs the compiler command and nothing else.
"""


def split_options(args: list[str]) -> tuple[bool, list[str]]:
    """(strict, compiler command) from the script's arguments."""
    strict = os.environ.get("PTXSTATIC_STRICT", "") not in ("", "0")
    i = 0
    while i < len(args) and args[i].startswith("--"):
        if args[i] == "--":
            i += 1
            break
        if args[i] == "--strict":
            strict = True
        elif args[i] == "--help":
            sys.stdout.write(USAGE)
            sys.exit(0)
        else:
            sys.stderr.write(f"ptxstatic-nvcc: error: unknown option {args[i]}\n{USAGE}")
            sys.exit(2)
        i += 1
    return strict, args[i:]


def main() -> None:
    strict, command = split_options(sys.argv[1:])
    from ptxstatic.hook.build_step import exit_like, run_hook

    exit_like(run_hook(command, strict), fast=True)


if __name__ == "__main__":
    main()
