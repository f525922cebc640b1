"""Blocks, edges, loops, dominators, dependencies and source lines checked by hand against small.cu's PTX."""

from __future__ import annotations

import pytest
from support.paths import FRONTEND_DATA

from ptxstatic.analysis.cfg import FALLTHROUGH, TAKEN, build_cfg
from ptxstatic.analysis.defuse import def_use
from ptxstatic.analysis.sequence import kernel_sequence
from ptxstatic.ptx import parse_file
from ptxstatic.ptx.ast import Addr, Reg, Sym


@pytest.fixture(scope="module")
def module():
    return parse_file(FRONTEND_DATA / "small_sm80_lineinfo.ptx")


def find(fn, opcode, first_operand):
    """Index of the instruction with this opcode token whose first operand prints as given."""
    for i, ins in enumerate(fn.instructions):
        op = ins.operands[0] if ins.operands else None
        name = getattr(op, "name", None) or getattr(getattr(op, "base", None), "name", None)
        if ins.opcode == opcode and name == first_operand:
            return i
    raise AssertionError(f"{opcode} {first_operand} not found")


def test_module_directives(module):
    assert module.version == "9.0"
    assert module.target == ("sm_80",)
    assert module.address_size == 64
    assert [k.name for k in module.kernels] == ["row_sum", "nested", "branchy"]
    assert module.files[1].path == "tests/data/frontend/small.cu"
    row_sum = module.kernels[0]
    assert [p.names[0].name for p in row_sum.params] == ["row_sum_param_0", "row_sum_param_1", "row_sum_param_2"]
    assert [p.dtype for p in row_sum.params] == ["u64", "u64", "u32"]


def test_row_sum_blocks_and_edges(module):
    cfg = build_cfg(module.function("row_sum"))
    assert [len(b) for b in cfg.blocks] == [11, 6, 6, 13, 2, 3, 6, 5]
    assert [b.labels for b in cfg.blocks] == [
        (), (), (), ("$L__BB0_3",), ("$L__BB0_4",), (), ("$L__BB0_6",), ("$L__BB0_7",)
    ]
    edges = {(u, v): d["kind"] for u, v, d in cfg.graph.edges(data=True)}
    assert edges == {
        (0, 7): TAKEN, (0, 1): FALLTHROUGH, (1, 4): TAKEN, (1, 2): FALLTHROUGH, (2, 3): FALLTHROUGH,
        (3, 3): TAKEN, (3, 4): FALLTHROUGH, (4, 7): TAKEN, (4, 5): FALLTHROUGH, (5, 6): FALLTHROUGH,
        (6, 6): TAKEN, (6, 7): FALLTHROUGH,
    }
    assert cfg.exits == [7]
    assert cfg.unreachable == []


def test_row_sum_loops_and_dominators(module):
    cfg = build_cfg(module.function("row_sum"))
    assert sorted((lp.header, sorted(lp.body), lp.depth) for lp in cfg.loops) == [(3, [3], 1), (6, [6], 1)]
    assert cfg.idom[7] == 0 and cfg.idom[4] == 1 and cfg.idom[3] == 2 and cfg.idom[6] == 5 and cfg.idom[5] == 4
    assert cfg.dominators(6) == [6, 5, 4, 1, 0]
    assert not cfg.dominates(3, 4)
    assert sorted(cfg.back_edges) == [(3, 3), (6, 6)]


def test_nested_loops(module):
    cfg = build_cfg(module.function("nested"))
    assert len(cfg.blocks) == 11
    assert cfg.graph.number_of_edges() == 17
    loops = {lp.header: lp for lp in cfg.loops}
    assert set(loops) == {2, 4}
    assert sorted(loops[2].body) == [2, 3, 4, 5, 6, 7, 8, 9] and loops[2].depth == 1 and loops[2].parent is None
    assert sorted(loops[4].body) == [4] and loops[4].depth == 2 and loops[4].parent == 2
    assert sorted(loops[2].exits) == [(9, 10)]
    assert cfg.loop_depth[4] == 2 and cfg.loop_depth[6] == 1 and cfg.loop_depth[10] == 0


