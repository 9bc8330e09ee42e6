"""Calls into the Rust core so that only cachepart's own exceptions come out.

pyo3 raises ``OverflowError`` or ``TypeError`` for an argument it can not
convert (a negative count, a string where a number goes) before any Rust
code runs; those become :class:`cachepart.UsageError` with pyo3's message,
which names the argument. A residual Rust panic is already turned into
:class:`cachepart.CachepartError` by the binding; ``PanicException`` is
mapped here too, as a second net.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from cachepart import _core

if TYPE_CHECKING:
    import pandas as pd

R = TypeVar("R")


def path(value: object, name: str) -> str:
    """``os.fspath(value)``, or :class:`cachepart.UsageError` naming the
    argument when ``value`` is not a path."""
    try:
        return os.fspath(value)  # type: ignore[call-overload]
    except TypeError:
        raise _core.UsageError(f"{name} {value!r}: expected a file path (a str or os.PathLike)") from None


def optional_path(value: object, name: str) -> str | None:
    """:func:`path`, with ``None`` passed through."""
    return None if value is None else path(value, name)


def paths(value: object, name: str) -> list[str]:
    """A list of paths (a single path or string is refused: it is not a
    list of them)."""
    if isinstance(value, (str, bytes, os.PathLike)) or not hasattr(value, "__iter__"):
        raise _core.UsageError(f"{name} {value!r}: expected a list of file paths")
    return [path(v, f"{name}[{i}]") for i, v in enumerate(value)]


def frame(value: object, name: str, columns: Iterable[str] = ()) -> pd.DataFrame:
    """``value`` if it is a DataFrame with ``columns``, else
    :class:`cachepart.UsageError` naming the argument and the missing
    column."""
    import pandas as pd

    if not isinstance(value, pd.DataFrame):
        raise _core.UsageError(f"{name}: expected a pandas DataFrame, not {type(value).__name__}")
    missing = [c for c in columns if c not in value.columns]
    if missing:
        raise _core.UsageError(
            f"{name}: no column {missing[0]!r} (its columns: {', '.join(map(str, value.columns))})"
        )
    return value


def call(fn: Callable[..., R], *args: Any, **kwargs: Any) -> R:
    """``fn(*args, **kwargs)``, with conversion errors and panics raised as
    cachepart exceptions."""
    try:
        return fn(*args, **kwargs)
    except OverflowError as e:
        # pyo3's message does not name the argument: find it
        bad = [
            f"{k} {v}" for k, v in kwargs.items() if isinstance(v, int) and not isinstance(v, bool) and not 0 <= v < 2**64
        ]
        what = ", ".join(bad) if bad else "an integer argument"
        raise _core.UsageError(f"{what}: expected a whole number from 0 to 2**64 - 1 ({e})") from e
    except TypeError as e:
        raise _core.UsageError(str(e)) from e
    except BaseException as e:
        if type(e).__name__ == "PanicException":
            raise _core.CachepartError(f"internal error (a bug in cachepart, please report it): {e}") from None
        raise


def mixes(value: object) -> list[list[str]] | None:
    """Checks the ``mixes`` argument: a list of mixes, each a list of
    program names (a string is refused, not split into letters)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise _core.UsageError(
            f"mixes {value!r}: expected a list of mixes, each a list of program names (e.g. [['a', 'b']])"
        )
    out = []
    try:
        items = list(value)  # type: ignore[call-overload]
    except TypeError:
        raise _core.UsageError(f"mixes {value!r}: expected a list of mixes, each a list of program names") from None
    for i, m in enumerate(items):
        if isinstance(m, (str, bytes)) or not hasattr(m, "__iter__"):
            raise _core.UsageError(
                f"mixes[{i}] {m!r}: expected a list of program names (e.g. ['a', 'b']), not a string"
            )
        names = list(m)
        for n in names:
            if not isinstance(n, str):
                raise _core.UsageError(f"mixes[{i}]: {n!r} is not a program name (expected a string)")
        out.append(names)
    return out
