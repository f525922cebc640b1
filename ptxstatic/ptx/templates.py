"""Statement templates: an AST with some values replaced by slots, and the functions built from it.

The fast parser (:mod:`ptxstatic.ptx.parser`) builds one template per statement shape with the grammar's
builder in template mode (:mod:`ptxstatic.ptx.builder`), then makes every statement of that shape from it
without the grammar: by interpreting the template, or by a function compiled from it once the shape is
common. Templates are stored as plain data in the on-disk shape cache. Nothing here needs Lark.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

from ptxstatic.ptx import ast as A


class S:
    """A template expression standing for a value that differs between statements of one shape.

    ``kind`` is one of: ``v`` (value number ``arg``), ``line`` / ``col`` (the statement's position),
    ``cat`` (``prefix`` + expression ``arg``), ``int`` (integer value of ``arg``), ``unquote`` (``arg``
    without its quotes).
    """

    __slots__ = ("arg", "kind", "prefix")
    KINDS = ("v", "line", "col", "cat", "int", "unquote")

    def __init__(self, kind: str, arg: S | int | None = None, prefix: str = "") -> None:
        self.kind, self.arg, self.prefix = kind, arg, prefix

    def __radd__(self, other: str) -> S:
        return S("cat", self, other)

    @property
    def src(self) -> str:
        k, a = self.kind, self.arg
        if k == "v":
            return f"v[{int(a)}]"  # type: ignore[arg-type]
        if k == "line":
            return "L"
        if k == "col":
            return "C"
        inner = a.src  # type: ignore[union-attr]
        if k == "cat":
            return f"{self.prefix!r} + {inner}"
        if k == "int":
            return f"_int({inner})"
        return f"{inner}[1:-1]"


def to_int(text: str) -> int:
    """An integer literal as PTX writes it (decimal, 0x, 0b, octal, optional U suffix)."""
    if text.isdigit() and (text[0] != "0" or len(text) == 1) and len(text) < 19:  # plain decimal below 10^18
        return int(text)
    value = A.parse_number(text)
    if not isinstance(value, int) or text[:2] in ("0f", "0F", "0d", "0D"):
        raise ValueError(f"expected an integer, found {text!r}")
    return value


@cache
def field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names in order (``dataclasses.fields`` is slow on hot paths)."""
    return tuple(f.name for f in dataclasses.fields(cls))


def template_source(obj: Any) -> str:
    """Python source that rebuilds ``obj``, with template expressions inlined."""
    if isinstance(obj, S):
        return obj.src
    if dataclasses.is_dataclass(obj):
        args = ", ".join(template_source(getattr(obj, f)) for f in field_names(type(obj)))
        return f"{type(obj).__name__}({args})"
    if isinstance(obj, tuple):
        return "(" + "".join(template_source(x) + ", " for x in obj) + ")"
    return repr(obj)


TEMPLATE_NAMESPACE: dict[str, Any] = {
    name: getattr(A, name) for name in dir(A) if isinstance(getattr(A, name), type)
} | {"_int": to_int}


# ------------------------------------------------------------------------ templates as plain data
def template_to_data(obj: Any) -> Any:
    """A template as JSON-ready data (dataclasses, tuples and slot expressions tagged)."""
    if isinstance(obj, S):
        return {"s": [obj.kind, template_to_data(obj.arg), obj.prefix]}
    if dataclasses.is_dataclass(obj):
        return {"n": type(obj).__name__, "a": [template_to_data(getattr(obj, f)) for f in field_names(type(obj))]}
    if isinstance(obj, tuple):
        return {"t": [template_to_data(x) for x in obj]}
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    raise TypeError(f"cannot store {type(obj).__name__} in a template")


_AST_CLASSES = {n: c for n, c in TEMPLATE_NAMESPACE.items() if dataclasses.is_dataclass(c)}


def template_from_data(data: Any) -> Any:
    """Inverse of :func:`template_to_data`; rejects anything that is not an AST node, a slot or a literal."""
    if isinstance(data, dict):
        if "s" in data:
            kind, arg, prefix = data["s"]
            if kind not in S.KINDS or not isinstance(prefix, str):
                raise ValueError(f"bad slot {data!r}")
            if kind == "v":
                if not isinstance(arg, int) or isinstance(arg, bool) or arg < 0:
                    raise ValueError(f"bad slot {data!r}")
                return S(kind, arg)
            inner = template_from_data(arg) if kind not in ("line", "col") else None
            if kind not in ("line", "col") and not isinstance(inner, S):
                raise ValueError(f"bad slot {data!r}")
            return S(kind, inner, prefix)
        if "t" in data:
            return tuple(template_from_data(x) for x in data["t"])
        cls = _AST_CLASSES.get(data.get("n"))
        if cls is None or len(data["a"]) != len(field_names(cls)):
            raise ValueError(f"bad node {data.get('n')!r}")
        return cls(*(template_from_data(x) for x in data["a"]))
    if data is None or isinstance(data, (str, int, float, bool)):
        return data
    raise ValueError(f"bad template value {data!r}")


def compile_template(template: Any) -> Any:
    """The function ``(values, line, column) -> AST node`` for a template."""
    return eval(f"lambda v, L, C: {template_source(template)}", TEMPLATE_NAMESPACE)


def interpret_template(template: Any) -> Any:
    """The same function as :func:`compile_template`, built from closures: no compile cost, slower calls."""
    if isinstance(template, S):
        k, a = template.kind, template.arg
        if k == "v":
            return lambda v, L, C: v[a]
        if k == "line":
            return lambda v, L, C: L
        if k == "col":
            return lambda v, L, C: C
        inner = interpret_template(a)
        if k == "cat":
            prefix = template.prefix
            return lambda v, L, C: prefix + inner(v, L, C)
        if k == "int":
            return lambda v, L, C: to_int(inner(v, L, C))
        return lambda v, L, C: inner(v, L, C)[1:-1]
    if dataclasses.is_dataclass(template):
        cls = type(template)
        parts = [interpret_template(getattr(template, f)) for f in field_names(cls)]
        return lambda v, L, C: cls(*[p(v, L, C) for p in parts])
    if isinstance(template, tuple):
        parts = [interpret_template(x) for x in template]
        return lambda v, L, C: tuple([p(v, L, C) for p in parts])
    return lambda v, L, C: template