def test_branchy_blocks(module):
    cfg = build_cfg(module.function("branchy"))
    assert [len(b) for b in cfg.blocks] == [5, 9, 1, 3, 2, 1]
    assert sorted(cfg.graph.edges) == [(0, 1), (0, 5), (1, 2), (1, 3), (2, 4), (3, 5), (4, 5)]
    assert cfg.loops == []
    assert cfg.idom[5] == 0 and cfg.idom[4] == 2 and cfg.idom[3] == 1


def test_dependency_distances_and_kinds(module):
    row_sum = module.function("row_sum")
    seq = kernel_sequence(row_sum)
    i = find(row_sum, "add.f32", "%f13")  # add.f32 %f13, %f24, %f12 right after ld.global.nc %f12
    assert (seq[i].dep_distance, seq[i].dep_kind) == (1, "global_load")
    i = find(row_sum, "mad.lo.s32", "%r1")  # mad.lo.s32 %r1, %r13, %r12, %r14; %r14 from the previous mov
    assert (seq[i].dep_distance, seq[i].dep_kind) == (1, "arith")
    i = find(row_sum, "cvta.to.global.u64", "%rd1")  # from ld.param %rd9, three instructions back
    assert (seq[i].dep_distance, seq[i].dep_kind) == (3, "other_mem")
    assert (seq[0].dep_distance, seq[0].dep_kind) == (0, "none")
    assert seq[0].group == "mem.param" and seq[0].space == "param" and seq[0].dtype == "u64"
    ld = seq[find(row_sum, "ld.global.nc.f32", "%f12")]
    assert (ld.opcode, ld.group, ld.space, ld.n_dst, ld.n_src) == ("ld", "mem.global", "global", 1, 1)
    bra = seq[find(row_sum, "bra", "$L__BB0_7")]
    assert bra.guarded and bra.n_dst == 0 and bra.group == "control"

    nested = module.function("nested")
    seq = kernel_sequence(nested)
    i = find(nested, "add.f32", "%f16")  # add.f32 %f16, %f29, %f15 after ld.shared %f15
    assert (seq[i].dep_distance, seq[i].dep_kind) == (1, "shared_load")


def test_def_use_chains(module):
    row_sum = module.function("row_sum")
    du = def_use(build_cfg(row_sum))
    use = find(row_sum, "add.f32", "%f13")  # reads %f24: from the loop preheader's mov and the loop's last add
    defs = du.reaching[(use, "%f24")]
    assert sorted(row_sum.instructions[d].opcode for d in defs) == ["add.f32", "mov.f32"]
    assert all(row_sum.instructions[d].operands[0] == Reg("%f24") for d in defs)
    assert du.undefined_uses() == []


def test_source_lines(module):
    row_sum = module.function("row_sum")
    ld = row_sum.instructions[find(row_sum, "ld.global.nc.f32", "%f12")]
    assert (ld.loc.file, ld.loc.line, ld.loc.column) == ("tests/data/frontend/small.cu", 8, 9)
    inc = row_sum.instructions[find(row_sum, "add.s32", "%r22")]
    assert (inc.loc.line, inc.loc.column) == (7, 28)
    st = row_sum.instructions[find(row_sum, "st.global.f32", "%rd14")]
    assert st.loc.line == 10 and st.line == 100
    assert row_sum.instructions[0].line == 29 and row_sum.instructions[0].column == 2


