"""Write a report's stations to a directory: IR texts byte for byte, analyses as JSON, the HTML report.

``%%jaxstages --save DIR`` and :func:`jaxshow.save` use :func:`save_report`.
Names are predictable, built from the function's name and the station, so two
runs saved to two directories diff with ordinary tools::

    report.html                     the report as shown (a CellReport; one function's report is f.html)
    f.traced.jaxpr.txt              Traced: the jaxpr
    f.traced.source.jaxpr.txt       Traced: the jaxpr with source locations (--debug-info)
    f.lowered.stablehlo.mlir        Lowered: the module (f.lowered.hlo.txt with --hlo)
    f.compiled.hlo.txt              Compiled: the optimised HLO
    f.json                          signature, costs, memory, placements, timings, outcome, error

A second report of the same function in one cell (another signature) is
``f-2.…``. Every file lands directly in DIR: names are sanitised and each file is
written to a temporary name and renamed, so a symlink in DIR is replaced, never
followed. No JAX and no IPython.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import os
import re
import secrets
from pathlib import Path
from typing import Any

from jaxshow import render
from jaxshow.render.limits import DEFAULT_BUDGET, TextBudget
from jaxshow.report import CellReport, SavedFile, SavedReport, StagesReport

_UNSAFE = re.compile(r"[^\w.+-]+")
"""Runs of characters a file name does without: letters and digits of any script stay (``損失.json``)."""
_STEM_MAX_CHARS = 100
_STEM_MAX_BYTES = 200
"""A stem's most UTF-8 bytes: a file system takes 255 in a name, and the longest suffix, a count and the temporary
name (``.STEM-2.traced.source.jaxpr.txt.PID-XXXXXXXX.tmp``) add about 50."""
_TEXT_FIELDS = {
    "traced": ("jaxpr_text", "jaxpr_source_text"),
    "lowered": ("module_text",),
    "compiled": ("optimized_hlo_text",),
}


def save_report(record: StagesReport | CellReport, directory: str | os.PathLike,
                budget: TextBudget = DEFAULT_BUDGET) -> SavedReport:
    """Write ``record``'s stations under ``directory`` (created if needed); never raises ``OSError``.

    Returns what was written, which files replaced one of the same name, and
    the names already there that this save left alone; on a failure, what was
    written before it and the reason, in ``error``.

    Raises:
        TypeError: ``record`` is not a report of stations, or ``directory`` neither a ``str`` nor a path.
    """
    if not isinstance(record, (StagesReport, CellReport)):
        raise TypeError(f"jaxshow.save needs a StagesReport (jaxshow.stages) or a CellReport (%%jaxstages -o NAME), "
                        f"got {type(record).__name__}")
    if not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"jaxshow.save needs a directory, a str or a path, got {type(directory).__name__}")
    target = Path(os.fspath(directory)).expanduser().absolute()
    if why := directory_problem(os.fspath(directory)):
        return SavedReport(str(target), (), why)
    written: list[SavedFile] = []
    try:
        target.mkdir(parents=True, exist_ok=True)
        before = set(os.listdir(target))
        for name, holds, content in _files(record, budget):
            written.append(SavedFile(name, holds, _write(target, name, content), replaced=name in before))
    except OSError as exc:
        return SavedReport(str(target), tuple(written), _os_error(exc))
    kept = tuple(sorted(before - {f.name for f in written}))
    return SavedReport(str(target), tuple(written), kept=kept)


def directory_problem(directory: str) -> str | None:
    """Why ``directory`` cannot receive files (checked before a cell runs), or ``None`` when it can."""
    if not directory.strip():
        return "no directory given (an empty name)"
    if "\0" in directory:
        return f"{directory!r} holds a NUL character, which no file name can"
    try:
        return _path_problem(directory, Path(directory).expanduser().absolute())
    except OSError as exc:  # a name too long for the file system, a directory that cannot be searched
        return _os_error(exc)


_FILE_SUFFIXES = frozenset({".html", ".htm", ".txt", ".json", ".md", ".mlir", ".hlo", ".ipynb", ".pdf", ".png", ".zip"})
"""Suffixes of the files a user may mean to save to: a new directory is never made under such a name."""


def _path_problem(directory: str, path: Path) -> str | None:
    if path.exists():
        if not path.is_dir():
            return f"{directory} exists and is not a directory"
        return None if os.access(path, os.W_OK | os.X_OK) else f"{directory} is not writable"
    if path.suffix.lower() in _FILE_SUFFIXES:
        return (f"{directory} is a file name, and the report is several files (report.html, and each stage's text and "
                f"analyses): name a directory to write them to, such as {path.with_suffix('')}")
    parent = next(p for p in path.parents if p.exists())
    if not parent.is_dir():
        return f"cannot create {directory}: {parent} is not a directory"
    return None if os.access(parent, os.W_OK | os.X_OK) else f"cannot create {directory}: {parent} is not writable"


def _os_error(exc: OSError) -> str:
    """``FileNotFoundError: No such file or directory: /proc/runs``: the reason and the path it concerns (a rename's
    target, ``f.json``, not the temporary file it was written to)."""
    text = f"{type(exc).__name__}: {exc.strerror or exc}"
    path = exc.filename2 or exc.filename
    return f"{text}: {path}" if exc.strerror and path else text


def file_stem(function: str) -> str:
    """A function's name as a file name: ``<lambda>`` -> ``lambda``, ``A.f`` stays, never empty or hidden."""
    stem = _UNSAFE.sub("_", function).strip("_.")[:_STEM_MAX_CHARS]
    return stem.encode("utf-8")[:_STEM_MAX_BYTES].decode("utf-8", "ignore") or "function"


