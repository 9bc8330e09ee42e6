"""One run in a worker: call cachepart's engine, write the result.

:func:`execute` is what the Dask tasks run, on a batch of runs. It skips
a batch whose result is already there (a retried task after its worker
died), calls :func:`cachepart.profile.evaluate_records` or
:func:`cachepart.sim.run` (the Rust engine, which releases the GIL while it
works) on each run, puts the run's hash, index and labels in front of
every row and writes the batch's rows atomically in one file
(:func:`cachepart.sweep.store.task_path`). An exception from the engine is
recorded as the run's failure and does not stop the batch or the sweep.
Profile rows go from the engine's records to Parquet through pyarrow
without a DataFrame: for runs of a millisecond, pandas would cost more
than the engine.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

import pandas as pd

from cachepart import _core
from cachepart.sweep import store
from cachepart.sweep.plan import Run

#: Statuses :func:`execute` reports per run.
DONE, FAILED, SKIPPED = "done", "failed", "skipped"


def _lead(run: Run) -> dict[str, Any]:
    lead: dict[str, Any] = {"run": run.hash, "run_index": run.index}
    if run.kind == "profile":
        # the engine names its one mix "W1": the workload is the mix label
        lead["workload"] = run.labels["mix"]
    lead.update(run.labels)
    return lead


def rows(run: Run) -> tuple[list[dict[str, Any]], pd.DataFrame | None]:
    """Calls the engine for ``run``: its rows (one per app, the run's hash,
    index and labels first) and, for a sim run recording them, its
    samples."""
    lead = _lead(run)
    samples = None
    if run.kind == "profile":
        import cachepart.profile as cp

        records = cp.evaluate_records(**run.call)
    else:
        import cachepart.sim as cs

        r = cs.run(**run.call)
        records = r.apps.to_dict("records")
        metrics = {k: v for k, v in (r.metrics or {}).items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        for rec in records:
            rec.update(metrics)
        if run.content["record"].get("samples", False):
            samples = r.samples.copy()
            samples.insert(0, "run", run.hash)
    out = []
    for rec in records:
        row = dict(lead)
        row.update((k, v) for k, v in rec.items() if k not in lead)
        out.append(row)
    return out, samples


def _attempt(run: Run, out: Path) -> list[dict[str, Any]] | None:
    """The run's rows, its samples written; ``None`` when the engine
    raised (the failure recorded under ``OUT/failed``)."""
    try:
        result, samples = rows(run)
    except Exception as e:  # recorded, and the sweep goes on
        kind = type(e).__name__
        detail = str(e) if isinstance(e, _core.CachepartError) else traceback.format_exc(limit=5)
        store.record_failure(out, run.hash, run.labels, f"{kind}: {detail}")
        return None
    if samples is not None:
        store.write_frame(samples, store.samples_path(out, run.hash))
    return result


def execute(runs: list[Run], out: str) -> list[tuple[str, str]]:
    """Runs a batch in order and writes the rows of those that succeeded
    in one file; returns ``(hash, status)`` per run: :data:`DONE`,
    :data:`FAILED`, or :data:`SKIPPED` when the batch's file was already
    there (a failure recorded by that earlier attempt stays
    :data:`FAILED`)."""
    path = Path(out)
    target = store.task_path(path, [r.hash for r in runs])
    if target.exists():
        return [(r.hash, FAILED if store.failure_path(path, r.hash).exists() else SKIPPED) for r in runs]
    statuses: list[tuple[str, str]] = []
    result: list[dict[str, Any]] = []
    for r in runs:
        got = _attempt(r, path)
        statuses.append((r.hash, FAILED if got is None else DONE))
        result.extend(got or [])
    if result:
        store.write_rows(result, target)
    for h, status in statuses:
        if status == DONE:
            store.clear_failure(path, h)
    return statuses


def serial(runs: list[Run]) -> pd.DataFrame:
    """The runs' rows computed in this process, without Dask or files (a
    reference for tests and the benchmark); failed runs are left out."""
    out: list[dict[str, Any]] = []
    for r in runs:
        try:
            out.extend(rows(r)[0])
        except _core.CachepartError:
            continue
    return pd.DataFrame.from_records(out)
