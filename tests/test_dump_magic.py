"""``%jaxdump``: real dump files from real JAX, in fresh processes where the environment must be set before import.

Each subprocess runs a real ``InteractiveShell`` (cells through ``run_cell``) and
prints JSON: what each cell displayed and the report objects' fields. The
in-process tests use hand-made directories (bad input, scale, paths).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap
import time

import jax
import pytest
from IPython.core.error import UsageError

import jaxshow
from jaxshow import _jax_compat, dumps, render
from jaxshow.report import DumpDiff, DumpReport, format_bytes, plural
from shellrun import run_captured, wider_lines


def _flat(text: str) -> str:
    """``text`` with its line breaks and runs of spaces as single spaces: the text form wraps prose at the terminal's width."""
    return " ".join(text.split())

SRC = str(pathlib.Path(jaxshow.__file__).resolve().parent.parent)
NEW_JAXPR_NAMES = _jax_compat.JAX_VERSION >= (0, 8)

SHELL_PRELUDE = """
import json, os, sys, dataclasses
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from traitlets.config import Config

def new_shell():
    config = Config()
    config.HistoryAccessor.enabled = False
    return InteractiveShell.instance(config=config)

OUT = {}

def run(ip, key, cell):
    with capture_output() as cap:
        result = ip.run_cell(cell, store_history=True)
    error = result.error_in_exec or result.error_before_exec
    OUT[key] = {"ok": result.success, "error": f"{type(error).__name__}: {error}" if error else None,
                "text": [o.data.get("text/plain", "") for o in cap.outputs],
                "html": [o.data.get("text/html", "") for o in cap.outputs], "stdout": cap.stdout}

def fields(value):
    return json.loads(json.dumps(dataclasses.asdict(value), default=str))
"""


def _run_script(tmp_path, body: str, env: dict[str, str] | None = None, name: str = "script.py") -> dict:
    script = tmp_path / name
    script.write_text(SHELL_PRELUDE + textwrap.dedent(body) + "\nprint('@@JSON@@' + json.dumps(OUT))\n")
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("JAX_DUMP", "XLA_FLAGS", "JAX_COMPILATION"))}
    full_env.update({"PYTHONPATH": os.pathsep.join(filter(None, (SRC, os.environ.get("PYTHONPATH")))), "JAX_PLATFORMS": "cpu"},
                    **(env or {}))  # the caller's PYTHONPATH kept: where the packages were installed with --target
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=full_env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.split("@@JSON@@", 1)[1])


def _jaxpr(counter: int, function: str) -> str:
    return f"jax_{counter:06d}_{function}.jaxpr.txt" if NEW_JAXPR_NAMES else f"{function}.jaxpr.txt"


def test_env_set_before_import_files_by_cell_function_text_diff_and_xla_passes(tmp_path):
    out = _run_script(tmp_path, """
        import numpy as np
        import jax, jax.numpy as jnp
        x = np.ones(3, np.float32)
        def early(v):
            return v * 3
        jax.jit(early)(x)
        ip = new_shell()
        ip.run_line_magic("load_ext", "jaxshow")
        ip.user_ns.update(np=np, x=x)
        run(ip, "c1", "import jax, jax.numpy as jnp")
        run(ip, "c2", "@jax.jit\\ndef f(x):\\n    return jnp.sin(x) * 2\\nf(x);")
        run(ip, "c3", "g = jax.jit(lambda v: v + 1)\\ng(x); f(np.ones(4, np.float32));")
        run(ip, "show_all", "%jaxdump -o rep")
        run(ip, "show_f", "%jaxdump f -o one")
        run(ip, "show_diff", "%jaxdump --diff 1 3 -o d")
        before_opt = next(x.name for m in ip.user_ns["rep"].xla_modules if m.module == "jit_early" for x in m.files
                          if x.kind == "before optimizations")  # XLA's own counter: module_0000 (jax >= 0.8) or module_0001
        OUT["before_opt"] = before_opt
        run(ip, "xla_file", "%jaxdump " + before_opt)
        OUT["rep"] = fields(ip.user_ns["rep"])
        OUT["one"] = fields(ip.user_ns["one"])
        OUT["d"] = fields(ip.user_ns["d"])
        OUT["by_cell"] = {k: list(v) for k, v in ip.user_ns["rep"].by_cell().items()}
        OUT["functions"] = ip.user_ns["rep"].functions
        for bad in ("--bogus", "nosuch", "-o 1x", "--diff 1", "--diff 1 3 f", "--diff f 3", "--diff ../../etc/passwd 1"):
            run(ip, "bad " + bad, "%jaxdump " + bad)
        run(ip, "semicolon", "%jaxdump -o quiet ;")
        OUT["quiet"] = repr(ip.user_ns.get("quiet"))
        ip.run_line_magic("unload_ext", "jaxshow")
    """, env={"JAX_DUMP_IR_TO": str(tmp_path / "jax"), "JAX_DUMP_IR_MODES": "stablehlo,jaxpr,bogus",
              "XLA_FLAGS": f"--xla_dump_to={tmp_path / 'xla'} --xla_dump_hlo_pass_re=algsimp"})

    for key in ("c1", "c2", "c3", "show_all", "show_f", "show_diff", "xla_file", "semicolon"):
        assert out[key]["ok"], (key, out[key]["error"])
    rep = out["rep"]
    assert rep["directory"] == str(tmp_path / "jax") and rep["enabled"]
    settings = {s["option"]: (s["value"], s["source"]) for s in rep["settings"]}
    assert settings["jax_dump_ir_to"] == (str(tmp_path / "jax"), "environment variable JAX_DUMP_IR_TO, read when JAX was imported")
    assert settings["jax_dump_ir_modes"] == ("stablehlo,jaxpr,bogus", "environment variable JAX_DUMP_IR_MODES, read when JAX was imported")
    assert settings["jax_include_debug_info_in_dumps"] == ("True", "default")
    assert [w for w in rep["warnings"] if "'bogus'" in w] == [
        f"jax_dump_ir_modes: 'bogus' is not a mode this JAX knows ({', '.join(dumps.known_modes())}); JAX ignores it without a word"
    ]
    if NEW_JAXPR_NAMES:
        f_files = (_jaxpr(1, "f"), "jax_ir0001_jit_f_compile.mlir")
        in3 = (_jaxpr(2, "<lambda>"), "jax_ir0002_jit__lambda_compile.mlir", _jaxpr(3, "f"), "jax_ir0003_jit_f_compile.mlir")
    else:  # jax 0.7: f.jaxpr.txt has no counter, and f's second lowering overwrote it in In[3]
        f_files = ("jax_ir0001_jit_f_compile.mlir",)
        in3 = (_jaxpr(0, "<lambda>"), "jax_ir0002_jit__lambda_compile.mlir", _jaxpr(0, "f"), "jax_ir0003_jit_f_compile.mlir")
    assert out["by_cell"] == {
        "before jaxshow was loaded": [_jaxpr(0, "early"), "jax_ir0000_jit_early_compile.mlir"],
        "In[2]": list(f_files),
        "In[3]": list(in3),
    }
    assert out["functions"] == ["early", "f", "_lambda"]
    files = {f["name"]: f for f in rep["files"]}
    assert (files["jax_ir0003_jit_f_compile.mlir"]["counter"], files["jax_ir0003_jit_f_compile.mlir"]["module"],
            files["jax_ir0003_jit_f_compile.mlir"]["stage"], files["jax_ir0003_jit_f_compile.mlir"]["function"]) == (3, "jit_f", "compile", "f")
    assert not any(f["persistent_hit"] for f in rep["files"])

    text = out["show_all"]["text"][0]
    assert _flat(text).startswith(f"%jaxdump — {len(rep['files'])} files of 3 functions in {tmp_path / 'jax'} ")
    assert "    In[2]  jax_ir0001_jit_f_compile.mlir  stage compile (handed to XLA)" in text  # the module is f's heading's
    assert "    In[3]: _lambda, f (4 files)" in text
    assert "    before jaxshow was loaded: early (2 files)" in text

    # XLA's dump, by module and by pass
    modules = {(m["number"], m["module"]): {x["kind"] for x in m["files"]} for m in rep["xla_modules"]}
    assert [m for _, m in sorted(modules)] == ["jit_early", "jit_f", "jit__lambda", "jit_f"]
    early_kinds = next(kinds for (_, module), kinds in modules.items() if module == "jit_early")
    assert {"before optimizations", "after optimizations", "buffer assignment", "pass"} <= early_kinds
    passes = {x["pass_name"] for m in rep["xla_modules"] for x in m["files"] if x["kind"] == "pass"}
    assert "algsimp" in passes
    assert rep["notes"][0] == "--xla_dump_hlo_pass_re=algsimp: XLA also wrote the module after each matching pass"
    assert "  XLA's dump (" + str(tmp_path / "xla") + "):" in text
    assert out["before_opt"].endswith(".jit_early.before_optimizations.txt")
    assert any(x.startswith(f"  {out['before_opt']} (") for x in out["xla_file"]["text"][0].splitlines())
    assert "HloModule jit_early" in out["xla_file"]["text"][0]

    # %jaxdump f: its files only, its newest jaxpr and module, cell names as In[n]
    one = out["one"]
    assert [f["name"] for f in one["files"]] == [*f_files, *in3[2:]]
    newest = [_jaxpr(3, "f") if NEW_JAXPR_NAMES else "f.jaxpr.txt", "jax_ir0003_jit_f_compile.mlir"]
    assert [t["file"] for t in one["texts"]] == newest
    assert [t["language"] for t in one["texts"]] == ["jaxpr", "stablehlo"]
    assert "f32[4]" in one["texts"][0]["text"]
    module_text = one["texts"][1]["text"]
    assert 'loc("In[3]":' in module_text and "ipython-input" not in module_text
    assert [m["module"] for m in one["xla_modules"]] == ["jit_f", "jit_f"]
    html = out["show_f"]["html"][0]
    assert '<i>tensor&lt;4xf32></i>' in html and "In[3]" in html and "<script" not in html

    # --diff of two compiles of f: the changed shape lines
    d = out["d"]
    assert (d["a"]["name"], d["b"]["name"]) == ("jax_ir0001_jit_f_compile.mlir", "jax_ir0003_jit_f_compile.mlir")
    diff_lines = d["diff_text"].splitlines()
    assert diff_lines[:2] == ["--- jax_ir0001_jit_f_compile.mlir", "+++ jax_ir0003_jit_f_compile.mlir"]
    assert any(x.startswith("-") and "stablehlo.sine %arg0 : tensor<3xf32>" in x for x in diff_lines)
    assert any(x.startswith("+") and "stablehlo.sine %arg0 : tensor<4xf32>" in x for x in diff_lines)
    assert not any(x.startswith(("+", "-")) and "stablehlo.constant" in x for x in diff_lines)
    assert out["show_diff"]["text"][0].splitlines()[0] == (
        f"%jaxdump --diff jax_ir0001_jit_f_compile.mlir → jax_ir0003_jit_f_compile.mlir  (+{d['added_lines']} −{d['removed_lines']} lines)")
    assert 'style="color: #116329; background: #dafbe1;">+' in out["show_diff"]["html"][0]

    # bad input: plain UsageError with the usage line, nothing displayed
    usage = "%jaxdump [--dir DIR] [--diff A B] [-o NAME] [NAME]"
    for bad, says in {
        "--bogus": "unrecognized arguments: --bogus",
        "nosuch": "no dump file, counter or function named 'nosuch' in",
        "-o 1x": "-o needs a variable name, got '1x'",
        "--diff 1": "argument --diff: expected 2 arguments",
        "--diff 1 3 f": "--diff A B takes no NAME, got 'f'",
        "--diff f 3": "'f' is a function; --diff needs two files or counters",
        "--diff ../../etc/passwd 1": "no dump file, counter or function named '../../etc/passwd'",
    }.items():
        result = out["bad " + bad]
        assert not result["ok"] and result["error"].startswith("UsageError: ") and says in result["error"], (bad, result["error"])
        assert usage in result["error"] and result["text"] == [], bad
    assert out["semicolon"]["text"] == [] and out["quiet"].startswith("<DumpReport ")


