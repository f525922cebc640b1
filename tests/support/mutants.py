"""Grammar-aware mutants of PTX text, deterministic for a seed.

``mutants(text, seed, n)`` returns ``n`` :class:`Mutant` records, each the whole text with one edit of one
kind (see :data:`KINDS`): a token deleted or two operands swapped, a type suffix, opcode or modifier
substituted, a register or label renamed, a directive (``.version``, ``.target``, ``.address_size``)
edited, a declaration or a line dropped or duplicated. Some edits keep the module valid (``add`` to
``sub``, a register renamed to another declared register of its type), most do not; the point is to ask
a reference assembler. Every mutant differs from the input. For Hypothesis, map a seed strategy:
``st.integers(0, 2**32).map(lambda s: mutants(text, s, 1)[0])``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ptxstatic.ptx.isa import BASE_WORDS, TYPE_BITS


@dataclass(frozen=True)
class Mutant:
    """One edit of a PTX text: its kind, the mutated text, the 1-based line edited and what was done."""

    kind: str
    text: str
    line: int
    detail: str


_TOKEN = re.compile(
    r"%?[A-Za-z_$][\w$]*(?:\.[\w$:]+)*|0[fFdD][0-9a-fA-F]{8,16}|0[xXbB][0-9a-fA-F]+U?|\d+(?:\.\d+)?U?"
    r"|@!?|\|\||[\[\]{},;|+\-<>()!]|\S"
)
_INSTRUCTION = re.compile(r"^\s*(?:@!?%?[\w$]+\s+)?(?P<op>[a-z][\w$:]*(?:\.[\w$:]+)*)[\s;]")
_REG_DECL = re.compile(r"^\s*\.reg\s+\.(?P<type>\w+)\s+(?P<names>[^;]+);")
_REGISTER = re.compile(r"%[A-Za-z_$][\w$]*")
_LABEL_DEF = re.compile(r"^\s*(?P<name>[A-Za-z_$][\w$]*):")
_DIRECTIVE = re.compile(r"^\s*\.(?P<name>version|target|address_size)\b")
_DECLARATION = re.compile(r"^\s*(?:\.(?:visible|extern|weak)\s+)?\.(?:reg|shared|global|const|local|param)\b")

_TYPE_POOL = ("f32", "f64", "f16", "s32", "u32", "b32", "s64", "u64", "b64", "s16", "u16", "b16", "u8", "s8",
              "pred", "f33", "u31", "b7", "s128", "f16x2", "bf16")
_OPCODE_POOL = ("add", "sub", "mul", "mad", "fma", "min", "max", "and", "or", "xor", "shl", "shr", "mov",
                "ld", "st", "cvt", "setp", "selp", "div", "rem", "abs", "neg", "not", "bra", "ret",
                "addx", "load", "mvo", "fmad", "shfl", "atom", "popc", "sqrt", "rcp", "ex2")
_MODIFIER_POOL = ("rn", "rz", "sat", "ftz", "approx", "lo", "hi", "wide", "uni", "global", "shared", "local",
                  "const", "param", "volatile", "v2", "v4", "sync", "aligned", "cta", "gpu", "relaxed",
                  "nc", "cg", "full", "bogus")
_VERSIONS = ("6.0", "7.0", "7.5", "7.8", "8.0", "8.3", "8.5", "8.7", "8.8", "9.0", "9.1", "9.9", "10.0",
             "1.0", "8", "x.y")
_TARGETS = ("sm_50", "sm_52", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a",
            "sm_100", "sm_120", "sm_13", "sm_999", "compute_80", "gfx90a")
_ADDRESS_SIZES = ("32", "64", "48", "16", "0", "1e400", "064")


@dataclass(frozen=True)
class _Plan:
    """Where the mutable things of a text are, found once per text."""

    lines: tuple[str, ...]
    instructions: tuple[int, ...]  # line indices of instruction statements
    directives: tuple[int, ...]  # .version/.target/.address_size lines
    declarations: tuple[int, ...]  # .reg/.shared/.global/... declaration lines
    label_defs: tuple[int, ...]
    labels: tuple[str, ...]
    registers: dict[str, tuple[str, ...]]  # register type -> register names declared with it


def _declared_registers(line: str) -> tuple[str, list[str]]:
    """The type and the register names of one ``.reg`` line (``%r<5>`` gives %r0..%r4)."""
    m = _REG_DECL.match(line)
    if not m:
        return "", []
    names: list[str] = []
    for part in m["names"].split(","):
        part = part.strip()
        vec = re.fullmatch(r"(%?[\w$]+)<(\d+)>", part)
        if vec:
            names += [f"{vec[1]}{i}" for i in range(min(int(vec[2]), 64))]
        elif part:
            names.append(part)
    return m["type"], names


@lru_cache(maxsize=64)
def _plan(text: str) -> _Plan:
    lines = tuple(text.split("\n"))
    instructions, directives, declarations, label_defs, labels = [], [], [], [], []
    registers: dict[str, list[str]] = {}
    for i, line in enumerate(lines):
        if _DIRECTIVE.match(line):
            directives.append(i)
        elif _DECLARATION.match(line):
            declarations.append(i)
            rtype, names = _declared_registers(line)
            if rtype:
                registers.setdefault(rtype, []).extend(names)
        elif (m := _LABEL_DEF.match(line)) and not line.lstrip().startswith("."):
            label_defs.append(i)
            labels.append(m["name"])
        elif (m := _INSTRUCTION.match(line)) and m["op"].split(".")[0] in BASE_WORDS:
            instructions.append(i)
    return _Plan(lines, tuple(instructions), tuple(directives), tuple(declarations), tuple(label_defs),
                 tuple(labels), {k: tuple(v) for k, v in registers.items()})


def _tokens(line: str) -> list[re.Match[str]]:
    code = line.split("//", 1)[0]
    return list(_TOKEN.finditer(code))


def _replace_span(line: str, start: int, end: int, new: str) -> str:
    return line[:start] + new + line[end:]


# ------------------------------------------------------------------------------------ the edits, by kind
# Each takes the plan and a random generator and returns (line index, new line or None to delete, detail),
# or None when the text has nothing of that kind to edit.
_Edit = tuple[int, "str | list[str] | None", str]


def _delete_token(plan: _Plan, rng: random.Random) -> _Edit | None:
    i = rng.choice(plan.instructions)
    toks = _tokens(plan.lines[i])
    t = rng.choice(toks)
    return i, _replace_span(plan.lines[i], t.start(), t.end(), ""), f"deleted {t[0]!r}"


def _operands(line: str) -> list[re.Match[str]]:
    """The operand tokens of an instruction line: after the opcode, not punctuation."""
    toks = _tokens(line)
    start = next((k for k, t in enumerate(toks) if t[0][0].isalpha()), len(toks))
    return [t for t in toks[start + 1:] if t[0] not in ",;[]{}|+-<>()!"]


def _swap_tokens(plan: _Plan, rng: random.Random) -> _Edit | None:
    i = rng.choice(plan.instructions)
    ops = _operands(plan.lines[i])
    if len(ops) < 2:
        return None
    a, b = sorted(rng.sample(range(len(ops)), 2))
    ta, tb = ops[a], ops[b]
    if ta[0] == tb[0]:
        return None
    line = plan.lines[i]
    new = line[:ta.start()] + tb[0] + line[ta.end():tb.start()] + ta[0] + line[tb.end():]
    return i, new, f"swapped {ta[0]!r} and {tb[0]!r}"


def _opcode_match(line: str) -> re.Match[str]:
    m = _INSTRUCTION.match(line)
    assert m is not None
    return m


def _edit_opcode_words(plan: _Plan, rng: random.Random, pick: Callable[[list[str]], str | None]) -> _Edit | None:
    i = rng.choice(plan.instructions)
    m = _opcode_match(plan.lines[i])
    words = m["op"].split(".")
    new_op = pick(words)
    if new_op is None or new_op == m["op"]:
        return None
    return i, _replace_span(plan.lines[i], m.start("op"), m.end("op"), new_op), f"{m['op']} -> {new_op}"


def _type_suffix(plan: _Plan, rng: random.Random) -> _Edit | None:
    def pick(words: list[str]) -> str | None:
        idx = [k for k, w in enumerate(words) if k and w in TYPE_BITS]
        if not idx:
            return None
        words[rng.choice(idx)] = rng.choice(_TYPE_POOL)
        return ".".join(words)
    return _edit_opcode_words(plan, rng, pick)


def _opcode(plan: _Plan, rng: random.Random) -> _Edit | None:
    def pick(words: list[str]) -> str:
        words[0] = rng.choice(_OPCODE_POOL)
        return ".".join(words)
    return _edit_opcode_words(plan, rng, pick)


def _modifier(plan: _Plan, rng: random.Random) -> _Edit | None:
    def pick(words: list[str]) -> str:
        if len(words) > 1 and rng.random() < 0.5:
            del words[rng.randrange(1, len(words))]
        else:
            words.insert(rng.randrange(1, len(words) + 1), rng.choice(_MODIFIER_POOL))
        return ".".join(words)
    return _edit_opcode_words(plan, rng, pick)


def _register_rename(plan: _Plan, rng: random.Random) -> _Edit | None:
    i = rng.choice(plan.instructions)
    regs = list(_REGISTER.finditer(plan.lines[i].split("//", 1)[0]))
    if not regs:
        return None
    r = rng.choice(regs)
    choice = rng.random()
    declared = [n for names in plan.registers.values() for n in names if n.startswith("%")]
    if choice < 0.6 and declared:
        new = rng.choice(declared)  # another declared register, often of another type
    elif choice < 0.8:
        new = re.sub(r"\d*$", "", r[0]) + str(rng.randrange(5000, 100000))  # beyond the declared count
    else:
        new = "%" + rng.choice(("undeclared", "q", "rx", "r", "fd", "tid.w", "laneid.x"))
    if new == r[0]:
        return None
    return i, _replace_span(plan.lines[i], r.start(), r.end(), new), f"{r[0]} -> {new}"


def _label_rename(plan: _Plan, rng: random.Random) -> _Edit | None:
    if not plan.labels:
        return None
    if rng.random() < 0.3:  # rename a definition: its uses become undefined, or it clashes
        i = rng.choice(plan.label_defs)
        m = _LABEL_DEF.match(plan.lines[i])
        assert m is not None
        new = rng.choice((*plan.labels, "$L__renamed_" + str(rng.randrange(1000))))
        return i, _replace_span(plan.lines[i], m.start("name"), m.end("name"), new), f"label {m['name']} -> {new}"
    uses = [i for i in plan.instructions if _opcode_match(plan.lines[i])["op"].split(".")[0] == "bra"]
    if not uses:
        return None
    i = rng.choice(uses)
    m = re.search(r"([A-Za-z_$][\w$]*)\s*;", plan.lines[i])
    if not m:
        return None
    new = rng.choice((*plan.labels, m[1] + "_x", "$L__nowhere"))
    if new == m[1]:
        return None
    return i, _replace_span(plan.lines[i], m.start(1), m.end(1), new), f"branch to {new}"


def _directive(plan: _Plan, rng: random.Random) -> _Edit | None:
    if not plan.directives:
        return None
    i = rng.choice(plan.directives)
    line = plan.lines[i]
    name = _DIRECTIVE.match(line)["name"]  # type: ignore[index]
    action = rng.random()
    if action < 0.15:
        return i, None, f"deleted .{name}"
    if action < 0.25:
        return i, [line, line], f"duplicated .{name}"
    if action < 0.3:
        j = rng.choice(plan.directives)
        return (i, plan.lines[j], f".{name} replaced by line {j + 1}") if j != i else None
    pool = {"version": _VERSIONS, "target": _TARGETS, "address_size": _ADDRESS_SIZES}[name]
    value = rng.choice(pool)
    indent = line[: len(line) - len(line.lstrip())]
    return i, f"{indent}.{name} {value}", f".{name} {value}"


def _declaration(plan: _Plan, rng: random.Random) -> _Edit | None:
    if not plan.declarations:
        return None
    i = rng.choice(plan.declarations)
    line = plan.lines[i]
    if rng.random() < 0.5:
        return i, None, f"deleted declaration {line.strip()!r}"
    return i, [line, line], f"duplicated declaration {line.strip()!r}"


def _line(plan: _Plan, rng: random.Random) -> _Edit | None:
    i = rng.choice(plan.instructions + plan.label_defs)
    line = plan.lines[i]
    if rng.random() < 0.5:
        return i, None, f"deleted line {line.strip()!r}"
    return i, [line, line], f"duplicated line {line.strip()!r}"


_EDITS: dict[str, Callable[[_Plan, random.Random], _Edit | None]] = {
    "delete_token": _delete_token,
    "swap_tokens": _swap_tokens,
    "type_suffix": _type_suffix,
    "opcode": _opcode,
    "modifier": _modifier,
    "register_rename": _register_rename,
    "label_rename": _label_rename,
    "directive": _directive,
    "declaration": _declaration,
    "line": _line,
}
#: every kind of edit
KINDS: tuple[str, ...] = tuple(_EDITS)


def _apply(plan: _Plan, i: int, new: str | list[str] | None) -> str:
    replacement = [] if new is None else [new] if isinstance(new, str) else new
    return "\n".join((*plan.lines[:i], *replacement, *plan.lines[i + 1:]))


def mutants(text: str, seed: int, n: int, kinds: Sequence[str] = KINDS) -> list[Mutant]:
    """``n`` mutants of ``text``, each one edit of a kind drawn from ``kinds``; the same for the same seed.

    Fewer than ``n`` come back only when the text has nothing the kinds can edit (e.g. no instruction).
    """
    unknown = set(kinds) - set(_EDITS)
    if unknown:
        raise ValueError(f"unknown mutant kinds: {sorted(unknown)}")
    plan = _plan(text)
    usable = [k for k in kinds if plan.instructions or k in ("directive", "declaration")]
    rng = random.Random(seed)
    out: list[Mutant] = []
    tries = 0
    while usable and len(out) < n and tries < 20 * n + 100:
        tries += 1
        kind = rng.choice(usable)
        edit = _EDITS[kind](plan, rng)
        if edit is None:
            continue
        i, new, detail = edit
        mutated = _apply(plan, i, new)
        if mutated != text:
            out.append(Mutant(kind, mutated, i + 1, detail))
    return out
