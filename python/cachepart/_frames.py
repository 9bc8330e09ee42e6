"""Every pandas DataFrame the public functions return is built here, from
what ``cachepart._core`` hands back: the library's row structs as dicts
(the same rows and column names as the CLI's ``--format json``), the CSV
of the library's CSV writer (the CLI's ``--format csv`` and sample files),
or a report's JSON that a frame flattens.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import pandas as pd


def rows(rows: list[dict[str, Any]], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A frame of row dicts; ``columns`` fixes the columns (and their order)
    when the rows may be empty or carry more than the frame shows."""
    if columns is None:
        return pd.DataFrame.from_records(rows)
    return pd.DataFrame.from_records(rows, columns=list(columns))


def csv(text: str) -> pd.DataFrame:
    """A frame of CSV text with a header row, as the library writes it."""
    return pd.read_csv(io.StringIO(text))


def sim_apps(report: dict[str, Any]) -> pd.DataFrame:
    """One row per app of a simulated run's report: its name, core and
    ways, every total (dashes in names become underscores), IPC alone and
    slowdown."""
    out = []
    for a in report["apps"]:
        row = {"app": a["totals"]["name"], "core": a["core"], "ways": a["ways"]}
        row.update({k.replace("-", "_"): v for k, v in a["totals"].items() if k != "name"})
        row["ipc_alone"] = a["ipc_alone"]
        row["slowdown"] = a["slowdown"]
        out.append(row)
    return pd.DataFrame(out)


def throttle_candidates(report: dict[str, Any]) -> pd.DataFrame:
    """One row per (candidate, app) of a throttling search's report."""
    out = []
    for i, c in enumerate(report["candidates"]):
        for a, name in enumerate(report["apps"]):
            out.append(
                {
                    "candidate": i,
                    "stage": c["stage"],
                    "app": name,
                    "duty": c["duty"][a],
                    "prefetchers": c["prefetchers"][a],
                    "quantum": c["quantum"][a],
                    "colors": c["colors"][a],
                    "slowdown": c["slowdowns"][a],
                    "unfairness_factor": c["unfairness_factor"],
                    "efficiency": c["efficiency"],
                }
            )
    return pd.DataFrame(out)