def test_operands_and_modifiers(module):
    row_sum = module.function("row_sum")
    ld = row_sum.instructions[find(row_sum, "ld.global.nc.f32", "%f14")]
    assert ld.operands[1] == Addr(Reg("%rd15"), 4)
    assert ld.info.cache == ("nc",) and ld.info.width_bytes == 4
    bra = row_sum.instructions[find(row_sum, "bra", "$L__BB0_3")]
    assert bra.guard == Reg("%p3") and not bra.guard_negated and bra.operands == (Sym("$L__BB0_3"),)
    nested = module.function("nested")
    smem = [s for s in nested.statements if getattr(s, "space", None) == "shared"]
    assert smem[0].names[0].name == "_ZZ6nestedE4tile" and smem[0].names[0].dims == (256,) and smem[0].align == 4


def test_without_lineinfo_same_structure(module):
    plain = parse_file(FRONTEND_DATA / "small_sm80.ptx")
    for a, b in zip(plain.kernels, module.kernels, strict=True):
        assert a.instructions == b.instructions  # equality ignores positions and source locations
        assert all(i.loc is None for i in a.instructions)


def test_grammar_corners_of_the_hand_written_fixtures():
    """Constant expressions, registers named without %, nested initialisers, pointer alignment."""
    from support.paths import FIXTURES

    from ptxstatic.ptx.ast import BinOp, InitList, constant_value

    m = parse_file(FIXTURES / "manual" / "m07_scopes_immediates.ptx")
    ins = {i.operands[0].name: i for i in m.kernels[0].instructions if i.opcode.startswith(("mov", "setp"))
           and isinstance(i.operands[0], Reg)}
    expr = ins["%r9"].operands[1]
    assert isinstance(expr, BinOp) and expr.op == "+" and constant_value(expr) == 22
    assert constant_value(ins["%r5"].operands[1]) == 0o777 and constant_value(ins["%r7"].operands[1]) == 4000000000
    assert ins["inner_p"].operands[1] == Reg("acc")  # declared with .reg, so a register although it has no %
    guarded = next(i for i in m.kernels[0].instructions if i.guard == Reg("inner_p"))
    assert guarded.opcode == "add.s32"

    g = parse_file(FIXTURES / "manual" / "m04_globals_init.ptx")
    cube = next(v for v in g.globals if v.names[0].name == "cube")
    assert cube.names[0].dims == (2, 2, 2) and isinstance(cube.init.items[1].items[0], InitList)
    assert constant_value(cube.init.items[1].items[1].items[1]) == 8

    p = parse_file(FIXTURES / "manual" / "m10_params.ptx")
    out = p.function("params").params[0]
    assert (out.attrs, out.ptr_align, out.align) == (("u64", "ptr", "global"), 16, None)
    arr = p.function("params").params[3]
    assert (arr.align, arr.names[0].dims) == (8, (16,))


def test_constant_expressions_follow_c():
    from ptxstatic.ptx import parse_text
    from ptxstatic.ptx.ast import Imm, Tup, constant_value
    from ptxstatic.ptx.printer import module as print_module

    text = (".version 8.0\n.target sm_80\n.func (.reg .b32 r) f(.reg .b32 a, .reg .b32 b)\n{\n\tret;\n}\n"
            ".visible .entry k()\n{\n\t.reg .b32 %r<9>;\n\tmov.s32 %r1, -7 / 2;\n\tmov.s32 %r2, -7 % 2;\n"
            "\tmov.s64 %r3, 1 << 63;\n\tmov.s32 %r4, ~(5);\n\tmov.s32 %r5, -(3 * 2);\n"
            "\tcall.uni (%r6), f, (%r1, 5);\n\tcall.uni (%r7), f, (4);\n\tret;\n}\n")
    m = parse_text(text, "c.ptx")
    ins = m.function("k").instructions
    assert [constant_value(i.operands[1]) for i in ins[:5]] == [-3, -1, -(1 << 63), -6, -6]
    assert ins[5].operands[2] == Tup((Reg("%r1"), Imm("5")))
    assert ins[6].operands[2] == Tup((Imm("4"),))  # a one-constant argument list stays an argument list
    assert parse_text(print_module(m), "again") == m
