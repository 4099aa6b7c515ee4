"""The persistent-cache doctor: real JAX log lines, a write in one process and a disk hit in the next."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import textwrap
import time

import jax
import pytest

from jaxshow import keyparts, persistent
from jaxshow.report import PersistentCompile

CHILD = textwrap.dedent(
    """
    import json, sys
    import jax, jax.numpy as jnp
    import jaxshow
    from jaxshow import persistent
    jax.config.update("jax_compilation_cache_dir", sys.argv[1])
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)

    @jax.jit
    def work(x):
        return jnp.sin(x) @ x.T

    @jax.jit
    def quick(x):
        return x + 1

    with jaxshow.explain() as ex:
        work(jnp.ones((8, 8)))
        jax.jit(lambda v: jnp.cos(v) @ v)(jnp.ones((8, 8)))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)
        quick(jnp.ones(3))
    state = persistent.report(ex.report.persistent)
    print(json.dumps({
        "compiles": [[c.module, c.verdict, c.reason] for c in ex.report.persistent],
        "entries": state.entry_count, "initialized": state.initialized,
        "in_use": state.directory_in_use, "source": state.directory_source,
    }))
    """
)


def _child(directory, env_dir=False):
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    if env_dir:
        env["JAX_COMPILATION_CACHE_DIR"] = str(directory)
    out = subprocess.run([sys.executable, "-c", CHILD, str(directory)], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "PERSISTENT COMPILATION CACHE" not in out.stderr and "Not writing" not in out.stderr, "log lines went to the report, not stderr"
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_write_in_one_process_and_disk_hit_in_the_next(tmp_path):
    first = _child(tmp_path)
    verdicts = {m: (v, r) for m, v, r in first["compiles"]}
    assert verdicts["jit_work"][0] == "written"
    assert verdicts["jit__lambda"][0] == "written", "JAX names a lambda's module jit__lambda"
    assert verdicts["jit_quick"][0] == "skipped" and "took < 1.00 s to compile" in verdicts["jit_quick"][1]
    assert first["entries"] >= 1 and first["initialized"] is True
    assert os.path.samefile(first["in_use"], tmp_path)
    files = [p.name for p in tmp_path.iterdir()]
    assert any(n.startswith("jit_work-") and n.endswith("-cache") for n in files)

    second = _child(tmp_path, env_dir=True)
    verdicts = {m: (v, r) for m, v, r in second["compiles"]}
    assert verdicts["jit_work"] == ("hit", "served from the persistent cache (a compile in an earlier process)")
    assert second["source"] == "environment variable JAX_COMPILATION_CACHE_DIR"


def test_module_names_are_spelled_as_jax_spells_them():
    assert [persistent.module_name(n) for n in ("work", "<lambda>", "a.b-c", "f g")] == ["jit_work", "jit__lambda", "jit_a.b-c", "jit_f_g"]


def test_report_without_a_directory_says_why_nothing_is_written():
    assert jax.config.values["jax_compilation_cache_dir"] is None
    state = persistent.report()
    assert state.directory is None and state.entry_count is None
    assert state.listing_unavailable == "no cache directory set"
    gates = {g.option: g.value for g in state.gates}
    assert gates["jax_persistent_cache_min_compile_time_secs"] == "1.0 s"
    assert gates["process index"] == "0"
    assert ("no directory is set, so nothing is written: jax.config.update('jax_compilation_cache_dir', path) sets one, which "
            "JAX opens at the next compile (a compile made before it stays unwritten)") in state.notes
    assert any("jax.clear_caches() and f.clear_cache() do not touch" in n for n in state.notes)
    assert "min_compile_time_secs" in str(state)


def test_listing_counts_entries_and_names_the_newest(tmp_path):
    (tmp_path / "jit_a-1-cache").write_bytes(b"x" * 10)
    newest = tmp_path / "jit_b-2-cache"
    newest.write_bytes(b"y" * 30)
    os.utime(newest, (2_000_000_000, 2_000_000_000))
    (tmp_path / "jit_b-2-atime").write_bytes(b"")
    assert persistent.listing(str(tmp_path))[:3] == (2, 40, "jit_b-2-cache")
    assert persistent.listing(str(tmp_path / "missing"))[4].endswith("does not exist yet (JAX makes it when it opens the cache, at the next compile)")


def test_log_lines_fold_into_verdicts():
    lines = [
        "PERSISTENT COMPILATION CACHE MISS for 'jit_f' with key 'jit_f-abc'",
        "Not writing persistent cache entry for 'jit_f' because it took < 1.00 seconds to compile (0.03s)",
        "PERSISTENT COMPILATION CACHE MISS for 'jit_g' with key 'jit_g-def'",
        "Not writing persistent cache entry since process_id != 0",
        "Persistent compilation cache hit for 'jit_h' with key 'jit_h-123'",
        "PERSISTENT COMPILATION CACHE MISS for 'jit_k' with key 'jit_k-9'",
        "Not writing persistent cache entry with key 'jit_k-9' since its size (10 bytes) is less than threshold (100 bytes)",
        "some other message",
    ]
    events = [e for e in map(persistent.parse_compile_log, lines) if e is not None]
    assert len(events) == 7
    verdicts = persistent.compiles_from_events(events)
    assert verdicts == [
        PersistentCompile("jit_f", "skipped", "took < 1.00 s to compile (0.03 s); jax_persistent_cache_min_compile_time_secs", 0.03),
        PersistentCompile("jit_g", "skipped", "only process 0 writes (jax.process_index() != 0)", None),
        PersistentCompile("jit_h", "hit", "served from the persistent cache (a compile in an earlier process)", None),
        PersistentCompile("jit_k", "skipped", "entry of 10 bytes is under jax_persistent_cache_min_entry_size_bytes (100)", None),
    ]


def test_a_compile_made_before_the_cache_directory_was_set_says_so_in_the_past():
    # Shown beside a directory set later in the session, 'no cache directory set' read as if it were still unset.
    lines = ["PERSISTENT COMPILATION CACHE MISS for 'jit_f' with key 'jit_f-abc'",
             "Not writing persistent cache entry with key 'jit_f-abc' since cache is disabled/not initialized"]
    events = [e for e in map(persistent.parse_compile_log, lines) if e is not None]
    assert persistent.compiles_from_events(events) == [
        PersistentCompile("jit_f", "not_cached", "no cache directory was set, or the cache was disabled, when it compiled", None)]


def test_without_a_directory_every_gate_reads_the_same():
    # JAX's vmapped_log_probs notebook under %%jaxcache: one table read 'no cache directory was set, or the cache was
    # disabled, when it compiled' for normal_sample (JAX logged 'cache is disabled/not initialized') and 'no cache
    # directory was set (jax_compilation_cache_dir) when it compiled' for elbo (too fast to be written)
    assert jax.config.values["jax_compilation_cache_dir"] is None
    lines = ["PERSISTENT COMPILATION CACHE MISS for 'jit_normal_sample' with key 'jit_normal_sample-abc'",
             "Not writing persistent cache entry with key 'jit_normal_sample-abc' since cache is disabled/not initialized",
             "PERSISTENT COMPILATION CACHE MISS for 'jit_elbo' with key 'jit_elbo-def'",
             "Not writing persistent cache entry for 'jit_elbo' because it took < 1.00 seconds to compile (0.03s)"]
    events = [e for e in map(persistent.parse_compile_log, lines) if e is not None]
    mine, others = persistent.split_compiles(events, {"normal_sample", "elbo"})
    assert [(v.module, v.verdict, v.reason) for v in mine] == [
        ("jit_normal_sample", "not_cached", "no cache directory was set (jax_compilation_cache_dir) when it compiled"),
        ("jit_elbo", "not_cached", "no cache directory was set (jax_compilation_cache_dir) when it compiled"),
    ] and others == []


def test_gates_and_verdicts_read_as_sentences_where_their_table_does_not_fit():
    # At 60 columns the gates table was 176 columns wide (an option name and a meaning, neither to break), and at 80 its
    # meanings wrapped a word or two a line under the names, 30 lines for 6 gates.
    from jaxshow import render

    state = persistent.report((PersistentCompile("jit_f", "skipped", "took < 1.00 s to compile (0.03 s); "
                                                 "jax_persistent_cache_min_compile_time_secs", 0.03),))
    state = dataclasses.replace(state, gates=state.gates[:5], notes=())  # the host-callbacks row is jax < 0.11's only
    lines = render.to_text(state, render.TextBudget(width=60)).splitlines()
    assert lines[lines.index("  gates (when a compile is written):"):] == [
        "  gates (when a compile is written):",
        "    jax_enable_compilation_cache: True · False turns the",
        "        cache off entirely",
        "    jax_persistent_cache_min_compile_time_secs: 1.0 s ·",
        "        compiles faster than this are not written (default",
        "        1.0 s; most small functions compile in well under",
        "        it)",
        "    jax_persistent_cache_min_entry_size_bytes: 0 bytes ·",
        "        smaller entries are not written (0 = JAX's default",
        "        minimum, which is 0; -1 = no limit)",
        "    process index: 0 · only process 0 writes; every process",
        "        reads",
        "    jax_compilation_cache_max_size: -1 · -1 = unlimited; 0 =",
        "        nothing is kept; a positive size evicts least",
        "        recently used entries",
        "  compiles seen in %%jaxcache cells:",
        "    jit_f: not written · took < 1.00 s to compile (0.03 s);",
        "        jax_persistent_cache_min_compile_time_secs",
    ]
    wide = render.to_text(state, render.TextBudget(width=200)).splitlines()  # the table where it fits
    assert wide[wide.index("  gates (when a compile is written):") + 1:][:2] == [
        "    option                                      value    meaning",
        "    ------------------------------------------  -------  " + "-" * 104,
    ]
    for width in (60, 80, 100):
        assert max(len(piece) for piece in render.to_text(state, render.TextBudget(width=width)).splitlines()) <= width
    # with no compile seen yet, the line that says so ran to 101 columns at 60 and 80
    lines = render.to_text(dataclasses.replace(state, compiles=()), render.TextBudget(width=60)).splitlines()
    assert lines[-2:] == ["  no compile observed yet: run a cell under %%jaxcache (or",
                          "    %jaxcache on) to see what each compile did"]


def _run(body: str, tmp_path, *args: str, env: dict[str, str] | None = None) -> dict:
    """``body`` in a fresh process (JAX's persistent cache is opened once a process), with ``env`` added to the
    environment; the last line it prints, as JSON."""
    env = dict(os.environ, JAX_PLATFORMS="cpu", **(env or {}))
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(body), str(tmp_path), *args], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return {"stderr": out.stderr, **json.loads(out.stdout.strip().splitlines()[-1])}


OPEN = textwrap.dedent(
    """
    import json, pathlib, sys
    import jax, jax.numpy as jnp
    import jaxshow
    from jaxshow import persistent
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_compilation_cache_dir", str(pathlib.Path(sys.argv[1]) / "{path}"))
    (pathlib.Path(sys.argv[1]) / "a_file").write_text("x")

    @jax.jit
    def work(x):
        return jnp.sin(x) @ x.T

    with jaxshow.explain() as ex:
        work(jnp.ones((8, 8)))
    state = persistent.report(ex.report.persistent)
    print(json.dumps({{"compiles": [[c.module, c.verdict, c.reason] for c in ex.report.persistent],
                      "not_opened": state.not_opened, "notes": state.notes}}))
    """
)


def test_a_cache_directory_jax_cannot_open_is_said_to_be_so(tmp_path):
    # A file where the directory should be (or under it) read 'not cached: no cache directory was set, or the cache was
    # disabled, when it compiled', and %jaxcache persistent 'opened by JAX in this process: yes'; JAX only warned
    # 'Error reading persistent compilation cache entry …: FileExistsError', and never tries again in the process.
    for path in ("a_file", "a_file/sub"):
        out = _run(OPEN.format(path=path), tmp_path)
        assert "Error reading persistent compilation cache entry" in out["stderr"]  # JAX's own warning, as without jaxshow
        assert out["compiles"] == [["jit_work", "not_cached", persistent.OPEN_FAILED]], path
        assert out["not_opened"] == "JAX tried and could not open the directory; nothing is read or written in this process"
        assert persistent.OPEN_FAILED_NOTE in out["notes"]
    out = _run(OPEN.format(path="cache"), tmp_path)
    assert out["compiles"] == [["jit_work", "written", "written to the cache directory"]] and out["not_opened"] is None


def test_a_write_that_left_nothing_on_disk_is_not_said_to_be_written(tmp_path):
    # A directory JAX cannot write into read 'written: written to the cache directory': JAX logs 'Writing jit_work to
    # persistent compilation cache' before the write, and only warns where it fails.
    out = _run(OPEN.format(path="cache").replace('str(pathlib.Path(sys.argv[1]) / "cache")', '"/proc/self/fdinfo"'), tmp_path)
    assert "Error writing persistent compilation cache entry for 'jit_work'" in out["stderr"]  # JAX's own warning
    assert out["compiles"] == [["jit_work", "skipped", persistent.NOT_ON_DISK]] and out["not_opened"] is None
    line = "Writing jit_f to persistent compilation cache with key 'jit_f-abc'"
    assert persistent.parse_compile_log(line) == persistent.CompileLogEvent("written", "jit_f", "written to the cache directory", key="jit_f-abc")


DISABLED = textwrap.dedent(
    """
    import json, os, sys
    import jax
    jax.config.update("jax_enable_compilation_cache", False)
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "jaxshow")
    shell.run_cell("import jax, jax.numpy as jnp\\nx = jnp.ones(3)\\ntwice = jax.jit(lambda v: v * 2)")
    from IPython.utils.capture import capture_output
    with capture_output() as cap:
        shell.run_cell("%%jaxcache -o rep\\ny = twice(x)\\ny = twice(jax.device_put(x, jax.devices()[1]))\\ny = twice(x)")
    [row] = shell.user_ns["rep"].functions
    print(json.dumps({"counts": [row.calls, row.traced, row.hits, len(row.recompiled)],
                      "compiles": [[c.module, c.verdict, c.reason] for c in shell.user_ns["rep"].persistent],
                      "text": " ".join(cap.outputs[-1].data["text/plain"].split())}))
    """
)


def test_a_process_that_does_not_use_the_persistent_cache_still_sees_its_compiles(tmp_path):
    # With jax_enable_compilation_cache False at JAX's first compile, JAX logs nothing about the cache, and jaxshow read
    # compiles only from those lines: a call JAX compiled again for an argument on another device counted as a hit
    # (calls 3, traced 1, hits 2), with no note, no persistent-cache verdict and no count of JAX's own compiles.
    out = _run(DISABLED, tmp_path, env={"XLA_FLAGS": "--xla_force_host_platform_device_count=2"})
    assert out["counts"] == [3, 1, 1, 1]
    assert out["compiles"] == [["jit__lambda", "not_cached", persistent.NOT_USED]] * 2
    assert ("jit__lambda ×2 not cached JAX does not use the persistent cache in this process: jax_enable_compilation_cache "
            "was False at its first compile, or this backend cannot store executables") in out["text"]
    assert "note: <lambda>: 1 call compiled without a new trace: JAX reused an earlier trace" in out["text"]


WORK = textwrap.dedent(
    """
    import json, pathlib, sys
    import jax, jax.numpy as jnp
    import jaxshow
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_compilation_cache_dir", str(pathlib.Path(sys.argv[1]) / "cache"))

    @jax.jit
    def work(x):
        return jnp.sin(x) @ x.T
    """
)
"""A child's start: the cache in ``argv[1]/cache``, written whatever the compile time, and a jitted ``work``."""


