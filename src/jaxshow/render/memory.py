"""The memory picture of a compiled program: one bar to scale, XLA's peak under it, and the largest buffers.

Drawn from :class:`~jaxshow.report.MemoryStats` and
:class:`~jaxshow.report.BufferSpec` records, all known without running the
program. The bar's parts add up to what the executable holds: arguments
(less those donated and reused as outputs), the aliased bytes once, outputs
(less the aliased), temporaries and generated code. The HTML bar is styled
``<div>``s whose widths are percentages; a legend in plain text names every
part with its bytes, so a view that strips styles still reads. The text
form draws the bar in Unicode blocks. No JAX, no IPython.
"""

from __future__ import annotations

from typing import NamedTuple

from jaxshow.render.limits import TextBudget, limit_rows, message
from jaxshow.render.markup import Html, details, muted, table, tag
from jaxshow.render.plain import columns, paragraph, text_table, text_width
from jaxshow.report import BufferSpec, CompiledStation, MemoryStats, format_bytes, plural


class Part(NamedTuple):
    """One part of the bar: what it is, its bytes, its colour and its glyph in the text form."""

    label: str
    size_bytes: int
    colour: str
    glyph: str


COLOURS = {"arguments": "#388bfd", "aliased": "#a371f7", "outputs": "#3fb950", "temporaries": "#d29922",
           "generated code": "#8b949e", "peak": "#f85149"}
"""Mid-tone colours that read on light and dark backgrounds."""
GLYPHS = {"arguments": "█", "aliased": "▚", "outputs": "▓", "temporaries": "▒", "generated code": "░", "peak": "━"}
TEXT_WIDTH = 48
"""Characters of the text bar at full scale, where the text width has room for them."""
MIN_BAR = 20
"""Characters of the text bar at least, however narrow the text width."""
BAR_STYLE = ("display: flex; height: 14px; max-width: 480px; margin: 3px 0; border-radius: 3px; overflow: hidden; "
             "background: rgba(128, 128, 128, 0.2);")
KEY_STYLE = "display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 8px; vertical-align: middle; border-radius: 2px;"
BUFFER_HEADER = ("value", "kind", "type", "size", "what")
LABELS = {"arguments": "arguments", "aliased": "aliased (donated, reused as output)", "outputs": "outputs",
          "temporaries": "temporaries", "generated code": "generated code", "peak": "peak"}


def parts(memory: MemoryStats) -> tuple[Part, ...] | None:
    """The bar's parts, or ``None`` when XLA left out a figure they need (arguments, outputs, aliased, temporaries)."""
    needed = (memory.argument_size_bytes, memory.output_size_bytes, memory.alias_size_bytes, memory.temp_size_bytes)
    if any(n is None for n in needed):
        return None
    arguments, outputs, aliased, temporaries = needed
    sizes = {"arguments": arguments - aliased, "aliased": aliased, "outputs": outputs - aliased, "temporaries": temporaries}
    if memory.generated_code_size_bytes is not None:
        sizes["generated code"] = memory.generated_code_size_bytes
    return tuple(Part(label, size, COLOURS[label], GLYPHS[label]) for label, size in sizes.items() if label != "aliased" or size)


def _missing(memory: MemoryStats) -> str:
    names = ("arguments", "outputs", "aliased", "temporaries")
    values = (memory.argument_size_bytes, memory.output_size_bytes, memory.alias_size_bytes, memory.temp_size_bytes)
    return "no picture: memory_analysis() does not report " + ", ".join(n for n, v in zip(names, values) if v is None)


def _scale(drawn: tuple[Part, ...], memory: MemoryStats) -> int:
    return max(sum(p.size_bytes for p in drawn), memory.peak_memory_bytes or 0, 1)


def _caption(drawn: tuple[Part, ...]) -> str:
    return f"{format_bytes(sum(p.size_bytes for p in drawn))} in all, to scale (from the compiled program; nothing was run)"


