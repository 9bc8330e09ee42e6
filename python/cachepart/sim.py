"""The trace-driven simulator from Python: run a scenario file and get
per-app results and per-interval samples as pandas DataFrames.

>>> import cachepart.sim as cs
>>> run = cs.run("examples/scenarios/quad-mix.toml")
>>> run.apps[["app", "ipc", "slowdown"]]
>>> run.samples.groupby("name")["ipc"].mean()
>>> run.metrics["stp"]
"""

from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass
from typing import Any, Union

import pandas as pd

from cachepart import _core
from cachepart._guard import call, path

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class SimRun:
    """The result of one scenario run."""

    #: One row per app: core, ways, instructions, cycles, ipc, ipc_alone,
    #: slowdown, LLC references and misses, memory bytes, ...
    apps: pd.DataFrame
    #: One row per (interval, app): the counters of that interval.
    samples: pd.DataFrame
    #: Mix metrics (stp, antt, unfairness, unfairness_cov, jain, ...), or
    #: None when the alone runs were skipped.
    metrics: dict[str, float] | None
    #: The whole report (scenario, platform, policy, plan, ...).
    report: dict[str, Any]


def run(
    scenario: PathLike,
    *,
    seed: int | None = None,
    policy: str | None = None,
    alone: bool = True,
) -> SimRun:
    """Runs a scenario file to the end on the simulator.

    ``seed`` and ``policy`` override the file's; ``alone=False`` skips the
    alone runs (no slowdowns, no metrics). Raises ``cachepart.InputError``
    for a bad scenario (the message names the file and field).
    """
    text, csv = call(_core.sim_run, path(scenario, "scenario"), seed=seed, policy=policy, alone=alone)
    report = json.loads(text)
    rows = []
    for a in report["apps"]:
        row = {"app": a["totals"]["name"], "core": a["core"], "ways": a["ways"]}
        row.update({k.replace("-", "_"): v for k, v in a["totals"].items() if k != "name"})
        row["ipc_alone"] = a["ipc_alone"]
        row["slowdown"] = a["slowdown"]
        rows.append(row)
    apps = pd.DataFrame(rows)
    samples = pd.read_csv(io.StringIO(csv))
    return SimRun(apps=apps, samples=samples, metrics=report.get("metrics"), report=report)


def platforms() -> list[tuple[str, str]]:
    """The built-in platforms: (name, description)."""
    return list(call(_core.sim_platforms))