LOGS_OFF = WORK + textwrap.dedent(
    """
    import logging
    logging.disable(logging.CRITICAL)
    with jaxshow.explain() as ex:
        work(jnp.ones((8, 8)))
    written = sorted(p.name.split("-")[0] for p in (pathlib.Path(sys.argv[1]) / "cache").glob("jit_work-*"))
    print(json.dumps({"compiles": [[c.module, c.verdict, c.reason] for c in ex.report.persistent], "written": written}))
    """
)


def test_a_compile_whose_cache_lines_logging_hides_has_no_verdict_but_not_known(tmp_path):
    # logging.disable(logging.CRITICAL) hides JAX's persistent-cache lines: the compile was seen only by its jax.monitoring
    # event, and 'not cached' would be wrong, JAX having written the entry.
    out = _run(LOGS_OFF, tmp_path)
    assert out["written"] == ["jit_work"]
    assert out["compiles"] == [["jit_work", "unknown", persistent.LOGS_OFF]]


KEYS = WORK + textwrap.dedent(
    """
    from jaxshow import persistent
    with jaxshow.explain() as ex:
        work(jnp.ones((8, int(sys.argv[2]))))
    print(json.dumps({"compiles": [[c.module, c.verdict, c.missed] for c in ex.report.persistent],
                      "text": " ".join(str(ex.report).split()), "store": persistent.report().key_store}))
    """
)


