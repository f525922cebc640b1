"""Large PTX files of many kernels, made from the project's nvcc fixtures, for the scaling benchmark.

Each fixture (``tests/data/fixtures/ptx/nvcc/sm_90/plain``, those without ``.extern`` declarations) is cut into
its top-level items: module variables and functions. Copy ``i`` of a kernel is the kernel with the module
variables and device functions it refers to, every module-scope name renamed with the suffix ``_c<i>``, so
the file stays valid PTX (ptxas accepts it) whatever its size.

    python benchmarks/many_kernels.py --kernels 1000 -o big.ptx
    python benchmarks/many_kernels.py --megabytes 50 -o big.ptx
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "data" / "fixtures" / "ptx" / "nvcc" / "sm_90" / "plain"
HEADER = ".version 9.0\n.target sm_90\n.address_size 64\n"
_NAME = re.compile(r"(?:\.entry|\.func(?:\s*\([^)]*\))?)\s+([\w$]+)|([\w$]+)\s*(?:\[[^\]]*\])*\s*(?:=|;)")
_WORD = re.compile(r"[A-Za-z_$][\w$]*")


def _items(text: str) -> list[str]:
    """The top-level items of a PTX file after its header: each variable declaration or function."""
    body = re.sub(r"//[^\n]*", "", text.split(".address_size 64", 1)[1])
    items, depth, start = [], 0, 0
    for i, c in enumerate(body):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and body[start:i].lstrip().startswith((".visible", ".entry", ".func", ".weak")):
                items.append(body[start:i + 1].strip())
                start = i + 1
        elif c == ";" and depth == 0:
            items.append(body[start:i + 1].strip())
            start = i + 1
    return [it for it in items if it]


def _defined(item: str) -> str:
    m = _NAME.search(item.split("{", 1)[0] if "{" in item else item)
    if m is None:
        raise ValueError(f"no name in {item[:60]!r}")
    return m.group(1) or m.group(2)


def kernel_units() -> list[tuple[str, list[str]]]:
    """Per kernel of the fixtures: (its text with the items it needs before it, the module-scope names)."""
    units = []
    for path in sorted(FIXTURES.glob("*.ptx")):
        text = path.read_text()
        if ".extern" in text:
            continue
        items = _items(text)
        names: dict[str, list[str]] = {}
        for it in items:
            names.setdefault(_defined(it), []).append(it)  # a function's declaration and its definition
        for it in items:
            if ".entry" not in it.split("(", 1)[0]:
                continue
            needed, todo = [], [it]
            while todo:  # the items this kernel refers to, transitively, in file order
                for w in set(_WORD.findall(todo.pop())):
                    for dep in names.get(w, ()):
                        if dep is not it and dep not in needed:
                            needed.append(dep)
                            todo.append(dep)
            order = [x for x in items if x in needed] + [it]
            units.append(("\n\n".join(order), sorted({_defined(x) for x in order})))
    return units


def _renamed(units: list[tuple[str, list[str]]]) -> list[tuple[str, re.Pattern[str]]]:
    return [(text, re.compile(r"(?<![\w$])(" + "|".join(map(re.escape, names)) + r")(?![\w$])"))
            for text, names in units]


def chunks(kernels: int | None = None, megabytes: float | None = None) -> Iterator[str]:
    """The file's text in pieces: the header, then kernel copies until ``kernels`` or ``megabytes``."""
    units = _renamed(kernel_units())
    yield HEADER
    size, i = len(HEADER), 0
    while (kernels is not None and i < kernels) or (megabytes is not None and size < megabytes * 1e6):
        text, pattern = units[i % len(units)]
        piece = "\n" + pattern.sub(lambda m, s=f"_c{i}": m.group(1) + s, text) + "\n"
        size += len(piece)
        i += 1
        yield piece


def write(path: Path, kernels: int | None = None, megabytes: float | None = None) -> int:
    """Write the file; returns its number of kernels."""
    count = 0
    with path.open("w") as f:
        for piece in chunks(kernels, megabytes):
            count += piece.count(".entry")
            f.write(piece)
    return count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = ap.add_mutually_exclusive_group(required=True)
    size.add_argument("--kernels", type=int)
    size.add_argument("--megabytes", type=float)
    ap.add_argument("-o", "--output", type=Path, required=True)
    args = ap.parse_args()
    n = write(args.output, args.kernels, args.megabytes)
    print(f"{args.output}: {n} kernels, {args.output.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
