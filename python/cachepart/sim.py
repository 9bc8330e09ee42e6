"""The trace-driven simulator from Python: run a scenario file and get
per-app results and per-interval samples as pandas DataFrames.

>>> import cachepart.sim as cs
>>> run = cs.run("examples/scenarios/quad-mix.toml")
>>> run.apps[["app", "ipc", "slowdown"]]
>>> run.samples.groupby("name")["ipc"].mean()
>>> run.metrics["stp"]
>>> cs.cachegrind("ls.cpt", i1="32768,8,64", d1=(32768, 8, 64), ll="2097152,16,64")
{'Ir': ..., 'I1mr': ..., 'ILmr': ..., 'Dr': ..., ...}
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Union

import pandas as pd

from cachepart import _core, _frames
from cachepart._guard import call, path

PathLike = Union[str, "os.PathLike[str]"]
#: A cache as cachegrind's option writes it: ``"32768,8,64"`` or
#: ``(32768, 8, 64)`` (size in bytes, ways, line size in bytes).
CacheSpec = Union[str, tuple[int, int, int]]


@dataclass
class SimRun:
    """The result of one scenario run."""

    #: One row per app: core, ways, instructions, cycles, ipc, ipc_alone,
    #: slowdown, LLC references and misses, memory bytes, ...
    apps: pd.DataFrame
    #: One row per (interval, app): the counters of that interval.
    samples: pd.DataFrame
    #: Mix metrics (stp, antt, unfairness, unfairness_cov,
    #: unfairness_factor, jain, gmean_speedup, ...), or
    #: None when the alone runs were skipped.
    metrics: dict[str, float] | None
    #: The whole report (scenario, platform, policy, plan, ...).
    report: dict[str, Any]


def toml_value(value: object) -> str:
    """``value`` written as a TOML value (a string, number, boolean, list
    or dict of those)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise _core.UsageError(f"{value!r}: expected a string, number, boolean, list or dict for a scenario key")


def run(
    scenario: PathLike,
    *,
    seed: int | None = None,
    policy: str | None = None,
    alone: bool = True,
    overrides: dict[str, Any] | None = None,
) -> SimRun:
    """Runs a scenario file to the end on the simulator.

    ``seed`` and ``policy`` override the file's; ``alone=False`` skips the
    alone runs (no slowdowns, no metrics). ``overrides`` sets keys of the
    file as ``cachepart sim run --set`` does, dotted key to value:
    ``{"platform": "xeon-5160", "interval-cycles": 2_000_000,
    "app.1.mlp": 2}``. Raises ``cachepart.ConfigError`` (an ``InputError``)
    for a bad scenario (the message names the file and field),
    ``cachepart.TraceError`` (an ``InputError`` too) for a malformed trace,
    and ``cachepart.SimulationError`` for a simulation that fails once
    started. ``seed`` is a whole number from 0 to 2**64 - 1; ``overrides``
    a dict (anything else raises :class:`cachepart.UsageError`) whose
    values are finite.
    """
    if overrides is not None and not isinstance(overrides, dict):
        raise _core.UsageError(
            f"overrides {overrides!r}: expected a dict of dotted scenario key -> value"
            " (e.g. {'app.1.mlp': 2})"
        )
    keys = [f"{k}={toml_value(v)}" for k, v in (overrides or {}).items()]
    text, csv = call(
        _core.sim_run, path(scenario, "scenario"), seed=seed, policy=policy, alone=alone, set_keys=keys or None
    )
    report = json.loads(text)
    apps = _frames.sim_apps(report)
    samples = _frames.csv(csv)
    return SimRun(apps=apps, samples=samples, metrics=report.get("metrics"), report=report)


@dataclass
class ThrottleSearch:
    """The result of Zhang et al.'s best-fairness search."""

    #: One row per (candidate, app): stage (default, duty, hybrid,
    #: quantum, coloring), duty ("5/8"), prefetcher word, idle process
    #: (``{"run-cycles": ..., "idle-cycles": ...}`` or None), page colors
    #: (range syntax or None), slowdown, and the candidate's
    #: unfairness_factor and efficiency.
    candidates: pd.DataFrame
    #: The scenario as written, the fairest duty-cycle setting and the
    #: fairest hybrid one (None without ``prefetchers=True``), each a dict
    #: with ``duty``, ``prefetchers``, ``slowdowns``, ``unfairness_factor``
    #: and ``efficiency``.
    default: dict[str, Any]
    best_duty: dict[str, Any]
    best_hybrid: dict[str, Any] | None
    #: The fairest quantum setting (None without ``quantum=True``) and
    #: static color split (None without ``coloring=True``).
    best_quantum: dict[str, Any] | None
    best_coloring: dict[str, Any] | None
    #: The whole report.
    report: dict[str, Any]