def test_a_compile_that_finds_no_entry_says_how_its_key_differs_from_the_ones_there(tmp_path):
    # A second process with another XLA_FLAGS read 'written: written to the cache directory', next to the first process's
    # entry of jit_work, with no word on why that one was not used: JAX's key hashes XLA_FLAGS and the compile options.
    store = {"JAXSHOW_CACHE_DIR": str(tmp_path / "store")}
    path = tmp_path / "store" / "persistent-keys.jsonl"
    assert _run("import json\nfrom jaxshow import persistent\nprint(json.dumps({'store': persistent.report().key_store}))", tmp_path,
                env=store)["store"] == f"none yet ({path})"
    first = _run(KEYS, tmp_path, "8", env=store)
    assert first["compiles"] == [["jit_work", "written", ""]]
    keys = {json.loads(line)["key"] for line in path.read_text().splitlines()}
    assert any(k.startswith("jit_work-") for k in keys) and first["store"] == f"{path} ({len(keys)} keys)"
    [entry] = (tmp_path / "cache").glob("jit_work-*-cache")
    written = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.stat().st_mtime))
    out = _run(KEYS, tmp_path, "8", env={**store, "XLA_FLAGS": "--xla_cpu_enable_fast_math=true"})
    missed = (f"the directory holds 1 other entry of jit_work (written {written}), whose key differs from this one in XLA_FLAGS "
              "(now --xla_cpu_enable_fast_math=true, then none) and the compile options")
    assert out["compiles"] == [["jit_work", "written", missed]]
    assert f"jit_work: not found, though {missed}" in out["text"]
    out = _run(KEYS, tmp_path, "4", env=store)  # another signature: the program differs, nearest of the two
    assert out["compiles"][0][2].startswith("the directory holds 2 other entries of jit_work; the nearest (written ")
    assert out["compiles"][0][2].endswith(") differs from this one in the program (another signature, or edited code)")
    out = _run(KEYS, tmp_path, "2", env={"JAXSHOW_CACHE_DIR": str(tmp_path / "empty")})  # no parts kept: said so
    assert out["compiles"][0][2].startswith("the directory holds 3 other entries of jit_work (the newest written ")
    assert out["compiles"][0][2].endswith("), whose keys differ from this one in a part jaxshow cannot name: it names them "
                                          "for entries written while it watched a compile (%%jaxcache, %jaxcache on)")


