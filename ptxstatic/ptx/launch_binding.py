"""A launch resolved once per request: the kernel found by the name a user typed (PTX or C++, see
:mod:`ptxstatic.ptx.kernels`), the launch checked against CUDA's limits, and its arguments bound to the
kernel's parameters (by PTX name, index or C++ name, each value checked against its parameter's type:
:mod:`ptxstatic.ptx.params`). Everything that runs or estimates a launch takes the :class:`BoundLaunch` and
never binds again."""

from __future__ import annotations

from dataclasses import dataclass

from ptxstatic.errors import PtxstaticError
from ptxstatic.launch import Launch
from ptxstatic.ptx.ast import Function, Module
from ptxstatic.ptx.cxx_params import cxx_param_names
from ptxstatic.ptx.kernels import find_kernel
from ptxstatic.ptx.params import bind_args


@dataclass(frozen=True)
class BoundLaunch:
    """A kernel of a module and a valid launch of it whose arguments are keyed by PTX parameter name."""

    module: Module
    kernel: Function
    launch: Launch

    @property
    def name(self) -> str:
        return self.kernel.name


def bind_present(module: Module, kernel: Function, args: dict) -> tuple[dict, list[str]]:
    """The arguments among ``args`` that name a parameter of ``kernel`` (by PTX name, index or C++ name),
    keyed by PTX name and checked, and the messages for the others (a launch of a configuration given for
    every kernel of a file names parameters some kernels do not have)."""
    out: dict = {}
    skipped: list[str] = []
    for key, value in args.items():
        try:
            out.update(bind_args(kernel, {key: value}, lambda: cxx_param_names(module, kernel)))
        except PtxstaticError as exc:
            skipped.append(str(exc))
    return out, skipped


def bind(module: Module, kernel: str | Function, launch: Launch) -> BoundLaunch:
    """Resolve ``kernel`` (a name a user typed, or the function), validate ``launch`` and bind its arguments;
    a :class:`~ptxstatic.errors.PtxstaticError` that says what is wrong otherwise."""
    fn = kernel if isinstance(kernel, Function) else find_kernel(module, kernel)
    launch.validate()
    args = bind_args(fn, launch.args, lambda: cxx_param_names(module, fn))
    return BoundLaunch(module, fn, Launch(launch.grid, launch.block, launch.shared_bytes, args))
