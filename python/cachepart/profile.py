"""The table-driven machine from Python: evaluate policies, classify programs,
plot the STP-versus-unfairness trade-off.

Every function takes either files (``metrics``, ``workloads``) or inline
``mixes`` (lists of program names); with neither, a built-in table and its
workloads are used: ``builtin="debian"`` (the default: nine Debian programs
profiled on the simulator, see docs/profiles.md) or ``builtin="parametric"``.
Errors are raised as cachepart's own exception classes
(:class:`cachepart.InputError`, :class:`cachepart.UsageError`, ...).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any, Union

import pandas as pd

from cachepart import _core, _frames
from cachepart._guard import (
    call,
    figure_format,
    frame,
    optional_path,
    output,
    paths,
    save_figure,
    write_atomically,
)
from cachepart._guard import mixes as check_mixes
from cachepart.kinds import BuiltinSet, BwModel, LfocPreset

PathLike = Union[str, "os.PathLike[str]"]

#: Workload-level metric columns, repeated on every app row.
WORKLOAD_METRICS = ["stp", "antt", "unfairness", "unfairness_cov", "jain", "gmean_speedup", "gmean_ipc"]




def _algorithms(algorithms: str | Iterable[str] | None) -> list[str]:
    if algorithms is None:
        return _core.default_algorithms()
    if isinstance(algorithms, str):
        return [a.strip() for a in algorithms.split(",") if a.strip()]
    try:
        names = list(algorithms)
    except TypeError:
        raise _core.UsageError(f"algorithms {algorithms!r}: expected a list of algorithm names") from None
    for n in names:
        if not isinstance(n, str):
            raise _core.UsageError(f"algorithms: {n!r} is not an algorithm name (expected a string)")
    return names


def evaluate(
    algorithms: str | Iterable[str] | None = None,
    metrics: PathLike | None = None,
    workloads: PathLike | None = None,
    mixes: Sequence[Sequence[str]] | None = None,
    *,
    ways: int | None = None,
    bw_model: BwModel = "simple",
    max_bw: float | None = None,
    plan: str | None = None,
    time_limit: float | None = None,
    threads: int | None = None,
    lfoc_preset: LfocPreset = "paper",
    lfoc_max_streaming: int | None = None,
    lfoc_gaps_per_streaming: int | None = None,
    timings: bool = False,
    builtin: BuiltinSet = "debian",
) -> pd.DataFrame:
    """Evaluates algorithms on workloads.

    Returns one row per (workload, algorithm, app) with the app's cluster,
    mask, ways, effective ways, slowdowns and speedup, and the workload's
    metrics (``stp``, ``antt``, ``unfairness``, ``unfairness_cov``, ``jain``,
    ``gmean_speedup``, ``gmean_ipc``); ``proven_optimal`` is set for exact
    solvers. ``timings=True`` adds ``decision_seconds``. Without
    ``algorithms``, the CLI's default list runs (``_core.default_algorithms()``).
    ``lfoc_preset`` picks LFOC's (and LFOC+'s) parameters: ``"paper"`` or
    ``"pbbcache"`` (PBBCache's variant, exactly); ``lfoc_max_streaming`` and
    ``lfoc_gaps_per_streaming`` override the preset's values.

    Argument ranges (others raise :class:`cachepart.UsageError` naming the
    argument): ``ways`` 1 to the table's way count; ``max_bw`` a finite
    bandwidth of at least 1.0 MB/s (None: unlimited); ``time_limit`` above
    0 and at most 31536000 seconds (one year); ``threads`` at least 1;
    ``lfoc_max_streaming`` at least 1 (else :class:`cachepart.PolicyError`)
    and ``lfoc_gaps_per_streaming`` at least 0; ``mixes`` a non-empty list
    of non-empty lists of program names.
    """
    return _frames.rows(
        evaluate_records(
            algorithms,
            metrics,
            workloads,
            mixes,
            ways=ways,
            bw_model=bw_model,
            max_bw=max_bw,
            plan=plan,
            time_limit=time_limit,
            threads=threads,
            lfoc_preset=lfoc_preset,
            lfoc_max_streaming=lfoc_max_streaming,
            lfoc_gaps_per_streaming=lfoc_gaps_per_streaming,
            timings=timings,
            builtin=builtin,
        )
    )


def evaluate_records(
    algorithms: str | Iterable[str] | None = None,
    metrics: PathLike | None = None,
    workloads: PathLike | None = None,
    mixes: Sequence[Sequence[str]] | None = None,
    *,
    ways: int | None = None,
    bw_model: BwModel = "simple",
    max_bw: float | None = None,
    plan: str | None = None,
    time_limit: float | None = None,
    threads: int | None = None,
    lfoc_preset: LfocPreset = "paper",
    lfoc_max_streaming: int | None = None,
    lfoc_gaps_per_streaming: int | None = None,
    timings: bool = False,
    builtin: BuiltinSet = "debian",
) -> list[dict[str, Any]]:
    """:func:`evaluate`'s rows as a list of dicts (one per workload,
    algorithm and app), without building a DataFrame: for callers that
    handle many small evaluations (sweeps)."""
    rows: list[dict[str, Any]] = call(
        _core.profile_evaluate,
        _algorithms(algorithms),
        metrics=optional_path(metrics, "metrics"),
        workloads=optional_path(workloads, "workloads"),
        mixes=check_mixes(mixes),
        ways=ways,
        bw_model=bw_model,
        max_bw=max_bw,
        plan=plan,
        time_limit=time_limit,
        threads=threads,
        lfoc_preset=lfoc_preset,
        lfoc_max_streaming=lfoc_max_streaming,
        lfoc_gaps_per_streaming=lfoc_gaps_per_streaming,
        timings=timings,
        builtin=builtin,
    )
    return rows


def classify(
    metrics: PathLike | None = None,
    workloads: PathLike | None = None,
    mixes: Sequence[Sequence[str]] | None = None,
    builtin: BuiltinSet = "debian",
    lfoc_preset: LfocPreset = "paper",
) -> pd.DataFrame:
    """LFOC class (light, streaming, sensitive) of each program, with the
    numbers that decided it, under the thresholds of ``lfoc_preset``
    (``"paper"``: streaming from 10 LLC misses per kilo-cycle, Table 1;
    ``"pbbcache"``: from 14). Without workloads or mixes, every program of
    the table is classified."""
    rows: list[dict[str, Any]] = call(
        _core.profile_classify,
        metrics=optional_path(metrics, "metrics"),
        workloads=optional_path(workloads, "workloads"),
        mixes=check_mixes(mixes),
        builtin=builtin,
        lfoc_preset=lfoc_preset,
    )
    return _frames.rows(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (workload, algorithm) with the workload metrics."""
    frame(df, "df", ["workload", "algorithm"])
    cols = ["workload", "algorithm"] + [c for c in WORKLOAD_METRICS if c in df.columns]
    return df[cols].drop_duplicates(["workload", "algorithm"]).reset_index(drop=True)