ON_FIRST = textwrap.dedent(
    """
    import json, sys
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "jaxshow")
    shell.run_line_magic("jaxcache", "on")
    shell.run_cell("import jax, jax.numpy as jnp\\nx = jnp.ones(3)\\n@jax.jit\\ndef f(v):\\n    return jnp.sin(v) * 2")
    shell.run_cell(f"jax.config.update('jax_compilation_cache_dir', {sys.argv[1] + '/cache'!r})\\n"
                   "jax.config.update('jax_persistent_cache_min_compile_time_secs', 0)")
    with capture_output() as cap:
        shell.run_cell("y = f(x)")  # the first compile since the directory was set
    print(json.dumps({"text": " ".join(cap.outputs[-1].data["text/plain"].split())}))
    """
)


def test_the_key_of_the_first_compile_after_the_directory_is_set_under_on_mode_is_kept(tmp_path):
    # %jaxcache on, then the directory set in a later cell (the usual order): the first compile after it, the training
    # step, had its key's parts left out (they were taken from the next compile on), and a restarted kernel with other
    # XLA_FLAGS read 'a part jaxshow cannot name' for it
    store = {"JAXSHOW_CACHE_DIR": str(tmp_path / "store")}
    _run(ON_FIRST, tmp_path, env=store)
    out = _run(ON_FIRST, tmp_path, env={**store, "XLA_FLAGS": "--xla_cpu_enable_fast_math=true"})
    assert ("jit_f: not found, though the directory holds 1 other entry of jit_f (written ") in out["text"]
    assert ("), whose key differs from this one in XLA_FLAGS (now --xla_cpu_enable_fast_math=true, then none) and the compile "
            "options") in out["text"]


