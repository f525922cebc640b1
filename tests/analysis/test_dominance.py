"""Dominance answered in constant time from interval numbers of the dominator tree, equal to walking the
dominator chain, on every function of the nvcc corpus and on one function as deep as it is long."""

from __future__ import annotations

import itertools
import time

from support.paths import FIXTURES

from ptxstatic.analysis import graphs
from ptxstatic.analysis.cfg import build_cfg
from ptxstatic.ptx import parse_text
from ptxstatic.ptx.parser import parse_file


def _walked(cfg, a: int, b: int) -> bool:
    """Whether ``a`` dominates ``b``, by walking ``b``'s dominator chain (what ``dominates`` did before)."""
    return b in cfg.idom and a in cfg.dominators(b)


def test_dominates_equals_the_dominator_chain_on_the_corpus():
    pairs = 0
    for path in sorted((FIXTURES / "nvcc" / "sm_90" / "lineinfo").glob("*.ptx")):
        for fn in parse_file(path, recover=True).functions:
            if fn.body is None:
                continue
            cfg = build_cfg(fn)
            blocks = range(len(cfg.blocks))
            for a, b in itertools.product(blocks, blocks) if len(cfg.blocks) <= 60 else itertools.pairwise(blocks):
                assert cfg.dominates(a, b) == _walked(cfg, a, b), (path.name, fn.name, a, b)
                pairs += 1
    assert pairs > 5_000


def test_tree_intervals_by_hand():
    #      0
    #    1   4
    #   2 3    5
    parent = {0: 0, 1: 0, 2: 1, 3: 1, 4: 0, 5: 4}
    assert graphs.tree_intervals(parent, 0) == {0: (0, 5), 1: (1, 3), 2: (2, 2), 3: (3, 3), 4: (4, 5), 5: (5, 5)}


def _chain_of_diamonds(n: int) -> str:
    body = [f"\tsetp.eq.s32 %p1, %r1, {i};\n\t@%p1 bra $L{i};\n\tadd.s32 %r1, %r1, 1;\n$L{i}:" for i in range(n)]
    return (".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u32 k_p)\n{\n"
            "\t.reg .pred %p<2>;\n\t.reg .b32 %r<2>;\n\tld.param.u32 %r1, [k_p];\n" + "\n".join(body)
            + "\n\tret;\n}\n")


def test_back_edges_of_a_deep_function_take_linear_time():
    """A chain of 5,000 diamonds has a dominator tree 10,000 blocks deep: walking the chain for each of its
    15,000 edges took seconds (quadratic); with interval numbers, finding that none is a back edge takes
    milliseconds."""
    cfg = build_cfg(parse_text(_chain_of_diamonds(5_000), "deep.ptx").functions[0])
    assert len(cfg.blocks) == 10_001
    start = time.process_time()
    assert cfg.back_edges == [] and cfg.loops == []
    assert time.process_time() - start < 1.0
    assert cfg.dominates(0, 10_000) and not cfg.dominates(1, 3) and cfg.dominates(2, 3)
