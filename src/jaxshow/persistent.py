"""The persistent compilation cache explained: where it is, its gates, what is on disk, what each compile did.

This module owns ``%jaxcache persistent``: it reads JAX's public config and the
environment, lists the cache directory, and turns the log lines JAX writes
around each compile (``jax._src.compiler``, ``jax._src.compilation_cache``;
jax-facts §4.5) into verdicts: written, skipped (and why), or served from disk.
It imports JAX and never IPython; anything private goes through
:mod:`jaxshow._jax_compat`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import time
from dataclasses import dataclass

import jax

from jaxshow import _jax_compat, keyparts
from jaxshow.report import PersistentCacheReport, PersistentCompile, PersistentGate

LOGGER_NAMES = ("jax._src.compiler", "jax._src.compilation_cache")
CACHE_SUFFIX = "-cache"
ENV_DIR = "JAX_COMPILATION_CACHE_DIR"


@dataclass(frozen=True, slots=True)
class CompileLogEvent:
    """One persistent-cache log line, reduced to what it says about one module."""

    kind: str
    module: str | None
    reason: str = ""
    compile_seconds: float | None = None
    key: str = ""
    """The cache key of a write (its entry is ``key + '-cache'`` in the directory)."""
    directory: str = ""
    """Where the entry is: the cache directory as JAX resolved it when it logged the line (:func:`directory_now`)."""


def directory_now() -> str:
    """The directory JAX reads and writes entries in at this moment: a relative one under the working directory now."""
    directory = _jax_compat.persistent_cache_directory_in_use() or _directory()
    if directory is None or "://" in directory:
        return directory or ""
    return os.path.abspath(directory)


_HIT = re.compile(r"^Persistent compilation cache hit for '(?P<m>[^']*)'(?: with key '(?P<k>[^']*)')?")
_MISS = re.compile(r"^PERSISTENT COMPILATION CACHE MISS for '(?P<m>[^']*)'(?: with key '(?P<k>[^']*)')?")
_TOO_FAST = re.compile(
    r"^Not writing persistent cache entry for '(?P<m>[^']*)' because it took < (?P<min>[\d.]+) seconds to compile \((?P<s>[\d.]+)s\)"
)
_CALLBACKS = re.compile(r"^Not writing persistent cache entry for '(?P<m>[^']*)' because it uses host callbacks")
_PROCESS = re.compile(r"^Not writing persistent cache entry since process_id != 0")
_SMALL = re.compile(r"^Not writing persistent cache entry with key .* since its size \((?P<n>\d+) bytes\) is less than threshold \((?P<t>\d+) bytes\)")
_NO_CACHE = re.compile(r"^Not writing persistent cache entry with key .* since cache is disabled/not initialized")
_WRITE = re.compile(r"^Writing (?P<m>\S+) to persistent compilation cache(?: with key '(?P<k>[^']*)')?")
_SLOW_ENOUGH = re.compile(r"^'(?P<m>[^']*)' took at least [\d.]+ seconds to compile \((?P<s>[\d.]+)s\)")


EARLIER_PROCESS = "served from the persistent cache (a compile in an earlier process)"
"""A hit's verdict where its entry is older than this process (or its age is unknown)."""
THIS_PROCESS = ("served from the persistent cache, from an entry written since this process started: by its own earlier "
                "compile, whose in-memory cache jax.clear_caches() or a new jax.jit wrapper emptied since, or by another "
                "process running now")
"""A hit's verdict where its entry was written after this process started."""
NO_CACHE_THEN = "no cache directory was set, or the cache was disabled, when it compiled"
"""JAX's 'cache is disabled/not initialized': what it says, where a directory is set now (it may have been set since)."""
NO_DIRECTORY = "no cache directory was set (jax_compilation_cache_dir) when it compiled"
"""Every compile's verdict while no directory is set, whichever gate JAX's log line names."""
OPEN_FAILED = "JAX could not open the cache directory (its warning 'Error reading persistent compilation cache entry …' says why)"
"""Each compile's verdict where JAX tried to open the directory it was given and failed."""
RESET = "jax.experimental.compilation_cache.compilation_cache.reset_cache()"
OPEN_FAILED_NOTE = (f"JAX tries to open the directory once a process, at the first compile that looks it up, and could not "
                    "(a file in its place, no permission to create it, or jax_compilation_cache_max_size set without the "
                    f"filelock package); fix that, then {RESET} makes JAX try again at the next compile")


