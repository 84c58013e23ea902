"""Recovering the exact bytes each token of a transformers tokenizer adds to the output.

Three token spellings cover the tokenizers in use, and each is undone by rule rather than by decoding token
by token (which would be slow and loses bytes of split UTF-8 characters):

- byte-level BPE (GPT-2, Llama 3, Qwen, SmolLM): every byte is spelled as one printable character
  (``Ġ`` = space, ``Ċ`` = newline); the inverse of that fixed byte-to-character table gives the bytes.
- SentencePiece (Llama 2, Mistral): ``▁`` is a space and ``<0x0A>``-style pieces are raw bytes (byte
  fallback). Its decoder drops the space of the first token of a text, which ``strip_leading_space`` records.
- added, non-special tokens are literal text.

The result is checked against ``tokenizer.decode`` on a sample of tokens, so a tokenizer with another
spelling fails loudly (VocabularyError) instead of producing wrong masks.
"""

from __future__ import annotations

import os
import re
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import backend, disk_cache
from .errors import VocabularyError

_BYTE_FALLBACK = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")
_EOS_NAMES = ("<|eot_id|>", "<|end_of_text|>", "<|im_end|>", "<|endoftext|>", "</s>", "<eos>", "<|end|>")


def _byte_level_decoder() -> dict[str, int]:
    """The inverse of the byte-level BPE table: printable bytes stand for themselves, the other bytes are
    shifted to code points 256 and up, in byte order."""
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    table = {chr(b): b for b in printable}
    shifted = 0
    for b in range(256):
        if b not in table.values():
            table[chr(256 + shifted)] = b
            shifted += 1
    return table


_BYTE_LEVEL = _byte_level_decoder()
_BYTE_LEVEL_TABLE = b"".join(
    _BYTE_LEVEL.get(chr(cp), -1).to_bytes(2, "little", signed=True) for cp in range(max(map(ord, _BYTE_LEVEL)) + 1)
)
"""``_BYTE_LEVEL`` as the compiled core reads it (``spelled_bytes``): int16 per code point, -1 where none."""


def scheme_of(decoder: str, pieces: list[str] = ()) -> str:
    """ "byte-level", "sentencepiece" or "decode", from a tokenizers decoder description (and sample pieces)."""
    if "ByteLevel" in decoder:
        return "byte-level"
    if "Metaspace" in decoder or "ByteFallback" in decoder or any("▁" in p for p in pieces[:5000] if p):
        return "sentencepiece"
    return "decode"


def _scheme(tokenizer: Any, pieces: list[str]) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    decoder = str(getattr(backend, "decoder", "")) if backend is not None else ""
    if hasattr(tokenizer, "byte_decoder"):
        return "byte-level"
    return scheme_of(decoder, pieces)


def piece_bytes(piece: str, scheme: str, decode_one: Callable[[int], str], token_id: int) -> bytes:
    """The bytes a token spelled ``piece`` adds, under ``scheme``; "decode" asks ``decode_one(token_id)``."""
    if scheme == "byte-level":
        try:
            return bytes(_BYTE_LEVEL[ch] for ch in piece)
        except KeyError:
            return piece.encode("utf-8")  # an added token spelled as plain text
    if scheme == "sentencepiece":
        match = _BYTE_FALLBACK.match(piece)
        if match:
            return bytes((int(match.group(1), 16),))
        return piece.replace("▁", " ").encode("utf-8")
    return decode_one(token_id).encode("utf-8")


def _decoder_of(tokenizer: Any) -> Callable[[int], str]:
    return lambda token_id: tokenizer.decode([token_id], clean_up_tokenization_spaces=False)


def _added(tokenizer: Any) -> tuple[set[int], dict[int, str]]:
    """(special ids, literal text of added non-special tokens): cheap, a few hundred entries at most."""
    special = set(getattr(tokenizer, "all_special_ids", ()) or ())
    added_literal: dict[int, str] = {}
    for token_id, added in (getattr(tokenizer, "added_tokens_decoder", {}) or {}).items():
        if getattr(added, "special", False):
            special.add(token_id)
        else:
            added_literal[token_id] = str(added)
    return special, added_literal


def _pieces(tokenizer: Any) -> tuple[list[str], set[int], dict[int, str]]:
    """(token pieces by id, special ids, literal text of added non-special tokens)."""
    count = len(tokenizer)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:  # one call into the Rust tokenizer instead of one per id
        pieces: list[str] = [None] * count  # type: ignore[list-item]
        for piece, token_id in backend.get_vocab(with_added_tokens=True).items():
            if token_id < count:
                pieces[token_id] = piece
        missing = [i for i, piece in enumerate(pieces) if piece is None]
        for token_id, piece in zip(missing, tokenizer.convert_ids_to_tokens(missing)):
            pieces[token_id] = piece
    else:
        pieces = tokenizer.convert_ids_to_tokens(list(range(count)))
    return (pieces, *_added(tokenizer))