def test_env_set_too_late_then_config_update_route(tmp_path):
    late, runtime = tmp_path / "late", tmp_path / "runtime"
    # jax 0.7 numbers no jaxpr dump, and the one file here (no module: ' stablehlo' is not a mode) is placed by its
    # time, which the kernel's coarse clock may put a tick before In[4] began: the call waits out the tick there
    c4 = ("" if NEW_JAXPR_NAMES else "import time; time.sleep(0.02)\n") + "@jax.jit\ndef k(v):\n    return v + 1\nk(np.ones(2, np.float32));"
    out = _run_script(tmp_path, f"""
        import numpy as np
        import jax
        os.environ["JAX_DUMP_IR_TO"] = {str(late)!r}
        os.environ["JAX_DUMP_IR_MODES"] = "stablehlo,jaxpr"
        ip = new_shell()
        ip.run_line_magic("load_ext", "jaxshow")
        ip.user_ns.update(np=np)
        run(ip, "c1", "import jax\\nh = jax.jit(lambda v: v * 2)\\nh(np.ones(2, np.float32));")
        run(ip, "show_late", "%jaxdump -o late")
        OUT["late"] = fields(ip.user_ns["late"])
        del os.environ["JAX_DUMP_IR_TO"], os.environ["JAX_DUMP_IR_MODES"]
        run(ip, "c3", "jax.config.update('jax_dump_ir_to', {str(runtime)!r})\\njax.config.update('jax_dump_ir_modes', 'jaxpr, stablehlo')")
        run(ip, "c4", {c4!r})
        run(ip, "show_rt", "%jaxdump -o rt")
        OUT["rt"] = fields(ip.user_ns["rt"])
        OUT["rt_cells"] = {{k: list(v) for k, v in ip.user_ns["rt"].by_cell().items()}}
        run(ip, "show_missing", "%jaxdump --dir {str(tmp_path / 'nope')!r} -o missing")
        OUT["missing"] = fields(ip.user_ns["missing"])
    """)
    for key in ("c1", "show_late", "c3", "c4", "show_rt", "show_missing"):
        assert out[key]["ok"], (key, out[key]["error"])
    late_report = out["late"]
    assert not late_report["enabled"] and late_report["files"] == [] and not late.exists()
    assert late_report["warnings"][0] == (
        f"JAX_DUMP_IR_TO={str(late)!r} is set, but jax_dump_ir_to is empty: JAX reads the variable only when it is imported, so it "
        "was set too late for the env-var route (or jax.config.update turned dumping off since). Use "
        f"jax.config.update('jax_dump_ir_to', {str(late)!r}) now, or restart and set it before import jax."
    )
    assert late_report["warnings"][1].startswith("JAX_DUMP_IR_MODES='stablehlo,jaxpr' but jax_dump_ir_modes is 'stablehlo': the variable was changed after")
    assert late_report["listing_unavailable"] == (
        "dumping is off (jax_dump_ir_to is empty); turn it on with jax.config.update('jax_dump_ir_to', path) (takes effect at the next compile)")
    assert "warning: JAX_DUMP_IR_TO=" in out["show_late"]["text"][0]

    rt = out["rt"]
    settings = {s["option"]: (s["value"], s["source"]) for s in rt["settings"]}
    assert settings["jax_dump_ir_to"] == (str(runtime), "jax.config.update")
    assert settings["jax_dump_ir_modes"] == ("jaxpr, stablehlo", "jax.config.update")
    assert rt["warnings"] == [
        f"jax_dump_ir_modes: ' stablehlo' is not a mode this JAX knows ({', '.join(dumps.known_modes())}); JAX ignores it "
        "without a word (JAX does not strip spaces: write 'jaxpr,stablehlo')"
    ]
    assert out["rt_cells"] == {"In[4]": [_jaxpr(0, "k")]}  # only the jaxpr: ' stablehlo' is not 'stablehlo'
    assert out["missing"]["listing_unavailable"] == f"{tmp_path / 'nope'} does not exist"