def parse_compile_log(message: str) -> CompileLogEvent | None:
    """One of JAX's persistent-cache log messages as an event, or ``None`` for any other message."""
    if m := _HIT.match(message):
        return CompileLogEvent("hit", m.group("m"), EARLIER_PROCESS, key=m.group("k") or "")
    if m := _MISS.match(message):
        return CompileLogEvent("miss", m.group("m"), key=m.group("k") or "")
    if m := _TOO_FAST.match(message):
        reason = f"took < {float(m.group('min')):.2f} s to compile ({float(m.group('s')):.2f} s); jax_persistent_cache_min_compile_time_secs"
        return CompileLogEvent("skipped", m.group("m"), reason, float(m.group("s")))
    if m := _CALLBACKS.match(message):
        return CompileLogEvent("skipped", m.group("m"), "uses host callbacks (jax.debug.print, callbacks, breakpoint); not cached by this JAX")
    if _PROCESS.match(message):
        return CompileLogEvent("skipped", None, "only process 0 writes (jax.process_index() != 0)")
    if m := _SMALL.match(message):
        reason = f"entry of {int(m.group('n')):,} bytes is under jax_persistent_cache_min_entry_size_bytes ({int(m.group('t')):,})"
        return CompileLogEvent("skipped", None, reason)
    if _NO_CACHE.match(message):
        return CompileLogEvent("not_cached", None, NO_CACHE_THEN)
    if m := _WRITE.match(message):
        return CompileLogEvent("written", m.group("m"), "written to the cache directory", key=m.group("k") or "")
    if m := _SLOW_ENOUGH.match(message):
        return CompileLogEvent("slow_enough", m.group("m"), compile_seconds=float(m.group("s")))
    return None


def level_unexplained(event: CompileLogEvent, level: int) -> int:
    """The level JAX logs ``event``'s line at while ``jax_explain_cache_misses`` is off, given the ``level`` it has.

    A hit's line (WARNING under ``jax_log_compiles``) and the compile time's are logged whatever the flag says; every
    other line is DEBUG unless the flag is on.
    """
    return level if event.kind in ("hit", "slow_enough") else logging.DEBUG


def compiles_from_events(events: list[CompileLogEvent]) -> list[PersistentCompile]:
    """Fold the log events of a run into one verdict per compile, in order."""
    verdicts: list[PersistentCompile] = []
    pending: str | None = None
    seconds: float | None = None
    missed = ""  # why the pending lookup found no entry, where other entries of its module are there
    for e in events:
        if e.kind == "miss":
            if pending is not None:
                verdicts.append(PersistentCompile(pending, "not_cached", LOOKED_UP, seconds, missed))
            pending, seconds, missed = e.module, None, e.reason
        elif e.kind == "slow_enough":
            seconds = e.compile_seconds
        elif e.kind == "hit":
            verdicts.append(PersistentCompile(e.module or "?", "hit", e.reason))
        else:
            module = e.module or pending or "?"
            verdicts.append(PersistentCompile(module, e.kind, e.reason, e.compile_seconds if e.compile_seconds is not None else seconds,  # type: ignore[arg-type]
                                              missed if module == pending else ""))
            if module == pending:
                pending, seconds, missed = None, None, ""
    if pending is not None:
        verdicts.append(PersistentCompile(pending, "not_cached", LOOKED_UP, seconds, missed))
    return verdicts


LOOKED_UP = "looked up, not found, and not written"


NOT_ON_DISK = ("JAX went to write it, and it is not in the cache directory: the write failed (JAX's warning 'Error writing persistent "
               "compilation cache entry …' says why: a directory it cannot write)")
"""A write's verdict where its entry is not on disk and JAX evicts nothing (``jax_compilation_cache_max_size`` -1)."""
NOT_ON_DISK_LIMITED = ("JAX went to write it, and it is not in the cache directory: larger than jax_compilation_cache_max_size (JAX "
                       "warned 'Cache value … exceeds the maximum cache size'), evicted since to keep under it, or the write "
                       "failed (JAX warned 'Error writing persistent compilation cache entry …')")
"""A write's verdict where its entry is not on disk under a size limit."""