def _source_file(tokenizer: Any) -> Path | None:
    """The file the tokenizer's pieces were read from, when it names one on local disk: ``tokenizer.json``
    in the folder a fast tokenizer was loaded from, or a slow (SentencePiece) tokenizer's ``vocab_file``."""
    if getattr(tokenizer, "backend_tokenizer", None) is None:
        vocab_file = getattr(tokenizer, "vocab_file", None)
        return Path(vocab_file) if isinstance(vocab_file, str) and os.path.isfile(vocab_file) else None
    folder = getattr(tokenizer, "name_or_path", "") or ""
    path = Path(folder) / "tokenizer.json"
    return path if folder and path.is_file() else None


def _file_identity(path: Path) -> tuple:
    """The file's path, size and modification time: how Python itself decides a ``.pyc`` is stale, without
    reading 9 MB; an entry it finds is still spot-checked against the tokenizer (``agrees``)."""
    info = path.stat()
    return (str(path.resolve()), info.st_size, info.st_mtime_ns)


def cache_key(tokenizer: Any, eos: tuple[int, ...], size: int | None) -> tuple[str, tuple | None]:
    """(fingerprint, pieces or None). The identity of the tokenizer's source file (path, size, mtime) spares
    the copy of its whole vocabulary (``get_vocab``, ~0.15 s for 128k pieces) that would otherwise be hashed;
    what can change in memory after loading (added tokens, the special ids, the decoder, the length) is
    hashed as well, and a reloaded entry is spot-checked against the tokenizer (``agrees``)."""
    decoder = str(getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None))
    head = [type(tokenizer).__name__, decoder]
    tail = [eos, size]
    source = _source_file(tokenizer)
    if source is not None:
        special, added_literal = _added(tokenizer)
        parts = [*head, "file", *_file_identity(source), len(tokenizer), sorted(special), sorted(added_literal.items())]
        return disk_cache.fingerprint([*parts, *tail]), None
    pieces = _pieces(tokenizer)
    parts = [*head, pieces[0], sorted(pieces[1]), sorted(pieces[2].items())]
    return disk_cache.fingerprint([*parts, *tail]), pieces


