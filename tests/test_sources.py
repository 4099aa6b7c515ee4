"""The one rule for "the user's own files" (jaxshow.capture.sources.is_user_file), on real paths."""

from __future__ import annotations

import os
import re
import sys
import sysconfig

import jax
import jaxlib

import jaxshow
from jaxshow.capture import sources
from shellrun import run_captured


def test_cells_and_files_outside_installed_code_are_the_users(tmp_path):
    assert sources.is_user_file("<ipython-input-4-0123456789ab>")
    assert sources.is_user_file("/tmp/ipykernel_4711/2983472.py")  # ipykernel's cell files
    assert sources.is_user_file(str(tmp_path / "project" / "src" / "ownpkg" / "model.py"))  # an editable install's files
    assert sources.is_user_file(str(tmp_path / "scratch.py"))


def test_installed_code_is_never_the_users(tmp_path):
    assert not sources.is_user_file(os.__file__)  # the standard library
    assert not sources.is_user_file(jax.__file__)
    assert not sources.is_user_file(jaxlib.__file__)
    assert not sources.is_user_file(jaxshow.__file__)
    assert not sources.is_user_file(os.path.join(sysconfig.get_paths()["purelib"], "flax", "linen", "module.py"))
    assert not sources.is_user_file(str(tmp_path / "lib" / "python3.11" / "site-packages" / "optax" / "transform.py"))
    assert not sources.is_user_file("/usr/lib/python3/dist-packages/numpy/core/numeric.py")
    assert not sources.is_user_file("<string>")
    assert not sources.is_user_file("<frozen importlib._bootstrap>")


def test_the_answer_does_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    own = tmp_path / "project" / "src" / "ownpkg2.py"
    (tmp_path / "project" / "notebooks").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "project" / "notebooks")
    inside = sources.is_user_file(str(own))
    monkeypatch.chdir(tmp_path.parent)
    sources._answers.pop(str(own))  # asked afresh, not remembered
    assert inside is sources.is_user_file(str(own)) is True


def test_installed_libraries_are_libraries_even_inside_a_standard_library_folder(tmp_path):
    # in a virtual environment sysconfig's platstdlib is the environment's lib/python3.X, which holds site-packages
    assert sources.is_library_file(os.path.join(sysconfig.get_paths()["purelib"], "numpyro", "util.py"))
    assert sources.is_library_file(os.path.join(sysconfig.get_paths()["platstdlib"], "site-packages", "blackjax", "base.py"))
    assert sources.is_library_file("/usr/lib/python3/dist-packages/numpy/core/numeric.py")
    assert not sources.is_library_file(os.__file__)
    assert not sources.is_library_file(jax.__file__)
    assert not sources.is_library_file(jaxshow.__file__)
    assert not sources.is_library_file("<ipython-input-4-0123456789ab>")


def _library_in(folder, *, installed: bool):
    """A package ``helperlib`` in ``folder`` calling its own jitted function; pip's ``*.dist-info`` beside it if ``installed``."""
    (folder / "helperlib").mkdir(parents=True)
    (folder / "helperlib" / "__init__.py").write_text(
        "import jax\n\n\n@jax.jit\ndef double(x):\n    return x * 2\n\n\ndef apply(x):\n    return double(x)\n")
    if installed:
        (folder / "helperlib-1.0.dist-info").mkdir()
        (folder / "helperlib-1.0.dist-info" / "METADATA").write_text("Name: helperlib\nVersion: 1.0\n")
    return str(folder / "helperlib" / "__init__.py")


def test_a_folder_on_sys_path_that_pip_installed_into_holds_libraries(tmp_path, monkeypatch):
    installed = _library_in(tmp_path / "target", installed=True)  # pip install --target target; PYTHONPATH=target
    own = _library_in(tmp_path / "project", installed=False)  # the user's own folder on sys.path
    monkeypatch.syspath_prepend(str(tmp_path / "target"))
    monkeypatch.syspath_prepend(str(tmp_path / "project"))
    assert (sources.is_user_file(installed), sources.is_library_file(installed)) == (False, True)
    assert (sources.is_user_file(own), sources.is_library_file(own)) == (True, False)


def test_a_library_installed_with_pip_target_is_reported_as_a_library(ip, tmp_path, monkeypatch):
    """With IPython or a library installed by ``pip install --target`` (packages carried as wheels to a GPU machine),
    their files counted as the user's: a call made inside ``helperlib.apply`` was 'called at .../helperlib/__init__.py:10
    in apply', and ``%timeit``'s call site was IPython's execution.py:168."""
    _library_in(tmp_path / "target", installed=True)
    monkeypatch.syspath_prepend(str(tmp_path / "target"))
    monkeypatch.delitem(sys.modules, "helperlib", raising=False)
    assert ip.run_cell("import helperlib, jax.numpy as jnp", store_history=True).success
    result, cap = run_captured(ip, "%%jaxstages\ny = helperlib.apply(1.0)")
    assert result.success
    lines = cap.outputs[0].data["text/plain"].splitlines()
    assert lines[2].startswith(f"double: trace ") and lines[2].endswith(
        f"(called at In[{result.execution_count}]:2) (a library's function)")
    result, cap = run_captured(ip, "%%jaxcache\ny = helperlib.apply(jnp.ones(2))")
    lines = cap.outputs[0].data["text/plain"].splitlines()
    assert f"       called at In[{result.execution_count}]:2" in lines
    words = " ".join(cap.outputs[0].data["text/plain"].split())  # the line wraps where the temporary path ends
    assert (f"a library re-traced: In[{result.execution_count}]:2 called helperlib.apply "
            f"({tmp_path}/target/helperlib/__init__.py:10), which passed x differently to double") in words


def test_a_function_whose_file_is_now_a_fifo_is_reported_and_the_fifo_never_read(ip, tmp_path):
    # A module's file replaced by a FIFO: %%jaxcache read the function's source inside the call (inspect.getsource) and
    # %%jaxstages --source the file's lines, and each open waited for a writer, so the cell hung where without the
    # magic it ran. Here a writer waits instead, and tells whether anything opened the FIFO to read it.
    import importlib.util
    import threading

    path = tmp_path / "fifo_module.py"
    path.write_text("import jax\n\ndef step(x):\n    return x * 2\n\nstep = jax.jit(step)\n")
    spec = importlib.util.spec_from_file_location("fifo_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path.unlink()
    os.mkfifo(path)
    read, done = threading.Event(), threading.Event()

    def writer():
        while not done.is_set():
            with open(path, "w"):  # returns once a reader opens the FIFO, which then reads an empty file
                read.set()

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    ip.user_ns.update(module=module)
    try:
        cached, cache_cap = run_captured(ip, "%%jaxcache\nimport jax.numpy as jnp\ny = module.step(jnp.ones(3))\n")
        staged, stages_cap = run_captured(ip, "%%jaxstages --source\nz = module.step(jnp.ones(4))\n")
        assert not read.is_set()
    finally:
        done.set()
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))  # lets the writer's last open return
        thread.join()
    assert cached.success and staged.success and ip.user_ns["z"].tolist() == [2.0] * 4
    assert "1 trace of 1 jitted function" in cache_cap.outputs[0].data["text/plain"].splitlines()[0]
    shown = stages_cap.outputs[0].data["text/plain"].splitlines()
    assert [re.sub(r"[\d.]+ (?:µs|ms|s)", "T", line.split(" (called at")[0]) for line in shown if line.startswith("step: ")] == [
        "step: trace T · lower T · compile T"]
