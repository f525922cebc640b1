"""Launch specifications: grid, block, dynamic shared memory and kernel arguments.

Written on the command line as ``--grid 128,1,1 --block 256 --param n=4096 --param x=buf:f32:4096:iota``,
as ``--launch 128/256`` (:func:`launch_from_spec`), or as JSON (``Launch.to_dict`` / ``Launch.from_dict``),
the same form the microbenchmark manifests use.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ptxstatic.errors import PtxstaticError
from ptxstatic.limits import (
    EXACT_RANDOM_ELEMENTS,
    MAX_BLOCK_DIMS,
    MAX_BLOCK_THREADS,
    MAX_DYNAMIC_SHARED_BYTES,
    MAX_GRID_DIMS,
    WARP_SIZE,
)

#: buffer fill patterns: zeros, ones, iota (0, 1, 2, ...), random (uniform [0, 1) or integers, seeded), const:V
FILLS = ("zeros", "ones", "iota", "random", "const")
#: the keys of a launch's JSON form (:meth:`Launch.to_dict`)
LAUNCH_FIELDS = frozenset({"grid", "block", "shared_bytes", "args"})


def dim3(text: str | int | list | tuple) -> tuple[int, int, int]:
    """``128`` / ``128,2`` / ``[128, 2, 1]`` -> (128, 2, 1)."""
    if type(text) is int:
        parts = [text]
    elif isinstance(text, (list, tuple)):
        parts = list(text)
    else:
        try:
            parts = [int(p) for p in str(text).replace("x", ",").split(",") if p.strip()]
        except ValueError:
            raise PtxstaticError(f"bad dimensions {text!r}: expected X[,Y[,Z]] with positive integers") from None
    if not 1 <= len(parts) <= 3 or any(type(p) is not int or p < 1 for p in parts):  # True is not 1 here
        raise PtxstaticError(f"bad dimensions {text!r}: expected X[,Y[,Z]] with positive integers")
    return tuple(parts + [1] * (3 - len(parts)))  # type: ignore[return-value]


@dataclass
class Buffer:
    """A device buffer argument: element type, element count, fill pattern, and whether it is an output."""

    dtype: str
    count: int
    fill: str = "zeros"
    value: float = 0.0  # for fill "const"
    seed: int = 0  # for fill "random"
    output: bool = False

    def values(self, dtype: Any) -> Any:
        """The initial contents as ``count`` values of numpy ``dtype``: zeros, ones, iota (0, 1, 2, ...), const,
        or random (``numpy.random.default_rng(seed)``: floats uniform in [0, 1) for a float dtype, else
        integers uniform in [0, count), valid indices into the buffer itself). The emulator and the GPU
        runner both fill buffers with it, so their runs start from the same bytes."""
        import numpy as np

        dtype, n = np.dtype(dtype), self.count
        if self.fill in ("zeros", "ones"):  # made in the dtype at once: the same values without wide copies
            return (np.zeros if self.fill == "zeros" else np.ones)(n, dtype)
        if self.fill == "random":
            rng = np.random.default_rng(self.seed)
            v = rng.random(n) if dtype.kind == "f" else rng.integers(0, max(1, n), n)
        elif self.fill in FILLS:
            v = {"iota": np.arange, "const": lambda k: np.full(k, self.value)}[self.fill](n)
        else:
            raise PtxstaticError(f"unknown buffer fill {self.fill!r}: one of {', '.join(FILLS)}")
        return v.astype(np.int64, copy=False).astype(dtype) if dtype.kind in "iu" else v.astype(dtype, copy=False)

    def values_at(self, dtype: Any, start: int, stop: int) -> Any:
        """Elements ``start`` to ``stop`` of :meth:`values`, without making the others: exact for every fill
        (random floats by jumping the generator ahead), except random integers of a buffer over
        :data:`~ptxstatic.limits.EXACT_RANDOM_ELEMENTS` elements, whose slices are drawn from a generator of
        their own (the same distribution, not the same values)."""
        import numpy as np

        dtype, n = np.dtype(dtype), stop - start
        if self.fill != "random":
            v = {"zeros": np.zeros, "ones": np.ones, "const": lambda k: np.full(k, self.value),
                 "iota": lambda k: np.arange(start, start + k)}.get(self.fill)
            if v is None:
                raise PtxstaticError(f"unknown buffer fill {self.fill!r}: one of {', '.join(FILLS)}")
            values = v(n)
        elif dtype.kind == "f":
            rng = np.random.default_rng(self.seed)
            rng.bit_generator.advance(start)  # one 64-bit draw per float
            values = rng.random(n)
        elif self.count <= EXACT_RANDOM_ELEMENTS:
            return _random_integers(self.seed, self.count, dtype.str)[start:stop]
        else:
            values = np.random.default_rng((self.seed, start)).integers(0, max(1, self.count), n)
        return values.astype(np.int64).astype(dtype) if dtype.kind in "iu" else values.astype(dtype)


@lru_cache(maxsize=2)
def _random_integers(seed: int, count: int, dtype: str) -> Any:
    """The whole contents of a random integer buffer (kept for the slices an emulation asks for next)."""
    return Buffer("s64", count, "random", seed=seed).values(dtype)


@dataclass
class Launch:
    grid: tuple[int, int, int] = (1, 1, 1)
    block: tuple[int, int, int] = (1, 1, 1)
    shared_bytes: int = 0  # dynamic shared memory
    args: dict[str, int | float | Buffer] = field(default_factory=dict)  # by parameter name or index "0", "1"

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def warps_per_block(self) -> int:
        """Warps of one CTA (the last one partly filled when the threads are not a multiple of 32)."""
        return -(-self.threads_per_block // WARP_SIZE)

    @property
    def blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def threads(self) -> int:
        return self.blocks * self.threads_per_block

    def validate(self) -> Launch:
        """This launch, or a :class:`PtxstaticError` if no CUDA GPU can run it: more than 1024 threads per CTA,
        a block or grid dimension over the hardware's limit, or negative or excessive dynamic shared memory."""
        for what, dims, limits in (("block", self.block, MAX_BLOCK_DIMS), ("grid", self.grid, MAX_GRID_DIMS)):
            for axis, n, most in zip("xyz", dims, limits, strict=True):
                if not 1 <= n <= most:
                    raise PtxstaticError(f"bad launch: {what} dimension {axis} is {n}; CUDA allows 1 to {most}")
        if self.threads_per_block > MAX_BLOCK_THREADS:
            raise PtxstaticError(f"bad launch: {self.threads_per_block} threads per block "
                                 f"({'x'.join(map(str, self.block))}); CUDA allows at most {MAX_BLOCK_THREADS}")
        if not 0 <= self.shared_bytes <= MAX_DYNAMIC_SHARED_BYTES:
            raise PtxstaticError(f"bad launch: {self.shared_bytes} bytes of dynamic shared memory; "
                                 f"0 to {MAX_DYNAMIC_SHARED_BYTES} on any GPU")
        return self

    def to_dict(self) -> dict:
        return {
            "grid": list(self.grid), "block": list(self.block), "shared_bytes": self.shared_bytes,
            "args": {k: asdict(v) if isinstance(v, Buffer) else v for k, v in self.args.items()},
        }

    @classmethod
    def from_dict(cls, d: dict) -> Launch:
        """The launch of :meth:`to_dict`'s form, each value checked: dimensions of positive integers, an integer
        of shared memory, and arguments that are numbers or buffers; a :class:`PtxstaticError` otherwise."""
        args = d.get("args", {})
        if not isinstance(args, dict):
            raise PtxstaticError(f"bad launch specification: args must be an object of NAME: VALUE, not {args!r}")
        shared = d.get("shared_bytes", 0)
        if type(shared) is not int:
            raise PtxstaticError(f"bad launch specification: shared_bytes must be an integer, not {shared!r}")
        launch = cls(dim3(d.get("grid", 1)), dim3(d.get("block", 1)), shared,
                     {str(k): _argument(str(k), v) for k, v in args.items()})
        return launch.validate()