def test_persistent_cache_hit_is_marked(tmp_path):
    env = {"JAX_DUMP_IR_TO": str(tmp_path / "jax"), "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "cache"),
           "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0", "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1"}
    body = """
        import numpy as np
        ip = new_shell()
        ip.run_line_magic("load_ext", "jaxshow")
        ip.user_ns.update(np=np)
        run(ip, "c1", "import jax\\n@jax.jit\\ndef p(v):\\n    return v * 5\\np(np.ones(2, np.float32));")
        run(ip, "show", "%jaxdump -o rep")
        OUT["rep"] = fields(ip.user_ns["rep"])
    """
    first = _run_script(tmp_path, body, env, name="first.py")
    assert [(f["name"], f["persistent_hit"]) for f in first["rep"]["files"]] == [("jax_ir0000_jit_p_compile.mlir", False)]
    assert any(n.startswith("jit_p-") for n in os.listdir(tmp_path / "cache"))
    second = _run_script(tmp_path, body, env, name="second.py")
    assert [(f["name"], f["cell"], f["persistent_hit"]) for f in second["rep"]["files"]] == [
        ("jax_ir0000_jit_p_compile.mlir", "In[1]", True)
    ]
    # the description and the note wrap under themselves at the width (COLUMNS=100), the file name stays whole
    shown = re.sub(r"\d+\.\d\d KiB", "9.99 KiB", second["show"]["text"][0])  # the module's size differs by JAX version
    assert ("  p: 1 file · module jit_p\n"
            "    cell   file                           what                   size      note\n"
            "    In[1]  jax_ir0000_jit_p_compile.mlir  stage compile (handed  9.99 KiB  persistent-cache hit:\n"
            "                                          to XLA)                          served from disk, not\n"
            "                                                                           compiled\n") in shown
    assert "persistent-cache hit: served from disk, not compiled" in second["show"]["html"][0]


# --- in process: hand-made directories --------------------------------------------------------------


def _module_text(shape: str, lines: int = 0) -> str:
    body = "".join(f"    %c{i} = stablehlo.constant dense<{i}.0> : tensor<f32>\n" for i in range(lines))
    return (f"module @jit_f {{\n  func.func public @main(%arg0: tensor<{shape}xf32>) -> tensor<{shape}xf32> {{\n{body}"
            f"    return %arg0 : tensor<{shape}xf32>\n  }}\n}}\n")


def test_dir_messages_and_paths(ip, tmp_path):
    empty, other, dump = tmp_path / "empty", tmp_path / "other", tmp_path / "dump"
    for d in (empty, other, dump):
        d.mkdir()
    (other / "notes.txt").write_text("hi")
    (dump / "jax_ir0001_jit_f_compile.mlir").write_text(_module_text("3"))
    (dump / "jax_ir0002_jit_f_compile.mlir").write_text(_module_text("4"))
    (tmp_path / "secret.mlir").write_text("secret")
    os.symlink(tmp_path / "secret.mlir", dump / "jax_ir0003_jit_f_compile.mlir")
    an_hour_ago = time.time() - 3600
    for path in dump.iterdir():
        os.utime(path, (an_hour_ago, an_hour_ago), follow_symlinks=False)
    for directory, says in ((tmp_path / "nope", f"{tmp_path / 'nope'} does not exist"),
                            (empty, f"{empty} is empty"),
                            (other / "notes.txt", f"{other / 'notes.txt'} is not a directory"),
                            (other, f"{other} holds 1 entry, none named like a JAX dump (jax_ir…_….mlir, jax_…_….jaxpr.txt) or an XLA dump (module_….txt)")):
        result, cap = run_captured(ip, f"%jaxdump --dir {directory} -o rep")
        assert result.success and ip.user_ns["rep"].listing_unavailable == says
        assert (_flat(cap.outputs[0].data["text/plain"]) + " ").startswith(f"%jaxdump — {_flat(says)} ")
    result, cap = run_captured(ip, f"%jaxdump --dir {dump} -o rep")
    rep = ip.user_ns["rep"]
    assert [f.name for f in rep.files] == ["jax_ir0001_jit_f_compile.mlir", "jax_ir0002_jit_f_compile.mlir"]
    assert rep.other_files == 1  # the symlink is never followed
    assert {f.cell for f in rep.files} == {"before jaxshow was loaded"}
    assert rep.notes[0] == "--dir: the settings above are this process's; the files were read from the directory given"
    for name in ("jax_ir0003_jit_f_compile.mlir", "3", "../secret.mlir", str(tmp_path / "secret.mlir")):
        with pytest.raises(UsageError, match="no dump file, counter or function named"):
            ip.run_line_magic("jaxdump", f"--dir {dump} {name}")
    with pytest.raises(ValueError, match="is not a file name"):
        dumps.safe_path(str(dump), "../secret.mlir")
    with pytest.raises(ValueError, match="leads outside"):
        dumps.safe_path(str(dump), "jax_ir0003_jit_f_compile.mlir")
    diff = dumps.dump_diff("1", "jax_ir0002_jit_f_compile.mlir", directory=str(dump))
    assert isinstance(diff, DumpDiff) and (diff.added_lines, diff.removed_lines) == (2, 2)
    with pytest.raises(UsageError, match="--diff A B takes no NAME"):
        ip.run_line_magic("jaxdump", f"--dir {dump} --diff 1 2 f")


@pytest.fixture
def dumping_in_process(tmp_path):
    """``jax_dump_ir_to`` and ``jax_dump_ir_modes`` as they were before the test, put back after it."""
    before = (jax.config.values["jax_dump_ir_to"], jax.config.values["jax_dump_ir_modes"])
    yield tmp_path
    jax.config.update("jax_dump_ir_to", before[0])
    jax.config.update("jax_dump_ir_modes", before[1])


def test_config_update_route_in_process_names_cells(ip, dumping_in_process):
    assert run_captured(ip, f"import jax, numpy as np\njax.config.update('jax_dump_ir_to', {str(dumping_in_process)!r})")[0].success
    assert run_captured(ip, "@jax.jit\ndef q(v):\n    return v - 1\nq(np.ones(5, np.float32));")[0].success
    number = ip.execution_count - 1
    result, cap = run_captured(ip, "%jaxdump q -o rep")
    rep = ip.user_ns["rep"]
    assert [(f.function, f.cell, f.stage) for f in rep.files] == [("q", f"In[{number}]", "compile")]
    assert rep.settings[0].source == "jax.config.update"
    assert rep.texts[0].language == "stablehlo" and "tensor<5xf32>" in rep.texts[0].text


