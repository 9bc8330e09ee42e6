"""Miss-rate curves of memory traces as pandas DataFrames, and plots.

>>> import cachepart.curves as cc
>>> df = cc.miss_curve("app.cpt")                       # exact, fully associative
>>> ways = cc.miss_curve("app.cpt", kind="set-associative", sets=2048, ways=16)
>>> est = cc.miss_curve("app.cpt", kind="shards", rate=0.01)
>>> src = cc.stall_curve("app.cpt", platform="power5", axis="colors")   # Tam et al.'s SRC
"""

from __future__ import annotations

import json
import os
from typing import Union, get_args

import pandas as pd

from cachepart import _core, _frames
from cachepart._guard import call, figure_format, frame, output, save_figure
from cachepart._guard import path as _path
from cachepart.kinds import Axis, CurveKind

PathLike = Union[str, "os.PathLike[str]"]

#: Curve kinds (:data:`cachepart.kinds.CurveKind`): exact LRU at log-spaced
#: sizes, at every way count, at every color count, or the SHARDS estimate.
KINDS: tuple[str, ...] = get_args(CurveKind)


def miss_curve(
    trace: PathLike,
    kind: CurveKind = "fully-associative",
    *,
    line: int = 64,
    ifetch: bool = False,
    min_size: int | None = None,
    max_size: int = 64 << 20,
    per_octave: int = 1,
    sets: int = 2048,
    ways: int = 16,
    page: int = 4096,
    rate: float | None = None,
    max_lines: int | None = None,
    adjust: bool = True,
    use_index: bool = True,
) -> pd.DataFrame:
    """The miss-rate curve of a binary trace (``.cpt``).

    Returns one row per cache size with ``size_bytes``, ``misses``,
    ``miss_ratio`` and ``mpki``; ``df.attrs`` holds ``accesses``,
    ``instructions``, ``kind`` and, for SHARDS, ``sampling`` (with
    ``index``, the sample index the estimate came from, if any, and
    ``warning``, why the sample is too small to mean much, if it is). An
    empty sample raises :class:`cachepart.UsageError`; so does
    ``adjust=False`` below rate 1, where the reference sample makes it
    cancel (it applies with ``max_lines`` from ``rate=1``). Sizes are
    rounded down to whole lines; ``min_size`` defaults to 1 KiB, or one
    line where ``line`` is larger.

    SHARDS reads the trace's sample index (``TRACE.shards``, see
    :func:`build_shards_index`) when there is one that serves the request
    (rate at most 1/32), unless ``use_index=False``; the estimate is the
    same either way. The sampling options (``rate``, default 0.01;
    ``max_lines``, ``adjust``, ``use_index``) are for ``kind="shards"``
    only: given with another kind they raise :class:`cachepart.UsageError`.

    Argument ranges (others raise :class:`cachepart.UsageError` naming the
    argument): ``line`` a power of two from 8 to 4096; ``min_size`` at
    least one line and at most ``max_size``; ``per_octave`` 1 to 1024;
    ``sets`` 1 to 2**32 and ``ways`` 1 to 1024 (``"set-associative"`` and
    ``"colors"``); ``page`` a power of two of at least one line whose sets
    divide ``sets`` (``"colors"``); ``rate`` above 0 and at most 1;
    ``max_lines`` at least 1.
    """
    doc = json.loads(
        call(
            _core.curves,
            _path(trace, "trace"),
            kind=kind,
            line=line,
            ifetch=ifetch,
            min_size=min_size,
            max_size=max_size,
            per_octave=per_octave,
            sets=sets,
            ways=ways,
            page=page,
            rate=rate,
            max_lines=max_lines,
            adjust=adjust,
            use_index=use_index,
        )
    )
    # set-associative and color curves lead with their way or color count
    lead = [a for a in ("ways", "colors") if doc["points"] and a in doc["points"][0]]
    cols = [*lead, "size_bytes", "misses", "miss_ratio", "mpki"]
    df = _frames.rows(doc["points"], cols)
    df.attrs.update(kind=kind, accesses=doc["accesses"], instructions=doc["instructions"], sampling=doc["sampling"])
    return df


def build_shards_index(trace: PathLike, *, line: int = 64, ifetch: bool = False, exact_below: int = 256) -> dict:
    """Builds the SHARDS sample index of a trace (``TRACE.shards`` next to it).

    :func:`miss_curve` with ``kind="shards"`` then reads the index instead
    of the trace for rates up to 1/32 (same estimate). Returns the index's
    summary: ``path``, ``bytes``, ``accesses``, ``sampled_refs``,
    ``sampled_lines``, ``ref_samples``. ``line`` is a power of two from 8
    to 4096 and ``exact_below`` (the sizes, in lines, the reference sample
    covers exactly) 0 to 65536; others raise :class:`cachepart.UsageError`.
    """
    return json.loads(call(_core.build_shards_index, _path(trace, "trace"), line=line, ifetch=ifetch, exact_below=exact_below))