#: the fields of a buffer argument in a launch's JSON, with the Python types each takes
BUFFER_FIELDS: dict[str, tuple[type, ...]] = {"dtype": (str,), "count": (int,), "fill": (str,), "value": (int, float),
                                              "seed": (int,), "output": (bool,)}


def _argument(name: str, value: Any) -> int | float | Buffer:
    """A launch argument of the JSON form: a number, or a buffer as an object of :data:`BUFFER_FIELDS`."""
    where = f"bad launch specification: argument {name!r}"
    if isinstance(value, dict):
        for key, item in value.items():
            types = BUFFER_FIELDS.get(key)
            if types is None:
                raise PtxstaticError(f"{where}: unknown buffer field {key!r}; the fields: {', '.join(BUFFER_FIELDS)}")
            if type(item) not in types:
                raise PtxstaticError(f"{where}: {key} must be {' or '.join(t.__name__ for t in types)}, not {item!r}")
        missing = [key for key in ("dtype", "count") if key not in value]
        if missing or value["count"] < 0:
            raise PtxstaticError(f"{where}: a buffer needs a dtype and a count of 0 or more")
        if value.get("fill", "zeros") not in FILLS:
            raise PtxstaticError(f"{where}: unknown buffer fill {value['fill']!r}: one of {', '.join(FILLS)}")
        return Buffer(**value)
    if type(value) not in (int, float):  # True is not a number here
        raise PtxstaticError(f"{where}: expected a number or a buffer object, not {value!r}")
    return value


