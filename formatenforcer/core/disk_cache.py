"""An on-disk cache of vocabulary indexes, so a restarted server does not rebuild them.

Entries are keyed by a SHA-256 fingerprint of everything the index is derived from (the tokenizer's pieces,
special and added tokens, its decoder, the EOS ids and the logits size, and this format's version), and are
stored with ``marshal``, the fastest way CPython has to reload 128k small ``bytes`` (and, without the
compiled core, hundreds of thousands of small dicts). A missing, stale or unreadable entry is simply
rebuilt: the cache can make loading faster, never wrong.

The cache is bounded: each kind of entry (``.vocab`` indexes, ``.dfa`` automata) has a size cap, and a save
that takes a kind past its cap removes that kind's least recently used entries (a load marks an entry used).
``formatenforcer cache info`` shows what is kept, ``formatenforcer cache clear`` removes it.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .collector import paused

logger = logging.getLogger("formatenforcer")

FORMAT_VERSION = 5

SIZE_CAPS = {".vocab": 512 * 2**20, ".dfa": 64 * 2**20}
"""Bytes each kind of entry may take in one cache folder; older entries are evicted past it. A Llama 3
index takes ~7 MB, a pattern's automaton a few KB to a few hundred KB."""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/formatenforcer`` (``~/.cache/formatenforcer`` when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "formatenforcer"


def fingerprint(parts: Iterable[Any]) -> str:
    """SHA-256 over the ``repr`` of each part, separated so that no two part lists collide."""
    digest = hashlib.sha256(f"formatenforcer-vocabulary-v{FORMAT_VERSION}".encode())
    for part in parts:
        text = "\x00".join(map(str, part)) if isinstance(part, list) else repr(part)
        digest.update(text.encode("utf-8", "surrogatepass"))
        digest.update(b"\x01")
    return digest.hexdigest()


def load(folder: Path, key: str, suffix: str = ".vocab") -> Any | None:
    """The cached payload for ``key``, or None (absent, unreadable or from another format version)."""
    path = folder / f"{key}{suffix}"
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    try:
        with paused():
            payload = marshal.loads(blob)
    except (EOFError, ValueError, TypeError) as error:
        logger.debug("formatenforcer: ignoring unreadable vocabulary cache %s: %s", path, error)
        return None
    if not isinstance(payload, tuple) or not payload or payload[0] != FORMAT_VERSION:
        return None
    try:
        os.utime(path)  # used now: the last to be evicted
    except OSError:
        pass
    return payload[1:]


def save(folder: Path, key: str, payload: tuple, suffix: str = ".vocab") -> None:
    """Writes the payload atomically (temporary file + rename); failures are logged and ignored."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        blob = marshal.dumps((FORMAT_VERSION, *payload))
        with tempfile.NamedTemporaryFile(dir=folder, delete=False, suffix=".tmp") as handle:
            handle.write(blob)
        os.replace(handle.name, folder / f"{key}{suffix}")
        prune(folder, suffix, SIZE_CAPS.get(suffix))
    except (OSError, ValueError) as error:
        logger.debug("formatenforcer: could not write the vocabulary cache in %s: %s", folder, error)


def prune(folder: Path, suffix: str, cap: int | None) -> int:
    """Removes the least recently used ``*suffix`` entries of ``folder`` until they fit in ``cap`` bytes;
    returns how many bytes were freed. Entries another process removes meanwhile are skipped."""
    if cap is None:
        return 0
    entries = []
    for path in folder.glob(f"*{suffix}"):
        try:
            stat = path.stat()
        except OSError:
            continue
        entries.append((stat.st_mtime, stat.st_size, path))
    total = sum(size for _, size, _ in entries)
    freed = 0
    for _, size, path in sorted(entries):
        if total - freed <= cap:
            break
        try:
            path.unlink()
            freed += size
        except OSError:
            continue
    return freed
