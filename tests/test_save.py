"""``%%jaxstages --save DIR`` and ``jaxshow.save``: the stations' own texts, byte for byte, under predictable names."""

from __future__ import annotations

import dataclasses
import json
import os

import jax
import jax.numpy as jnp
import pytest
from shellrun import run_captured, unwrapped

import jaxshow
from jaxshow.record_files import file_stem
from jaxshow.report import CellReport, SavedReport

STATION_FILES = ("traced.jaxpr.txt", "lowered.stablehlo.mlir", "compiled.hlo.txt", "json")


def _read(path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def _texts(report) -> dict[str, str]:
    return {
        "traced.jaxpr.txt": report.traced.jaxpr_text,
        "lowered.stablehlo.mlir": report.lowered.module_text,
        "compiled.hlo.txt": report.compiled.optimized_hlo_text,
    }


def test_save_writes_each_station_byte_for_byte_and_says_where(ip, tmp_path):
    ip.run_cell("import jax, jax.numpy as jnp\n@jax.jit\ndef step(x):\n    return jnp.sin(x) @ x.T\n")
    target = tmp_path / "run1"
    result, cap = run_captured(ip, f"%%jaxstages --save {target} -o rep\ny = step(jnp.ones((4, 3)))\n")
    assert result.success
    report: CellReport = ip.user_ns["rep"]
    (shown,) = report.reports
    assert sorted(os.listdir(target)) == sorted([f"step.{suffix}" for suffix in STATION_FILES] + ["report.html"])
    for suffix, text in _texts(shown).items():
        assert _read(target / f"step.{suffix}") == text.encode("utf-8")
    analyses = json.loads(_read(target / "step.json"))
    assert analyses["function"] == "step"
    assert analyses["files"] == ["step.traced.jaxpr.txt", "step.lowered.stablehlo.mlir", "step.compiled.hlo.txt"]
    assert analyses["outcome"] == shown.outcome
    assert analyses["traced"]["args"] == [{"path": "x", "shape": [4, 3], "dtype": "float32", "weak_type": False,
                                           "sharding": shown.traced.args[0].sharding, "donated": False,
                                           "donation_unused": False, "ref": False, "spec": None, "mesh": None}]
    assert analyses["traced"]["primitive_counts"] == dict(shown.traced.primitive_counts)
    assert "jaxpr_text" not in analyses["traced"] and "module_text" not in analyses["lowered"]
    assert analyses["compiled"]["cost"]["flops"] == shown.compiled.cost.flops
    assert analyses["compiled"]["memory"]["temp_size_bytes"] == shown.compiled.memory.temp_size_bytes
    assert analyses["timings"]["compile_seconds"] == shown.timings.compile_seconds
    page = _read(target / "report.html").decode()
    assert page.startswith("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>jaxstages: step</title>")
    assert page.count('<div class="jaxshow"') == 1 and "<script" not in page
    assert len(cap.outputs) == 2  # the report, then where it was saved
    text = cap.outputs[1].data["text/plain"].splitlines()
    assert text[0] == f"saved 5 files to {target}:"
    assert [row.split()[0] for row in text[1:]] == [f"step.{suffix}" for suffix in STATION_FILES] + ["report.html"]
    assert f"saved 5 files to {target}" in cap.outputs[1].data["text/html"]


def test_save_names_every_report_and_keeps_options(ip, tmp_path):
    ip.run_cell("import jax, jax.numpy as jnp\nf = jax.jit(lambda x: x * 2)\n")
    result, _ = run_captured(ip, f"%%jaxstages --all --hlo --debug-info --save {tmp_path} -o rep\n"
                                 "a = f(jnp.ones(3))\nb = f(jnp.ones(4))\n")
    assert result.success
    first, second = ip.user_ns["rep"].reports
    expected = []
    for stem, report in (("lambda", first), ("lambda-2", second)):
        assert _read(tmp_path / f"{stem}.lowered.hlo.txt") == report.lowered.module_text.encode()
        assert _read(tmp_path / f"{stem}.traced.source.jaxpr.txt") == report.traced.jaxpr_source_text.encode()
        assert "# In[1]:2:" in report.traced.jaxpr_source_text  # the cell that defined f, labelled as tracebacks do
        expected += [f"{stem}.traced.jaxpr.txt", f"{stem}.traced.source.jaxpr.txt", f"{stem}.lowered.hlo.txt",
                     f"{stem}.compiled.hlo.txt", f"{stem}.json"]
    assert sorted(os.listdir(tmp_path)) == sorted(expected + ["report.html"])
    assert json.loads(_read(tmp_path / "lambda-2.json"))["traced"]["args"][0]["shape"] == [4]


def test_save_a_failing_call_keeps_the_stations_it_reached(ip, tmp_path):
    ip.run_cell("import jax, jax.numpy as jnp\n@jax.jit\ndef bad(x):\n    return x @ jnp.ones((5, 5))\n")
    result, _ = run_captured(ip, f"%%jaxstages --save {tmp_path} -o rep\nbad(jnp.ones(3))\n")
    assert isinstance(result.error_in_exec, TypeError)
    (report,) = ip.user_ns["rep"].reports
    assert report.stopped_at == "trace"
    assert sorted(os.listdir(tmp_path)) == ["bad.json", "report.html"]
    analyses = json.loads(_read(tmp_path / "bad.json"))
    assert analyses["stopped_at"] == "trace" and analyses["error"]["type_name"] == "TypeError"
    assert analyses["traced"] is None and analyses["files"] == []


def test_save_bad_directory_is_refused_before_the_cell_runs(ip, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("keep")
    for where, why in ((blocker, f"{blocker} exists and is not a directory"),
                       (blocker / "sub", f"cannot create {blocker / 'sub'}: {blocker} is not a directory")):
        result, cap = run_captured(ip, f"%%jaxstages --save {where}\nran = True\n")
        assert not result.success and "ran" not in ip.user_ns
        assert f"--save {where}: {why}" in unwrapped(cap.stderr + str(result.error_in_exec))
    assert blocker.read_text() == "keep"


def test_a_file_name_is_refused_before_the_cell_runs(ip, tmp_path):
    # '--save report.html' made a directory named report.html holding report.html and the stage files.
    result, cap = run_captured(ip, f"%%jaxstages --save {tmp_path / 'report.html'}\nran = True\n")
    assert type(result.error_in_exec).__name__ == "UsageError" and "ran" not in ip.user_ns
    assert unwrapped(str(result.error_in_exec)).startswith(
        f"--save {tmp_path / 'report.html'}: {tmp_path / 'report.html'} is a file name, and the report is several files "
        f"(report.html, and each stage's text and analyses): name a directory to write them to, such as {tmp_path / 'report'}\n")
    assert os.listdir(tmp_path) == []
    (tmp_path / "runs.json").mkdir()  # a directory that exists is used, whatever its name
    result, _ = run_captured(ip, f"%%jaxstages --save {tmp_path / 'runs.json'}\nran = True\n")
    assert result.success and ip.user_ns["ran"] is True and os.listdir(tmp_path / "runs.json") == ["report.html"]


def test_a_directory_no_file_system_can_name_is_a_usage_error(ip, tmp_path):
    # A name longer than the file system takes made the check itself raise: 'OSError: [Errno 36] File name too long'
    # with jaxshow's traceback, the cell not run; a NUL (from $name) passed the check and failed the write.
    long, nul = tmp_path / ("d" * 300), "a\0b"
    ip.user_ns["nul"] = nul
    for where, why in ((long, f"OSError: File name too long: {long}"), ("$nul", "'a\\x00b' holds a NUL character, which no file name can")):
        result, cap = run_captured(ip, f"%%jaxstages --save {where}\nran = True\n")
        assert type(result.error_in_exec).__name__ == "UsageError" and "ran" not in ip.user_ns
        assert f"{why}\n%%jaxstages [--all]" in unwrapped(str(result.error_in_exec))


def test_save_never_writes_outside_the_directory(ip, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched")
    target = tmp_path / "out"
    target.mkdir()
    (target / "evil.json").symlink_to(outside)
    ip.run_cell("import jax, jax.numpy as jnp\ndef h(x):\n    return x + 1\nh.__name__ = h.__qualname__ = '../../evil'\n"
                "h = jax.jit(h)\n")
    result, _ = run_captured(ip, f"%%jaxstages --save {target} -o rep\nh(jnp.ones(2))\n")
    assert result.success
    assert ip.user_ns["rep"].reports[0].function == "../../evil"
    assert sorted(os.listdir(tmp_path)) == ["out", "outside.txt"]
    assert sorted(os.listdir(target)) == sorted([f"evil.{suffix}" for suffix in STATION_FILES] + ["report.html"])
    assert outside.read_text() == "untouched" and not (target / "evil.json").is_symlink()


@pytest.mark.parametrize(("name", "stem"), [("<lambda>", "lambda"), ("..", "function"), ("a b/c", "a_b_c"),
                                            ("Model.__call__", "Model.__call"), ("x" * 300, "x" * 100),
                                            ("損" * 100, "損" * 66), ("é" * 150, "é" * 100)])
def test_file_stem(name, stem):
    assert file_stem(name) == stem


def test_a_long_name_in_a_script_of_several_bytes_a_letter_is_saved(ip, tmp_path):
    # A function named with 100 CJK letters (300 bytes in UTF-8, a file system takes 255) saved nothing: 'could not save
    # to DIR (0 files written before the error): OSError: File name too long'; its stem was cut at 100 letters, not bytes.
    name = "損" * 100
    ip.run_cell(f"import jax, jax.numpy as jnp\ndef {name}(x):\n    return x + 1\nstep = jax.jit({name})\n")
    result, cap = run_captured(ip, f"%%jaxstages --save {tmp_path}\nstep(jnp.ones(2))\n")
    assert result.success
    assert cap.outputs[-1].data["text/plain"].startswith(f"saved 5 files to {tmp_path}:")
    stem = "損" * 66
    assert sorted(os.listdir(tmp_path)) == sorted([f"{stem}.{suffix}" for suffix in STATION_FILES] + ["report.html"])


def test_python_api_saves_a_stages_report(tmp_path):
    @jax.jit
    def double(x):
        return 2 * x

    report = jaxshow.stages(double, jnp.arange(3.0))
    saved = jaxshow.save(report, tmp_path / "api")
    assert isinstance(saved, SavedReport) and saved.error is None
    assert [f.name for f in saved.files] == [f"double.{suffix}" for suffix in STATION_FILES] + ["double.html"]
    for suffix, text in _texts(report).items():
        assert _read(tmp_path / "api" / f"double.{suffix}") == text.encode()
    assert [f.size_bytes for f in saved.files] == [os.path.getsize(tmp_path / "api" / f.name) for f in saved.files]
    assert str(saved).startswith(f"saved 5 files to {tmp_path / 'api'}:")
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    with pytest.raises(OSError, match=r"^jaxshow.save: cannot create .*blocker/x: .*blocker is not a directory$"):
        jaxshow.save(report, blocker / "x")


def test_save_directory_expands_from_the_namespace(ip, tmp_path):
    ip.user_ns.update(base=str(tmp_path), i=3)
    ip.run_cell("import jax, jax.numpy as jnp\ninc = jax.jit(lambda x: x + 1)\n")
    result, cap = run_captured(ip, "%%jaxstages --save {base}/step{i}\ninc(jnp.ones(2))\n")
    assert result.success
    assert cap.outputs[-1].data["text/plain"].splitlines()[0] == f"saved 5 files to {tmp_path}/step3:"
    assert sorted(os.listdir(tmp_path)) == ["step3"]


CHAIN = "import jax, jax.numpy as jnp\n@jax.jit\ndef chain(x):\n    for i in range(100):\n        x = jnp.sin(x) + i\n    return x\n"


def test_jaxpr_is_printed_as_far_as_the_report_shows_and_whole_when_saved(ip, tmp_path):
    ip.run_cell(CHAIN)
    ip.run_line_magic("config", "StagesMagics.max_lines = 20")
    try:
        run_captured(ip, "%%jaxstages -o shown\nchain(1.0)")
        run_captured(ip, f"%%jaxstages --save {tmp_path} -o saved\nchain(2.0)")
    finally:
        ip.run_line_magic("config", "StagesMagics.max_lines = 500")
    full = jax.make_jaxpr(ip.user_ns["chain"].__wrapped__)(1.0).pretty_print(use_color=False)
    assert len(full.splitlines()) == 1 + 200 + 1  # header, 100 x (sin, add), in (...)
    shown = ip.user_ns["shown"].reports[0].traced
    lines = shown.jaxpr_text.splitlines()
    assert lines[:21] == full.splitlines()[:21] and lines[21:] == ["  … 180 more top-level equations, not printed }"]
    assert "jaxpr printed as far as the report shows it: 20 of 200 top-level equations (jaxshow.stages() and " \
           "%%jaxstages --save keep all of it)" in shown.notes
    saved = ip.user_ns["saved"].reports[0].traced
    assert saved.jaxpr_text == full and _read(tmp_path / "chain.traced.jaxpr.txt") == full.encode()
    assert jaxshow.stages(ip.user_ns["chain"], 1.0).traced.jaxpr_text == full


def test_save_takes_a_quoted_directory_with_spaces(ip, tmp_path):
    ip.run_cell("import jax, jax.numpy as jnp\ninc = jax.jit(lambda x: x + 1)\n")
    result, cap = run_captured(ip, f'%%jaxstages --save "{tmp_path}/my runs"\ninc(jnp.ones(2))\n')
    assert result.success and sorted(os.listdir(tmp_path)) == ["my runs"]
    assert len(os.listdir(tmp_path / "my runs")) == 5


def test_save_directory_expression_runs_once_per_cell(ip, tmp_path):
    ip.user_ns.update(base=str(tmp_path))
    ip.run_cell("import itertools, jax, jax.numpy as jnp\nrun_ids = itertools.count()\ninc = jax.jit(lambda x: x + 1)\n")
    for expected in ("run0", "run1"):
        result, cap = run_captured(ip, "%%jaxstages --save {base}/run{next(run_ids)}\ninc(jnp.ones(2))\n")
        assert result.success
        assert cap.outputs[-1].data["text/plain"].splitlines()[0] == f"saved 5 files to {tmp_path}/{expected}:"
    ip.run_cell_magic("jaxstages", "--save {base}/run{next(run_ids)}", "inc(jnp.ones(2))\n")
    assert sorted(os.listdir(tmp_path)) == ["run0", "run1", "run2"]
    assert next(ip.user_ns["run_ids"]) == 3


def _heading_joined(text: str) -> list[str]:
    """The lines of a save's listing, its heading's (wrapped at the width after a long path, 4 columns in) joined."""
    lines = text.splitlines()
    end = next(i for i, piece in enumerate(lines) if piece.endswith(":"))
    return [" ".join(piece.strip() for piece in lines[:end + 1]), *lines[end + 1:]]


def test_saving_again_to_a_directory_says_what_it_replaced_and_what_was_there(ip, tmp_path):
    ip.run_cell("import jax, jax.numpy as jnp\nf = jax.jit(lambda x: x + 1)\n@jax.jit\ndef g(x):\n    return x * 2\n")
    run_captured(ip, f"%%jaxstages --save {tmp_path}\nf(jnp.ones(2))\n")
    result, cap = run_captured(ip, f"%%jaxstages --save {tmp_path}\ng(jnp.ones(2))\n")
    assert result.success
    lines = _heading_joined(cap.outputs[-1].data["text/plain"])
    assert lines[0] == f"saved 5 files to {tmp_path} (replacing 1 file of the same name):"
    rows = [row for row in lines[1:] if not row.startswith(("   ", "  note"))]  # a long description wraps under itself
    assert [row.split()[0] for row in rows] == [f"g.{suffix}" for suffix in STATION_FILES] + ["report.html"]
    assert [row.endswith("  replaced") for row in rows] == [False, False, False, False, True]
    note = next(i for i, row in enumerate(lines) if row.startswith("  note"))
    assert max(len(row) for row in lines[1:note]) <= 100
    assert " ".join(piece.strip() for piece in lines[note:]) == (
        "note: 4 entries already in this directory, not part of this report, left as they were: "
        "lambda.compiled.hlo.txt, lambda.json, lambda.lowered.stablehlo.mlir, lambda.traced.jaxpr.txt")
    html = cap.outputs[-1].data["text/html"]
    assert f"saved 5 files to {tmp_path} (replacing 1 file of the same name)" in html and "<td><b>note</b></td>" in html
    assert "<td>report.html</td>" in html and html.count("<td>replaced</td>") == 1
    assert ">4 entries already in this directory, not part of this report, left as they were: lambda.compiled.hlo.txt, " in html
    saved = jaxshow.save(jaxshow.stages(ip.user_ns["g"], jnp.ones(2)), tmp_path / "fresh")
    assert saved.kept == () and not any(f.replaced for f in saved.files)
    assert str(saved).splitlines()[0] == f"saved 5 files to {tmp_path / 'fresh'}:"


def test_save_writes_a_lone_surrogate_as_its_escape(ip, tmp_path):
    ip.run_cell("import jax, jax.numpy as jnp\n@jax.jit\ndef f(x):\n    raise ValueError('no file ' + b'caf\\xe9'.decode('utf-8', 'surrogateescape'))\n")
    result, cap = run_captured(ip, f"%%jaxstages --save {tmp_path / 'cell'}\nf(jnp.ones(2))\n")
    assert isinstance(result.error_in_exec, ValueError)
    assert cap.outputs[-1].data["text/plain"].splitlines()[0] == f"saved 2 files to {tmp_path / 'cell'}:"
    assert "UnicodeEncodeError" not in cap.stdout + cap.stderr  # the cell's own ValueError only
    raw = _read(tmp_path / "cell" / "f.json")
    assert b'"message": "no file caf\\udce9"' in raw  # valid UTF-8: JSON's escape of the surrogate
    assert json.loads(raw)["error"]["message"] == "no file caf\udce9"
    report = jaxshow.stages(ip.user_ns["f"], jnp.ones(2))
    saved = jaxshow.save(report, tmp_path / "api")
    assert [f.name for f in saved.files] == ["f.json", "f.html"]
    assert json.loads(_read(tmp_path / "api" / "f.json"))["error"]["message"] == "no file caf\udce9"


def test_save_refuses_what_is_not_a_report_or_not_a_directory(tmp_path):
    report = jaxshow.stages(jax.jit(lambda x: x + 1), jnp.ones(2))
    for wrong in (jaxshow.config_report("x64"), None, [report]):
        with pytest.raises(TypeError, match=r"^jaxshow.save needs a StagesReport \(jaxshow.stages\) or a CellReport "
                                            rf"\(%%jaxstages -o NAME\), got {type(wrong).__name__}$"):
            jaxshow.save(wrong, tmp_path / "never")
    assert os.listdir(tmp_path) == []
    blocker = tmp_path / "a-file"
    blocker.write_text("keep")
    with pytest.raises(OSError) as raised:
        jaxshow.save(report, blocker)
    # read "... (0 files written to {blocker} before it)", and for "" the working directory, which it never named
    assert str(raised.value) == f"jaxshow.save: {blocker} exists and is not a directory"
    with pytest.raises(OSError, match=r"^jaxshow.save: no directory given \(an empty name\)$"):
        jaxshow.save(report, "")
    assert blocker.read_text() == "keep"
    for wrong in (None, 3):  # read "expected str, bytes or os.PathLike object, not NoneType", from deep in pathlib
        with pytest.raises(TypeError) as raised:
            jaxshow.save(report, wrong)
        assert str(raised.value) == f"jaxshow.save needs a directory, a str or a path, got {type(wrong).__name__}"


def test_save_to_an_empty_name_is_a_usage_error(ip):
    ip.run_cell("ran = False\n")
    result, cap = run_captured(ip, "%%jaxstages --save ''\nran = True\n")
    assert not result.success and ip.user_ns["ran"] is False
    assert str(result.error_in_exec).splitlines()[0] == "--save '': no directory given (an empty name)"


def test_a_failed_write_lists_the_files_written_before_it_and_the_path(ip, tmp_path, monkeypatch):
    import errno

    from jaxshow import record_files

    written = record_files._write

    def disk_fills(directory, name, content):
        if name.endswith(".compiled.hlo.txt"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(directory / name))
        return written(directory, name, content)

    monkeypatch.setattr(record_files, "_write", disk_fills)
    ip.run_cell("import jax, jax.numpy as jnp\ninc = jax.jit(lambda x: x + 1)\n")
    result, cap = run_captured(ip, f"%%jaxstages --save {tmp_path}\ny = inc(jnp.ones(2))\n")
    assert result.success and ip.user_ns["y"].tolist() == [2.0, 2.0]
    lines = _heading_joined(cap.outputs[-1].data["text/plain"])
    assert lines[:2] == [f"could not save to {tmp_path} (2 files written before the error):",
                         "  OSError: No space left on device:"]  # the path, too long for the line, whole on the next
    assert lines[2] == f"    {tmp_path}/lambda.compiled.hlo.txt"
    assert [row.split()[0] for row in lines[3:]] == ["lambda.traced.jaxpr.txt", "lambda.lowered.stablehlo.mlir"]
    assert sorted(os.listdir(tmp_path)) == ["lambda.lowered.stablehlo.mlir", "lambda.traced.jaxpr.txt"]


def test_a_file_that_cannot_replace_what_is_there_is_named_not_its_temporary_file(ip, tmp_path):
    # A directory named f.json in DIR read 'IsADirectoryError: Is a directory: DIR/.f.json.1234-5a6b7c8d.tmp', a name
    # the user never sees: the rename's source, where the file it could not replace is its target.
    (tmp_path / "f.json").mkdir()
    ip.run_cell("import jax, jax.numpy as jnp\ndef f(x):\n    return x + 1\nf = jax.jit(f)\n")
    result, cap = run_captured(ip, f"%%jaxstages --save {tmp_path}\ny = f(jnp.ones(2))\n")
    assert result.success
    lines = _heading_joined(cap.outputs[-1].data["text/plain"])
    assert lines[:3] == [f"could not save to {tmp_path} (3 files written before the error):",
                         "  IsADirectoryError: Is a directory:", f"    {tmp_path}/f.json"]
    assert sorted(os.listdir(tmp_path)) == ["f.compiled.hlo.txt", "f.json", "f.lowered.stablehlo.mlir", "f.traced.jaxpr.txt"]


def test_names_that_differ_only_in_case_get_files_of_their_own(ip, tmp_path):
    """``F`` and ``f`` were saved as ``F.json`` and ``f.json``: one file on macOS and Windows, whose
    filesystems ignore case, so the second function's files replaced the first's."""
    ip.run_cell("import jax, jax.numpy as jnp\nF = jax.jit(lambda x: x * 2)\ndef f(x):\n    return x + 1\nf = jax.jit(f)\n"
                "def F(x):\n    return x * 2\nF = jax.jit(F)\n")
    result, _ = run_captured(ip, f"%%jaxstages --all --save {tmp_path} -o rep\na = F(jnp.ones(3))\nb = f(jnp.ones(4))\n")
    assert result.success, result.error_in_exec
    assert [r.function for r in ip.user_ns["rep"].reports] == ["F", "f"]
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["F.json", "f-2.json"]
    assert json.loads(_read(tmp_path / "f-2.json"))["traced"]["args"][0]["shape"] == [4]


def test_the_listing_reads_a_sentence_per_file_where_its_table_does_not_fit(ip, tmp_path):
    # At 60 columns a long function's listing ran to 131 columns ('normalise_a_batch_of_inputs.json  6.30 KiB
    # signature, costs, … replaced' on one line) and its heading to 80.
    from jaxshow import render
    from jaxshow.report import format_bytes

    ip.run_cell("import jax, jax.numpy as jnp\n@jax.jit\ndef normalise_a_batch_of_inputs(x):\n    return x * 2\n")
    run_captured(ip, f"%%jaxstages --save {tmp_path}\ny = normalise_a_batch_of_inputs(jnp.ones(3))")
    saved = jaxshow.save(jaxshow.stages(ip.user_ns["normalise_a_batch_of_inputs"], jnp.ones(3)), tmp_path)
    size = {f.name.split(".", 1)[1]: format_bytes(f.size_bytes) for f in saved.files}
    name = "normalise_a_batch_of_inputs"
    lines = render.to_text(dataclasses.replace(saved, directory="/runs/a", kept=()), render.TextBudget(width=60)).splitlines()
    assert lines == [
        "saved 5 files to /runs/a (replacing 4 files of the same",
        "    name):",
        f"  {name}.traced.jaxpr.txt ({size['traced.jaxpr.txt']}):",
        "      Traced: the jaxpr · replaced",
        f"  {name}.lowered.stablehlo.mlir",
        f"      ({size['lowered.stablehlo.mlir']}): Lowered: the StableHLO module · replaced",
        f"  {name}.compiled.hlo.txt ({size['compiled.hlo.txt']}):",
        "      Compiled: the optimised HLO · replaced",
        f"  {name}.json ({size['json']}): signature,",
        "      costs, memory, placements, timings, outcome · replaced",
        f"  {name}.html ({size['html']}): the report",
        "      as shown, self-contained HTML",
    ]


def test_a_save_that_wrote_nothing_before_its_error_reads_as_the_error():
    # A directory that could not be written at all (nothing written before the error) made the listing raise
    # 'ValueError: max() arg is an empty sequence' in this session's sentence form, in place of the report.
    from jaxshow import render

    saved = SavedReport("/runs/a", (), "PermissionError: Permission denied: /runs/a/f.traced.jaxpr.txt")
    assert render.to_text(saved, render.TextBudget(width=60)).splitlines() == [
        "could not save to /runs/a (0 files written before the",
        "    error):",
        "  PermissionError: Permission denied:",
        "    /runs/a/f.traced.jaxpr.txt",
    ]
