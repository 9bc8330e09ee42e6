"""The results directory of a sweep: one file per run, named by its hash.

Layout of ``OUT/``::

    runs/HASH.parquet      a task of one run: its rows (written last: its
                           presence means done)
    runs/batch-KEY.parquet a task of several runs: their rows, one file (KEY
                           is the SHA-256 of the runs' hashes, so a retried
                           task writes the same name); column ``run`` says
                           which run each row is of
    samples/HASH.parquet   per-interval samples of a sim run (when recorded)
    failed/HASH.json       a run that raised: its labels and the error
    sweep.json             the sweep's name, kind and file (for the report)

Every file is written to a temporary in the same directory (a dot-name
ending in ``.tmp``) and renamed into place, so a reader sees a whole file
or none, and a task written twice (a retried task) leaves one file with the
same content. One file per task rather than per run: writing a Parquet file
costs a millisecond or more, as much as a short run. Files are written by the worker that ran the run, so on a
cluster ``OUT`` must be on a file system every worker sees. Files are not
fsynced: the rename protects against a killed process, not against the
machine losing power (one fsync per run would cost more than most runs;
after a power loss, delete the results of the last minutes and resume).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

RUNS = "runs"
SAMPLES = "samples"
FAILED = "failed"
INFO = "sweep.json"


def _tmp(path: Path) -> Path:
    return path.parent / f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"


def _atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Calls ``write`` on a temporary beside ``path`` and renames it into
    place; on any failure the temporary is removed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_frame(df: pd.DataFrame, path: Path) -> None:
    """Writes ``df`` as Parquet at ``path`` atomically (temporary + rename)."""
    _atomic(path, lambda tmp: df.to_parquet(tmp, engine="pyarrow", index=False))


def write_rows(rows: list[dict[str, Any]], path: Path) -> None:
    """Writes records (one dict per row) as Parquet at ``path`` atomically,
    through pyarrow alone. The columns are every key of any row, in order
    of first appearance; a row without a key has a null there (runs of one
    task may differ in their columns: a policy's own metrics)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    table = pa.table({k: [row.get(k) for row in rows] for k in names})
    # a task's rows are a few kilobytes: compression, dictionaries
    # and statistics would cost more time than they save space
    _atomic(
        path,
        lambda tmp: pq.write_table(table, tmp, compression="none", use_dictionary=False, write_statistics=False),
    )


def write_json(value: Any, path: Path) -> None:
    """Writes ``value`` as JSON at ``path`` atomically."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(value, f, sort_keys=True, indent=1)

    _atomic(path, write)


def result_path(out: Path, run_hash: str) -> Path:
    """Where a task of the one run ``run_hash`` writes its rows."""
    return out / RUNS / f"{run_hash}.parquet"


def task_path(out: Path, run_hashes: list[str]) -> Path:
    """Where a task of these runs writes their rows: :func:`result_path`
    for one run, ``batch-KEY.parquet`` for several (KEY: the SHA-256 of
    the hashes in order, so the same task always writes the same file)."""
    if len(run_hashes) == 1:
        return result_path(out, run_hashes[0])
    key = hashlib.sha256("\n".join(run_hashes).encode()).hexdigest()[:32]
    return out / RUNS / f"batch-{key}.parquet"


_RUN_FILE = re.compile(r"[0-9a-f]{64}\.parquet")


def result_files(out: Path) -> list[Path]:
    """The finished files under ``OUT/runs``, sorted by name."""
    d = out / RUNS
    if not d.is_dir():
        return []
    return sorted(p for p in d.iterdir() if p.suffix == ".parquet" and not p.name.startswith("."))


def runs_in(path: Path) -> set[str]:
    """The run hashes whose rows ``path`` holds: the name says it for a
    file of one run; a batch file's ``run`` column is read."""
    if _RUN_FILE.fullmatch(path.name):
        return {path.name[: -len(".parquet")]}
    import pyarrow.parquet as pq

    try:
        return set(pq.read_table(path, columns=["run"]).column("run").to_pylist())
    except Exception as e:  # pyarrow raises several kinds
        from cachepart import _core

        raise _core.InputError(f"{path}: not a readable result file ({e})") from None


def samples_path(out: Path, run_hash: str) -> Path:
    return out / SAMPLES / f"{run_hash}.parquet"


def failure_path(out: Path, run_hash: str) -> Path:
    return out / FAILED / f"{run_hash}.json"


def _hashes(d: Path, suffix: str) -> set[str]:
    """The hashes of the finished files ``HASH + suffix`` in ``d``."""
    if not d.is_dir():
        return set()
    return {p.name[: -len(suffix)] for p in d.iterdir() if p.name.endswith(suffix) and not p.name.startswith(".")}


def done(out: Path) -> set[str]:
    """Hashes of the runs with a result under ``out``."""
    hashes: set[str] = set()
    for p in result_files(out):
        hashes |= runs_in(p)
    return hashes


def failed(out: Path) -> set[str]:
    """Hashes of the runs recorded as failed (and not done since)."""
    return _hashes(out / FAILED, ".json")


def record_failure(out: Path, run_hash: str, labels: dict[str, Any], error: str) -> None:
    """Records a failed run (its labels and error)."""
    write_json({"run": run_hash, "labels": labels, "error": error}, failure_path(out, run_hash))


def clear_failure(out: Path, run_hash: str) -> None:
    """Forgets a failure (the run has succeeded since)."""
    failure_path(out, run_hash).unlink(missing_ok=True)


def remove_temporaries(out: Path) -> int:
    """Removes temporaries left by writers that were killed; returns how
    many. Call it only when no run of this directory is in flight."""
    n = 0
    for sub in (RUNS, SAMPLES, FAILED):
        d = out / sub
        if d.is_dir():
            for p in d.iterdir():
                if p.name.startswith(".") and p.name.endswith(".tmp"):
                    p.unlink(missing_ok=True)
                    n += 1
    return n
