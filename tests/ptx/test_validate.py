"""Validation refuses what ptxas refuses, at the right place, and accepts every valid fixture.

Each refused case is one edit of real nvcc output (``loops.ptx``, sm_80); where ptxas is on the PATH the
same edit is checked to be refused by ptxas too.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from support.paths import DATA, FIXTURES, corpus_files, needs_ptxas

from ptxstatic.errors import SourceError
from ptxstatic.ptx import parse_file, parse_text
from ptxstatic.ptx.validate import ModuleChecker, check, validate_module

LOOPS = FIXTURES / "nvcc" / "sm_80" / "plain" / "loops.ptx"
INLINE_ASM = DATA / "validate" / "inline_asm_scopes_sm80.ptx"

# name -> (old text, new text, expected line, words of the message)
EDITS = {
    "empty file": (None, "", 1, "missing .version"),
    "comments only": (None, "// nothing here\n", 1, "missing .version"),
    "missing .version": (".version 9.0\n", "", 9, "missing .version"),
    "missing .target": (".target sm_80\n", "", 10, "missing .target"),
    ".target before .version": (".version 9.0\n.target sm_80\n", ".target sm_80\n.version 9.0\n", 9,
                                "missing .version"),
    ".address_size 48": (".address_size 64", ".address_size 48", 11, "invalid .address_size 48"),
    ".address_size 1e400": (".address_size 64", ".address_size 1e400", 11, "invalid .address_size"),
    "unsupported .version": (".version 9.0", ".version 9.9", 9, "unsupported .version 9.9"),
    "version too old for the target": (".version 9.0", ".version 6.0", 10, "does not support .target sm_80"),
    "unknown opcode": ("\tadd.s32 \t%r17, %r11, -1;", "\tfoo.s32 \t%r17, %r11, -1;", 47, "unknown instruction 'foo'"),
    "add.f33": ("\tadd.f32 \t%f13, %f24, %f12;", "\tadd.f33 \t%f13, %f24, %f12;", 63, "unknown type .f33"),
    "undefined label": ("@%p3 bra \t$L__BB0_5;", "@%p3 bra \t$L__BB0_55;", 51, "undefined label '$L__BB0_55'"),
    "undefined register": ("\tadd.s32 \t%r17, %r11, -1;", "\tadd.s32 \t%r17, %r99, -1;", 47, "undefined register %r99"),
    "register of the wrong type": ("\tadd.s32 \t%r17, %r11, -1;", "\tadd.s32 \t%r17, %rd11, -1;", 47,
                                   "%rd11 is .b64, not compatible with .s32"),
    "float register in an integer add": ("\tadd.s32 \t%r17, %r11, -1;", "\tadd.s32 \t%r17, %f11, -1;", 47,
                                         "%f11 is .f32"),
    "predicate guard of the wrong type": ("@%p3 bra \t$L__BB0_5;", "@%r3 bra \t$L__BB0_5;", 51, "non-predicate"),
    "missing operand": ("\tadd.s32 \t%r17, %r11, -1;", "\tadd.s32 \t%r17, %r11;", 47, "takes 3 operand(s), found 2"),
    "constant as destination": ("\tadd.s32 \t%r17, %r11, -1;", "\tadd.s32 \t17, %r11, -1;", 47,
                                "the destination must be a register"),
    "octal-looking constant 08": ("\tadd.s32 \t%r17, %r11, -1;", "\tadd.s32 \t%r17, %r11, 08;", 47,
                                  "invalid constant '08'"),
    "rounding on an integer add": ("\tadd.s32 \t%r17, %r11, -1;", "\tadd.rn.s32 \t%r17, %r11, -1;", 47,
                                   "rounding .rn"),
    "integer mul without .lo": ("mul.lo.s64 \t%rd12, %rd3, %rd2;", "mul.s64 \t%rd12, %rd3, %rd2;", 54,
                                "needs exactly one of .lo, .hi, .wide"),
    "duplicate register declaration": ("\t.reg .f32 \t%f<25>;", "\t.reg .f32 \t%f<25>;\n\t.reg .f32 \t%f3;", 24,
                                       "duplicate definition of register '%f3'"),
    "duplicate label": ("$L__BB0_5:\n", "$L__BB0_5:\n$L__BB0_5:\n", 77, "duplicate definition of label"),
    "duplicate kernel": (".visible .entry loop_box_filter_2d(", ".visible .entry loop_row_sum(", 106,
                         "duplicate definition of function 'loop_row_sum'"),
    "special register written": ("mov.u32 \t%r15, %tid.x;", "mov.u32 \t%tid.x, %r15;", 35, "read-only"),
    "instruction newer than the target": ("\tadd.s32 \t%r17, %r11, -1;", "\tredux.sync.add.s32 \t%r17, %r11, -1;",
                                          47, None),
    # issue 23: what ptxas refuses and validation took
    "a register range of 2^32": ("\t.reg .b64 \t%rd<24>;", "\t.reg .b64 \t%rd<24>;\n\t.reg .b32 \t%q<4294967296>;", 26,
                                 "register range %q<4294967296> is too large"),
    "tf32 rounding to nearest before sm_90": ("\tadd.s32 \t%r17, %r11, -1;", "\tcvt.rn.tf32.f32 \t%r17, %f24;", 47,
                                              "'cvt.rn.tf32.f32' requires .target sm_90 or later"),
    "a non-ASCII register name": ("\tadd.s32 \t%r17, %r11, -1;", "\tadd.s32 \t%r17, %r1\u00e9, -1;", 47,
                                  "non-ASCII character '\u00e9' (U+00E9): PTX is ASCII text"),
    "a non-ASCII label": ("$L__BB0_5:\n", "$L__BB\u00e9_5:\n", 76, "non-ASCII character"),
    "a non-ASCII kernel name": (".visible .entry loop_row_sum(", ".visible .entry loop_row_sum\u00e9(", 15,
                                "non-ASCII character"),
    "an integer constant over 64 bits": ("\tadd.s32 \t%r17, %r11, -1;",
                                         "\tadd.s32 \t%r17, %r11, 123456789012345678901234567890;", 47,
                                         "integer constant 123456789012345678901234567890 does not fit 64 bits"),
    ".reqntid 0": (")\n{\n", ")\n.reqntid 0\n{\n", 15, ".reqntid of 'loop_row_sum' takes positive values, not 0"),
    "st.const": ("\tadd.s32 \t%r17, %r11, -1;", "\tst.const.u32 \t[%rd1], %r17;", 47,
                 "'st' cannot write the read-only .const state space"),
    "1 MiB of .shared": ("\t.reg .b64 \t%rd<24>;", "\t.reg .b64 \t%rd<24>;\n\t.shared .align 4 .b8 \tbig[1048576];", 15,
                         "kernel 'loop_row_sum' uses 1048576 bytes of static shared memory; ptxas allows 49152"),
    "%tid.x after .reg %tid": ("\tmov.u32 \t%r15, %tid.x;", "\t.reg .b32 \t%tid;\n\tmov.u32 \t%r15, %tid.x;", 36,
                               "%tid is declared as a register, so %tid.x is not the special register"),
    ".align 3": ("\t.reg .b64 \t%rd<24>;", "\t.reg .b64 \t%rd<24>;\n\t.local .align 3 .b8 \tbuf[12];", 26,
                 "alignment 3 of buf is not a power of two"),
    ".reg .q64": ("\t.reg .b64 \t%rd<24>;", "\t.reg .b64 \t%rd<24>;\n\t.reg .q64 \t%q<2>;", 26,
                  "unknown type .q64 in the declaration of %q"),
    ".reg .f33 in use": ("\t.reg .f32 \t%f<25>;", "\t.reg .f33 \t%f<25>;", 23,
                         "unknown type .f33 in the declaration of %f"),
}
#: edits that ptxas accepts, and validation with it (the first three it refused, the others it may not start to)
ACCEPTED = {
    "a register named %tid": ("\tmov.u32 \t%r15, %tid.x;",
                              "\t.reg .b32 \t%tid;\n\tmov.b32 \t%tid, 7;\n\tmov.u32 \t%r15, %tid;"),
    "%tid.w": ("\tmov.u32 \t%r15, %tid.x;", "\tmov.u32 \t%r15, %tid.w;"),
    "2^65, 0 as ptxas reads it": ("mul.lo.s64 \t%rd12, %rd3, %rd2;", "mul.lo.s64 \t%rd12, %rd3, 36893488147419103232;"),
    "a register range of 2^31": ("\t.reg .b64 \t%rd<24>;", "\t.reg .b64 \t%rd<24>;\n\t.reg .b32 \t%q<2147483648>;"),
    "48 KiB of .shared": ("\t.reg .b64 \t%rd<24>;", "\t.reg .b64 \t%rd<24>;\n\t.shared .align 4 .b8 \tbig[49152];"),
}


def edited(name: str) -> str:
    old, new = EDITS[name][:2] if name in EDITS else ACCEPTED[name]
    text = LOOPS.read_text()
    if old is None:
        return new
    assert text.count(old) >= 1, old
    return text.replace(old, new, 1)


def validation_error(text: str) -> SourceError:
    with pytest.raises(SourceError) as info:
        check(parse_text(text, "case.ptx"), text)
    return info.value


@pytest.mark.parametrize("name", [n for n in EDITS if n != "instruction newer than the target"])
def test_refused_at_the_line_with_the_reason(name):
    _, _, line, words = EDITS[name]
    text = edited(name)
    err = validation_error(text)
    assert err.line == line, err.render()
    assert words in err.message, err.render()
    rendered = err.render()
    assert rendered.startswith(f"case.ptx:{line}:{err.column}: error: ")
    if text.strip():
        assert rendered.splitlines()[-1].strip() == "^"


def test_instruction_newer_than_the_target_is_refused_on_sm_75_only():
    text = edited("instruction newer than the target")
    check(parse_text(text, "case.ptx"), text)  # sm_80 has redux
    old = text.replace(".target sm_80", ".target sm_75", 1)
    err = validation_error(old)
    assert err.line == 47 and "requires .target sm_80" in err.message


@needs_ptxas
@pytest.mark.parametrize("name", list(EDITS))
def test_ptxas_refuses_the_same_edit(name, tmp_path):
    text = edited(name)
    if name == "instruction newer than the target":
        text = text.replace(".target sm_80", ".target sm_75", 1)
    src = tmp_path / "case.ptx"
    src.write_text(text)
    arch = "sm_75" if ".target sm_75" in text else "sm_80"
    proc = subprocess.run(["ptxas", f"-arch={arch}", str(src), "-o", str(tmp_path / "case.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode != 0, f"ptxas accepts {name}"


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_accepted_as_ptxas_accepts_it(name, tmp_path):
    text = edited(name)
    check(parse_text(text, "case.ptx"), text)
    if shutil.which("ptxas"):
        src = tmp_path / "case.ptx"
        src.write_text(text)
        proc = subprocess.run(["ptxas", "-arch=sm_80", str(src), "-o", str(tmp_path / "case.cubin")],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_every_fixture_is_valid():
    for path in [*corpus_files(), INLINE_ASM]:
        module = parse_file(path)
        assert validate_module(module).errors == [], path


def test_errors_of_one_kernel_stay_with_it():
    text = edited("undefined register")
    result = validate_module(parse_text(text, "case.ptx"), text)
    assert result.module == []
    assert list(result.functions) == ["loop_row_sum"]
    module = parse_text(text, "case.ptx")
    assert result.blocking(module, "loop_row_sum") and not result.blocking(module, "loop_box_filter_2d")


def test_functions_may_be_checked_one_at_a_time():
    """The module part is fed items in order: a function is checked against what came before it."""
    module = parse_file(LOOPS)
    checker = ModuleChecker(module.filename)
    for item in module.items:
        checker.item(item)
        if getattr(item, "body", None) is not None:
            assert checker.check_function(item) == []
    checker.finish()
    assert checker.errors == []


# ------------------------------------------------------------------------------------- crashes of issue 13
def test_huge_float_in_a_debug_byte_list_is_an_error_not_a_crash():
    text = (FIXTURES / "manual" / "m08_debug_sections.ptx").read_text()
    broken = text.replace("$L__info_string0:\n.b8 115,", "$L__info_string0:\n.b8 1e400,", 1)
    assert broken != text
    module = parse_text(broken, "case.ptx")  # the source map skips what is not a byte
    err = validation_error(broken)
    assert "1e400" in err.message and err.line > 0
    assert module.functions


def test_octal_looking_literal_is_an_error_not_a_crash():
    err = validation_error(edited("octal-looking constant 08"))
    assert "leading 0 means octal" in err.message


def test_huge_address_size_is_an_error_not_a_crash():
    text = edited(".address_size 1e400")
    module = parse_text(text, "case.ptx")
    assert module.address_size == 0  # no ValueError from the property
    assert "invalid .address_size 1e400" in validation_error(text).message


# ------------------------------------------------------------------------- inline asm: d|p with plain names
def test_inline_asm_named_registers_in_a_pair():
    module = parse_file(INLINE_ASM)
    assert validate_module(module).errors == []
    shfl = [i for k in module.kernels for i in k.instructions if i.opcode.startswith("shfl")]
    assert len(shfl) == 10
    assert {(i.operands[0].first.name, i.operands[0].second.name) for i in shfl} == {("r0", "p"), ("lo", "valid")}


def test_undeclared_plain_name_in_a_pair_is_refused():
    text = INLINE_ASM.read_text().replace(".reg .pred p;", ".reg .pred q;", 1)
    err = validation_error(text)
    assert "undefined register p" in err.message


@needs_ptxas
def test_ptxas_accepts_the_inline_asm_fixture(tmp_path):
    proc = subprocess.run(["ptxas", "-arch=sm_80", str(INLINE_ASM), "-o", str(tmp_path / "a.cubin")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_nvcc_emits_the_named_pair(build_ptx):
    """nvcc's PTX of the source holds the ``r0|p`` pair, and validates (the loader validates what it builds)."""
    built = build_ptx(INLINE_ASM.with_name("inline_asm_scopes.cu"), "sm_80")
    assert "shfl.sync.up.b32 r0|p," in built.text



def test_a_function_with_an_empty_body_parses():
    """ptxas takes ``.func f(...) { }``; the splitter must not read the braces as an initialiser."""
    text = (FIXTURES / "manual" / "m01_indirect_call.ptx").read_text()
    old = ".func log_nothing(.param .b32 code)\n{\n\tret;\n}"
    assert old in text
    module = check(parse_text(text.replace(old, ".func log_nothing(.param .b32 code)\n{\n}"), "case.ptx"))
    assert module.function("log_nothing").body == ()
    assert [v.names[0].name for v in module.globals if v.names[0].name == "op_table"] == ["op_table"]
