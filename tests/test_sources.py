"""The one rule for "the user's own files" (jaxshow.capture.sources.is_user_file), on real paths."""

from __future__ import annotations

import os
import sysconfig

import jax
import jaxlib

import jaxshow
from jaxshow.capture import sources


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
