"""PS102 shared-bank-conflict: a shared-memory load or store whose lanes ask for different words of one bank,
so that its requests take several wavefronts."""

from __future__ import annotations

from collections.abc import Iterator

from ptxstatic.findings import Finding, Severity
from ptxstatic.rules.access_figures import JUDGED, Figures, instruction_figures, report_key, summarise
from ptxstatic.rules.context import RuleContext
from ptxstatic.rules.registry import Option, rule


@rule("PS102", "shared-bank-conflict", Severity.WARNING,
      "a shared-memory load or store whose lanes hit different words of one bank (n-way bank conflict)",
      options={"min-ways": Option(2.0, "report when wavefronts/request is at least this multiple of the ideal")})
def shared_bank_conflict(ctx: RuleContext) -> Iterator[Finding]:
    threshold = float(ctx.option("min-ways"))
    groups: dict[object, list[tuple[int, Figures]]] = {}
    for i, ins in enumerate(ctx.instructions):
        kind = JUDGED.get(ins.info.opcode)
        if kind is None or ins.info.space not in ("shared", "generic"):
            continue
        figures = instruction_figures(ctx, i, "shared")
        if figures is None or figures.ratio < threshold:
            continue
        groups.setdefault(report_key(ctx, i), []).append((i, figures))
    for found in groups.values():  # one finding per source line (unrolled loops, loads and stores together)
        yield _finding(ctx, found)


def _finding(ctx: RuleContext, found: list[tuple[int, Figures]]) -> Finding:
    kind = " and ".join(dict.fromkeys(JUDGED[ctx.instructions[i].info.opcode] for i, _ in found))
    s = summarise(ctx, found)
    ways = max(f.worst for _, f in found)
    message = (f"shared {kind}: {ways}-way bank conflict, {s.cost:.1f} wavefronts/request, ideal {s.ideal:.1f}"
               f"{s.tail}")
    properties = {
        "access": kind, "ways": ways, "wavefronts_per_request": round(s.cost, 3),
        "ideal_wavefronts_per_request": round(s.ideal, 3), "ratio": round(s.cost / s.ideal, 3),
        "stride_bytes": s.stride, "method": s.method, "requests": s.requests, "instructions": s.lines,
    }
    return ctx.finding(found[0][0], message, properties=properties)
