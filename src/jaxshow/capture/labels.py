"""The front end's names for the user's cells in a report: ``In[4]``, not ``/tmp/ipykernel_1/123.py``.

The capture layer takes two functions from the layer that knows the shell:
``label`` names a :class:`~jaxshow.report.SourceLocation`'s file, ``label_text``
the cell files inside a text (IR, an error's message). Without a shell both
leave everything as it is.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from jaxshow.capture.linked import default_file_label
from jaxshow.capture.prefetch import Stations
from jaxshow.report import ErrorSummary, SourceLocation, WrapperStation

Label = Callable[[SourceLocation | None], SourceLocation | None]
LabelText = Callable[[str], str]


def unlabelled(location: SourceLocation | None) -> SourceLocation | None:
    return location


def unlabelled_text(text: str) -> str:
    return text


def file_label(file: str, label: Label) -> str:
    """``In[4]`` for a cell's file (as ``label`` names it), else the file's path."""
    shown = label(SourceLocation(file, 0))
    return shown.file if shown is not None and shown.file != file else default_file_label(file)


def labelled_wrapper(wrapper: WrapperStation, label: Label) -> WrapperStation:
    return dataclasses.replace(wrapper, defined_at=label(wrapper.defined_at)) if wrapper.defined_at else wrapper


def labelled_error(error: BaseException | None, stage: str | None, label_text: LabelText) -> ErrorSummary | None:
    if error is None:
        return None
    return labelled_summary(ErrorSummary.from_exception(error, stage), label_text)  # type: ignore[arg-type]


def labelled_summary(summary: ErrorSummary | None, label_text: LabelText) -> ErrorSummary | None:
    """An error's summary with the cell file names in its message labelled."""
    return summary and dataclasses.replace(summary, message=label_text(summary.message))


def labelled_stations(stations: Stations, walk: Any, label_text: LabelText) -> Stations:
    """``stations`` with the cell file names inside their IR texts labelled by ``label_text``, as a report shows them
    (``walk``: the :class:`~jaxshow.capture.stations.WalkOptions` they were read with)."""
    traced, lowered, compiled = stations
    if traced is not None and traced.jaxpr_source_text:
        traced = dataclasses.replace(traced, jaxpr_source_text=label_text(traced.jaxpr_source_text))
    if lowered is not None and walk.debug_info:
        lowered = dataclasses.replace(lowered, module_text=label_text(lowered.module_text))
    if compiled is not None and compiled.optimized_hlo_text:
        compiled = dataclasses.replace(compiled, optimized_hlo_text=label_text(compiled.optimized_hlo_text))
    return Stations(traced, lowered, compiled)