ONCE = textwrap.dedent(
    """
    import json, pathlib, sys
    import jax, jax.numpy as jnp
    from jaxshow import persistent
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_compilation_cache_dir", str(pathlib.Path(sys.argv[1]) / "cache"))
    jax.config.update("jax_enable_compilation_cache", {first})
    jax.jit(lambda v: v * 2)(jnp.ones(3))
    jax.config.update("jax_enable_compilation_cache", {then})
    jax.jit(lambda v: v * 3)(jnp.ones(3))
    state = persistent.report()
    cache = pathlib.Path(sys.argv[1]) / "cache"
    lambdas = sorted(p.name.split("-")[0] for p in cache.glob("jit__lambda-*-cache")) if cache.is_dir() else []
    print(json.dumps({{"entries": state.entry_count, "lambdas": lambdas, "not_opened": state.not_opened,
                      "notes": state.notes, "opened": state.initialized}}))
    """
)


def test_jax_enable_compilation_cache_is_said_to_be_read_once_a_process(tmp_path):
    # Off at the first compile, then on: nothing is ever written, and %jaxcache persistent read 'opened by JAX in this
    # process: not yet' and 'the cache is opened at the next compile'. On at the first compile, then off: JAX kept writing,
    # and the note read 'a directory is set but jax_enable_compilation_cache is False'.
    out = _run(ONCE.format(first=False, then=True), tmp_path)
    assert (out["entries"], out["lambdas"], out["opened"]) == (0, [], False)
    assert out["not_opened"] == ("JAX decided at its first compile not to use the cache in this process "
                                 "(jax_enable_compilation_cache was False then, or this backend cannot store executables)")
    assert "the cache is opened at the next compile" not in out["notes"]
    assert ("JAX reads jax_enable_compilation_cache once a process, at its first compile: setting it now changes nothing until "
            "jax.experimental.compilation_cache.compilation_cache.reset_cache(); until then compiles neither read nor write the "
            "cache, and log nothing about it") in out["notes"]
    out = _run(ONCE.format(first=True, then=False), tmp_path / "on_then_off")
    assert (out["lambdas"], out["opened"], out["not_opened"]) == (["jit__lambda", "jit__lambda"], True, None)
    assert ("jax_enable_compilation_cache is False, but JAX read it once, at its first compile, when it was True: it keeps "
            "reading and writing the cache in this process until jax.experimental.compilation_cache.compilation_cache."
            "reset_cache()") in out["notes"]
    assert "a directory is set but jax_enable_compilation_cache is False" not in out["notes"]


