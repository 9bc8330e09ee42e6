"""Running a sweep on Dask distributed.

:func:`run` expands the sweep file, leaves out the runs already done under
``out`` (resume), and submits the rest to a Dask cluster: a
``LocalCluster`` of worker processes by default, or the scheduler at
``scheduler`` (``tcp://HOST:PORT``: a multi-machine cluster, or one that
dask-jobqueue started on SLURM/PBS). Each task runs a batch of runs in a
worker (:func:`cachepart.sweep.execute.execute`), which writes the batch's
results in one file named by its runs' hashes. Unless told a fixed
number of runs per task, :func:`run` sizes the tasks from the run time it
measures (:func:`next_batch`): the first tasks hold one run each, and each
later one as many runs as fill :data:`TASK_SECONDS` at the mean time per
run so far, so that Dask's cost per task is shared by enough work. A task whose
worker dies is re-run elsewhere by Dask, and a re-run writes the same
file again (same name, whole-file rename), so nothing is lost or doubled.
A task lost for good (Dask's ``KilledWorker`` after repeated worker deaths)
is recorded as its runs' failure; the next ``run`` retries it.
"""

from __future__ import annotations

import json
import os
import sys
import time
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


def check_out(out: Path, plan: Plan) -> None:
    """Refuses a results directory that is not this sweep's, before
    anything is written: a file, a directory that holds other things (the
    inputs' directory: its files would sit beside the results, and a
    ``sweep.json`` of its own would be replaced), or the results of another
    sweep (name or kind): :func:`cachepart.sweep.load` would mix their runs
    with this one's. A missing or empty directory, or one of this sweep
    (resumed), is taken."""
    from cachepart import _core

    def refuse(why: str) -> _core.UsageError:
        return _core.UsageError(f"--out {out}: {why}; give a new directory, or this sweep's results directory to resume")

    if not out.exists():
        if out.is_symlink():
            raise refuse("is a dangling symbolic link")
        return
    if not out.is_dir():
        raise refuse("exists and is not a directory")
    if plan.spec.path.resolve().parent == out:
        raise refuse("is the directory of the sweep file")
    info_path = out / store.INFO
    if not info_path.exists():
        stray = sorted(p.name for p in out.iterdir() if p.name not in (store.RUNS, store.SAMPLES, store.FAILED))
        if stray:
            raise refuse(f"is not a results directory (no {store.INFO}) and holds other files ({', '.join(stray[:3])}{', ...' if len(stray) > 3 else ''})")
        return
    try:
        with open(info_path, encoding="utf-8") as f:
            info = json.load(f)
    except (OSError, ValueError) as e:
        raise refuse(f"{store.INFO} is not a sweep description ({e})") from None
    if not isinstance(info, dict) or "name" not in info or "kind" not in info:
        raise refuse(f"{store.INFO} is not a sweep description (no name and kind)")
    if (info["name"], info["kind"]) != (plan.spec.name, plan.spec.kind):
        raise refuse(
            f"holds the results of the {info['kind']} sweep {info['name']!r} (file {info.get('file')}), "
            f"not of the {plan.spec.kind} sweep {plan.spec.name!r}"
        )


#: Wall seconds of work an automatically sized task aims at. Dask's cost
#: per task (about a millisecond on an idle machine, around 10 ms on a
#: busy 2-core one) is then a few percent of it, while a task lost with its
#: worker, or the step of the progress bar, stays under a second.
TASK_SECONDS = 0.5

#: Tasks kept in flight per worker with automatic sizing: one running and
#: one queued, so that a worker never waits for the client to submit.
IN_FLIGHT_PER_WORKER = 2