def _peak_line(memory: MemoryStats, budget: TextBudget) -> str:
    if memory.peak_memory_bytes is None:
        return "peak: " + message(memory.peak_unavailable or "not reported", budget)
    return f"peak {format_bytes(memory.peak_memory_bytes)} {_PEAK_SOURCE}"


_PEAK_SOURCE = "(peak_memory_in_bytes, XLA's estimate)"


def text_widths(sizes: list[int], scale: int, width: int = TEXT_WIDTH) -> list[int]:
    """Characters per part, proportional to ``sizes`` over ``scale`` and rounded by largest remainder."""
    exact = [size * width / scale for size in sizes]
    widths = [int(x) for x in exact]
    target = round(sum(sizes) * width / scale)
    for i in sorted(range(len(sizes)), key=lambda i: widths[i] - exact[i])[: max(target - sum(widths), 0)]:
        widths[i] += 1
    return widths


def _percent(size: int, scale: int) -> str:
    return f"{100 * size / scale:.3f}".rstrip("0").rstrip(".") + "%"


# --- HTML ------------------------------------------------------------------------------------


def _bar_html(drawn: list[Part], scale: int, cls: str, label: str) -> Html:
    segments = [tag("div", cls="js-seg", title=f"{LABELS[p.label]}: {format_bytes(p.size_bytes)}",
                    style=f"flex: none; width: {_percent(p.size_bytes, scale)}; background: {p.colour};",
                    **{"data-bytes": str(p.size_bytes)}) for p in drawn if p.size_bytes]
    return tag("div", *segments, cls=f"js-membar {cls}", style=BAR_STYLE, role="img", **{"aria-label": label})


def _key_html(p: Part, scale: int | None) -> Html:
    share = f" ({100 * p.size_bytes / scale:.1f}%)" if scale else ""
    return tag("span", tag("span", style=f"{KEY_STYLE} background: {p.colour};"),
               f"{LABELS[p.label]} {format_bytes(p.size_bytes)}{share}", cls="js-key")


def memory_html(memory: MemoryStats, figures: Html, budget: TextBudget, devices: int | None = None) -> Html:
    """The memory section: the bar and the peak to one scale, a legend, then ``figures`` (the table of every number).

    ``devices``: the number of devices a partitioned program runs on, each of which holds what XLA reports.
    """
    drawn = parts(memory)
    if drawn is None:
        picture = [muted(_missing(memory))]
    else:
        scale = _scale(drawn, memory)
        keys = [_key_html(p, scale) for p in drawn]
        picture = [tag("div", _caption(drawn)), _bar_html(list(drawn), scale, "js-total", "memory: " + _text_legend(drawn))]
        if memory.peak_memory_bytes is not None:
            peak = Part("peak", memory.peak_memory_bytes, COLOURS["peak"], GLYPHS["peak"])
            picture.append(_bar_html([peak], scale, "js-peak", _peak_line(memory, budget)))
            keys.append(_key_html(peak, None))
        else:
            picture.append(tag("div", muted(_peak_line(memory, budget))))
        picture.append(tag("div", Html(" · ".join(keys)), cls="js-legend"))
    return details("memory analysis (Compiled.memory_analysis)" + per_device(devices), *picture, figures, open=True)


def buffers_html(c: CompiledStation, budget: TextBudget) -> Html:
    """The largest values of the entry computation, as a table."""
    shown, more = limit_rows(c.buffers, budget, "report.compiled.buffers")
    left = c.buffer_count - len(c.buffers)
    more = more or (f"… {plural(left, 'smaller value')} not listed" if left else None)
    return details(_buffers_title(c), muted(_BUFFERS_NOTE), table(BUFFER_HEADER, _buffer_rows(shown), budget, more=more), open=True)


# --- text ------------------------------------------------------------------------------------


def _text_legend(drawn: tuple[Part, ...]) -> str:
    return " · ".join(f"{p.glyph} {LABELS[p.label]} {format_bytes(p.size_bytes)}" for p in drawn)