def test_files_the_running_cell_wrote_are_named_by_its_own_number(ip, dumping_in_process):
    """'%jaxdump' in the cell that wrote the files named it In[4] where the same files read In[3] once it had run
    (dump_ir.ipynb): IPython 9 counts a cell before pre_run_cell, so the number noted there was the next cell's."""
    assert run_captured(ip, f"import jax, numpy as np\njax.config.update('jax_dump_ir_to', {str(dumping_in_process)!r})")[0].success
    result, cap = run_captured(ip, "@jax.jit\ndef q(v):\n    return v - 1\nq(np.ones(5, np.float32))\n%jaxdump q -o during")
    number = ip.execution_count - 1
    result, cap = run_captured(ip, "%jaxdump q -o after")
    assert [f.cell for f in ip.user_ns["during"].files] == [f"In[{number}]"] == [f.cell for f in ip.user_ns["after"].files]


@pytest.mark.parametrize("inner", ["pass", ""])
def test_a_file_written_after_a_cell_ran_another_inside_it_is_that_cells(ip, dumping_in_process, inner):
    """The inner cell's end (``get_ipython().run_cell``, ``%%capture``) ended the outer cell's span: a file its
    later lines wrote was 'outside any cell (another process, or a thread after its cell ended)'. So did an empty
    inner cell's, whose end IPython signals with no start."""
    assert run_captured(ip, f"import jax, numpy as np\njax.config.update('jax_dump_ir_to', {str(dumping_in_process)!r})")[0].success
    assert run_captured(ip, f"@jax.jit\ndef q(v):\n    return v - 1\nget_ipython().run_cell({inner!r})\nq(np.ones(5, np.float32));")[0].success
    number = ip.execution_count - 1
    assert run_captured(ip, "%%capture out\n@jax.jit\ndef r(v):\n    return v - 2\nr(np.ones(5, np.float32));")[0].success
    result, cap = run_captured(ip, "%jaxdump -o rep")
    assert [(f.function, f.cell) for f in ip.user_ns["rep"].files] == [("q", f"In[{number}]"), ("r", f"In[{number + 1}]")]


def test_jaxs_own_eager_operations_fold_into_one_entry_and_a_users_function_of_the_same_name_stays_its_own(ip, dumping_in_process):
    assert run_captured(ip, f"import jax, jax.numpy as jnp\njax.config.update('jax_dump_ir_to', {str(dumping_in_process)!r})")[0].success
    assert run_captured(ip, "x = jnp.arange(4.0)\ny = jnp.where(x > 1, jnp.sin(x) * 2, 0).mean()")[0].success
    assert run_captured(ip, "@jax.jit\ndef add(a, b):\n    return a - b\nadd(x, x);")[0].success
    result, cap = run_captured(ip, "%jaxdump -o rep")
    rep = ip.user_ns["rep"]
    assert rep.jax_functions == ("iota", "greater", "sin", "multiply", "_where", "_mean")
    assert [f.function for f in rep.files if not f.jax_own] == ["add"]  # the user's add, not JAX's add primitive
    text = cap.outputs[0].data["text/plain"]
    assert "  add: 1 file · module jit_add\n" in text and "  sin:" not in text
    assert _flat(text).count("JAX's own eager operations (6 files: jnp/lax calls outside jit") == 1
    assert "%jaxdump NAME shows one): iota, greater, sin, multiply, _where, _mean" in _flat(text)
    page = cap.outputs[0].data["text/html"]
    assert "<summary>JAX's own eager operations <span" in page
    result, cap = run_captured(ip, "%jaxdump sin -o one")
    assert [(f.function, f.jax_own) for f in ip.user_ns["one"].files] == [("sin", True)]
    assert "  sin: 1 file · module jit_sin\n" in cap.outputs[0].data["text/plain"]


def test_a_function_is_named_as_the_report_names_it_where_the_namespace_tells_it(ip, dumping_in_process):
    """``jax.jit(jax.grad(g))`` writes ``jit_g`` files, as JAX names them; the listing names the function ``grad(g)``, as
    ``%%jaxstages`` does, and ``%jaxdump 'grad(g)'`` picks them. Two wrappers of one ``g`` cannot be told apart by the files."""
    assert run_captured(ip, f"import jax, jax.numpy as jnp\njax.config.update('jax_dump_ir_to', {str(dumping_in_process)!r})")[0].success
    assert run_captured(ip, "def g(v):\n    return jnp.sin(v).sum()\nstep = jax.jit(jax.grad(g))\nx = jnp.ones(3)\nstep(x);")[0].success
    number = ip.execution_count - 1
    result, cap = run_captured(ip, "%jaxdump -o rep")
    rep = ip.user_ns["rep"]
    assert [(f.function, f.module, f.cell) for f in rep.files if not f.jax_own] == [("g", "jit_g", f"In[{number}]")]
    assert rep.named("g") == "grad(g)" and rep.named("sin") == "sin"
    text = cap.outputs[0].data["text/plain"]
    assert "\n  grad(g): 1 file · module jit_g\n    cell   file" in text and "\n  g:" not in text
    by_cell = next(row for row in text.splitlines() if row.startswith(f"    In[{number}]: "))
    assert by_cell.endswith(f"grad(g) ({plural(len(rep.by_cell()[f'In[{number}]']), 'file')})")  # after JAX's helpers, if any compiled
    assert "<summary>grad(g) <span" in cap.outputs[0].data["text/html"]
    result, cap = run_captured(ip, "%jaxdump grad(g) -o one")
    assert result.success and [f.name for f in ip.user_ns["one"].files] == [f.name for f in rep.files if not f.jax_own]
    assert "%jaxdump grad(g) — 1 file in" in cap.outputs[0].data["text/plain"]
    assert run_captured(ip, "up = jax.jit(step)\nf = jax.jit(g)\nf(x);")[0].success
    result, cap = run_captured(ip, "%jaxdump -o rep")
    assert ip.user_ns["rep"].named("g") == "grad(g) or jit(grad(g)) or g"
    heading = f"  grad(g) or jit(grad(g)) or g: {plural(len(ip.user_ns['rep'].files_of('g')), 'file')} · module jit_g"
    assert f"\n{heading}\n" in cap.outputs[0].data["text/plain"]


def test_a_variable_names_the_jitted_function_it_holds(ip, dumping_in_process):
    """``%jaxdump step`` where ``step = jax.jit(train)`` read "no dump file, counter or function named 'step'", and so did
    ``%jaxdump f`` for ``f = jax.jit(lambda …)``: the files are named by the function, which the user did not name so.
    Where two lambdas share the module name ``jit__lambda``, a note says their files are listed together."""
    assert run_captured(ip, f"import jax, numpy as np\njax.config.update('jax_dump_ir_to', {str(dumping_in_process)!r})")[0].success
    cell = ("def train(v):\n    return v * 2\nstep = jax.jit(train)\nf = jax.jit(lambda v: v + 1)\ng = jax.jit(lambda v: v - 1)\n"
            "step(np.ones(3, np.float32)); f(np.ones(2, np.float32)); g(np.ones(4, np.float32));")
    assert run_captured(ip, cell)[0].success
    result, cap = run_captured(ip, "%jaxdump step -o one")
    assert result.success, result.error_in_exec
    assert [(f.function, f.module) for f in ip.user_ns["one"].files] == [("train", "jit_train")]
    assert "note: step compiles as" not in cap.outputs[0].data["text/plain"]
    result, cap = run_captured(ip, "%jaxdump f -o one")
    assert result.success, result.error_in_exec
    assert [(f.function, f.module) for f in ip.user_ns["one"].files] == [("_lambda", "jit__lambda")] * 2
    assert ("note: f compiles as the module jit__lambda, as 1 other jitted function of yours does: the files listed are all "
            "of theirs, which their names do not tell apart (a def with a name of its own does)") in " ".join(cap.outputs[0].data["text/plain"].split())


