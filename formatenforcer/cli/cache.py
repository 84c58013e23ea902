"""``formatenforcer cache info|clear``: what the on-disk cache holds and how to empty it.

The cache (``$XDG_CACHE_HOME/formatenforcer``, else ``~/.cache/formatenforcer``; ``--cache-dir`` moves it)
holds vocabulary indexes (``*.vocab``), regex automata (``regex/*.dfa``) and converted models
(``models/NAME-<digest>/``). Everything in it is rebuilt on demand, so clearing it is always safe.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from .model import cache_root

KINDS = {
    "vocabulary": ("vocabulary indexes", lambda root: list(root.glob("*.vocab"))),
    "regex": ("regex automata", lambda root: list((root / "regex").glob("*.dfa"))),
    "models": ("converted models", lambda root: [p for p in (root / "models").glob("*") if p.is_dir()]),
}


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _mb(size: int) -> str:
    return f"{size / 2**20:.1f} MB"


def add_cache_command(commands: argparse._SubParsersAction) -> None:
    cache = commands.add_parser("cache", help="show or clear the on-disk cache (indexes, automata, models)")
    cache.add_argument("action", choices=("info", "clear"), help="info: what is kept; clear: remove it")
    cache.add_argument("--kind", choices=tuple(KINDS), help="only this kind of entry (default: all)")
    cache.add_argument("--cache-dir", metavar="DIR", help="the cache folder (default: ~/.cache/formatenforcer)")
    cache.set_defaults(func=command_cache)


def command_cache(args: argparse.Namespace) -> int:
    root = cache_root(args.cache_dir)
    kinds = [args.kind] if args.kind else list(KINDS)
    total = 0
    print(f"cache: {root}")
    for kind in kinds:
        label, entries_of = KINDS[kind]
        entries = entries_of(root) if root.is_dir() else []
        size = sum(_size(p) for p in entries)
        total += size
        if args.action == "clear":
            for path in entries:
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
            print(f"  {label}: removed {len(entries)} ({_mb(size)})")
        else:
            print(f"  {label}: {len(entries)} ({_mb(size)})")
            if kind == "models":
                for path in sorted(entries):
                    print(f"    {path.name}  {_mb(_size(path))}")
    print(f"  total: {_mb(total)}" + (" freed" if args.action == "clear" else ""))
    return 0
