"""PTX front end: grammar, parser, AST, ISA table, printer and source map.

The names below are imported on first use, so that importing a module of this package (the AST, the ISA
table) does not load the parser and Lark.
"""

from ptxstatic.lazy import lazy_exports

_EXPORTS = {
    "Function": "ast", "Instruction": "ast", "Module": "ast",
    "ModuleStream": "parser", "parse_file": "parser", "parse_reference": "parser", "parse_text": "parser",
}
__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, {n: f"ptxstatic.ptx.{m}" for n, m in _EXPORTS.items()})