LATE = textwrap.dedent(
    """
    import json, pathlib, sys
    import jax, jax.numpy as jnp
    import jaxshow
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)

    @jax.jit
    def early(x):
        return jnp.sin(x) @ x.T

    @jax.jit
    def late(x):
        return jnp.cos(x) @ x.T

    with jaxshow.explain() as ex:
        early(jnp.ones((8, 8)))
        jax.config.update("jax_compilation_cache_dir", str(pathlib.Path(sys.argv[1]) / "cache"))
        late(jnp.ones((8, 8)))
    cache = pathlib.Path(sys.argv[1]) / "cache"
    print(json.dumps({"compiles": [[c.module, c.verdict] for c in ex.report.persistent],
                      "entries": sorted(p.name.split("-")[0] for p in cache.glob("jit_*-cache"))}))
    """
)


def test_a_directory_set_after_the_first_compile_is_used_from_the_next(tmp_path):
    # The note said to set the directory 'before the first compile', and the docs that JAX reads it once, at the first
    # compile: JAX opens it at the first compile that finds one set, so a directory set later is written from then on.
    out = _run(LATE, tmp_path)
    assert out["compiles"] == [["jit_early", "not_cached"], ["jit_late", "written"]]
    assert "jit_late" in out["entries"] and "jit_early" not in out["entries"]


def test_the_environment_variable_set_after_jax_was_imported_is_said_to_be_too_late(tmp_path, monkeypatch):
    # '%env JAX_COMPILATION_CACHE_DIR=...' after 'import jax' read 'directory: not set' and 'no directory is set', with
    # nothing on the variable the user had set: JAX reads it once, at import, as the option's default.
    assert jax.config.values["jax_compilation_cache_dir"] is None
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", "/tmp/jax-cache")
    assert ("JAX_COMPILATION_CACHE_DIR is '/tmp/jax-cache', but JAX reads it once, when jax is imported, as "
            "jax_compilation_cache_dir's default: it was set after that (use jax.config.update('jax_compilation_cache_dir', "
            "'/tmp/jax-cache'))") in persistent.report().notes
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR")
    assert not any("JAX_COMPILATION_CACHE_DIR" in n for n in persistent.report().notes)
    # without a directory, the cache turned off is not 'a directory is set but …' (this note once shared their elif chain)
    previous = jax.config.values["jax_enable_compilation_cache"]
    jax.config.update("jax_enable_compilation_cache", False)
    try:
        assert not any(n.startswith(("a directory is set", "jax_enable_compilation_cache is False")) for n in persistent.report().notes)
    finally:
        jax.config.update("jax_enable_compilation_cache", previous)
    assert _child(tmp_path, env_dir=True)["source"] == "environment variable JAX_COMPILATION_CACHE_DIR"  # set before import


AGAIN = WORK + textwrap.dedent(
    """
    with jaxshow.explain() as ex:
        work(jnp.ones((8, 8)))
        jax.clear_caches()
        work(jnp.ones((8, 8)))
    print(json.dumps({"compiles": [[c.module, c.verdict, c.reason] for c in ex.report.persistent]}))
    """
)


def test_the_process_start_is_read_to_a_tenth_of_a_second():
    # read from /proc/stat's boot time in whole seconds, it came up to a second early: a process that wrote its entry
    # within its first second read as another process's hit
    before = time.time()
    child = subprocess.run([sys.executable, "-c", "from jaxshow import persistent; print(repr(persistent._process_started()))"],
                           capture_output=True, text=True, check=True)
    after = time.time()
    started = float(child.stdout)
    assert before - persistent.START_SLACK_SECONDS <= started <= after