def test_thousands_of_files_and_a_10mb_module_stay_bounded(tmp_path):
    for i in range(2000):
        (tmp_path / f"jax_ir{i:04d}_jit_fn{i % 400}_compile.mlir").write_text("module {}\n")
    big = tmp_path / "jax_ir2000_jit_big_compile.mlir"
    big.write_text(_module_text("8", lines=220_000))
    assert big.stat().st_size > 10_000_000
    rep = dumps.dump_report(directory=str(tmp_path))
    assert isinstance(rep, DumpReport) and len(rep.files) == 2001 and len(rep.functions) == 401
    text, html = render.to_text(rep), render.to_html(rep)
    assert "… 351 more (all in report.functions)" in text and len(text) < 60_000 and len(html) < 200_000
    one = dumps.dump_report("big", directory=str(tmp_path), read_max_bytes=1_000_000)
    shown = one.texts[0]
    assert shown.total_bytes == big.stat().st_size and shown.read_bytes == 1_000_000 and shown.text.endswith("\n")
    one_text = render.to_text(one)
    assert f"more lines not shown; {shown.total_bytes - 1_000_000:,} more bytes not read; full text in the file {big.name}" in one_text
    assert len(render.to_html(one)) < 500_000


def test_names_parse_across_versions():
    assert dataclasses.astuple(dumps.parse_name("jax_ir0012_jit_my_fn_before_refine_polymorphic_shapes.mlir"))[:6] == (
        "jax_ir0012_jit_my_fn_before_refine_polymorphic_shapes.mlir", "stablehlo", 12, "jit_my_fn", "my_fn", "before_refine_polymorphic_shapes")
    assert dumps.parse_name("jax_000003_<lambda>.jaxpr.txt").function == "_lambda"
    assert dumps.parse_name("f.jaxpr.txt").counter is None
    assert dumps.parse_name("jax_000004_f.eqn_count_pprof").kind == "eqn_count_pprof"
    assert dumps.parse_name("module_0001.jit_f.before_optimizations.txt") is None
    assert dumps.parse_xla_name("module_0001.jit_f.0003.simplification.after_algsimp.before_dce.txt")[2].pass_name == "algsimp"
    assert dumps.parse_xla_name("module_0001.jit_f.gpu_after_optimizations-buffer-assignment.txt")[2].kind == "buffer assignment"


def test_a_passs_own_steps_are_per_pass_dumps_not_other():
    """With --xla_dump_hlo_pass_re=.* XLA 0.10's CPU compile wrote 18 per-pass files for a module, three of them
    copy-insertion's own steps with no next pass ('0013.copy-insertion.after_adding_copies_to_resolve_interference.txt'):
    the module read '15 per-pass dumps (…); …; other ×3'."""
    names = ["0005.simplification.after_pipeline-start.before_algsimp.txt",
             "0013.copy-insertion.after_adding_copies_to_resolve_interference.txt",
             "0014.copy-insertion.after_removing_unnecessary_copies.txt",
             "0016.HLO_passes_after_layout_assignment.after_copy-insertion.before_small-while-loop-hoisting.txt"]
    parsed = [dumps.parse_xla_name(f"module_0000.jit_f.{name}")[2] for name in names]
    assert [(x.kind, x.pass_name) for x in parsed] == [("pass", "pipeline-start"), ("pass", "copy-insertion"),
                                                       ("pass", "copy-insertion"), ("pass", "copy-insertion")]


def test_the_optimised_hlo_xla_dumps_for_a_persistent_cache_hit_is_named(tmp_path):
    """A module served from the persistent cache: XLA compiles nothing and writes ``after_optimizations.txt`` with no
    platform part (``module_0008.jit_f.after_optimizations.txt``), which %jaxdump listed as "other"."""
    cell = ("import jax, numpy as np\n"
            f"jax.config.update('jax_compilation_cache_dir', {str(tmp_path / 'cache')!r})\n"
            "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)\n"
            "@jax.jit\ndef f(x):\n    return np.float32(2) * x\nf(np.ones(3, np.float32));")
    body = f"""
        ip = new_shell()
        ip.run_line_magic("load_ext", "jaxshow")
        run(ip, "call", {cell!r})
        run(ip, "list", "%jaxdump -o rep")
        OUT["f"] = [[x.name, x.kind] for m in ip.user_ns["rep"].xla_modules if m.module == "jit_f" for x in m.files]
    """
    assert _run_script(tmp_path, body)["call"]["ok"]  # writes f's entry
    out = _run_script(tmp_path, body, env={"XLA_FLAGS": f"--xla_dump_to={tmp_path / 'xla'}"})
    assert out["call"]["ok"] and out["list"]["ok"]
    xla = tmp_path / "xla"  # jax 0.7's XLA writes nothing at all for it
    loaded = sorted(p.name for p in xla.iterdir() if ".jit_f." in p.name) if xla.is_dir() else []
    if not any(name.endswith(".jit_f.after_optimizations.txt") for name in loaded):
        pytest.skip(f"jax {jax.__version__}'s XLA dumps no HLO for an executable it loads from the persistent cache: {loaded}")
    assert sorted(kind for _, kind in out["f"]) == ["after optimizations", "debug options"]
    assert dumps.parse_xla_name("module_0008.jit_f.after_optimizations.txt")[2].kind == "after optimizations"


def test_a_jitted_callable_objects_files_are_named_by_its_class(tmp_path):
    """jax.jit(Scale()): JAX names its module jit__unnamed_function (jit__unnamed_wrapped_function on jax 0.7), and
    %jaxdump grouped its files under '_unnamed_function', where %jaxcache and %%jaxstages name it 'Scale'."""
    out = _run_script(tmp_path, """
        ip = new_shell()
        ip.run_line_magic("load_ext", "jaxshow")
        run(ip, "call", "import jax, numpy as np\\nclass Scale:\\n    def __call__(self, v):\\n        return v * 3\\n"
                        "scale3 = jax.jit(Scale())\\nscale3(np.ones(3, np.float32));")
        run(ip, "list", "%jaxdump -o rep")
        run(ip, "one", "%jaxdump Scale -o one")
        OUT["module"] = ip.user_ns["scale3"].lower(__import__("numpy").ones(3, "float32")).as_text().split()[1][1:]
        OUT["files"] = [f.name for f in ip.user_ns["one"].files]
    """, env={"JAX_DUMP_IR_TO": str(tmp_path / "jax")})
    module = out["module"]
    assert module in ("jit__unnamed_function", "jit__unnamed_wrapped_function")
    assert out["list"]["ok"] and out["one"]["ok"], (out["list"]["error"], out["one"]["error"])
    assert f"  Scale: 1 file · module {module}" in out["list"]["text"][0].splitlines()
    assert out["files"] == [f"jax_ir0000_{module}_compile.mlir"]


