"""Running a sweep on Dask distributed.

:func:`run` expands the sweep file, leaves out the runs already done under
``out`` (resume), and submits the rest to a Dask cluster: a
``LocalCluster`` of worker processes by default, or the scheduler at
``scheduler`` (``tcp://HOST:PORT``: a multi-machine cluster, or one that
dask-jobqueue started on SLURM/PBS). Each task runs a batch of runs in a
worker (:func:`cachepart.sweep.execute.execute`), which writes the batch's
results in one file named by its runs' hashes. A task whose
worker dies is re-run elsewhere by Dask, and a re-run writes the same
file again (same name, whole-file rename), so nothing is lost or doubled.
A task lost for good (Dask's ``KilledWorker`` after repeated worker deaths)
is recorded as its runs' failure; the next ``run`` retries it.
"""

from __future__ import annotations

import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Union

from cachepart.sweep import store
from cachepart.sweep.execute import DONE, FAILED, execute
from cachepart.sweep.plan import Plan, Run, expand

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class Summary:
    """What a :func:`run` call did."""

    #: Runs in the plan.
    total: int
    #: Runs whose result was already there before this call.
    already_done: int
    #: Runs this call completed.
    done: int
    #: Runs that failed (recorded under ``OUT/failed/``).
    failed: int
    #: The results directory.
    out: Path


def default_out(plan: Plan) -> Path:
    """``NAME-results`` in the current directory."""
    return Path(f"{plan.spec.name}-results")


def _batches(runs: list[Run], batch: int) -> list[list[Run]]:
    return [runs[i : i + batch] for i in range(0, len(runs), batch)]


def _client(scheduler: str | None, workers: int | None) -> tuple[Any, Any]:
    from distributed import Client, LocalCluster

    if scheduler is not None:
        return Client(scheduler), None
    n = workers or os.cpu_count() or 1
    cluster = LocalCluster(
        n_workers=n,
        threads_per_worker=1,
        processes=True,
        # a free port: 8787, Dask's default, may be taken by another cluster
        dashboard_address=":0",
        host="127.0.0.1",
    )
    return Client(cluster), cluster


def run(
    file: PathLike | Plan,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    out: PathLike | None = None,
    batch: int | None = None,
    progress: bool = True,
    client: Any = None,
) -> Summary:
    """Runs a sweep file (or an expanded :class:`Plan`) on Dask.

    ``scheduler``: a Dask scheduler address; without it a ``LocalCluster``
    of ``workers`` processes (default: one per CPU) runs on this machine.
    ``client``: an existing ``distributed.Client`` to use instead of either.
    ``out``: the results directory (default ``NAME-results``). ``batch``:
    runs per Dask task (default: the runs left over 20 tasks per worker,
    from 1 to 64; Dask's cost per task, about a millisecond on an idle
    machine and more on a busy one, is then shared by the runs of a task,
    while a task lost with its worker is still small). ``progress``: a bar on stderr with runs done, failed and left.
    """
    plan = file if isinstance(file, Plan) else expand(file)
    if batch is not None and batch < 1:
        from cachepart import _core

        raise _core.UsageError(f"batch {batch}: expected at least 1 run per task")
    out_dir = Path(os.fspath(out)) if out is not None else default_out(plan)
    out_dir = out_dir.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    store.write_json(
        {"name": plan.spec.name, "kind": plan.spec.kind, "file": str(plan.spec.path.resolve()), "runs": len(plan.runs)},
        out_dir / store.INFO,
    )
    finished = store.done(out_dir)
    todo = [r for r in plan.runs if r.hash not in finished]
    summary = Summary(len(plan.runs), len(plan.runs) - len(todo), 0, 0, out_dir)
    if not todo:
        return summary

    from distributed import as_completed
    from tqdm import tqdm

    bar = tqdm(
        total=len(plan.runs),
        initial=summary.already_done,
        desc=plan.spec.name,
        unit="run",
        disable=not progress,
        file=sys.stderr,
        dynamic_ncols=True,
    )

    def show() -> None:
        left = summary.total - summary.already_done - summary.done - summary.failed
        bar.set_postfix_str(f"done {summary.already_done + summary.done}, failed {summary.failed}, left {left}", refresh=False)

    own_client = client is None
    cluster = None
    if own_client:
        client, cluster = _client(scheduler, workers)
    futures = []
    try:
        if batch is None:
            n_workers = max(1, len(client.scheduler_info().get("workers", {})))
            batch = max(1, min(64, len(todo) // (20 * n_workers)))
        batches = _batches(todo, batch)
        # a fresh token per call: a resumed sweep never meets the cancelled
        # tasks of an interrupted one on a long-lived scheduler
        token = uuid.uuid4().hex[:8]
        keys = [f"cachepart-sweep-{token}-{b[0].hash[:16]}-{len(b)}" for b in batches]
        futures = client.map(execute, batches, out=str(out_dir), key=keys, pure=False)
        by_key = dict(zip(keys, batches))
        show()
        for fut in as_completed(futures):
            try:
                statuses = fut.result()
            except Exception as e:  # the task itself was lost (KilledWorker, ...)
                statuses = []
                written = store.done(out_dir)
                for r in by_key[fut.key]:
                    if r.hash in written:
                        statuses.append((r.hash, DONE))
                    else:
                        store.record_failure(out_dir, r.hash, r.labels, f"{type(e).__name__}: {e}")
                        statuses.append((r.hash, FAILED))
            for _, status in statuses:
                # SKIPPED: written by an earlier, lost attempt of this task
                if status == FAILED:
                    summary.failed += 1
                else:
                    summary.done += 1
            show()
            bar.update(len(statuses))
            fut.release()
    except BaseException:
        for f in futures:
            f.cancel()
        raise
    finally:
        bar.close()
        if own_client:
            client.close()
            if cluster is not None:
                cluster.close()
    store.remove_temporaries(out_dir)
    return summary
