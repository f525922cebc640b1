"""PTX front end: grammar, parser, AST, ISA table, printer and source map."""

from ptxstatic.ptx.ast import Function, Instruction, Module
from ptxstatic.ptx.parser import parse_file, parse_reference, parse_text

__all__ = ["Function", "Instruction", "Module", "parse_file", "parse_reference", "parse_text"]