CHECKED = ("compiled again to check the entry an earlier process wrote (jax_compilation_cache_check_contents: a lookup "
           "compiles and compares until an entry matches in the process), and the entry stays as it was; where the two "
           "differ, JAX warns 'Persistent compilation cache inconsistency …' and checks again at the next lookup")
"""A write's verdict where the entry was on disk before this process started, and JAX compiled to check it."""
UNREADABLE = ("compiled though an earlier process's entry is in the cache directory: JAX could not read it (its warning "
              "'Error reading persistent compilation cache entry …' says why), and leaves it as it was")
"""A write's verdict where the entry was on disk before this process started: JAX keeps an entry it finds there."""


def _against_disk(events: list[CompileLogEvent]) -> list[CompileLogEvent]:
    """``events`` checked against the local cache directory: a write whose entry is not there is a skip that says so (JAX
    logs a write before it makes it, and only warns where it fails), and so is a write whose entry an earlier process
    wrote (JAX leaves an entry it finds); a hit whose entry was written since this process started says so."""
    directory = directory_now()
    if not directory or "://" in directory:
        return events
    limited = _max_size() != -1
    started = _process_started()
    listings: dict[str, dict[str, list[tuple[str, float]]]] = {}  # each directory listed once, for the misses
    out = []
    for e in events:
        entry = os.path.join(e.directory or directory, e.key + CACHE_SUFFIX)
        if e.kind == "written" and e.key and not os.path.exists(entry):
            e = CompileLogEvent("skipped", e.module, NOT_ON_DISK_LIMITED if limited else NOT_ON_DISK)
        elif e.kind == "written" and e.key and started is not None and _mtime(entry) <= started + START_SLACK_SECONDS:
            e = CompileLogEvent("skipped", e.module, CHECKED if _config_value("jax_compilation_cache_check_contents") else UNREADABLE)
        elif e.kind == "hit" and e.key and started is not None and _mtime(entry) > started + START_SLACK_SECONDS:
            e = dataclasses.replace(e, reason=THIS_PROCESS)
        elif e.kind == "miss" and e.key and e.module:
            place = e.directory or directory
            if place not in listings:
                listings[place] = keyparts.entries(place)
            e = dataclasses.replace(e, reason=keyparts.why_missed(e.key, e.module, listings[place], keyparts.recall(e.key)))
        out.append(e)
    return out


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


START_SLACK_SECONDS = 0.1
"""How much later than :func:`_process_started` an entry must be written to count as this process's own: the start is
read in clock ticks (10 ms) and the time since boot in hundredths of a second."""


def _process_started() -> float | None:
    """When this process started, within a few hundredths of a second (Linux: its start in clock ticks after boot,
    ``/proc/self/stat``, taken from now less the time since boot, ``/proc/uptime``; ``/proc/stat``'s boot time is whole
    seconds, which made a process that compiled within its first second read as another); ``None`` elsewhere."""
    try:
        with open("/proc/self/stat") as stat:
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as uptime:
            since_boot = float(uptime.read().split()[0])
        return time.time() - since_boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def split_compiles(events: list[CompileLogEvent], function_names: set[str]) -> tuple[list[PersistentCompile], list[str]]:
    """Verdicts for the modules of ``function_names`` (``jit_<name>``), and the modules of all other compiles."""
    verdicts = compiles_from_events(_against_disk(list(events)))
    wanted = {module_name(n) for n in function_names}
    mine = [v for v in verdicts if v.module in wanted]
    if _directory() is None:
        mine = [PersistentCompile(v.module, "not_cached", NO_DIRECTORY, v.compile_seconds)
                if v.verdict in ("skipped", "unknown") or v.reason == NO_CACHE_THEN else v for v in mine]
    elif _jax_compat.persistent_cache_open_failed():
        mine = [dataclasses.replace(v, reason=OPEN_FAILED) if v.reason == NO_CACHE_THEN else v for v in mine]
    return mine, [v.module for v in verdicts if v.module not in wanted]


def module_name(function: str) -> str:
    """The module JAX compiles ``jax.jit(function)`` as: ``jit(<lambda>)`` sanitised and right-stripped, ``jit__lambda``."""
    return _sanitised(f"jit({function})")


def _sanitised(name: str) -> str:
    return re.sub(r"[^\w.-]", "_", name).rstrip("_")


