"""PS101 uncoalesced-global-access: a global load or store whose warp touches more 32-byte sectors per request
than the bytes it asks for need."""

from __future__ import annotations

from collections.abc import Iterator

from ptxstatic.findings import Finding, Severity
from ptxstatic.rules.access_figures import (
    JUDGED,
    Figures,
    combined_sectors,
    instruction_figures,
    report_key,
    sibling_groups,
    summarise,
)
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.registry import Option, rule


@rule("PS101", "uncoalesced-global-access", Severity.WARNING,
      "a global load or store whose warps touch more 32-byte sectors per request than its bytes need",
      options={"min-ratio": Option(2.0, "report when sectors/request is at least this multiple of the minimum")})
def uncoalesced_global_access(ctx: RuleContext) -> Iterator[Finding]:
    threshold = float(ctx.option("min-ratio"))
    judged: dict[int, Figures] = {}
    for i, ins in enumerate(ctx.instructions):
        if ins.info.opcode in JUDGED and ins.info.space in ("global", "generic"):
            figures = instruction_figures(ctx, i, "global")
            if figures is not None:
                judged[i] = figures
    exempt = _coalesced_together(ctx, judged, threshold)
    groups: dict[object, list[tuple[int, Figures]]] = {}
    for i, figures in judged.items():
        if figures.ratio < threshold or i in exempt:
            continue
        groups.setdefault(report_key(ctx, i), []).append((i, figures))
    for found in groups.values():  # one finding per source line (unrolled loops, loads and stores together)
        yield _finding(ctx, found)


def _coalesced_together(ctx: RuleContext, judged: dict[int, Figures], threshold: float) -> set[int]:
    """Loads of neighbouring fields for the same lanes that, taken together, touch fewer than ``threshold``
    times the sectors they need (``a[2 * i]`` with ``a[2 * i + 1]``): L1 serves the later ones from the sectors
    the first one brought. Stores go through to L2 one instruction at a time and are judged one by one, except
    in a debug build (``-G``: ``.target ..., debug``), which does not merge them into vector stores."""
    debug = "debug" in ctx.module.target
    out: set[int] = set()
    for kind in ("load", "store") if debug else ("load",):
        same = [i for i in sorted(judged) if JUDGED[ctx.instructions[i].info.opcode] == kind]
        out |= _together(ctx, judged, same, threshold)
    return out


def _together(ctx: RuleContext, judged: dict[int, Figures], indices: list[int], threshold: float) -> set[int]:
    out: set[int] = set()
    for group in sibling_groups(ctx, indices, judged):
        if len(group) < 2:
            continue
        together = combined_sectors([judged[i] for i in group], [ctx.instructions[i].info.width_bytes for i in group])
        if together is not None and together[0] < threshold * together[1]:
            out.update(group)
    return out


def _finding(ctx: RuleContext, found: list[tuple[int, Figures]]) -> Finding:
    kind = " and ".join(dict.fromkeys(JUDGED[ctx.instructions[i].info.opcode] for i, _ in found))
    s = summarise(ctx, found)
    message = f"global {kind}: {s.cost:.1f} sectors/request, minimum {s.ideal:.1f}{s.tail}"
    properties = {
        "access": kind, "sectors_per_request": round(s.cost, 3), "minimum_sectors_per_request": round(s.ideal, 3),
        "ratio": round(s.cost / s.ideal, 3), "stride_bytes": s.stride, "method": s.method, "requests": s.requests,
        "instructions": s.lines,
    }
    return ctx.finding(found[0][0], message, properties=properties)
