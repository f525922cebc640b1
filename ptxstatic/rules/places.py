"""Where in a function a rule points: loop depth of an instruction and the hottest of several places."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ptxstatic.rules.context import RuleContext

#: a header of the CUDA toolkit: /usr/local/cuda/include/..., /opt/cuda-12.4/targets/x86_64-linux/include/...
TOOLKIT_HEADER = re.compile(r"/cuda[^/]*/(?:targets/[^/]+/)?include/")

#: how much more an instruction one loop deeper weighs (the trip count assumed without a launch)
LOOP_WEIGHT = 16.0


def loop_depth(ctx: RuleContext, index: int) -> int:
    """How many loops of the function hold instruction ``index``."""
    block = ctx.cfg.block_of(index)
    return sum(block in lp.body for lp in ctx.cfg.loops)


def line_key(ctx: RuleContext, index: int) -> object:
    """The ``.cu`` line of an instruction (file, line), else the instruction itself: one place per key."""
    loc = ctx.instructions[index].loc
    return (loc.file, loc.line) if loc is not None else index


def by_line(ctx: RuleContext, indexes: Iterable[int]) -> dict[object, list[int]]:
    """Instructions grouped by :func:`line_key`, in program order."""
    out: dict[object, list[int]] = {}
    for i in sorted(indexes):
        out.setdefault(line_key(ctx, i), []).append(i)
    return out


def hottest(ctx: RuleContext, indexes: Iterable[int]) -> int:
    """The first instruction of the line whose instructions weigh most, each :data:`LOOP_WEIGHT` to the power
    of its loop depth (the earliest line wins a tie)."""
    groups = by_line(ctx, indexes)
    weight = {k: sum(LOOP_WEIGHT ** loop_depth(ctx, i) for i in v) for k, v in groups.items()}
    best = max(groups, key=lambda k: (weight[k], -groups[k][0]))
    return groups[best][0]


def in_toolkit_header(ctx: RuleContext, index: int) -> bool:
    """Whether instruction ``index`` comes from a header of the CUDA toolkit (code the user cannot change)."""
    loc = ctx.instructions[index].loc
    return loc is not None and TOOLKIT_HEADER.search(loc.file.replace("\\", "/")) is not None


def is_library_function(ctx: RuleContext) -> bool:
    """Whether the function is library code the user did not write: in a module with line information, a
    function none of whose instructions has a ``.cu`` line (the CUDA math library's internal functions), or
    one whose lines are all in the toolkit's headers."""
    if not ctx.mc.has_line_info or not ctx.instructions:
        return False
    return all(ins.loc is None or in_toolkit_header(ctx, i) for i, ins in enumerate(ctx.instructions))
