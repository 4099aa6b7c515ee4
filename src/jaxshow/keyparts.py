"""What each persistent-cache key was made of, kept across processes, to say why a compile found no entry.

JAX's key for the persistent compilation cache is one hash of several parts (the
program, jaxlib's version, the backend, ``XLA_FLAGS``, the compile options, the
devices, …: ``jax._src.cache_key.get``); an entry on disk keeps only that hash.
While jaxshow watches a compile, JAX logs each part's own hash (DEBUG, on
:data:`KEY_LOGGER`); jaxshow keeps them, with jaxlib's version and the XLA flags
hashed, in a small file of its own (:func:`store_path`: under ``~/.cache/jaxshow``
or ``$JAXSHOW_CACHE_DIR``, never the cache directory), so that a later process
whose compile misses can say in which parts its key differs from the entries of
the same module already there.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass

KEY_LOGGER = "jax._src.cache_key"
"""Where JAX logs, at DEBUG, the hash of each part of a persistent-cache key it computes."""
STORE_ENV = "JAXSHOW_CACHE_DIR"
"""A folder to keep the store in instead of ``~/.cache/jaxshow``."""
STORE_MAX_BYTES = 4_000_000
"""The store is cut to its newer half when it grows past this."""

KEY_PARTS = {
    "computation": "the program (another signature, or edited code)",
    "jax_lib version": "jaxlib's version",
    "backend version": "the backend",
    "XLA flags": "XLA_FLAGS",
    "compile_options": "the compile options",
    "accelerator_config": "the devices",
    "compression": "the compression",
    "custom_hook": "JAX's custom key hook",
}
"""The parts of the key, as ``cache_key.get`` names them (jax 0.7 to 0.12), in words."""

_PART = re.compile(r"^get_cache_key hash of serialized (?P<p>.+): (?P<h>[0-9a-f]+)$")
_FLAG = re.compile(r"^Including XLA flag in cache key: (?P<f>.*)$")


@dataclass(frozen=True, slots=True)
class KeyParts:
    """What one key was made of: each part's hash, jaxlib's version and the XLA flags hashed."""

    key: str
    parts: dict[str, str]
    jaxlib: str = ""
    flags: tuple[str, ...] = ()


def key_line(message: str) -> tuple[str, str] | None:
    """``(part, hash)`` for JAX's line with one key part's hash, ``("flag", text)`` for an XLA flag it hashes, else
    ``None``."""
    if m := _PART.match(message):
        return m.group("p"), m.group("h")
    if m := _FLAG.match(message):
        return "flag", m.group("f")
    return None


def store_path() -> str:
    """The file the parts are kept in: ``persistent-keys.jsonl`` in ``$JAXSHOW_CACHE_DIR``, else in ``jaxshow`` under
    ``$XDG_CACHE_HOME`` or ``~/.cache``; ``""`` where that is no absolute path (no home folder): none is kept."""
    folder = os.environ.get(STORE_ENV) or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "jaxshow")
    return os.path.join(folder, "persistent-keys.jsonl") if os.path.isabs(folder) else ""


_lock = threading.Lock()
_known: dict[str, KeyParts] = {}
_loaded_from: str | None = None


def remember(parts: KeyParts) -> None:
    """Keep ``parts`` in this process and in the store (a store that cannot be written is left alone)."""
    with _lock:
        if _known.get(parts.key) == parts:
            return
        _known[parts.key] = parts
        path = store_path()
        if not path:
            return
        line = json.dumps({"key": parts.key, "parts": parts.parts, "jaxlib": parts.jaxlib, "flags": list(parts.flags),
                           "time": time.time()})
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.exists(path) and os.path.getsize(path) > STORE_MAX_BYTES:
                with open(path, encoding="utf-8") as f:
                    kept = f.readlines()
                with open(path, "w", encoding="utf-8") as f:
                    f.writelines(kept[len(kept) // 2:])
            with open(path, "a", encoding="utf-8") as f:
                f.write(line + "\n")
        except OSError:
            pass


def recall(key: str) -> KeyParts | None:
    """The parts of ``key``, seen in this process or kept in the store by an earlier one."""
    global _loaded_from
    with _lock:
        path = store_path()
        if _loaded_from != path:
            _loaded_from = path
            for parts in _read(path):
                _known.setdefault(parts.key, parts)
        return _known.get(key)


def store_summary() -> str:
    """``~/.cache/jaxshow/persistent-keys.jsonl (12 keys)`` (the whole path), or that none is kept there yet."""
    path = store_path()
    recall("")  # the store read, once
    with _lock:
        count = len(_known)
    if not path:
        return f"none (no home folder to keep them in; ${STORE_ENV} names one)"
    return f"{path} ({count} key{'' if count == 1 else 's'})" if count else f"none yet ({path})"


def _read(path: str) -> list[KeyParts]:
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except OSError:
        return []
    out = []
    for text in lines:
        try:
            d = json.loads(text)
            out.append(KeyParts(str(d["key"]), {str(k): str(v) for k, v in d["parts"].items()}, str(d.get("jaxlib", "")),
                                tuple(map(str, d.get("flags", ())))))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
    return out


def entries(directory: str) -> dict[str, list[tuple[str, float]]]:
    """The keys of the entries in ``directory`` by module (``jit_f``), each with its file's time; one listing."""
    found: dict[str, list[tuple[str, float]]] = {}
    try:
        listed = list(os.scandir(directory))
    except OSError:
        return found
    for entry in listed:
        if (m := _ENTRY.fullmatch(entry.name)) is not None:
            try:
                found.setdefault(m.group("m"), []).append((m.group("k"), entry.stat().st_mtime))
            except OSError:
                continue
    return found