def test_a_hit_on_this_processs_own_entry_is_not_said_to_come_from_an_earlier_process(tmp_path):
    # f written, jax.clear_caches(), f again: read '(a compile in an earlier process)', though this process wrote it.
    out = _run(AGAIN, tmp_path)
    assert out["compiles"] == [["jit_work", "written", "written to the cache directory"],
                               ["jit_work", "hit", persistent.THIS_PROCESS]]
    assert persistent.THIS_PROCESS == (
        "served from the persistent cache, from an entry written since this process started: by its own earlier compile, "
        "whose in-memory cache jax.clear_caches() or a new jax.jit wrapper emptied since, or by another process running now")


def test_a_compile_that_checked_an_earlier_processs_entry_is_not_said_to_be_written(tmp_path):
    # With jax_compilation_cache_check_contents, a restarted process compiles again what it finds on disk and compares:
    # this read 'written: written to the cache directory', though the entry was an earlier process's and JAX left it.
    if "jax_compilation_cache_check_contents" not in jax.config.values:
        pytest.skip(f"jax {jax.__version__} has no jax_compilation_cache_check_contents (added in 0.9.1)")
    # the same lines in both processes: the executables JAX compares hold each operation's source line
    again = AGAIN.replace("import jaxshow\n", "import jaxshow\njax.config.update('jax_compilation_cache_check_contents', CHECK)\n")
    assert _run(again.replace("CHECK", "False"), tmp_path)["compiles"][0] == ["jit_work", "written", "written to the cache directory"]
    [entry] = (tmp_path / "cache").glob("jit_work-*-cache")
    written = entry.stat().st_mtime
    out = _run(again.replace("CHECK", "True"), tmp_path)
    checked = ["jit_work", "skipped", "compiled again to check the entry an earlier process wrote (jax_compilation_cache_check_"
                                      "contents: a lookup compiles and compares until an entry matches in the process), and the "
                                      "entry stays as it was; where the two differ, JAX warns 'Persistent compilation cache "
                                      "inconsistency …' and checks again at the next lookup"]
    # jax 0.9's CPU executables differ from one process to the next: the check fails, JAX warns, and checks again
    differ = jax.__version_info__ < (0, 10)
    assert ("Persistent compilation cache inconsistency" in out["stderr"]) == differ
    assert out["compiles"] == ([checked, checked] if differ else
                               [checked, ["jit_work", "hit", "served from the persistent cache (a compile in an earlier process)"]])
    assert entry.stat().st_mtime == written


def test_a_compile_beside_an_earlier_processs_unreadable_entry_is_not_said_to_be_written(tmp_path):
    # An entry JAX cannot read: it warns, compiles, logs 'Writing jit_work …' and keeps the entry it finds; this read
    # 'written: written to the cache directory'.
    _run(AGAIN, tmp_path)
    [entry] = (tmp_path / "cache").glob("jit_work-*-cache")
    written = entry.stat().st_mtime
    entry.write_bytes(b"not an executable")
    os.utime(entry, (written, written))
    out = _run(AGAIN, tmp_path)
    assert "Error reading persistent compilation cache entry for 'jit_work'" in out["stderr"]  # JAX's own warning
    assert out["compiles"] == 2 * [["jit_work", "skipped", "compiled though an earlier process's entry is in the cache directory: "
                                    "JAX could not read it (its warning 'Error reading persistent compilation cache entry …' "
                                    "says why), and leaves it as it was"]]
    assert entry.read_bytes() == b"not an executable"


LIMIT_LATER = textwrap.dedent(
    """
    import json, pathlib, sys
    import jax, jax.numpy as jnp
    import jaxshow
    from jaxshow import persistent
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_compilation_cache_dir", str(pathlib.Path(sys.argv[1]) / "cache"))
    if sys.argv[2:]:
        jax.config.update("jax_compilation_cache_check_contents", True)
    jax.jit(lambda v: v * 2)(jnp.ones(3))
    jax.config.update("jax_compilation_cache_max_size", 0)

    @jax.jit
    def work(x):
        return jnp.sin(x) @ x.T

    with jaxshow.explain() as ex:
        work(jnp.ones((8, 8)))
    state = persistent.report(ex.report.persistent)
    print(json.dumps({"compiles": [[c.module, c.verdict, c.reason] for c in ex.report.persistent],
                      "max_size": [g.value for g in state.gates if g.option == "jax_compilation_cache_max_size"],
                      "in_use": state.directory_in_use}))
    """
)