def throttle(
    scenario: PathLike,
    *,
    prefetchers: bool = False,
    keep: int = 3,
    max_runs: int = 512,
    seed: int | None = None,
    quantum: bool = False,
    quantum_run_cycles: int = 400_000,
    coloring: bool = False,
) -> ThrottleSearch:
    """Searches the fairest per-app duty cycles for a scenario's apps, then
    (``prefetchers=True``) tunes their prefetchers from the default and the
    ``keep`` best duty settings, as ``cachepart sim throttle`` does (see
    docs/simulator-throttling.md). The platform needs ``[clock-modulation]``.
    ``quantum=True`` also tries scheduling-quantum adjustment (one app at a
    time with an idle process of 5%..100% of ``quantum_run_cycles``);
    ``coloring=True`` every static split of the page colors (the scenario
    needs ``allocator = "tam"``).

    ``max_runs`` bounds the simulations the search may run (a search that
    needs more raises :class:`cachepart.UsageError` saying how many);
    ``quantum_run_cycles`` is at least 1; ``keep``, ``max_runs``,
    ``quantum_run_cycles`` and ``seed`` are whole numbers from 0 to
    2**64 - 1.
    """
    text = call(
        _core.sim_throttle,
        path(scenario, "scenario"),
        prefetchers=prefetchers,
        keep=keep,
        max_runs=max_runs,
        seed=seed,
        quantum=quantum,
        quantum_run_cycles=quantum_run_cycles,
        coloring=coloring,
    )
    report = json.loads(text)
    return ThrottleSearch(
        candidates=_frames.throttle_candidates(report),
        default=report["default"],
        best_duty=report["best_duty"],
        best_hybrid=report.get("best_hybrid"),
        best_quantum=report.get("best_quantum"),
        best_coloring=report.get("best_coloring"),
        report=report,
    )


def platforms() -> list[tuple[str, str]]:
    """The built-in platforms: (name, description)."""
    return list(call(_core.sim_platforms))


def _cache_opt(value: CacheSpec | None, name: str) -> str | None:
    """A cache spec as cachegrind's option value ``SIZE,WAYS,LINE``."""
    if value is None or isinstance(value, str):
        return value
    if (
        isinstance(value, tuple)
        and len(value) == 3
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return ",".join(str(v) for v in value)
    raise _core.UsageError(f"{name} {value!r}: expected 'SIZE,WAYS,LINE' or a (size, ways, line) tuple of ints")


def cachegrind(
    trace: PathLike,
    *,
    i1: CacheSpec | None = None,
    d1: CacheSpec | None = None,
    ll: CacheSpec | None = None,
    platform: str | None = None,
    threads: int = 1,
    decoders: int | None = None,
) -> dict[str, int]:
    """cachegrind's simulation of a binary trace (``.cpt``): its nine
    totals ``Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw``, in that order, as
    ``cachepart sim cachegrind --format json`` gives them.

    ``i1``, ``d1`` and ``ll`` are cachegrind's ``--I1``/``--D1``/``--LL``
    (``"32768,8,64"`` or ``(32768, 8, 64)``), checked as cachegrind checks
    them; a cache not given comes from ``platform`` (a built-in name or a
    platform file: its L1I, L1D, LLC) or else from cachegrind's defaults
    (I1 and D1 65536,2,64, LL 262144,8,64). Raises
    ``cachepart.UsageError`` with cachegrind's words for a geometry it
    refuses, ``cachepart.InputError`` for an unreadable trace.

    ``threads`` (a power of two) splits the simulation as ``cachepart sim
    cachegrind --threads`` does, with the same totals for any count; a
    count the geometry cannot be split by raises ``cachepart.UsageError``.
    ``decoders`` decodes the trace file's frames on that many threads
    (1 to 256; by default as ``--decoders`` chooses: twice ``threads``
    where the CPUs allow beside the simulating threads, never fewer than
    ``threads``), again with the same totals.
    """
    pairs = call(
        _core.sim_cachegrind,
        path(trace, "trace"),
        i1=_cache_opt(i1, "i1"),
        d1=_cache_opt(d1, "d1"),
        ll=_cache_opt(ll, "ll"),
        platform=platform,
        threads=threads,
        decoders=decoders,
    )
    return dict(pairs)
