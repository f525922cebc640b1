"""Reading a PTX file one function at a time: the same functions, locations and errors as the whole-module
parser, one function's AST alive at a time, and the module's views built once."""

from __future__ import annotations

import gc
import weakref

import pytest
from support.paths import corpus_files

from ptxstatic.errors import SourceError
from ptxstatic.ptx.parser import ModuleStream, parse_text

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
GOOD = """
.visible .entry good(.param .u64 p)
{
\t.reg .b64 %rd<3>;
\tld.param.u64 %rd1, [p];
\tret;
}
"""


def _stream_and_whole(text: str, name: str) -> tuple[ModuleStream, list, object]:
    whole = parse_text(text, name, recover=True)
    stream = ModuleStream(text, name, recover=True)
    return stream, list(stream.functions()), whole


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: str(p.relative_to(p.parents[2])))
def test_stream_gives_the_whole_module_functions(path):
    stream, functions, whole = _stream_and_whole(path.read_text(), str(path))
    defined = [f for f in whole.functions if f.body is not None]
    assert functions == defined
    for got, want in zip(functions, defined):
        assert [i.loc for i in got.instructions] == [i.loc for i in want.instructions]
        assert (got.line, got.column) == (want.line, want.column)
    assert stream.module.globals == whole.globals
    assert stream.module.files == whole.files
    assert (stream.module.version, stream.module.target) == (whole.version, whole.target)
    assert [str(e) for e in stream.module.errors] == [str(e) for e in whole.errors]


def test_errors_are_met_in_order_and_the_other_functions_kept():
    bad = ".visible .entry broken()\n{\n\tadd.s32 %r1 %r2;\n\t{\n\tret;\n\t}\n}\n"
    text = HEADER + GOOD + bad + GOOD.replace("good", "after") + ".global .u32 tail_var;\n"
    stream, functions, whole = _stream_and_whole(text, "bad.ptx")
    assert [f.name for f in functions] == ["good", "after"]
    assert [(e.line, e.message) for e in stream.module.errors] == [(e.line, e.message) for e in whole.errors]
    assert stream.module.errors[0].line == 13
    assert [g.names[0].name for g in stream.module.globals] == ["tail_var"]


def test_unclosed_function_is_reported_when_the_file_is_read():
    with pytest.raises(SourceError) as info:
        ModuleStream(HEADER + GOOD + ".visible .entry k()\n{\n  ret;\n", "bad.ptx")
    assert info.value.line == 12 and "never closed" in info.value.message


def test_error_in_a_body_raises_when_that_function_is_reached_without_recovery():
    stream = ModuleStream(HEADER + GOOD + ".visible .entry k()\n{\n\tmov.u32 %r1, ;\n}\n", "bad.ptx")
    names = []
    with pytest.raises(SourceError) as info:
        for fn in stream.functions():
            names.append(fn.name)
    assert names == ["good"] and (info.value.line, info.value.column) == (13, 15)


def test_only_selected_functions_are_parsed():
    text = HEADER + GOOD + ".visible .entry k()\n{\n\tmov.u32 %r1, ;\n}\n" + GOOD.replace("good", "after")
    stream = ModuleStream(text, "bad.ptx")
    assert [d.head.name for d in stream.deferred] == ["good", "k", "after"]
    assert [f.name for f in stream.functions(lambda head: head.name != "k")] == ["good", "after"]


def test_one_function_alive_at_a_time():
    text = HEADER + "".join(GOOD.replace("good", f"k{i}") for i in range(20))
    stream = ModuleStream(text, "many.ptx")
    previous = None
    for fn in stream.functions():
        assert len(fn.instructions) == 2
        gc.collect()
        assert previous is None or previous() is None  # the function before is gone
        previous = weakref.ref(fn)


def test_module_views_are_built_once():
    m = parse_text(HEADER + ".global .u32 g;\n" + GOOD + GOOD.replace("good", "other"), "m.ptx")
    assert m.functions is m.functions and m.globals is m.globals
    assert [k.name for k in m.kernels] == ["good", "other"]
    assert m.function("other") is m.kernels[1]
    with pytest.raises(KeyError):
        m.function("missing")