_ENTRY = re.compile(r"(?P<k>(?P<m>.+)-[0-9a-f]{64})-cache")


def why_missed(key: str, module: str, held_now: dict[str, list[tuple[str, float]]], now: KeyParts | None) -> str:
    """Why a lookup of ``key`` found no entry though the directory (:func:`entries`) holds others of ``module``: in which
    parts the key of the nearest one differs (fewest parts, then newest), or that jaxshow did not see what it was made
    of; ``""`` where the directory holds none."""
    others = [(other, mtime) for other, mtime in held_now.get(module, ()) if other != key]
    if not others:
        return ""
    held = f"the directory holds {_entries(len(others), module)}"
    compared = [(_differing(now, then), mtime) for other, mtime in others if now is not None and (then := recall(other)) is not None]
    if not compared:
        newest = max(mtime for _, mtime in others)
        return (f"{held} (the newest written {_when(newest)}), whose keys differ from this one in a part jaxshow cannot "
                "name: it names them for entries written while it watched a compile (%%jaxcache, %jaxcache on)")
    differing, mtime = min(compared, key=lambda c: (len(c[0]), -c[1]))
    parts = _listed(differing) or "no part jaxshow knows of"
    if len(others) == 1:
        return f"{held} (written {_when(mtime)}), whose key differs from this one in {parts}"
    return f"{held}; the nearest (written {_when(mtime)}) differs from this one in {parts}"


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1] if words else ""


def _entries(n: int, module: str) -> str:
    return f"1 other entry of {module}" if n == 1 else f"{n} other entries of {module}"


def _when(mtime: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(mtime))


def _differing(now: KeyParts, then: KeyParts) -> list[str]:
    """The parts whose hashes differ, in words, with what was before and is now where the store knows it."""
    out = []
    for part, digest in now.parts.items():
        if then.parts.get(part, digest) == digest:
            continue
        words = KEY_PARTS.get(part, part)
        if part == "jax_lib version" and now.jaxlib and then.jaxlib:
            words += f" (now {now.jaxlib}, then {then.jaxlib})"
        elif part == "XLA flags":
            words += f" (now {' '.join(now.flags) or 'none'}, then {' '.join(then.flags) or 'none'})"
        out.append(words)
    return out