#: Axes of stall-rate curves (:data:`cachepart.kinds.Axis`): CAT way counts
#: or page-color counts.
AXES: tuple[str, ...] = get_args(Axis)


def stall_curve(
    trace: PathLike,
    platform: str,
    axis: Axis = "ways",
    *,
    base_cpi: float = 1.0,
    mlp: float = 1.0,
    instructions: int | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """The stall-rate curve of a binary trace (Tam et al.): the trace runs
    alone on the simulated ``platform`` (a built-in name or a platform
    file) at every way count (``axis="ways"``) or page-color count
    (``axis="colors"``).

    Returns one row per size with ``size`` (ways or colors), ``size_bytes``,
    ``stall_rate`` (memory-stall cycles per 10^9 cycles), ``ipc``,
    ``llc_mpki``, ``llc_misses_per_gcycle``, ``instructions``, ``cycles``
    and ``memory_stall_cycles``; ``df.attrs`` holds ``app``, ``platform``
    and ``axis``. Plot it with ``plot_curves({...}, y="stall_rate")``.

    ``base_cpi`` is a finite number above 0, ``mlp`` a finite number of at
    least 1, ``instructions`` at least 1 (None: the whole trace) and
    ``seed`` a whole number from 0 to 2**64 - 1; others raise
    :class:`cachepart.UsageError`.
    """
    doc = json.loads(
        call(
            _core.stall_curve,
            _path(trace, "trace"),
            platform,
            axis=axis,
            base_cpi=base_cpi,
            mlp=mlp,
            instructions=instructions,
            seed=seed,
        )
    )
    cols = [
        "size",
        "size_bytes",
        "stall_rate",
        "ipc",
        "llc_mpki",
        "llc_misses_per_gcycle",
        "instructions",
        "cycles",
        "memory_stall_cycles",
    ]
    df = _frames.rows(doc["points"], cols)
    df.attrs.update(app=doc["app"], platform=doc["platform"], axis=doc["axis"])
    return df


def plot_curves(curves: dict[str, pd.DataFrame], path: PathLike | None = None, y: str = "miss_ratio"):
    """Plots several curves (label -> DataFrame from :func:`miss_curve`)
    against cache size on a log2 axis, or against their color or way counts
    when every curve has that column (``kind="colors"`` or
    ``"set-associative"``). Saves the chart when ``path`` is given, in the
    format its extension names (PNG without one), at exactly that path,
    atomically; returns the matplotlib Figure. A ``path`` that is a
    directory, lies in a missing directory or has an extension matplotlib
    cannot write raises :class:`cachepart.UsageError` before anything is
    drawn."""
    if not isinstance(curves, dict):
        raise _core.UsageError(f"curves: expected a dict of label -> DataFrame, not {type(curves).__name__}")
    for label, df in curves.items():
        frame(df, f"curves[{label!r}]", ["size_bytes", y])
    out = None if path is None else output(path, "path")
    if out is not None:
        figure_format(out)
    import matplotlib

    if out is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    # Color and set-associative curves are drawn over their color or way
    # counts when every curve has them; other curves over the size.
    axis = next(
        (a for a in ("colors", "ways") if all(a in df.columns for df in curves.values())), None
    )
    fig, ax = plt.subplots(figsize=(9, 6))
    for label, df in curves.items():
        ax.plot(df[axis or "size_bytes"], df[y], marker="o", ms=3, label=label)
    if axis is None:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("cache size (bytes)")
    else:
        ax.set_xlabel(f"{axis} allotted")
    ax.set_ylabel(y.replace("_", " "))
    ax.legend()
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    if out is not None:
        save_figure(fig, out)
    return fig


def mean_absolute_error(a: pd.DataFrame, b: pd.DataFrame, column: str = "miss_ratio") -> float:
    """Mean absolute difference of two curves over the sizes they share."""
    frame(a, "a", ["size_bytes", column])
    frame(b, "b", ["size_bytes", column])
    m = a.merge(b, on="size_bytes", suffixes=("_a", "_b"))
    if m.empty:
        raise _core.UsageError("the two curves share no size")
    return float((m[f"{column}_a"] - m[f"{column}_b"]).abs().mean())


__all__ = ["AXES", "KINDS", "miss_curve", "build_shards_index", "stall_curve", "plot_curves", "mean_absolute_error"]
