"""The header search directories of an nvcc command line, which decide what a system header is."""

from __future__ import annotations

from ptxstatic.toolchain.nvcc_command import include_dirs


def test_every_spelling_of_an_include_directory():
    args = ["-O3", "-I", "inc", "-Iother", "--include-path=/abs", "--include-path", "rel/x", "-isystem", "/sys",
            "--system-include=vendor", "-DNAME=-Inot", "-o", "out.ptx"]
    assert include_dirs(args, "/build") == (["/build/inc", "/build/other", "/abs", "/build/rel/x"],
                                            ["/sys", "/build/vendor"])


def test_a_trailing_option_without_its_value_names_nothing():
    assert include_dirs(["-I"], "/build") == ([], [])
