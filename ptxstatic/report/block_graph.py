"""A kernel's basic-block graph as inline SVG: blocks coloured by estimated execution count, loops drawn as
nested boxes with their back edges in red, each block a link to the ``.cu`` lines it was compiled from.

Graphviz ``dot`` lays the graph out where it is installed (hierarchical, loops as clusters); without it
networkx places blocks in layers of the graph without back edges and matplotlib draws them (loop headers
get a thick blue border), so a report never needs more than the Python packages.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import networkx as nx

from ptxstatic.analysis.cfg import Loop
from ptxstatic.report.file_report import BlockInfo, KernelReport
from ptxstatic.report.plots import figure_svg
from ptxstatic.toolchain.graphviz import dot_svg, have_dot

#: the colour map of execution counts (light: rarely, dark red: most often)
COLOUR_MAP = "YlOrRd"
LOOP_COLOUR = "#1f77b4"
BACK_EDGE_COLOUR = "#d62728"
#: a block -> the page anchor of its first source line, or None
Links = Callable[[BlockInfo], str | None]
#: the fallback drawing's label size, the inches one character and one line of it take (a wide estimate),
#: and the margin around the blocks, where back edges' arcs run
_FONT_PT = 7
_CHAR_IN, _LINE_IN = _FONT_PT * 0.62 / 72, _FONT_PT * 1.3 / 72
_MARGIN_IN = 0.6


def count_colours(blocks: list[BlockInfo]) -> dict[int, str]:
    """Each block's fill colour: its count on a log scale between the kernel's least and most executed."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    logs = {b.id: math.log10(1.0 + b.count) for b in blocks}
    low, high = min(logs.values(), default=0.0), max(logs.values(), default=0.0)
    cmap = colormaps[COLOUR_MAP]
    return {b: to_hex(cmap(0.1 + 0.8 * ((v - low) / (high - low) if high > low else 0.5))) for b, v in logs.items()}