def next_batch(seconds: float, runs: int, left: int, workers: int) -> int:
    """Runs in the next automatically sized task.

    ``seconds`` and ``runs``: the worker-side wall time and the runs of the
    tasks finished so far; ``left``: runs not yet submitted; ``workers``:
    the cluster's workers. Before any task has finished, one run (a probe).
    Then the runs that fill :data:`TASK_SECONDS` at the mean time per run,
    but never more than an equal share of what is left per worker, so the
    last tasks still spread over every worker (the tasks shrink towards
    the end of the sweep, as in guided self-scheduling)."""
    if left <= 0:
        return 0
    if runs == 0:
        return 1
    per_run = max(seconds / runs, 1e-6)
    by_time = max(1, int(TASK_SECONDS / per_run))
    # at least 1 and at most `left`, as `left` is positive
    share = -(-left // max(1, workers))
    return min(by_time, share)


def _timed(runs: list[Run], out: str) -> tuple[list[tuple[str, str]], float]:
    """:func:`execute` and its wall seconds in the worker (what sizes the
    next tasks: the client's own clock would also count the queue)."""
    t = time.perf_counter()
    statuses = execute(runs, out)
    return statuses, time.perf_counter() - t


def _batches(runs: list[Run], batch: int) -> list[list[Run]]:
    return [runs[i : i + batch] for i in range(0, len(runs), batch)]


#: The most worker processes a local cluster may have per CPU (``--workers``).
MAX_WORKERS_PER_CPU = 8


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def engine_threads(workers: int) -> dict[str, str]:
    """The environment of a local cluster's workers: the engine's own
    threads (rayon's ``RAYON_NUM_THREADS``: the exact optima and the
    simulator's alone runs are parallel) split between the workers, the
    CPUs over the workers and at least one each, so that N workers do not
    run N pools of one thread per CPU against each other. Empty when
    ``RAYON_NUM_THREADS`` is already set: the workers inherit it."""
    if "RAYON_NUM_THREADS" in os.environ:
        return {}
    return {"RAYON_NUM_THREADS": str(max(1, _cpus() // max(1, workers)))}


def _client(scheduler: str | None, workers: int | None) -> tuple[Any, Any]:
    from distributed import Client, LocalCluster

    if scheduler is not None:
        return Client(scheduler), None
    n = workers or _cpus()
    cluster = LocalCluster(
        n_workers=n,
        threads_per_worker=1,
        processes=True,
        # a free port: 8787, Dask's default, may be taken by another cluster
        dashboard_address=":0",
        host="127.0.0.1",
        env=engine_threads(n),
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
    of ``workers`` processes (default: one per CPU) runs on this machine,
    the engine's threads split between them (:func:`engine_threads`).
    ``client``: an existing ``distributed.Client`` to use instead of either.
    ``out``: the results directory (default ``NAME-results``). ``batch``:
    runs per Dask task; by default the tasks are sized from the measured
    run time (:func:`next_batch`: about :data:`TASK_SECONDS` of work each,
    so Dask's cost per task is shared by the runs of a task, while a task
    lost with its worker is still small). ``progress``: a bar on stderr
    with runs done, failed and left.
    """
    plan = file if isinstance(file, Plan) else expand(file)
    if batch is not None and batch < 1:
        from cachepart import _core

        raise _core.UsageError(f"batch {batch}: expected at least 1 run per task")
    out_dir = Path(os.fspath(out)) if out is not None else default_out(plan)
    out_dir = out_dir.resolve()
    check_out(out_dir, plan)
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
    futures: list[Any] = []
    try:
        # a fresh token per call: a resumed sweep never meets the cancelled
        # tasks of an interrupted one on a long-lived scheduler
        token = uuid.uuid4().hex[:8]
        by_key: dict[str, list[Run]] = {}
        # worker seconds and runs of the finished tasks: what sizes the next
        measured_s, measured_n = 0.0, 0
        n_workers = 1

        def submit(b: list[Run]) -> Any:
            key = f"cachepart-sweep-{token}-{b[0].hash[:16]}-{len(b)}"
            by_key[key] = b
            fut = client.submit(_timed, b, out=str(out_dir), key=key, pure=False)
            futures.append(fut)
            return fut

        if batch is not None:
            pending: list[Run] = []
            ac = as_completed([submit(b) for b in _batches(todo, batch)])
        else:
            n_workers = max(1, len(client.scheduler_info().get("workers", {})))
            pending = list(todo)
            pending.reverse()  # popped from the end, in plan order
            first = []
            for _ in range(min(len(pending), IN_FLIGHT_PER_WORKER * n_workers)):
                first.append(submit([pending.pop()]))
            ac = as_completed(first)
        show()
        for fut in ac:
            try:
                statuses, seconds = fut.result()
                if batch is None and all(st == DONE for _, st in statuses):
                    measured_s += seconds
                    measured_n += len(statuses)
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
            if batch is None and pending:
                size = next_batch(measured_s, measured_n, len(pending), n_workers)
                ac.add(submit([pending.pop() for _ in range(size)]))
            show()
            bar.update(len(statuses))
            del by_key[fut.key]
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