# What XLA wrote for one module on an H200 (jax 0.11.2, --xla_dump_to): the platform part of a name holds a dot
H200_FILES = {
    "after_spmd_partitioner.txt": "after SPMD partitioning", "autotune_results.pbtxt": "autotuning results",
    "before_config_assignment.txt": "before config assignment", "before_optimizations.txt": "before optimizations",
    "config.pbtxt": "module config", "debug_options": "debug options", "gpu_target_config.pbtxt": "GPU target",
    "sm_9.0a_gpu_after_optimizations-buffer-assignment.txt": "buffer assignment",
    "sm_9.0a_gpu_after_optimizations-buffer-assignment-values.txt": "buffer assignment values",
    "sm_9.0a_gpu_after_optimizations-live-range.txt": "live ranges",
    "sm_9.0a_gpu_after_optimizations-memory-usage-report.txt": "memory usage report",
    "sm_9.0a_gpu_after_optimizations.txt": "after optimizations",
    "thunk_metadata.txt": "thunk metadata", "thunk_sequence.txt": "thunk sequence",
}


def test_a_gpus_dump_files_are_each_named_and_its_optimised_hlo_is_shown(ip, tmp_path):
    """On a GPU, XLA's names hold the compute capability (sm_9.0a_gpu_after_optimizations.txt): each of the 14 files read
    'other' ("module directory; other ×12; before optimizations; debug options"), and `%jaxdump f` showed no optimised HLO."""
    assert {rest: dumps.parse_xla_name(f"module_1325.jit_f.{rest}")[2].kind for rest in H200_FILES} == H200_FILES
    for rest in H200_FILES:
        (tmp_path / f"module_1325.jit_f.{rest}").write_text("HloModule jit_f\n")
    result, cap = run_captured(ip, f"%jaxdump --dir {tmp_path} jit_f")
    assert result.success
    text = cap.outputs[0].data["text/plain"]
    assert "other" not in text
    assert "    module_1325.jit_f  14     before optimizations; after optimizations; buffer assignment; buffer" in text.splitlines()
    assert [line.strip().split(" (")[0] for line in text.splitlines() if line.startswith("  module_1325.jit_f.")] == [
        "module_1325.jit_f.before_optimizations.txt", "module_1325.jit_f.sm_9.0a_gpu_after_optimizations.txt"]


def test_compat_shims_on_the_installed_jax(tmp_path):
    before = jax.config.values["jax_dump_ir_to"]
    try:
        jax.config.update("jax_dump_ir_to", str(tmp_path))
        first = _jax_compat.dump_next_numbers()[0]
        jax.jit(lambda v: v * 11)(1.0)
        assert _jax_compat.dump_next_numbers()[0] == first + 1
        assert sorted(os.listdir(tmp_path)) == [f"jax_ir{first:04d}_jit__lambda_compile.mlir"]
    finally:
        jax.config.update("jax_dump_ir_to", before)
    assert _jax_compat.backends_initialized()[0] is True
    assert _jax_compat.xla_dump_to_in_effect() == ""  # this test process has no --xla_dump_to


