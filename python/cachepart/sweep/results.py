"""Reading a sweep's results directory back as pandas DataFrames.

:func:`load` gives one tidy frame: one row per run and app, with the run's
hash (``run``), its position in the plan (``run_index``), its labels (mix,
table or scenario, algorithm or policy, the axis values) and the engine's
columns, mix metrics (``stp``, ``antt``, ``unfairness``, ...) repeated on
every app row. :func:`load_failures` and :func:`load_samples` read the
failed runs and a sim sweep's per-interval samples.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Union

import pandas as pd

from cachepart import _core
from cachepart.sweep import store

PathLike = Union[str, "os.PathLike[str]"]


def _dir(out: PathLike) -> Path:
    p = Path(os.fspath(out))
    if not p.is_dir():
        raise _core.InputError(f"{p}: no such results directory")
    return p


def _read(paths: list[Path], *, once: bool = False) -> pd.DataFrame:
    """The files' rows as one frame (one conversion to pandas: per file
    it would cost more than reading). ``once``: a run's rows are taken
    from the first file (in ``paths`` order) that holds them: two files
    hold the same run only when two sweeps ran it at the same time, with
    the same result."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if not paths:
        return pd.DataFrame()
    tables = []
    seen: set[str] = set()
    for p in paths:
        try:
            t = pq.ParquetFile(p).read()
        except Exception as e:  # pyarrow raises several kinds
            raise _core.InputError(f"{p}: not a readable Parquet file ({e})") from None
        if once:
            runs = set(t.column("run").to_pylist())
            if runs & seen:
                t = t.filter(pc.invert(pc.is_in(t.column("run"), value_set=pa.array(sorted(seen)))))
            seen |= runs
        tables.append(t)
    # a label that is null in every row of one run (mix_seed of a
    # workload-file mix) is typed null there: promote it
    return pa.concat_tables(tables, promote_options="default").to_pandas()


def load(out: PathLike) -> pd.DataFrame:
    """Every finished run under ``out`` as one frame, in plan order (then
    app order)."""
    d = _dir(out)
    df = _read(store.result_files(d), once=True)
    if df.empty:
        return df
    order = ["run_index"] + (["app_index"] if "app_index" in df.columns else [])
    return df.sort_values(order, kind="stable").reset_index(drop=True)


def load_failures(out: PathLike) -> pd.DataFrame:
    """One row per failed run: ``run``, its labels, ``error``."""
    d = _dir(out)
    rows = []
    for h in sorted(store.failed(d)):
        p = store.failure_path(d, h)
        try:
            with open(p, encoding="utf-8") as f:
                rec = json.load(f)
        except (OSError, ValueError) as e:
            raise _core.InputError(f"{p}: not a failure record ({e})") from None
        rows.append({"run": rec.get("run", h), **rec.get("labels", {}), "error": rec.get("error", "")})
    return pd.DataFrame(rows)


def load_samples(out: PathLike, runs: Iterable[str] | None = None) -> pd.DataFrame:
    """The per-interval samples recorded by a sim sweep (``[record]
    samples = true``), of the given run hashes or of all; column ``run``
    names the run."""
    d = _dir(out)
    sd = d / store.SAMPLES
    if not sd.is_dir():
        return pd.DataFrame()
    want = None if runs is None else set(runs)
    paths = sorted(
        p for p in sd.iterdir() if p.suffix == ".parquet" and not p.name.startswith(".") and (want is None or p.stem in want)
    )
    return _read(paths)


def info(out: PathLike) -> dict[str, object]:
    """``OUT/sweep.json``: the sweep's name, kind, file and run count."""
    p = _dir(out) / store.INFO
    try:
        with open(p, encoding="utf-8") as f:
            value = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise _core.InputError(f"{p}: not a sweep description ({e})") from None
    return value if isinstance(value, dict) else {}