def memory_text(memory: MemoryStats, budget: TextBudget, devices: int | None = None) -> list[str]:
    """The heading, the bar in Unicode blocks, the peak bar to the same scale, and the legend."""
    drawn = parts(memory)
    head = paragraph("  ", f"memory analysis{per_device(devices)}:", "    ", budget)
    if drawn is None:
        return [head, "    " + _missing(memory)]
    scale = _scale(drawn, memory)
    total = format_bytes(sum(p.size_bytes for p in drawn))
    peak_label = f"peak {format_bytes(memory.peak_memory_bytes)}" if memory.peak_memory_bytes is not None else ""
    size = _bar_width(budget, total, peak_label)
    widths = text_widths([p.size_bytes for p in drawn], scale, size)
    bar = "".join(p.glyph * w for p, w in zip(drawn, widths))
    out = [head, paragraph("    ", f"{_caption(drawn)}:", "      ", budget),
           f"    [{bar.ljust(size, '·')}] {total}"]
    if memory.peak_memory_bytes is not None:
        peak = GLYPHS["peak"] * text_widths([memory.peak_memory_bytes], scale, size)[0]
        head = f"    [{peak.ljust(size, '·')}] {peak_label}"
        fits = columns(head) + 1 + len(_PEAK_SOURCE) <= text_width(budget)
        out += [f"{head} {_PEAK_SOURCE}"] if fits else [head, "      " + _PEAK_SOURCE]
    else:
        out.append(paragraph("    ", _peak_line(memory, budget), "      ", budget))
    return out + _legend_lines(drawn, budget)


def _bar_width(budget: TextBudget, *labels: str) -> int:
    """The bar's characters: :data:`TEXT_WIDTH`, fewer where the bar and its labels would run past the text width
    (never under :data:`MIN_BAR`)."""
    return max(MIN_BAR, min(TEXT_WIDTH, text_width(budget) - len("    [] ") - max(columns(t) for t in labels)))


def _legend_lines(drawn: tuple[Part, ...], budget: TextBudget) -> list[str]:
    """The legend at the text width, a line broken after a `` ·``, never inside a part's name."""
    width = text_width(budget)
    items = [f"{p.glyph} {LABELS[p.label]} {format_bytes(p.size_bytes)}" for p in drawn]
    out, current = [], "    " + items[0]
    for number, item in enumerate(items[1:], 2):
        mark = 0 if number == len(items) else 2  # the " ·" after it, where the line breaks after it
        if columns(current) + 3 + columns(item) + mark > width:
            out.append(current + " ·")
            current = "    " + item
        else:
            current += " · " + item
    return [*out, current]


def buffers_text(c: CompiledStation, budget: TextBudget) -> list[str]:
    """The largest values of the entry computation, as a text table under a heading."""
    shown, more = limit_rows(c.buffers, budget, "report.compiled.buffers")
    left = c.buffer_count - len(c.buffers)
    more = more or (f"… {plural(left, 'smaller value')} not listed" if left else None)
    return [paragraph("  ", f"{_buffers_title(c)}:", "    ", budget), paragraph("    (", f"{_BUFFERS_NOTE})", "     ", budget),
            *text_table(_buffer_rows(shown), BUFFER_HEADER, budget, indent="    ", more=more, squeeze=True)]


# --- shared ----------------------------------------------------------------------------------

_BUFFERS_NOTE = ("each value's own size; XLA may place temporaries whose lifetimes do not overlap in one allocation, "
                 "and values inside loops and fusions are not listed")


def per_device(devices: int | None) -> str:
    """What a partitioned program's memory figures are: each device's, not the whole program's."""
    return f", per device: what each of the {devices} devices holds" if devices and devices > 1 else ""


def _buffers_title(c: CompiledStation) -> str:
    shards = "; per device: each value's shape is one device's shard" if c.per_device else ""
    return f"largest buffers (optimised HLO, entry computation: {plural(c.buffer_count, 'value')}{shards})"


def _buffer_rows(buffers: tuple[BufferSpec, ...] | list[BufferSpec]) -> list[tuple[str, ...]]:
    return [(b.name, b.kind, b.type_text, format_bytes(b.size_bytes), b.detail or b.opcode) for b in buffers]
