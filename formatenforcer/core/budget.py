"""Time budgets: how a setting in seconds is read (a mask's ``EnforcerConfig.mask_seconds``, a build's
``JsonConfig.build_seconds``, ``GrammarParser``'s and ``RegexParser``'s ``build_seconds``)."""

from __future__ import annotations


def checked_seconds(value: object, setting: str) -> float | None:
    """``value`` as a budget in seconds: None (no limit) or a positive, finite number. TypeError or
    ValueError naming ``setting`` otherwise (a bool is not a number of seconds)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{setting} must be a number of seconds or None, not {type(value).__name__}: {value!r}")
    if not 0 < value < float("inf"):
        raise ValueError(f"{setting} must be a positive, finite number of seconds or None, not {value}")
    return float(value)