def _files(record: StagesReport | CellReport, budget: TextBudget) -> list[tuple[str, str, str]]:
    """``(file name, what it holds, content)`` for every file of ``record``, in order."""
    reports = record.reports if isinstance(record, CellReport) else (record,)
    files: list[tuple[str, str, str]] = []
    seen: dict[str, int] = {}  # by casefolded stem: on macOS and Windows, F.json and f.json are one file
    for report in reports:
        stem = file_stem(report.function)
        count = seen[stem.casefold()] = seen.get(stem.casefold(), 0) + 1
        files += _report_files(report, stem if count == 1 else f"{stem}-{count}")
    html_name = "report.html" if isinstance(record, CellReport) else f"{file_stem(record.function)}.html"
    files.append((html_name, "the report as shown, self-contained HTML", _html_page(record, budget)))
    return files


def _report_files(report: StagesReport, stem: str) -> list[tuple[str, str, str]]:
    files = []
    traced, lowered, compiled = report.traced, report.lowered, report.compiled
    if traced is not None:
        files.append((f"{stem}.traced.jaxpr.txt", "Traced: the jaxpr", traced.jaxpr_text))
        if traced.jaxpr_source_text:
            files.append((f"{stem}.traced.source.jaxpr.txt", "Traced: the jaxpr with source locations", traced.jaxpr_source_text))
    if lowered is not None:
        name = f"{stem}.lowered.stablehlo.mlir" if lowered.dialect == "stablehlo" else f"{stem}.lowered.hlo.txt"
        files.append((name, f"Lowered: the {'StableHLO' if lowered.dialect == 'stablehlo' else 'HLO'} module", lowered.module_text))
    if compiled is not None and compiled.optimized_hlo_text is not None:
        files.append((f"{stem}.compiled.hlo.txt", "Compiled: the optimised HLO", compiled.optimized_hlo_text))
    files.append((f"{stem}.json", "signature, costs, memory, placements, timings, outcome",
                  json.dumps(_analyses(report, [name for name, _, _ in files]), indent=1, ensure_ascii=False) + "\n"))
    return files


def _analyses(report: StagesReport, text_files: list[str]) -> dict[str, Any]:
    """The report as JSON-ready data, its long texts replaced by the names of the files that hold them."""
    data = _plain(dataclasses.asdict(report))
    data["wrapper"].pop("static_objects")  # memory addresses: they differ in every process
    for station, fields in _TEXT_FIELDS.items():
        for field in fields:
            if data.get(station) is not None:
                data[station].pop(field, None)
    if data.get("traced") is not None:
        data["traced"]["primitive_counts"] = dict(data["traced"]["primitive_counts"])
        data["traced"]["flops_by_scope"] = dict(data["traced"]["flops_by_scope"])
    for station in ("lowered", "compiled"):
        cost = (data.get(station) or {}).get("cost")
        if cost is not None:
            cost["entries"] = dict(cost["entries"])
    if data.get("compiled") and data["compiled"].get("memory") is not None and report.compiled and report.compiled.memory:
        data["compiled"]["memory"]["estimated_total_bytes"] = report.compiled.memory.estimated_total_bytes
    data["timings"]["total_seconds"] = report.timings.total_seconds
    return {"outcome": report.outcome, "cache_hit": report.cache_hit, "files": text_files, **data}


def _plain(value: Any) -> Any:
    """JSON-ready: tuples become lists, NumPy's numbers Python's, non-finite floats strings (JSON has no NaN), and so
    does any other object (a symbolic dimension of ``jax.export``'s, ``b``, in a shape)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or type(value) in (str, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value) if math.isfinite(value) else str(float(value))
    return str(value)


def _html_page(record: object, budget: TextBudget) -> str:
    title = "jaxstages: " + (", ".join(r.function for r in record.reports) if isinstance(record, CellReport) else record.function)
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>{render.markup.escape(title[:200])}</title></head>\n"
        f"<body>\n{render.to_html(record, budget)}\n</body></html>\n"
    )


def _write(directory: Path, name: str, content: str) -> int:
    """Write ``content`` as UTF-8 to ``directory/name`` through a temporary file and a rename; its size in bytes.

    A lone surrogate (a non-UTF-8 path or byte string in an error message) is
    written as its escape, ``\\udc80``, which JSON reads back as the same character.
    """
    data = content.encode("utf-8", errors="backslashreplace")
    temporary = directory / f".{name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
    try:
        with open(temporary, "xb") as handle:  # a new file (never through a link), with the user's umask
            handle.write(data)
        os.replace(temporary, directory / name)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return len(data)