def test_dir_expands_home_and_namespace_values(ip, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    dump = tmp_path / "earlier"
    dump.mkdir()
    (dump / "jax_ir0001_jit_f_compile.mlir").write_text(_module_text("3"))
    ip.user_ns["run_dir"] = str(dump)
    for line in ("--dir ~/earlier", "--dir {run_dir}", "--dir $run_dir", "--dir {run_dir} 1"):
        result, cap = run_captured(ip, f"%jaxdump {line} -o rep")
        assert result.success, line
        assert ip.user_ns["rep"].directory == str(dump) and [f.name for f in ip.user_ns["rep"].files] == ["jax_ir0001_jit_f_compile.mlir"]
        heading = f"%jaxdump 1 — 1 file in {dump} " if line.endswith(" 1") else f"%jaxdump — 1 file of 1 function in {dump} "
        assert _flat(cap.outputs[0].data["text/plain"]).startswith(heading)


def test_the_api_takes_a_counter_as_an_int_and_a_directory_as_a_path(tmp_path):
    # jaxshow.dump_report(1) raised "AttributeError: 'int' object has no attribute 'isdigit'" from dumps.select, and
    # dump_report(directory=42) "expected str, bytes or os.PathLike object, not int" from posixpath.realpath.
    (tmp_path / "jax_ir0001_jit_f_compile.mlir").write_text(_module_text("3"))
    by_int = jaxshow.dump_report(1, directory=tmp_path)
    assert by_int == jaxshow.dump_report("1", directory=str(tmp_path))
    assert [f.name for f in by_int.files] == ["jax_ir0001_jit_f_compile.mlir"]
    assert repr(by_int) == f"<DumpReport {tmp_path}: 1 file of 1 function>"  # read '1 files of 1 functions'
    with pytest.raises(TypeError, match="^name must be a function or file name, or a counter \\(str or int\\), got float$"):
        jaxshow.dump_report(1.0, directory=tmp_path)
    with pytest.raises(TypeError, match="^directory must be a path \\(str or os.PathLike\\), got int$"):
        jaxshow.dump_report(directory=42)


def test_a_tilde_in_jax_dump_ir_to_is_flagged_since_jax_does_not_expand_it(ip, dumping_in_process, monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone")
    monkeypatch.chdir(dumping_in_process)
    jax.config.update("jax_dump_ir_to", "~/dumps")
    rep = jaxshow.dump_report()
    assert rep.warnings == (
        f"jax_dump_ir_to is '~/dumps': JAX does not expand '~', so it writes to a directory named '~' under the working directory "
        f"({dumping_in_process}/~/dumps), not to /home/someone/dumps. Give the full path: "
        "jax.config.update('jax_dump_ir_to', '/home/someone/dumps').",)


def test_a_function_with_only_jaxpr_files_keeps_its_xla_modules(ip, tmp_path):
    (tmp_path / "jax_000002_f.jaxpr.txt").write_text("{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }\n")
    for kind in ("before_optimizations", "cpu_after_optimizations"):
        (tmp_path / f"module_0004.jit_f.{kind}.txt").write_text("HloModule jit_f\n")
    (tmp_path / "module_0006.jit_g.before_optimizations.txt").write_text("HloModule jit_g\n")
    result, cap = run_captured(ip, f"%jaxdump --dir {tmp_path} f -o rep")
    assert result.success
    assert [(m.number, m.module) for m in ip.user_ns["rep"].xla_modules] == [(4, "jit_f")]
    assert "    module_0004.jit_f  2      before optimizations; after optimizations" in cap.outputs[0].data["text/plain"].splitlines()


def test_a_file_deleted_while_the_directory_is_listed_is_left_out(tmp_path, monkeypatch):
    """Before, one file removed between reading the directory and its ``stat`` (a cleanup running beside
    the notebook) made the whole listing "cannot list DIR: [Errno 2] …"."""
    for name in ("jax_ir0001_jit_f_compile.mlir", "jax_ir0002_jit_g_compile.mlir", "module_0003.jit_g.before_optimizations.txt"):
        (tmp_path / name).write_text("module {}\n")
    real_scandir = os.scandir

    @contextlib.contextmanager
    def scandir_then_delete(path):
        with real_scandir(path) as entries:
            listed = list(entries)
        (tmp_path / "jax_ir0001_jit_f_compile.mlir").unlink()
        (tmp_path / "module_0003.jit_g.before_optimizations.txt").unlink()
        yield iter(listed)

    monkeypatch.setattr(dumps.os, "scandir", scandir_then_delete)
    rep = dumps.dump_report(directory=str(tmp_path))
    assert rep.listing_unavailable is None
    assert [f.name for f in rep.files] == ["jax_ir0002_jit_g_compile.mlir"] and rep.xla_modules == () and rep.other_files == 0


def test_a_file_deleted_before_it_is_read_is_said_to_be_unreadable(tmp_path, monkeypatch):
    (tmp_path / "jax_ir0001_jit_f_compile.mlir").write_text("module {}\n")
    real_read_head = dumps._read_head

    def delete_then_read(directory, name, max_bytes):
        (tmp_path / name).unlink()
        return real_read_head(directory, name, max_bytes)

    monkeypatch.setattr(dumps, "_read_head", delete_then_read)
    (shown,) = dumps.dump_report("f", directory=str(tmp_path)).texts
    assert (shown.file, shown.text) == ("jax_ir0001_jit_f_compile.mlir", "(cannot read it: No such file or directory)")


def test_a_jaxpr_written_in_the_tick_before_the_next_cell_began_goes_with_its_module():
    # Run All, or run_cell after run_cell: In[3] starts 1 ms after In[2] ends, and its first trace's jaxpr dump carries
    # the kernel's coarse time, a few ms behind time.time(): it was filed under In[2] (a flaky test under load). A
    # module dump alone in that tick stays the earlier cell's (a persistent-cache hit ends its cell at once).
    spans = [dumps.CellSpan(2, 100.0, 100.5), dumps.CellSpan(3, 100.501, 101.0)]
    files = [dumps.parse_name(name, 1, mtime) for name, mtime in (
        ("jax_000001_f.jaxpr.txt", 100.1), ("jax_ir0001_jit_f_compile.mlir", 100.2),
        ("jax_000002_<lambda>.jaxpr.txt", 100.497), ("jax_ir0002_jit__lambda_compile.mlir", 100.52),
        ("jax_ir0003_jit_g_compile.mlir", 100.498))]
    attributed = dumps._attribute(files, spans, 99.0, (), "/nowhere", ())
    assert [(f.name, f.cell) for f in attributed] == [
        ("jax_000001_f.jaxpr.txt", "In[2]"), ("jax_ir0001_jit_f_compile.mlir", "In[2]"),
        ("jax_000002_<lambda>.jaxpr.txt", "In[3]"), ("jax_ir0002_jit__lambda_compile.mlir", "In[3]"),
        ("jax_ir0003_jit_g_compile.mlir", "In[2]")]


def test_a_dump_written_as_the_next_cell_began_is_that_cells_by_its_number(ip, dumping_in_process):
    """CI filed a jaxpr dump (no module: ' stablehlo' is not a mode) under In[3], the config cell before its own In[4]:
    the kernel stamps a file with its coarse clock, a tick behind time.time(), and the cells ran 1 ms apart. The dump's
    number, noted at each cell's start and end, says In[4]; the files are given the time the kernel gave it on CI.
    jax 0.7 numbers no jaxpr dump: there the jaxpr goes with its module, which has a number."""
    modes = "jaxpr" if _jax_compat.JAX_VERSION >= (0, 8) else "jaxpr,stablehlo"
    assert run_captured(ip, "import jax, numpy as np")[0].success
    assert run_captured(ip, f"jax.config.update('jax_dump_ir_to', {str(dumping_in_process)!r})\n"
                            f"jax.config.update('jax_dump_ir_modes', {modes!r})")[0].success
    assert run_captured(ip, "@jax.jit\ndef k(v):\n    return v + 1\nk(np.ones(2, np.float32));")[0].success
    config_cell, call_cell = ip.magics_manager.registry["DumpMagics"].cell_spans()[-2:]
    names = tuple(sorted(os.listdir(dumping_in_process), key=lambda name: not name.endswith(".txt")))
    for name in names:
        os.utime(dumping_in_process / name, (config_cell.end - 0.002,) * 2)
    run_captured(ip, "%jaxdump -o rep")
    assert ip.user_ns["rep"].by_cell() == {f"In[{call_cell.number}]": names}
    assert call_cell.number == ip.execution_count - 2
    assert len(names) == len(modes.split(","))


def test_a_dump_number_settles_its_cell_only_where_the_files_time_agrees():
    """Numbers go with the cells that noted them; a file whose time lies outside the cell its number points at (another
    process writing the same directory) and 0.7's unnumbered jaxpr dumps are placed by their time."""
    spans = [dumps.CellSpan(2, 100.0, 100.5, (0, 0), (1, 1)), dumps.CellSpan(3, 100.501, 101.0, (1, 1), (3, 2)),
             dumps.CellSpan(4, 102.0, None, (3, 2), None)]
    files = [dumps.parse_name(name, 1, mtime) for name, mtime in (
        ("jax_000000_f.jaxpr.txt", 100.1), ("jax_ir0000_jit_f_compile.mlir", 100.2),
        ("jax_000001_g.jaxpr.txt", 100.497), ("jax_ir0001_jit_g_compile.mlir", 100.499),
        ("jax_ir0002_jit_h_compile.mlir", 101.2),  # In[3]'s number, written after it ended: a thread, or another process
        ("jax_000002_r.jaxpr.txt", 102.5), ("jax_ir0003_jit_r_compile.mlir", 100.3),  # the running cell's number, older
        ("q.jaxpr.txt", 100.499))]
    attributed = dumps._attribute(files, spans, 99.0, (), "/nowhere", ())
    assert [(f.name, f.cell) for f in attributed] == [
        ("jax_000000_f.jaxpr.txt", "In[2]"), ("jax_ir0000_jit_f_compile.mlir", "In[2]"),
        ("jax_000001_g.jaxpr.txt", "In[3]"), ("jax_ir0001_jit_g_compile.mlir", "In[3]"),
        ("jax_ir0002_jit_h_compile.mlir", dumps.BETWEEN_CELLS),
        ("jax_000002_r.jaxpr.txt", "In[4]"), ("jax_ir0003_jit_r_compile.mlir", "In[2]"),
        ("q.jaxpr.txt", "In[2]")]


def test_dump_numbers_are_read_without_advancing_them(dumping_in_process):
    jax.config.update("jax_dump_ir_to", str(dumping_in_process))
    jax.config.update("jax_dump_ir_modes", "jaxpr,stablehlo")
    module, jaxpr = _jax_compat.dump_next_numbers()
    assert _jax_compat.dump_next_numbers() == (module, jaxpr)
    jax.jit(lambda v: v * 13)(1.0)
    expected = {f"jax_ir{module:04d}_jit__lambda_compile.mlir"}
    if _jax_compat.JAX_VERSION >= (0, 8):
        assert _jax_compat.dump_next_numbers() == (module + 1, jaxpr + 1)
        expected.add(f"jax_{jaxpr:06d}_<lambda>.jaxpr.txt")
    else:
        assert _jax_compat.dump_next_numbers() == (module + 1, None)  # 0.7 names jaxpr dumps without a number
        expected.add("<lambda>.jaxpr.txt")
    assert set(os.listdir(dumping_in_process)) == expected


def test_names_settings_and_cells_wrap_at_the_width(ip, dumping_in_process):
    """The 'names:' line ran to 458 columns and a cell's line of functions past 100: they wrap with a hanging
    indent; a path stays whole, and the IR shown runs as it is."""
    assert run_captured(ip, f"import jax, numpy as np\njax.config.update('jax_dump_ir_to', {str(dumping_in_process)!r})")[0].success
    assert run_captured(ip, "@jax.jit\ndef q(v):\n    return v - 1\nq(np.ones(5, np.float32));")[0].success
    run_captured(ip, "%jaxdump -o rep")
    rep = ip.user_ns["rep"]
    for width in (100, 80):
        text = render.to_text(rep, render.TextBudget(width=width))
        wide = wider_lines(text, width, *(t.text for t in rep.texts))
        assert [piece for piece in wide if str(dumping_in_process) not in piece] == [], width
    lines = render.to_text(rep, render.TextBudget(width=80)).splitlines()
    at = lines.index("  names: jax_ir{counter}_{module}_{stage}.mlir: counter = this process's running")
    assert lines[at + 1:at + 7] == [
        "    number of module dumps (4 digits, shared by all directories), module = the",
        "    compiled module (jit(name) with each character other than a letter, digit, _",
        "    . or - made _, trailing ones dropped: jit(<lambda>) gives jit__lambda),",
        "    stage = compile (handed to XLA; also on persistent-cache hits).",
        "    jax_{counter}_{function}.jaxpr.txt: the jaxpr, written when the function is",
        "    lowered, with its own 6-digit counter (jax 0.7: {function}.jaxpr.txt).",
    ]


def test_files_and_xla_modules_read_a_sentence_each_where_their_table_does_not_fit(ip, dumping_in_process):
    """At 60 columns a long function's file table ran to 99 columns and XLA's module table to 262 (a module name and a
    file name cannot break, and 'what XLA wrote' had no room left); at 60 a short one's 'stage compile (handed to XLA)'
    took a word a line. Each file and each module now reads as one sentence, wrapped at the width."""
    assert run_captured(ip, f"import jax, numpy as np\njax.config.update('jax_dump_ir_to', {str(dumping_in_process)!r})")[0].success
    cell = "@jax.jit\ndef normalise_the_batch(v):\n    return v - 1\nnormalise_the_batch(np.ones(5, np.float32));"
    assert run_captured(ip, cell)[0].success
    number = ip.execution_count - 1
    for rest in ("before_optimizations.txt", "cpu_after_optimizations.txt", "cpu_after_optimizations-buffer-assignment.txt"):
        (dumping_in_process / f"module_0004.jit_normalise_the_batch.{rest}").write_text("HloModule jit_normalise_the_batch\n")
    run_captured(ip, f"%jaxdump --dir {dumping_in_process} normalise_the_batch -o rep")
    rep = ip.user_ns["rep"]
    (mlir,) = rep.files
    lines = render.to_text(rep, render.TextBudget(width=60)).splitlines()
    at = lines.index("    jit_normalise_the_batch")
    assert lines[at + 1:at + 3] == [
        f"    In[{number}] {mlir.name}",
        f"        ({format_bytes(mlir.size_bytes)}): stage compile (handed to XLA)",
    ]
    at = lines.index("  XLA's dump:")
    assert lines[at + 1:at + 4] == [
        "    module_0004.jit_normalise_the_batch (3 files): before",
        "        optimizations; after optimizations; buffer",
        "        assignment",
    ]
    for width in (60, 80):
        text = render.to_text(rep, render.TextBudget(width=width))
        assert [piece for piece in wider_lines(text, width, *(t.text for t in rep.texts)) if str(dumping_in_process) not in piece] == []
    wide = render.to_text(rep, render.TextBudget(width=160)).splitlines()  # the tables where they fit
    assert wide[wide.index("  XLA's dump:") + 1].split() == ["module", "files", "what", "XLA", "wrote"]


def test_a_relative_jax_dump_ir_to_is_listed_where_jax_writes_now_and_said_to_follow_the_working_directory(ip, dumping_in_process, monkeypatch):
    """'jax_dump_ir_to = "reldump"' read '%jaxdump — 2 files of 2 functions in reldump': after a %cd JAX writes under the
    new working directory, and the files of the cells before it, in the old one, were left out without a word."""
    monkeypatch.chdir(dumping_in_process)
    (dumping_in_process / "sub").mkdir()
    assert run_captured(ip, "import jax, numpy as np\njax.config.update('jax_dump_ir_to', 'reldump')")[0].success
    assert run_captured(ip, "@jax.jit\ndef before_cd(v):\n    return v - 1\nbefore_cd(np.ones(5, np.float32));")[0].success
    monkeypatch.chdir(dumping_in_process / "sub")
    assert run_captured(ip, "@jax.jit\ndef after_cd(v):\n    return v + 1\nafter_cd(np.ones(5, np.float32));")[0].success
    run_captured(ip, "%jaxdump -o rep")
    rep = ip.user_ns["rep"]
    here = str(dumping_in_process / "sub" / "reldump")
    assert rep.directory == here and {f.function for f in rep.files} == {"after_cd"}
    assert rep.notes[0] == (f"jax_dump_ir_to is a relative path: JAX writes under the working directory of each dump, so here "
                            f"{here}; files dumped before a %cd or os.chdir are under the directory that was current then")
    assert all((pathlib.Path(here) / f.name).is_file() for f in rep.files)
    assert [p.name.split("_", 2)[2] for p in (dumping_in_process / "reldump").iterdir()] == ["jit_before_cd_compile.mlir"]
    # '%jaxdump --diff A B' with the same relative setting raised UnboundLocalError ('notes') instead of diffing
    result, _ = run_captured(ip, f"%jaxdump --diff {rep.files[0].name} {rep.files[0].name} -o diff")
    assert result.success and ip.user_ns["diff"].notes == (rep.notes[0], "the two files are identical")


def test_a_relative_xla_dump_to_is_named_by_its_full_path_and_said_to_follow_the_working_directory(tmp_path):
    """'XLA_FLAGS=--xla_dump_to=xla_rel' read "XLA's dump (xla_rel):", and after a %cd listed the new working directory's
    xla_rel, where XLA writes next, with no word that the modules dumped before were elsewhere."""
    out = _run_script(tmp_path, """
        ip = new_shell()
        ip.run_line_magic("load_ext", "jaxshow")
        run(ip, "call", "import jax, numpy as np\\njax.jit(lambda v: v + 1)(np.ones(3, np.float32));")
        os.mkdir("sub")
        os.chdir("sub")
        run(ip, "again", "jax.jit(lambda v: v * 2)(np.ones(3, np.float32));")
        rep = __import__("jaxshow").dump_report()
        OUT["xla"] = [rep.xla_directory, [m.module for m in rep.xla_modules], list(rep.notes)]
    """, env={"XLA_FLAGS": "--xla_dump_to=xla_rel"})
    here = str(tmp_path / "sub" / "xla_rel")
    directory, modules, notes = out["xla"]
    assert (directory, modules) == (here, ["jit__lambda"])
    assert (f"--xla_dump_to is a relative path: XLA writes under the working directory of each dump, so here {here}; modules "
            "dumped before a %cd or os.chdir are under the directory that was current then") in notes
    assert any(p.name.endswith("jit__lambda.before_optimizations.txt") for p in (tmp_path / "xla_rel").iterdir())


@pytest.mark.parametrize("env, source", [
    ("yes", "environment variable JAX_INCLUDE_DEBUG_INFO_IN_DUMPS, read when JAX was imported"),
    (" On ", "environment variable JAX_INCLUDE_DEBUG_INFO_IN_DUMPS, read when JAX was imported"),
    ("0", "jax.config.update, or JAX_INCLUDE_DEBUG_INFO_IN_DUMPS changed after JAX was imported"),
])
def test_debug_info_setting_names_the_environment_variable_where_its_word_gives_the_value(monkeypatch, env, source):
    assert jax.config.values["jax_include_debug_info_in_dumps"] is True  # JAX's default, untouched in this process
    monkeypatch.setenv("JAX_INCLUDE_DEBUG_INFO_IN_DUMPS", env)
    row = next(s for s in dumps.settings()[0] if s.option == "jax_include_debug_info_in_dumps")
    assert (row.value, row.source) == ("True", source)