def _finite_float(text: str) -> float:
    """A float of the text, or a :class:`PtxstaticError` when it overflows a 64-bit float (``1e309``)."""
    value = float(text)
    if math.isinf(value) and "inf" not in text.lower():
        raise PtxstaticError(f"{text} overflows a 64-bit float")
    return value


def parse_arg(text: str) -> tuple[str, int | float | Buffer]:
    """``n=4096``, ``alpha=1.5``, ``x=buf:f32:4096[:fill[:value-or-seed]][:out]``."""
    name, eq, value = text.partition("=")
    if not eq or not name:
        raise PtxstaticError(f"bad --param {text!r}: expected NAME=VALUE or NAME=buf:TYPE:COUNT[:FILL][:out]")
    if value.startswith("buf:"):
        parts = value.split(":")[1:]
        output = parts[-1] == "out"
        if output:
            parts = parts[:-1]
        if len(parts) < 2:
            raise PtxstaticError(f"bad buffer {value!r}: expected buf:TYPE:COUNT[:FILL[:VALUE]][:out]")
        try:
            count = int(parts[1])
            extra = float(parts[3]) if len(parts) > 3 else 0.0
            seed = int(extra) if fill_of(parts) == "random" else 0
        except (ValueError, OverflowError):
            raise PtxstaticError(f"bad buffer {value!r}: COUNT must be an integer and VALUE a number") from None
        if count < 0:
            raise PtxstaticError(f"bad buffer {value!r}: COUNT must not be negative")
        fill = fill_of(parts)
        if fill not in FILLS:
            raise PtxstaticError(f"bad buffer fill {fill!r}: one of {', '.join(FILLS)}")
        buf = Buffer(parts[0], count, fill, extra if fill == "const" else 0.0, seed, output)
        return name, buf
    try:
        return name, int(value, 0)
    except ValueError:
        try:
            return name, _finite_float(value)
        except ValueError:
            raise PtxstaticError(f"bad --param {text!r}: VALUE must be a number or a buf: spec") from None
        except PtxstaticError as exc:
            raise PtxstaticError(f"bad --param {text!r}: {exc}") from None


def fill_of(parts: list[str]) -> str:
    """The FILL of a ``buf:TYPE:COUNT[:FILL...]`` spec split at colons (after ``buf:``)."""
    return parts[2] if len(parts) > 2 else "zeros"


def launch_from_spec(spec: str) -> Launch:
    """``GRID/BLOCK`` (each X[,Y[,Z]], e.g. ``1024/256`` or ``64,64/16,16``), inline JSON, or a JSON file, the
    last two in the form of :meth:`Launch.from_dict`."""
    text = spec.strip()
    if text.startswith("{") or text.endswith(".json"):
        try:
            raw = json.loads(text if text.startswith("{") else Path(text).read_text(), parse_float=_finite_float)
        except (OSError, UnicodeDecodeError, ValueError, PtxstaticError) as exc:  # JSONDecodeError is a ValueError
            raise PtxstaticError(f"bad --launch {spec!r}: {exc}") from None
        if not isinstance(raw, dict):
            raise PtxstaticError(f"bad --launch {spec!r}: expected a JSON object")
        unknown = sorted(set(raw) - LAUNCH_FIELDS)
        if unknown:
            raise PtxstaticError(f"bad --launch {spec!r}: unknown key {unknown[0]!r}; the keys: "
                                 + ", ".join(sorted(LAUNCH_FIELDS)))
        return Launch.from_dict(raw)
    grid, sep, block = text.partition("/")
    if not sep:
        raise PtxstaticError(f"bad --launch {spec!r}: expected GRID/BLOCK, e.g. 1024/256 or 64,64/16,16")
    return Launch(dim3(grid), dim3(block)).validate()
