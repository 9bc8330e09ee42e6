"""The HTML report of a sweep: one self-contained page.

Plots are matplotlib PNGs inlined as base64 ``data:`` URIs and the styles
are inline, so the page needs no network and no other file. For a profile
sweep: STP against unfairness normalised to ``stock`` per algorithm (every
case and each algorithm's mean; :func:`cachepart.profile.tradeoff` does
the normalising), per-app slowdown distributions, and ranking tables. For a
sim sweep: slowdown distributions per policy, the runs' mix metrics, and
the per-interval IPC of the first runs whose samples were recorded.
Failed runs are listed with their errors.
"""

from __future__ import annotations

import base64
import html
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Union

import pandas as pd

from cachepart import _core
from cachepart.sweep import store
from cachepart.sweep.results import info, load, load_failures, load_samples

PathLike = Union[str, "os.PathLike[str]"]

#: Columns that are not labels of a case (a run less its algorithm).
_ENGINE_COLUMNS = {"run", "run_index", "workload", "algorithm"}
#: Sim runs whose samples are plotted.
SAMPLE_RUNS = 4


def _png(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return f'<img alt="" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _colors(names: list[str]) -> dict[str, str]:
    from cachepart.profile import TAB10

    return {a: TAB10[k % len(TAB10)] for k, a in enumerate(names)}


def _case_columns(df: pd.DataFrame, labels: list[str]) -> list[str]:
    return [c for c in labels if c in df.columns and c not in _ENGINE_COLUMNS]


def _label_columns(df: pd.DataFrame) -> list[str]:
    """The label columns: those between ``run_index`` and the engine's."""
    cols = list(df.columns)
    first_engine = "n_apps" if "n_apps" in cols else ("app" if "app" in cols else cols[-1])
    return cols[cols.index("run_index") + 1 : cols.index(first_engine)]


def _tradeoff(df: pd.DataFrame) -> pd.DataFrame | None:
    """:func:`cachepart.profile.tradeoff` over cases (a run's labels less
    its algorithm), or None without ``stock``."""
    from cachepart.profile import tradeoff

    if "stock" not in set(df["algorithm"]):
        return None
    case_cols = _case_columns(df, _label_columns(df))
    d = df.copy()
    key = d[case_cols[0]].astype(str)
    for c in case_cols[1:]:
        key = key + " | " + d[c].astype(str)
    d["workload"] = key
    # cases whose stock run failed can not be normalised
    have_stock = set(d.loc[d["algorithm"] == "stock", "workload"])
    return tradeoff(d[d["workload"].isin(have_stock)])


def _tradeoff_plot(t: pd.DataFrame) -> str:
    plt = _pyplot()
    algs = list(dict.fromkeys(t["algorithm"]))
    colors = _colors(algs)
    fig, ax = plt.subplots(figsize=(8, 6))
    ax.axvline(1.0, color="0.6", lw=1)
    ax.axhline(1.0, color="0.6", lw=1)
    for a in algs:
        g = t[t["algorithm"] == a]
        ax.scatter(g["unfairness_norm"], g["stp_norm"], s=12, color=colors[a], alpha=0.35, linewidths=0)
        ax.scatter(
            [g["unfairness_norm"].mean()], [g["stp_norm"].mean()], s=140, color=colors[a],
            edgecolors="black", linewidths=1.2, label=f"{a} (mean of {len(g)})",
        )
    ax.set_xlabel("unfairness / unfairness of stock (lower is better)")
    ax.set_ylabel("STP / STP of stock (higher is better)")
    ax.set_title("STP vs unfairness, normalised to stock")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def _slowdown_plot(df: pd.DataFrame, by: str) -> str:
    plt = _pyplot()
    groups = list(dict.fromkeys(df[by]))
    data = [df.loc[df[by] == g, "slowdown"].dropna().to_numpy() for g in groups]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(groups) + 2), 5))
    ax.boxplot(data, showfliers=True, flierprops={"markersize": 2})
    ax.set_xticks(range(1, len(groups) + 1))
    ax.set_xticklabels([str(g) for g in groups], rotation=30, ha="right")
    ax.set_ylabel("per-app slowdown (IPC alone / IPC shared)")
    ax.set_title(f"Per-app slowdowns by {by}")
    fig.tight_layout()
    return _png(fig)