NOT_USED = ("JAX does not use the persistent cache in this process: jax_enable_compilation_cache was False at its first "
            "compile, or this backend cannot store executables")
"""Each compile's verdict where JAX decided not to use the cache (it then logs nothing about it)."""
LOGS_OFF = ("JAX's log lines about the persistent cache, which jaxshow reads its verdicts from, are turned off "
            "(logging.disable, or a disabled logger)")
"""The reason of a compile whose verdict is not known: the loggers of :data:`LOGGER_NAMES` pass nothing on."""
UNLOGGED = "JAX logged nothing about the persistent cache for it"


def unlogged_compile(fun_name: str) -> CompileLogEvent:
    """A compile JAX logged nothing about the persistent cache for, from its ``jax.monitoring`` event (``jit(f)``)."""
    module = _sanitised(fun_name)
    if _jax_compat.persistent_cache_use_decided() is False:
        return CompileLogEvent("not_cached", module, NOT_USED)
    if any(logger.disabled or not logger.isEnabledFor(logging.DEBUG) for logger in map(logging.getLogger, LOGGER_NAMES)):
        return CompileLogEvent("unknown", module, LOGS_OFF)
    return CompileLogEvent("not_cached", module, UNLOGGED)


def _directory() -> str | None:
    value = jax.config.values.get("jax_compilation_cache_dir")
    return str(value) if value else None


def _config_value(name: str):
    return jax.config.values.get(name)


def _max_size() -> int | None:
    """The size limit JAX keeps to: the one it opened the cache with, else the config value it will open it with."""
    in_use = _jax_compat.persistent_cache_max_size_in_use()
    return _config_value("jax_compilation_cache_max_size") if in_use is None else in_use


def directory_source(directory: str | None) -> str:
    """How the directory was set: from the environment variable, by config, or not at all."""
    if directory is None:
        return "not set (jax_compilation_cache_dir is None)"
    env = os.environ.get(ENV_DIR)
    if env and os.path.abspath(env) == os.path.abspath(directory):
        return f"environment variable {ENV_DIR}"
    return "jax.config.update('jax_compilation_cache_dir', ...) or set_cache_dir()"


def gates() -> tuple[PersistentGate, ...]:
    """The settings that decide whether a compile is written, with their current values."""
    min_time = _config_value("jax_persistent_cache_min_compile_time_secs")
    min_size = _config_value("jax_persistent_cache_min_entry_size_bytes")
    max_size = _config_value("jax_compilation_cache_max_size")
    if (kept := _max_size()) != max_size:
        max_size = f"{max_size} (JAX opened the cache with {kept}, and keeps that until {RESET})"
    process = jax.process_index()
    rows = [
        PersistentGate("jax_enable_compilation_cache", str(_config_value("jax_enable_compilation_cache")), "False turns the cache off entirely"),
        PersistentGate(
            "jax_persistent_cache_min_compile_time_secs",
            f"{min_time} s",
            "compiles faster than this are not written (default 1.0 s; most small functions compile in well under it)",
        ),
        PersistentGate(
            "jax_persistent_cache_min_entry_size_bytes",
            f"{min_size} bytes",
            "smaller entries are not written (0 = JAX's default minimum, which is 0; -1 = no limit)",
        ),
        PersistentGate("process index", str(process), "only process 0 writes; every process reads"),
        PersistentGate(
            "jax_compilation_cache_max_size",
            str(max_size),
            "-1 = unlimited; 0 = nothing is kept; a positive size evicts least recently used entries",
        ),
    ]
    if _jax_compat.JAX_VERSION < (0, 11):
        rows.append(PersistentGate("host callbacks", "not cached by this JAX", "functions using jax.debug.print or callbacks are never written before jax 0.11"))
    return tuple(rows)