@pytest.mark.parametrize("checked", [False, True], ids=["plain", "check_contents"])
def test_a_size_limit_set_after_jax_opened_the_cache_is_said_to_wait_for_a_reset(tmp_path, checked):
    # JAX reads jax_compilation_cache_max_size once, when it opens the cache: set to 0 afterwards, the gate read
    # '0 · 0 = nothing is kept' beside 'jit_work written', and JAX went on writing. Under
    # jax_compilation_cache_check_contents (a cache JAX wraps in a VerificationCache) the directory in use was unknown.
    if checked and "jax_compilation_cache_check_contents" not in jax.config.values:
        pytest.skip(f"jax {jax.__version__} has no jax_compilation_cache_check_contents (added in 0.9.1)")
    out = _run(LIMIT_LATER, tmp_path, *(["check"] if checked else []))
    assert os.path.samefile(out["in_use"], tmp_path / "cache")
    assert out["compiles"] == [["jit_work", "written", "written to the cache directory"]]
    assert out["max_size"] == ["0 (JAX opened the cache with -1, and keeps that until "
                               "jax.experimental.compilation_cache.compilation_cache.reset_cache())"]
    assert len(list((tmp_path / "cache").glob("jit_work-*-cache"))) == 1


RELATIVE = textwrap.dedent(
    """
    import json, os, sys
    import jax, jax.numpy as jnp, numpy as np
    import jaxshow
    from jaxshow import persistent
    os.chdir(sys.argv[1])
    os.mkdir("sub")
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_compilation_cache_dir", "relcache")

    @jax.jit
    def work(x):
        return jnp.sin(x) @ x.T

    with jaxshow.explain() as ex:
        work(np.ones((8, 8), np.float32))  # numpy arguments: no eager jnp.ones, whose modules JAX would write too
        os.chdir("sub")
        work(np.ones((9, 9), np.float32))
    state = persistent.report(ex.report.persistent)
    print(json.dumps({"compiles": [[c.module, c.verdict] for c in ex.report.persistent], "listing": state.listing_unavailable,
                      "notes": state.notes}))
    """
)


def test_a_relative_cache_directory_is_said_to_follow_the_working_directory(tmp_path):
    # jax_compilation_cache_dir 'relcache', then os.chdir('sub'): JAX made relcache when it opened the cache and writes
    # under the working directory of the moment, sub/relcache, which it never makes; the report read 'relcache does not
    # exist yet (JAX creates it at the first write)', with no word of the working directory.
    out = _run(RELATIVE, tmp_path)
    assert "Error writing persistent compilation cache entry for 'jit_work'" in out["stderr"]  # JAX's own warning
    assert out["compiles"] == [["jit_work", "written"], ["jit_work", "skipped"]]
    here = os.path.join(str(tmp_path), "sub", "relcache")
    assert out["listing"] == ("relcache does not exist: JAX made it when it opened the cache and does not make it again (a "
                              "directory deleted since, or a relative one after a change of working directory), so its writes "
                              "fail")
    assert (f"jax_compilation_cache_dir is a relative path, 'relcache': JAX reads and writes it under the working directory of "
            f"the moment, so here {here}; after an os.chdir or %cd it uses another directory, which it does not make (its "
            "writes fail): give an absolute path") in out["notes"]
    assert [p.name.split("-")[0] for p in (tmp_path / "relcache").iterdir()] == ["jit_work"]


def test_the_key_store_is_kept_only_under_an_absolute_folder_and_read_back(tmp_path, monkeypatch):
    # a relative $JAXSHOW_CACHE_DIR (or no home folder) would have made a folder under the kernel's working directory
    monkeypatch.setattr(keyparts, "_known", {})
    monkeypatch.setattr(keyparts, "_loaded_from", None)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JAXSHOW_CACHE_DIR", "relative")
    parts = keyparts.KeyParts("jit_f-" + "0" * 64, {"computation": "aa", "XLA flags": "bb"}, "0.10.2", ("--xla_a=1",))
    keyparts.remember(parts)
    assert keyparts.store_path() == "" and list(tmp_path.iterdir()) == []
    assert keyparts.store_summary() == "none (no home folder to keep them in; $JAXSHOW_CACHE_DIR names one)"
    monkeypatch.setenv("JAXSHOW_CACHE_DIR", str(tmp_path / "store"))
    monkeypatch.setattr(keyparts, "_known", {})
    keyparts.remember(parts)
    monkeypatch.setattr(keyparts, "_known", {})  # a later process: read back from the file
    monkeypatch.setattr(keyparts, "_loaded_from", None)
    assert keyparts.recall(parts.key) == parts
    assert keyparts.store_summary() == f"{tmp_path / 'store' / 'persistent-keys.jsonl'} (1 key)"