def _app_slowdown_plot(df: pd.DataFrame) -> str:
    """Median slowdown of each program (rows) under each algorithm."""
    plt = _pyplot()
    m = df.pivot_table(index="app", columns="algorithm", values="slowdown", aggfunc="median", sort=False)
    m = m[list(dict.fromkeys(df["algorithm"]))].sort_index()
    fig, ax = plt.subplots(figsize=(max(6, 0.7 * m.shape[1] + 3), max(3, 0.22 * m.shape[0] + 1.5)))
    im = ax.imshow(m.to_numpy(), aspect="auto", cmap="viridis_r")
    ax.set_xticks(range(m.shape[1]))
    ax.set_xticklabels(m.columns, rotation=30, ha="right")
    ax.set_yticks(range(m.shape[0]))
    ax.set_yticklabels(m.index, fontsize=7)
    fig.colorbar(im, ax=ax, label="median slowdown")
    ax.set_title("Median slowdown of each program")
    fig.tight_layout()
    return _png(fig)


def ranking(df: pd.DataFrame, t: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per algorithm: cases, mean STP, ANTT and unfairness, the
    normalised means and wins (best STP of its case), best first by mean
    normalised STP (by mean STP without stock). ``t``: ``df``'s
    normalised trade-off if already computed."""
    s = df.drop_duplicates("run")
    out = s.groupby("algorithm", sort=False).agg(
        runs=("run", "size"), stp=("stp", "mean"), antt=("antt", "mean"), unfairness=("unfairness", "mean")
    )
    if t is None:
        t = _tradeoff(df)
    key = "stp"
    if t is not None and not t.empty:
        norm = t.groupby("algorithm", sort=False).agg(
            stp_norm=("stp_norm", "mean"), unfairness_norm=("unfairness_norm", "mean")
        )
        out = out.join(norm)
        key = "stp_norm"
        out.loc[out.index == "stock", ["stp_norm", "unfairness_norm"]] = 1.0
    case_cols = _case_columns(df, _label_columns(df))
    best = s.loc[s.groupby(case_cols, sort=False, dropna=False)["stp"].idxmax(), "algorithm"]
    out["stp_wins"] = best.value_counts().reindex(out.index).fillna(0).astype(int)
    out = out.sort_values(key, ascending=False).reset_index()
    out.insert(0, "rank", range(1, len(out) + 1))
    return out


def _table(df: pd.DataFrame, limit: int | None = None) -> str:
    shown = df if limit is None else df.head(limit)
    more = "" if limit is None or len(df) <= limit else f"<p>... and {len(df) - limit} more rows.</p>"
    return shown.to_html(index=False, float_format=lambda x: f"{x:.4g}", border=0, classes="t") + more


_STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.8em; }
table.t { border-collapse: collapse; font-size: 0.85em; }
table.t th, table.t td { padding: 0.2em 0.6em; border-bottom: 1px solid #ddd; text-align: right; }
img { max-width: 100%; }
"""


def render(out: PathLike, sample_runs: Sequence[str] | None = None) -> str:
    """The report of the results directory ``out`` as HTML text.
    ``sample_runs``: the sim runs (hashes or unique hash prefixes) whose
    per-interval samples are plotted; default the first four recorded."""
    df = load(out)
    failures = load_failures(out)
    meta = info(out)
    name = str(meta.get("name", Path(os.fspath(out)).name))
    kind = meta.get("kind", "profile" if "algorithm" in df.columns else "sim")
    parts = [f"<h1>Sweep {html.escape(name)}</h1>"]
    n_runs = df["run"].nunique() if not df.empty else 0
    planned = meta.get("runs")
    parts.append(
        f"<p>{kind} sweep; {n_runs} runs done, {len(failures)} failed"
        + (f", of {planned} planned" if planned is not None else "")
        + (f"; from <code>{html.escape(str(meta['file']))}</code>" if "file" in meta else "")
        + ".</p>"
    )
    if df.empty:
        parts.append("<p>No results yet.</p>")
    elif kind == "profile":
        t = _tradeoff(df)
        parts.append("<h2>STP vs unfairness, normalised to stock</h2>")
        if t is None or t.empty:
            parts.append("<p>No <code>stock</code> runs to normalise to: add stock to axes.algorithms.</p>")
        else:
            parts.append(_tradeoff_plot(t))
        parts.append("<h2>Ranking</h2>")
        parts.append(_table(ranking(df, t)))
        parts.append("<h2>Per-app slowdown distributions</h2>")
        parts.append(_slowdown_plot(df, "algorithm"))
        parts.append(_app_slowdown_plot(df))
    else:
        by = "policy" if "policy" in df.columns else "scenario"
        parts.append("<h2>Per-app slowdown distributions</h2>")
        if "slowdown" in df.columns and df["slowdown"].notna().any():
            parts.append(_slowdown_plot(df, by))
        metric_cols = [c for c in ("stp", "antt", "unfairness", "unfairness_factor", "jain") if c in df.columns]
        parts.append("<h2>Runs</h2>")
        cols = ["run", *_label_columns(df), *metric_cols]
        runs = df.drop_duplicates("run")[cols].copy()
        runs["run"] = runs["run"].str[:12]
        parts.append(_table(runs, limit=200))
        samples = load_samples(out)
        if sample_runs is not None and not samples.empty:
            samples = samples[samples["run"].isin(_resolve_runs(samples["run"].unique(), sample_runs))]
        if not samples.empty:
            parts.append("<h2>Per-interval samples</h2>")
            parts.append(_samples_plot(df, samples))
    if not failures.empty:
        parts.append("<h2>Failed runs</h2>")
        parts.append(_table(failures, limit=100))
    body = "\n".join(parts)
    return (
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
        f"<title>Sweep {html.escape(name)}</title><style>{_STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def _resolve_runs(known: Sequence[str], wanted: Sequence[str]) -> list[str]:
    out = []
    for w in wanted:
        hits = [k for k in known if k.startswith(w)]
        if len(hits) != 1:
            what = "no run with samples" if not hits else f"{len(hits)} runs"
            raise _core.UsageError(f"sample run {w!r}: {what} starts with it")
        out.append(hits[0])
    return out


def _samples_plot(df: pd.DataFrame, samples: pd.DataFrame) -> str:
    plt = _pyplot()
    runs = [r for r in dict.fromkeys(df["run"]) if r in set(samples["run"])][:SAMPLE_RUNS]
    fig, axes = plt.subplots(len(runs), 1, figsize=(8, 2.6 * len(runs)), squeeze=False)
    x = "interval" if "interval" in samples.columns else samples.columns[1]
    for ax, r in zip(axes[:, 0], runs):
        s = samples[samples["run"] == r]
        for app, g in s.groupby("name", sort=False):
            ax.plot(g[x], g["ipc"], label=str(app))
        labels = df.loc[df["run"] == r, _label_columns(df)].iloc[0]
        ax.set_title(", ".join(f"{k}={v}" for k, v in labels.items()) + f" ({r[:10]})", fontsize=9)
        ax.set_ylabel("IPC")
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel(x)
    fig.tight_layout()
    return _png(fig)


def _check_dest(out: Path, dest: Path) -> None:
    """Refuses a report path that is one of the report's inputs: the
    results (``sweep.json``, anything under ``runs/``, ``samples/``,
    ``failed/``) or the sweep file ``sweep.json`` names; or a directory."""
    d = dest.resolve()
    if d.is_dir():
        raise _core.UsageError(f"-o {dest}: is a directory; expected the HTML file to write")
    o = out.resolve()
    inputs = [o / store.INFO, o]
    if d in inputs or any(d.is_relative_to(o / sub) for sub in (store.RUNS, store.SAMPLES, store.FAILED)):
        raise _core.UsageError(f"-o {dest}: is part of the results directory {out}, which the report reads; write it elsewhere")
    sweep_file = info(out).get("file") if o.is_dir() else None
    if isinstance(sweep_file, str) and Path(sweep_file).resolve() == d:
        raise _core.UsageError(f"-o {dest}: is the sweep file of {out}; write the report elsewhere")


def report(out: PathLike, path: PathLike, sample_runs: Sequence[str] | None = None) -> Path:
    """Writes the report of ``out`` to ``path`` (atomically); returns it.
    ``sample_runs``: as for :func:`render`."""
    dest = Path(os.fspath(path))
    _check_dest(Path(os.fspath(out)), dest)
    text = render(out, sample_runs)
    tmp = dest.parent / f".{dest.name}.{os.getpid()}.tmp"
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, dest)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise _core.InputError(f"{dest}: can not write the report ({e.strerror or e})") from None
    return dest
