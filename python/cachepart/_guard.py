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
import secrets
import stat
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


def output(value: object, name: str, inputs: Iterable[str] = ()) -> str:
    """The output file path ``value``, checked before any work is done:
    :class:`cachepart.UsageError` naming the argument when it is not a
    path, is a directory, lies in a directory that does not exist, or is
    the same file as one of ``inputs`` (which it would clobber)."""
    p = path(value, name)
    if os.path.isdir(p):
        raise _core.UsageError(f"{name} {p}: is a directory; expected a file name")
    parent = os.path.dirname(os.path.abspath(p))
    if not os.path.isdir(parent):
        raise _core.UsageError(f"{name} {p}: the directory {parent} does not exist")
    for i in inputs:
        try:
            same = os.path.samefile(p, i)
        except (OSError, ValueError):
            continue
        if same:
            raise _core.UsageError(f"{name} {p}: is also an input ({i}); write the output elsewhere")
    return p


def write_atomically(p: str, name: str, write: Callable[[str], None]) -> None:
    """Runs ``write`` on a temporary file beside ``p`` and renames it to
    ``p``, so that ``p`` is either left as it was or holds the whole
    output (a device or FIFO is written directly). A failure raises
    :class:`cachepart.CachepartError` naming the argument and the file;
    the temporary file is removed."""
    dest = os.path.realpath(p)
    try:
        direct = not stat.S_ISREG(os.stat(dest).st_mode)
    except FileNotFoundError:
        direct = False
    except OSError as e:
        raise _core.CachepartError(f"{name} {p}: {e.strerror or e}") from None
    if direct:
        try:
            write(dest)
        except OSError as e:
            raise _core.CachepartError(f"{name} {p}: {e.strerror or e}") from None
        return
    head, tail = os.path.split(dest)
    root, ext = os.path.splitext(tail)
    # the extension is kept: some writers pick the format from it
    tmp = os.path.join(head, f".{root}.{secrets.token_hex(6)}.tmp{ext}")
    try:
        # created with the umask's permissions, as a plain open() would
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        write(tmp)
        os.replace(tmp, dest)
    except OSError as e:
        raise _core.CachepartError(f"{name} {p}: {e.strerror or e}") from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def figure_format(p: str, name: str = "path") -> str:
    """The matplotlib format the extension of ``p`` names (``png``
    without one), or :class:`cachepart.UsageError` listing those
    matplotlib can write: for the plotting functions to refuse a path
    before they draw anything."""
    from matplotlib.figure import Figure

    formats = Figure().canvas.get_supported_filetypes()
    ext = os.path.splitext(p)[1][1:].lower()
    fmt = ext or "png"
    if fmt not in formats:
        raise _core.UsageError(
            f"{name} {p}: cannot write a .{ext} chart (expected one of: {', '.join(sorted(formats))})"
        )
    return fmt


def save_figure(fig: Any, p: str, name: str = "path") -> None:
    """Saves a matplotlib figure to the path ``p``, which the caller has
    checked with :func:`output` before drawing (it is not checked again),
    in the format its extension names (PNG without one), atomically. An
    extension matplotlib cannot write raises :class:`cachepart.UsageError`
    listing those it can; a failure to draw,
    :class:`cachepart.ChartError`."""
    fmt = figure_format(p, name)

    def write(tmp: str) -> None:
        try:
            fig.savefig(tmp, format=fmt, dpi=100)
        except OSError:
            raise
        except Exception as e:
            raise _core.ChartError(f"chart: {name} {p}: {e}") from e

    write_atomically(p, name, write)


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
    """Checks the ``mixes`` argument: a non-empty list of mixes, each a
    non-empty list of program names (a string is refused, not split into
    letters)."""
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
        if not names:
            raise _core.UsageError(f"mixes[{i}]: an empty mix (expected at least one program name)")
        for n in names:
            if not isinstance(n, str):
                raise _core.UsageError(f"mixes[{i}]: {n!r} is not a program name (expected a string)")
        out.append(names)
    if not out:
        # as a workloads file without a workload: nothing to run is a mistake,
        # not an empty result
        raise _core.UsageError("mixes []: no mix given (expected at least one, e.g. [['a', 'b']])")
    return out
