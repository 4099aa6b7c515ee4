"""The values a compiled program holds, read from its optimised HLO text: parameters, outputs, temporaries.

One pass over the ``ENTRY`` computation (the module's other computations are
fusion bodies, loop bodies and reducers, whose values live inside the
instruction that calls them). Each instruction that defines a buffer gives
its name, type and bytes; the module header's ``input_output_alias`` says
which parameters are donated and reused as outputs. Sizes are the values'
own: XLA's buffer assignment may place temporaries whose lifetimes do not
overlap in one allocation, so ``memory_analysis()``'s ``temp_size_in_bytes``
can be smaller than the temporaries listed here added up.

Pure text: no JAX, no IPython.
"""

from __future__ import annotations

import functools
import heapq
import math
import re

from jaxshow.report import BufferKind, BufferSpec

BUFFERS_KEPT = 10
"""Values kept per compiled program, the largest."""

NO_BUFFER = frozenset({"tuple", "get-tuple-element", "bitcast", "after-all", "add-dependency", "optimization-barrier"})
"""Opcodes whose result is a view of, or a pointer table over, other values: no bytes of their own."""

_INSTRUCTION = re.compile(r"\s*(ROOT\s+)?%?([^\s=]+)\s*=\s*")
_ARRAY = re.compile(r"\b([a-z][a-z0-9]*)\[([^\]]*)\]")
_LAYOUT = re.compile(r"\{[^{}]*\}")
_INDEX_COMMENT = re.compile(r"/\*index=\d+\*/")
"""XLA's count in a long tuple type, before every fifth element: ``(f32[2], …, /*index=5*/f32[2])``."""
_OPCODE = re.compile(r"\s*([\w-]+)\(")
_OPERAND = re.compile(r"%?([^\s,()]+)")
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
_ALIAS = re.compile(r"\{([\d,\s]*)\}:\s*\((\d+),")
_BITS = re.compile(r"\d+")
_PAREN = re.compile(r"[()]")


def element_bits(dtype: str) -> int | None:
    """Bits of one element of an HLO type (``f32`` 32, ``bf16`` 16, ``pred`` 8, ``f8e4m3fn`` 8); ``None`` if unknown."""
    if dtype == "pred":
        return 8
    if dtype == "token":
        return 0
    found = _BITS.search(dtype)
    return int(found.group()) if found else None


@functools.lru_cache(maxsize=4096)
def type_bytes(type_text: str) -> int | None:
    """Bytes of the arrays in an HLO type, tuple elements added up; ``None`` when an element type is unknown."""
    total = 0
    for dtype, dims in _ARRAY.findall(type_text):
        bits = element_bits(dtype)
        if bits is None:
            return None
        count = math.prod(int(d.lstrip("<=")) for d in dims.split(",") if d.strip())
        total += math.ceil(count * bits / 8)
    return total


def _type_end(rest: str) -> int:
    """Where the type at the start of ``rest`` ends: a balanced tuple ``( … )`` or one token."""
    if not rest.startswith("("):
        space = rest.find(" ")
        return len(rest) if space < 0 else space
    depth = 0
    for paren in _PAREN.finditer(rest):  # a tuple of thousands of arrays has a few parentheses and tens of kB between them
        depth += 1 if paren.group() == "(" else -1
        if depth == 0:
            return paren.end()
    return len(rest)


def _aliases(header: str) -> dict[int, str]:
    """``input_output_alias={ {0}: (0, {}, may-alias) }`` as parameter number -> ``output 0``."""
    start = header.find("input_output_alias={")
    if start < 0:
        return {}
    return {int(param): _output_name(index.replace(" ", "")) for index, param in _ALIAS.findall(header[start:])}


def _output_name(index: str) -> str:
    """An output's tuple index as the report names outputs: ``output 0``; ``the output`` when not a tuple."""
    if not index:
        return "the output"
    return f"output {index}" if index.isdigit() else f"output {{{index}}}"


def entry_buffers(hlo_text: str, kept: int = BUFFERS_KEPT) -> tuple[tuple[BufferSpec, ...], int]:
    """The ``kept`` largest values of the entry computation (largest first, then in program order), and how many it holds."""
    start = 0 if hlo_text.startswith("ENTRY ") else hlo_text.find("\nENTRY ") + 1
    if start == 0 and not hlo_text.startswith("ENTRY "):
        return (), 0
    end = hlo_text.find("\n}", start)
    found: list[tuple[int, int, str, str, str, str, int]] = []
    outputs: list[str] = []
    root = False
    for text in hlo_text[start: end if end >= 0 else None].split("\n")[1:]:
        head = _INSTRUCTION.match(text)
        if head is None:
            continue
        type_end = head.end() + _type_end(text[head.end():])
        opcode_match = _OPCODE.match(text, type_end)
        if opcode_match is None:
            continue
        opcode, name = opcode_match.group(1), head.group(2)
        if head.group(1):
            root = True
            if opcode == "tuple":
                outputs = _OPERAND.findall(text, opcode_match.end(), text.find(")", opcode_match.end()))
            else:
                outputs = [name]
        if opcode in NO_BUFFER:
            continue
        type_text = _type_text(text[head.end(): type_end])
        size = type_bytes(type_text)
        if size is not None:
            found.append((-size, len(found), name, opcode, type_text, text, opcode_match.end()))
    if not root:
        return (), 0
    aliases = _aliases(hlo_text[: hlo_text.find("\n")])
    output_of = {name: f"output {i}" if len(outputs) > 1 else "output" for i, name in enumerate(outputs)}
    return tuple(_spec(item, aliases, output_of) for item in heapq.nsmallest(kept, found)), len(found)


@functools.lru_cache(maxsize=4096)
def _type_text(raw: str) -> str:
    """A value's type as the table shows it: without layouts (``{1,0}``) or XLA's index comments."""
    return _INDEX_COMMENT.sub("", _LAYOUT.sub("", raw))


def _spec(item: tuple[int, int, str, str, str, str, int], aliases: dict[int, str], output_of: dict[str, str]) -> BufferSpec:
    """One found value as a record: what it is, from its opcode, the outputs and the donations."""
    minus_size, _, name, opcode, type_text, text, operands_at = item
    op_name = _OP_NAME.search(text, operands_at)
    made_by = op_name.group(1).replace("\\'", "'").replace('\\"', '"') if op_name else None
    kind: BufferKind
    if opcode == "parameter":
        number = text[operands_at: text.find(")", operands_at)].strip()
        kind, detail = "parameter", f"parameter {number}" + (f" ({made_by})" if made_by else "")
        if number.isdigit() and int(number) in aliases:
            detail += f"; donated: reused as {aliases[int(number)]}"
        elif name in output_of:
            detail += f"; returned as {output_of[name]}"
    elif name in output_of:
        kind, detail = "output", f"{output_of[name]}, {opcode}" + (f" of {made_by}" if made_by else "")
    elif opcode == "constant":
        kind, detail = "constant", "constant"
    else:
        kind, detail = "temporary", opcode + (f" of {made_by}" if made_by else "")
    return BufferSpec(name=name, kind=kind, type_text=type_text, size_bytes=-minus_size, opcode=opcode, detail=detail)