def listing(directory: str | None) -> tuple[int | None, int | None, str | None, float | None, str | None]:
    """``(entries, total bytes, newest entry, its mtime, why unavailable)`` for the cache directory."""
    if directory is None:
        return None, None, None, None, "no cache directory set"
    if "://" in directory:
        return None, None, None, None, f"{directory} is not a local directory; jaxshow lists local directories only"
    try:
        with os.scandir(directory) as it:
            entries = [e for e in it if e.is_file() and e.name.endswith(CACHE_SUFFIX)]
            stats = [(e.name, e.stat()) for e in entries]
    except FileNotFoundError:
        if _jax_compat.persistent_cache_directory_in_use() is None:
            return 0, 0, None, None, f"{directory} does not exist yet (JAX makes it when it opens the cache, at the next compile)"
        return 0, 0, None, None, (f"{directory} does not exist: JAX made it when it opened the cache and does not make it again "
                                  "(a directory deleted since, or a relative one after a change of working directory), so its "
                                  "writes fail")
    except OSError as exc:
        return None, None, None, None, f"cannot list {directory}: {exc}"
    if not stats:
        return 0, 0, None, None, None
    newest = max(stats, key=lambda s: s[1].st_mtime)
    return len(stats), sum(s.st_size for _, s in stats), newest[0], newest[1].st_mtime, None


def report(compiles: tuple[PersistentCompile, ...] = ()) -> PersistentCacheReport:
    """The state of the persistent compilation cache, plus the verdicts of compiles jaxshow observed."""
    directory = _directory()
    enabled = bool(_config_value("jax_enable_compilation_cache"))
    in_use = _jax_compat.persistent_cache_directory_in_use()
    initialized = _jax_compat.persistent_cache_initialized()
    count, total, newest, mtime, unavailable = listing(in_use or directory)
    used = _jax_compat.persistent_cache_use_decided()
    notes = []
    if directory is None:
        notes.append("no directory is set, so nothing is written: jax.config.update('jax_compilation_cache_dir', path) sets one, "
                     "which JAX opens at the next compile (a compile made before it stays unwritten)")
    elif not enabled and used:
        notes.append("jax_enable_compilation_cache is False, but JAX read it once, at its first compile, when it was True: it "
                     f"keeps reading and writing the cache in this process until {RESET}")
    elif not enabled:
        notes.append("a directory is set but jax_enable_compilation_cache is False")
    if (env := os.environ.get(ENV_DIR)) and (directory is None or os.path.abspath(env) != os.path.abspath(directory)):
        notes.append(f"{ENV_DIR} is {env!r}, but JAX reads it once, when jax is imported, as jax_compilation_cache_dir's "
                     "default: it was set after that" + (f" (use jax.config.update('jax_compilation_cache_dir', {env!r}))"
                                                         if directory is None else ", or jax.config.update set another directory"))
    if (relative := in_use or directory) is not None and "://" not in relative and not os.path.isabs(relative):
        notes.append(f"jax_compilation_cache_dir is a relative path, {relative!r}: JAX reads and writes it under the working "
                     f"directory of the moment, so here {os.path.abspath(relative)}; after an os.chdir or %cd it uses another "
                     "directory, which it does not make (its writes fail): give an absolute path")
    if in_use is not None and directory is not None and os.path.abspath(in_use) != os.path.abspath(directory):
        notes.append(
            f"JAX opened the cache at {in_use} at its first compile and keeps writing there; the directory is read once "
            f"({RESET} makes it read the new one)"
        )
    not_opened = None
    if used is False:
        not_opened = ("JAX decided at its first compile not to use the cache in this process (jax_enable_compilation_cache "
                      "was False then, or this backend cannot store executables)")
        notes.append(f"JAX reads jax_enable_compilation_cache once a process, at its first compile: setting it now changes "
                     f"nothing until {RESET}; until then compiles neither read nor write the cache, and log nothing about it")
    elif directory is not None and _jax_compat.persistent_cache_open_failed():
        not_opened = "JAX tried and could not open the directory; nothing is read or written in this process"
        notes.append(OPEN_FAILED_NOTE)
    if directory is not None and initialized is False and not_opened is None:
        notes.append("the cache is opened at the next compile")
    notes.append("jax.clear_caches() and f.clear_cache() do not touch the persistent cache: delete its files to empty it")
    return PersistentCacheReport(
        directory=directory,
        directory_source=directory_source(directory),
        directory_in_use=in_use,
        enabled=enabled,
        initialized=initialized,
        not_opened=not_opened,
        key_store=keyparts.store_summary(),
        gates=gates(),
        entry_count=count,
        total_bytes=total,
        newest_entry=newest,
        newest_mtime=mtime,
        listing_unavailable=unavailable,
        compiles=tuple(compiles),
        notes=tuple(notes),
    )
