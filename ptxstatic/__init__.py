"""ptxstatic: static performance, power and energy analysis of CUDA PTX.

Importing the package costs nothing beyond this file: every room (``ptxstatic.ptx``, ``ptxstatic.analysis``,
``ptxstatic.counts``, ``ptxstatic.predict``, ...) is imported on its own, and ``__version__`` is read from
the installed distribution on first use.
"""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    if name != "__version__":
        raise AttributeError(f"module 'ptxstatic' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("ptxstatic")
    except PackageNotFoundError:  # running from a source tree that is not installed
        value = "0+unknown"
    globals()["__version__"] = value
    return value