def tradeoff(df: pd.DataFrame) -> pd.DataFrame:
    """STP and unfairness of each (workload, algorithm) normalised to
    ``stock`` on the same workload (which ``df`` must contain)."""
    frame(df, "df", ["workload", "algorithm", "stp", "unfairness"])
    s = summary(df)
    stock = s[s["algorithm"] == "stock"].set_index("workload")
    missing = sorted(set(s["workload"]) - set(stock.index))
    if missing:
        raise _core.UsageError(
            f"workloads {missing} have no stock result to normalise to (add 'stock' to the algorithms)"
        )
    out = s[s["algorithm"] != "stock"].copy()
    out["stp_norm"] = out["stp"].to_numpy() / stock.loc[out["workload"], "stp"].to_numpy()
    out["unfairness_norm"] = out["unfairness"].to_numpy() / stock.loc[out["workload"], "unfairness"].to_numpy()
    return out.reset_index(drop=True)


# matplotlib's tab10 (the CLI's chart uses the same colours) and the CLI
# chart's markers, one per workload.
TAB10 = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]
MARKERS = ["o", "^", "s", "D"]


def plot_tradeoff(df: pd.DataFrame, path: PathLike | None = None, title: str = "STP vs unfairness, normalised to stock"):
    """Scatter of normalised unfairness (x) against normalised STP (y), one
    colour per algorithm and one marker per workload (as the CLI's
    ``--chart``). Saves the chart when ``path`` is given, in the format its
    extension names (``.png``, ``.svg``, ``.pdf``, ...; PNG without one),
    at exactly that path, atomically; returns the matplotlib Figure. A
    ``path`` that is a directory, lies in a missing directory or has an
    extension matplotlib cannot write raises :class:`cachepart.UsageError`
    before anything is drawn."""
    out = None if path is None else output(path, "path")
    if out is not None:
        figure_format(out)
    import matplotlib

    if out is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba
    from matplotlib.lines import Line2D

    t = tradeoff(df)
    fig, ax = plt.subplots(figsize=(9, 6.4))
    ax.axvline(1.0, color="0.6", lw=1)
    ax.axhline(1.0, color="0.6", lw=1)
    # As the CLI's chart: tab10 colours by algorithm (order of first
    # appearance), a marker per workload (circle, triangle, square, diamond;
    # hollow from the fifth on), half-transparent fills so that coinciding
    # points stay visible.
    workloads = list(dict.fromkeys(t["workload"]))
    colors = {a: TAB10[k % len(TAB10)] for k, a in enumerate(dict.fromkeys(t["algorithm"]))}

    def marker(w: int) -> tuple[str, bool]:
        return MARKERS[w % len(MARKERS)], (w // len(MARKERS)) % 2 == 1

    for (alg, wl), g in t.groupby(["algorithm", "workload"], sort=False):
        shape, hollow = marker(workloads.index(wl))
        c = colors[alg]
        ax.scatter(
            g["unfairness_norm"],
            g["stp_norm"],
            s=60,
            marker=shape,
            facecolors="none" if hollow else [to_rgba(c, 0.45)],
            edgecolors=c,
            linewidths=1.5,
        )
    handles = [Line2D([], [], ls="", marker="o", color=c, label=a) for a, c in colors.items()]
    if 1 < len(workloads) <= 2 * len(MARKERS):
        for i, w in enumerate(workloads):
            shape, hollow = marker(i)
            face = "none" if hollow else "0.55"
            handles.append(
                Line2D([], [], ls="", marker=shape, mfc=face, mec="0.35", label=w)
            )
    ax.set_xlabel("unfairness / unfairness of stock (lower is better)")
    ax.set_ylabel("STP / STP of stock (higher is better)")
    ax.set_title(title)
    ax.legend(handles=handles)
    fig.tight_layout()
    if out is not None:
        save_figure(fig, out)
    return fig


def from_traces(
    traces: Sequence[PathLike],
    platform: str,
    names: Sequence[str] | None = None,
    *,
    base_cpi: float = 1.0,
    mlp: float = 1.0,
    instructions: int | None = None,
    warmup: int = 0,
    seed: int = 0,
    path: PathLike | None = None,
) -> pd.DataFrame:
    """A PBBCache metrics table made from binary traces: each runs alone on
    the simulated ``platform`` at every way count (as ``cachepart profile
    from-trace``), measured after ``warmup`` instructions (cold misses
    left out; ``instructions`` are measured after it). Returns one row per (program, way count) with the
    columns ``BENCH, NR_WAYS, ipc, llcrpki, ..., stalls_store_buf``; with
    ``path``, also writes the CSV there (usable as ``metrics=path``),
    atomically: ``path`` is checked before the traces run (a directory, a
    missing directory or one of the traces raises
    :class:`cachepart.UsageError`) and is either left as it was or holds
    the whole table.

    ``base_cpi`` is a finite number above 0 and ``mlp`` a finite number of
    at least 1; ``instructions`` (at least 1, or None for the whole trace),
    ``warmup`` and ``seed`` are whole numbers from 0 to 2**64 - 1; ``names``
    gives one program name per trace (non-empty, without commas, quotes or
    newlines, each used once), by default the traces' file names."""
    trace_paths = paths(traces, "traces")
    out = None if path is None else output(path, "path", trace_paths)
    text = call(
        _core.profile_from_traces,
        trace_paths,
        platform,
        names=None if names is None else list(names),
        base_cpi=base_cpi,
        mlp=mlp,
        instructions=instructions,
        warmup=warmup,
        seed=seed,
    )
    if out is not None:

        def write(tmp: str) -> None:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)

        write_atomically(out, "path", write)
    return _frames.csv(text)


def builtin_metrics_csv(set: BuiltinSet = "debian") -> str:
    """A built-in metrics table (``"debian"`` or ``"parametric"``) as
    PBBCache-format CSV text."""
    return call(_core.builtin_metrics_csv, set)
