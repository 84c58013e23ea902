"""Packed token bitmasks: int32 rows of shape ``(batch, ceil(vocab / 32))``, bit ``i % 32`` of word ``i // 32``
set when token ``i`` is allowed, ``-1`` words meaning "everything allowed". This is the layout vLLM,
xgrammar and llguidance share, so one tensor operation masks a whole batch of logits.

Works on numpy arrays and torch tensors alike; torch is imported only when a tensor is passed in.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_SHIFTS = np.arange(32, dtype=np.int32)


def words_for(vocab_size: int) -> int:
    """How many int32 words one row needs for ``vocab_size`` tokens."""
    return (vocab_size + 31) // 32


def allocate_bitmask(batch: int, vocab_size: int, *, backend: str = "numpy") -> Any:
    """A ``(batch, ceil(vocab_size/32))`` int32 bitmask with every token allowed (all bits set).

    ``backend="torch"`` returns a CPU ``torch.Tensor`` (move it to the logits' device if needed)."""
    if backend == "torch":
        import torch

        return torch.full((batch, words_for(vocab_size)), -1, dtype=torch.int32)
    if backend != "numpy":
        raise ValueError(f"backend must be 'numpy' or 'torch', not {backend!r}")
    return np.full((batch, words_for(vocab_size)), -1, dtype=np.int32)


def write_row(bitmask: Any, row: int, mask: np.ndarray) -> None:
    """Copies one packed mask into ``bitmask[row]``, clipping or zero-padding to the row's width."""
    width = bitmask.shape[1]
    n = min(width, mask.shape[0])
    if isinstance(bitmask, np.ndarray):
        target = bitmask[row]
    else:  # a torch tensor
        if bitmask.device.type != "cpu":
            import torch

            padded = np.zeros(width, dtype=np.int32)
            padded[:n] = mask[:n]
            bitmask[row].copy_(torch.from_numpy(padded), non_blocking=True)
            return
        target = bitmask[row].numpy()
    target[:n] = mask[:n]
    if n < width:
        target[n:] = 0


def unpack(bitmask: np.ndarray, vocab_size: int) -> np.ndarray:
    """A boolean ``(batch, vocab_size)`` array: True where the bit is set."""
    bits = (bitmask[..., None] >> _SHIFTS) & 1
    return bits.reshape(*bitmask.shape[:-1], -1)[..., :vocab_size].astype(bool)


def apply_bitmask(logits: Any, bitmask: Any) -> Any:
    """Sets to -inf, in place, every logit whose bit is clear; returns ``logits``.

    ``logits``: ``(batch, vocab)`` or ``(vocab,)``, numpy or torch; ``bitmask``: the matching packed rows.
    Tokens past the bitmask's width are masked; bitmask words past the logits' width are ignored."""
    if isinstance(logits, np.ndarray):
        mask = np.asarray(bitmask)
        flat = logits.reshape(-1, logits.shape[-1])
        rows = mask.reshape(-1, mask.shape[-1])
        allowed = _unpack_to_width(rows, flat.shape[-1])
        flat[~allowed] = -np.inf
        return logits
    import torch

    vocab = logits.shape[-1]
    rows = bitmask if isinstance(bitmask, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(bitmask))
    rows = rows.to(logits.device).reshape(-1, rows.shape[-1])
    shifts = torch.arange(32, device=logits.device, dtype=torch.int32)
    bits = ((rows.unsqueeze(-1) >> shifts) & 1).reshape(rows.shape[0], -1)
    if bits.shape[1] < vocab:
        bits = torch.nn.functional.pad(bits, (0, vocab - bits.shape[1]))
    blocked = bits[:, :vocab] == 0
    logits.view(-1, vocab).masked_fill_(blocked, float("-inf"))
    return logits


def _unpack_to_width(rows: np.ndarray, vocab: int) -> np.ndarray:
    allowed = unpack(rows, min(vocab, rows.shape[-1] * 32))
    if allowed.shape[-1] < vocab:
        allowed = np.pad(allowed, ((0, 0), (0, vocab - allowed.shape[-1])))
    return allowed


def ids_of(mask: np.ndarray) -> list[int]:
    """The token ids whose bits are set in one packed row."""
    flags = np.unpackbits(np.ascontiguousarray(mask).view(np.uint8), bitorder="little")
    return np.flatnonzero(flags).tolist()