def agrees(tokenizer: Any, data: list[bytes | None], scheme: str, eos: tuple[int, ...], samples: int = 512) -> bool:
    """Whether a cache entry found through the tokenizer's file matches the tokenizer on an even sample of
    ids (a tokenizer whose model was swapped in memory after loading would not)."""
    if len(data) != len(tokenizer):
        return False
    special, added_literal = _added(tokenizer)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    to_piece = backend.id_to_token if backend is not None else tokenizer.convert_ids_to_tokens
    decode_one = _decoder_of(tokenizer)
    for token_id in range(0, len(data), max(1, len(data) // samples)):
        if token_id in eos:
            continue  # stored without text (see Vocabulary)
        if token_id in special:
            expected = None
        elif token_id in added_literal:
            expected = added_literal[token_id].encode("utf-8")
        else:
            piece = to_piece(token_id)
            expected = None if piece is None else piece_bytes(piece, scheme, decode_one, token_id)
        if (expected or None) != data[token_id]:
            return False
    return True


def token_bytes_of(tokenizer: Any, parts: tuple | None = None) -> tuple[list[bytes | None], bool, str]:
    """(bytes per id with None for special tokens, strip_leading_space, scheme name) of a tokenizer."""
    pieces, special, added_literal = parts or _pieces(tokenizer)
    scheme = _scheme(tokenizer, pieces)
    decode_one = _decoder_of(tokenizer)
    if scheme == "byte-level" and backend.native is not None and isinstance(pieces, list):
        data = _byte_level_bytes(pieces, special, added_literal)
    else:
        data = _each_piece(pieces, special, added_literal, scheme, decode_one)
    strip = _strips_leading_space(tokenizer, data)
    verify_token_bytes(decode_one, data, strip)
    return data, strip, scheme


def _byte_level_bytes(pieces: list[str], special: set[int], added_literal: dict[int, str]) -> list[bytes | None]:
    """What ``_each_piece`` gives for a byte-level vocabulary, with the spelled pieces read in C (one call
    for the whole vocabulary: ~0.1 s less for 128k pieces); the few others (special and added tokens, a
    piece with a character outside the table) are read as ``_each_piece`` reads them."""
    data: list[bytes | None] = backend.native.spelled_bytes(pieces, _BYTE_LEVEL_TABLE)  # type: ignore[union-attr]
    for token_id in [i for i, spelled in enumerate(data) if spelled is None]:
        piece = pieces[token_id]
        if piece is not None:
            data[token_id] = piece.encode("utf-8")  # an added token spelled as plain text (as piece_bytes)
    for token_id, text in added_literal.items():
        if 0 <= token_id < len(data) and pieces[token_id] is not None:
            data[token_id] = text.encode("utf-8")
    for token_id in special:
        if 0 <= token_id < len(data):
            data[token_id] = None
    return data


def _each_piece(
    pieces: Sequence[str | None],
    special: set[int],
    added_literal: dict[int, str],
    scheme: str,
    decode_one: Callable[[int], str],
) -> list[bytes | None]:
    """The bytes of each token, one piece at a time: None for special tokens and missing pieces, the literal
    text of added tokens, ``piece_bytes`` for the others."""
    data: list[bytes | None] = []
    for token_id, piece in enumerate(pieces):
        if token_id in special or piece is None:
            data.append(None)
        elif token_id in added_literal:
            data.append(added_literal[token_id].encode("utf-8"))
        else:
            data.append(piece_bytes(piece, scheme, decode_one, token_id))
    return data


def _strips_leading_space(tokenizer: Any, data: list[bytes | None]) -> bool:
    """Whether decoding a lone space-led word token drops its space (SentencePiece's first-token rule)."""
    for token_id, token in enumerate(data):
        if token and len(token) > 2 and token[:1] == b" " and token[1:].isalpha():
            return not tokenizer.decode([token_id], clean_up_tokenization_spaces=False).startswith(" ")
    return False


def verify_token_bytes(decode_one: Callable[[int], str], data: list[bytes | None], strip: bool, sample: int = 400):
    """Compares the recovered bytes with ``decode_one(id)`` (the tokenizer's own decoding of one token) on an
    even sample of complete-UTF-8 tokens; raises VocabularyError when more than 1% disagree."""
    step = max(1, len(data) // sample)
    wrong: list[str] = []
    checked = 0
    for token_id in range(0, len(data), step):
        token = data[token_id]
        if not token:
            continue
        try:
            expected = token.decode("utf-8")
        except UnicodeDecodeError:
            continue
        got = decode_one(token_id)
        checked += 1
        if got != expected and not (strip and got == expected.removeprefix(" ")):
            wrong.append(f"id {token_id}: decode gives {got!r}, recovered {expected!r}")
    if checked and len(wrong) > max(2, checked // 100):
        raise VocabularyError(
            f"cannot recover token texts: {len(wrong)} of {checked} sampled tokens disagree with the tokenizer's "
            f"decoding, e.g. {'; '.join(wrong[:3])}. Build the vocabulary with Vocabulary.from_tokens(...) from "
            "the exact bytes of each token instead."
        )


def default_eos_ids(tokenizer: Any) -> list[int]:
    """The tokenizer's end-of-sequence id plus the usual end-of-turn markers present in its vocabulary."""
    ids: list[int] = []
    if getattr(tokenizer, "eos_token_id", None) is not None:
        ids.append(int(tokenizer.eos_token_id))
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:  # one look-up per name, not a copy of the whole vocabulary (~0.2 s for 128k)
        found = {name: backend.token_to_id(name) for name in _EOS_NAMES}
        vocab = {name: token_id for name, token_id in found.items() if token_id is not None}
    else:
        vocab = tokenizer.get_vocab()
    for name in _EOS_NAMES:
        if name in vocab and vocab[name] not in ids:
            ids.append(int(vocab[name]))
            if len(ids) >= 2:
                break
    if not ids:
        raise VocabularyError(
            f"{type(tokenizer).__name__} names no end-of-sequence token: pass eos_token_ids=[...] explicitly"
        )
    return ids


def token_bytes_from_pieces(
    pieces: Sequence[str | bytes | None], decoder: str, decode_one: Callable[[int], str]
) -> list[bytes | None]:
    """The exact bytes each token adds, from its vocabulary spelling (``pieces[id]``: a piece as the
    tokenizer's model spells it, bytes already decoded, or None for a token never generated), for engines
    whose tokenizer is not a transformers one. ``decoder`` describes the tokenizer's decoder (its repr is
    enough: byte-level BPE, SentencePiece ``▁`` with byte fallback, or anything else, decoded one token at a
    time with ``decode_one``). Raises VocabularyError when the result disagrees with ``decode_one``."""
    scheme = scheme_of(decoder)
    data: list[bytes | None] = []
    for token_id, piece in enumerate(pieces):
        if piece is None or isinstance(piece, bytes):
            data.append(piece)
        else:
            data.append(piece_bytes(piece, scheme, decode_one, token_id) if piece else None)
    # SentencePiece decoders drop a lone token's leading space, which the check allows for
    verify_token_bytes(decode_one, data, strip=scheme == "sentencepiece")
    return data


def encoder_of(tokenizer: Any) -> Callable[[str], list[int]]:
    """``text -> ids`` as the tokenizer writes it (no special tokens added), for jump-forward (forced.py).
    A fast tokenizer's Rust backend is held directly; a slow one through a weak reference, so the
    vocabulary (memoised per tokenizer) does not keep its tokenizer alive; once it is gone, ``encode``
    raises VocabularyError."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        return lambda text: backend.encode(text, add_special_tokens=False).ids
    ref = weakref.ref(tokenizer)

    def encode(text: str) -> list[int]:
        alive = ref()
        if alive is None:
            raise VocabularyError("the tokenizer this vocabulary was built from no longer exists")
        return list(alive.encode(text, add_special_tokens=False))

    return encode