def legend_colours(steps: int = 6) -> list[str]:
    """Colours from the least to the most executed block, for the page's legend."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps[COLOUR_MAP]
    return [to_hex(cmap(0.1 + 0.8 * i / (steps - 1))) for i in range(steps)]


def block_graph_svg(kernel: KernelReport, links: Links, salt: str, *, use_dot: bool | None = None) -> str:
    """The graph of ``kernel`` as an ``<svg>`` element; ``use_dot`` None: dot where it is on the PATH."""
    if use_dot is None:
        use_dot = have_dot()
    if use_dot:
        svg = dot_svg(dot_source(kernel, links, salt))
        return svg[svg.index("<svg"):]
    return _networkx_svg(kernel, links, salt)


def _label(b: BlockInfo) -> str:
    lines = f"PTX {b.ptx_lines[0]}-{b.ptx_lines[1]}" if b.ptx_lines[0] else "empty"
    src = f", .cu {b.source_lines[0]}-{b.source_lines[-1]}" if b.source_lines else ""
    return f"{b.name}\n{lines}{src}\n{count_text(b)}"


def count_text(b: BlockInfo) -> str:
    """``16,384×``, ``8,192× (est.)`` or, without a launch, ``weight 16``."""
    if b.exact is None:
        return f"weight {b.count:,.6g}"
    return f"{b.count:,.6g}×" + ("" if b.exact else " (est.)")


def _dark(colour: str) -> bool:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b < 140


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _innermost(loops: list[Loop]) -> dict[int, Loop]:
    out: dict[int, Loop] = {}
    for lp in sorted(loops, key=lambda lp: -len(lp.body)):
        for b in lp.body:
            out[b] = lp
    return out


def dot_source(kernel: KernelReport, links: Links, salt: str) -> str:
    """DOT text of the graph: a node per block, a cluster per loop (nested as the loops are)."""
    graph = kernel.graph
    colours = count_colours(kernel.blocks)
    inner = _innermost(graph.loops)
    out = [f"digraph {_quote(kernel.name)} {{", f"  id={_quote(salt)};",
           '  graph [fontname="Helvetica", fontsize=10, nodesep=0.3, ranksep=0.35];',
           '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=9];',
           '  edge [fontname="Helvetica", fontsize=8, color="#555555"];']

    def node(b: BlockInfo) -> str:
        attrs = {"id": f"{salt}_b{b.id}", "label": _label(b), "fillcolor": colours[b.id],
                 "fontcolor": "white" if _dark(colours[b.id]) else "black",
                 "tooltip": f"{b.name}: {count_text(b)}" + (
                     f"; .cu lines {', '.join(map(str, b.source_lines))}" if b.source_lines else "")}
        link = links(b)
        if link:
            attrs["URL"] = link
        return f"  b{b.id} [" + ", ".join(f"{k}={_quote(v)}" for k, v in attrs.items()) + "];"

    def cluster(lp: Loop, indent: str) -> list[str]:
        lines = [f"{indent}subgraph cluster_loop{lp.header} {{",
                 f"{indent}  id={_quote(f'{salt}_loop{lp.header}')}; label={_quote(f'loop (depth {lp.depth})')};",
                 f'{indent}  style="dashed,rounded"; color="{LOOP_COLOUR}"; fontcolor="{LOOP_COLOUR}";']
        lines += [indent + node(b) for b in kernel.blocks if inner.get(b.id) is lp]
        for child in graph.loops:
            if child.parent == lp.header and child is not lp:
                lines += cluster(child, indent + "  ")
        return [*lines, f"{indent}}}"]

    out += [node(b) for b in kernel.blocks if b.id not in inner]
    for lp in graph.loops:
        if lp.parent is None:
            out += cluster(lp, "  ")
    back = set(graph.back_edges)
    for u, v in graph.graph.edges:
        style = f'color="{BACK_EDGE_COLOUR}", penwidth=2, label="back"' if (u, v) in back else ""
        out.append(f"  b{u} -> b{v} [id={_quote(f'{salt}_e{u}_{v}')}{', ' + style if style else ''}];")
    out.append("}")
    return "\n".join(out)


def _layers(kernel: KernelReport) -> dict[int, int]:
    """Each block's layer: its generation in the graph without back edges (distance from the entry where
    what remains is still cyclic)."""
    g = kernel.graph.graph.copy()
    g.remove_edges_from(kernel.graph.back_edges)
    if nx.is_directed_acyclic_graph(g):
        return {n: i for i, gen in enumerate(nx.topological_generations(g)) for n in gen}
    dist = nx.single_source_shortest_path_length(kernel.graph.graph, kernel.graph.entry)
    return {n: dist.get(n, max(dist.values(), default=0) + 1) for n in kernel.graph.graph.nodes}


def _rows(kernel: KernelReport) -> list[list[int]]:
    """The blocks of each layer (:func:`_layers`), top to bottom, each row in block order."""
    rows: dict[int, list[int]] = {}
    for block, layer in sorted(_layers(kernel).items()):
        rows.setdefault(layer, []).append(block)
    return [rows[layer] for layer in sorted(rows)]


def _networkx_svg(kernel: KernelReport, links: Links, salt: str) -> str:
    """The fallback drawing: blocks in layers (networkx), boxes and arrows from matplotlib, on a canvas
    measured in inches from the labels, so that every box and every arc lies inside the figure."""
    import matplotlib
    from matplotlib.figure import Figure

    graph = kernel.graph
    colours = count_colours(kernel.blocks)
    headers = {lp.header: lp for lp in graph.loops}
    labels = {b.id: _label(b) + (f"\nloop header (depth {headers[b.id].depth})" if b.id in headers else "")
              for b in kernel.blocks}
    lines = [line for text in labels.values() for line in text.split("\n")]
    column = max(1.6, max(map(len, lines), default=0) * _CHAR_IN + 0.5)
    row = max(1.0, max((t.count("\n") + 1 for t in labels.values()), default=1) * _LINE_IN + 0.6)
    rows = _rows(kernel)
    columns = max(map(len, rows), default=1)
    width, height = columns * column + 2 * _MARGIN_IN, len(rows) * row + 2 * _MARGIN_IN
    pos = {}
    for i, members in enumerate(rows):
        left = _MARGIN_IN + (columns - len(members)) * column / 2
        for k, b in enumerate(members):
            pos[b] = (left + (k + 0.5) * column, height - _MARGIN_IN - (i + 0.5) * row)
    fig = Figure(figsize=(width, height))
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, width)
        ax.set_ylim(0, height)
        ax.set_axis_off()
        back = set(graph.back_edges)
        bulge = column / 2 + 0.8 * _MARGIN_IN  # the farthest a back edge's arc may go sideways, in inches
        for u, v in graph.graph.edges:
            style = {"arrowstyle": "-|>", "shrinkA": 18, "shrinkB": 18, "connectionstyle": "arc3",
                     "color": BACK_EDGE_COLOUR if (u, v) in back else "#555555", "lw": 2 if (u, v) in back else 1}
            start, end = pos[u], pos[v]
            if u == v:  # a one-block loop: a small arc on the block's right side
                side = pos[u][0] + max(map(len, labels[u].split("\n"))) * _CHAR_IN / 2
                start, end = (side, pos[u][1] + 0.08), (side, pos[u][1] - 0.08)
                style.update(shrinkA=0, shrinkB=0, connectionstyle="arc3,rad=-2.0")
            elif (u, v) in back:
                style["connectionstyle"] = f"arc3,rad={min(0.5, 2 * bulge / math.dist(start, end)):.3f}"
            ax.annotate("", xy=end, xytext=start, arrowprops=style)
        for b in kernel.blocks:
            loop = headers.get(b.id)
            artist = ax.text(*pos[b.id], labels[b.id], ha="center", va="center", fontsize=_FONT_PT,
                             color="white" if _dark(colours[b.id]) else "black",
                             bbox={"boxstyle": "round", "facecolor": colours[b.id],
                                   "edgecolor": LOOP_COLOUR if loop else "#333333", "linewidth": 3 if loop else 1})
            artist.set_url(links(b))
            artist.set_gid(f"{salt}_b{b.id}")
    return figure_svg(fig, salt + "-graph")
